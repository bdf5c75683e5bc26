"""lssvm: sparse least-squares kernel models with exact, fast cross-validation.

Layers, dependencies pointing down:

- :mod:`lssvm.kernels`: kernel functions in row blocks;
- :mod:`lssvm.basis`: basis selection (FVS, random);
- :mod:`lssvm.solvers`: factorisations serving a whole alpha path;
- :mod:`lssvm.cv`: cross-validation helpers and brute-force references;
- :mod:`lssvm.estimators`: scikit-learn estimators;
- :mod:`lssvm.io`, :mod:`lssvm.cli`: files and the command line.
"""

from .estimators import SparseLSSVC, SparseLSSVR
from .exceptions import NumericalWarning
from .solvers import scdp

__version__ = "0.1.0"

__all__ = ["SparseLSSVC", "SparseLSSVR", "NumericalWarning", "scdp", "__version__"]
