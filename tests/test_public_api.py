"""The package root's public names: what ``from lssvm import *`` gives and the API reference lists.

The root re-exports ``lssvm.estimators.__all__`` (the estimators and the fixed-size family's solver
``scdp``) and a few names of its own; a name that leaves this set breaks user code, and a name that joins
it is a documented promise, so either is a deliberate edit of this list."""

import inspect

import numpy as np

import lssvm
from lssvm import estimators
from lssvm.solvers import fixed_size

PUBLIC_NAMES = {
    "ConstantTargetWarning", "NumericalWarning", "PerformanceWarning", "SearchEdgeWarning",
    "FixedSizeLSSVC", "FixedSizeLSSVCCV", "FixedSizeLSSVR", "FixedSizeLSSVRCV",
    "NystromLSSVC", "NystromLSSVCCV", "NystromLSSVR", "NystromLSSVRCV",
    "InputTransformSearch", "RobustLSSVR", "RobustLSSVRCV",
    "SparseLSSVC", "SparseLSSVCCV", "SparseLSSVR", "SparseLSSVRCV",
    "make_tabular_pipeline", "scdp", "__version__",
}


def test_root_exports_the_public_names_once():
    assert set(lssvm.__all__) == PUBLIC_NAMES
    assert len(lssvm.__all__) == len(PUBLIC_NAMES), "a name listed twice"
    assert all(hasattr(lssvm, name) for name in lssvm.__all__)


def test_star_import_gives_the_public_names():
    namespace = {}
    exec("from lssvm import *", namespace)  # noqa: S102 (the import a user writes)
    assert set(namespace) - {"__builtins__"} == PUBLIC_NAMES


def test_scdp_is_the_solver_of_its_home_module():
    # one function under three names: the solver module, the family's estimators module, the root
    assert lssvm.scdp is estimators.scdp is fixed_size.scdp
    assert inspect.signature(lssvm.scdp).parameters.keys() >= {"A", "b"}
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    result = lssvm.scdp(A, b)
    assert isinstance(result, fixed_size.SCDPResult)
    w = np.zeros(2)
    w[result.order] = result.coef_path[-1]
    np.testing.assert_allclose(w, np.linalg.solve(A, b), rtol=1e-12)
