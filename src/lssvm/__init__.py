"""lssvm: sparse least-squares kernel models with exact, fast cross-validation.

Layers, dependencies pointing down:

- :mod:`lssvm.kernels`: kernel functions in row blocks;
- :mod:`lssvm.basis`: basis and prototype selection (FVS, random, greedy, k-center, Rényi);
- :mod:`lssvm.solvers`: factorisations serving a whole alpha path, SCDP, fixed-size systems;
- :mod:`lssvm.cv`: cross-validation helpers and brute-force references;
- :mod:`lssvm.selection`: CV criteria over alpha paths (dense, sparse, fixed-size, Nyström) and searches;
- :mod:`lssvm.estimators`: scikit-learn estimators, and ``*CV`` ones that select their own hyper-parameters;
- :mod:`lssvm.io`, :mod:`lssvm.cli`: files and the command line.
"""

from . import estimators
from .estimators import *  # noqa: F403 (the public estimators: lssvm.estimators.__all__ lists them once)
from .exceptions import ConstantTargetWarning, NumericalWarning, PerformanceWarning, SearchEdgeWarning
from .io.tabular import make_tabular_pipeline


def _version(package_file=__file__):
    """The version written once, in ``pyproject.toml``: the installed
    distribution's metadata, else (a source tree on ``PYTHONPATH``, not
    installed) the ``pyproject.toml`` beside the ``src`` folder that holds
    ``package_file`` (this package's ``__init__.py``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lssvm")
    except PackageNotFoundError:
        pass
    import pathlib
    import tomllib

    pyproject = pathlib.Path(package_file).resolve().parents[2] / "pyproject.toml"
    try:
        with open(pyproject, "rb") as f:
            return tomllib.load(f)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0+unknown"


__version__ = _version()

__all__ = [
    *estimators.__all__,
    "NumericalWarning",
    "ConstantTargetWarning",
    "PerformanceWarning",
    "SearchEdgeWarning",
    "make_tabular_pipeline",
    "__version__",
]
