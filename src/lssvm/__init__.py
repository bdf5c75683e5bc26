"""lssvm: sparse least-squares kernel models with exact, fast cross-validation.

Layers, dependencies pointing down:

- :mod:`lssvm.kernels`: kernel functions in row blocks;
- :mod:`lssvm.basis`: basis and prototype selection (FVS, random, greedy, k-center, Rényi);
- :mod:`lssvm.solvers`: factorisations serving a whole alpha path, SCDP, fixed-size systems;
- :mod:`lssvm.cv`: cross-validation helpers and brute-force references;
- :mod:`lssvm.selection`: CV criteria over alpha paths (exact, Nyström) and searches;
- :mod:`lssvm.estimators`: scikit-learn estimators;
- :mod:`lssvm.io`, :mod:`lssvm.cli`: files and the command line.
"""

from .estimators import FixedSizeLSSVC, FixedSizeLSSVR, NystromLSSVC, NystromLSSVR, SparseLSSVC, SparseLSSVR
from .exceptions import NumericalWarning
from .solvers import scdp

__version__ = "0.1.0"

__all__ = ["FixedSizeLSSVC", "FixedSizeLSSVR", "NystromLSSVC", "NystromLSSVR", "SparseLSSVC", "SparseLSSVR", "NumericalWarning", "scdp", "__version__"]
