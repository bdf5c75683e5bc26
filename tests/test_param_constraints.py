"""scikit-learn's ``_parameter_constraints`` on the twelve estimators: one
declarative table per family replaces three hand-written
validators, so the families agree (``block_size=True`` was accepted by the
sparse models and refused by the Nyström ones), and the one hook
``_check_param_rules`` holds the rules that span parameters."""

import inspect

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from lssvm import (
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm import estimators as all_estimators

# the families' estimators (the classes taking a basis); a wrapper such as InputTransformSearch has its own tests
ALL = [obj for obj in map(all_estimators.__dict__.get, all_estimators.__all__)
       if isinstance(obj, type) and "basis" in inspect.signature(obj).parameters]
SEARCH = {"param_space": {"gamma": [0.5]}, "alphas": [0.1]}


def _small(cls):
    """Cheap explicit settings (gamma and the basis passed explicitly)."""
    kw = SEARCH if cls.__name__.endswith("CV") else {"gamma": 0.5}
    if "FixedSize" in cls.__name__:
        kw = {**kw, "cv": 3}
    return cls(basis="random", n_basis=8, random_state=0, **kw)


def _data(cls, m=30):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, 2))
    classifier = cls.__name__.rstrip("CV").endswith("C") or cls.__name__.endswith("SVCCV")
    return X, ((X[:, 0] > 0).astype(int) if classifier else np.sin(X[:, 0]))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_every_parameter_has_a_constraint_and_fit_checks_it(cls):
    # scikit-learn's own check: the table lists exactly the parameters, and fit
    # raises InvalidParameterError naming the parameter for a value of a wrong type or range
    check_param_validation(cls.__name__, _small(cls))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name, value", [("block_size", True), ("n_basis", True), ("block_size", 2.0),
                                         ("n_jobs", True), ("alpha", np.inf)])
def test_the_families_agree_booleans_are_not_integers(cls, name, value):
    est = _small(cls)
    if name not in est.get_params():
        pytest.skip(f"{cls.__name__} has no {name}")
    X, y = _data(cls)
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of {cls.__name__} must be"):
        est.set_params(**{name: value}).fit(X, y)


@pytest.mark.parametrize("est, match", [
    (FixedSizeLSSVR(gamma=0.5, basis="random", n_basis=10, max_size=12, cv=None),
     r"max_size=12 exceeds the n_basis \+ 1 = 11"),
    (FixedSizeLSSVRCV(basis="random", n_basis=10, max_size=12, **SEARCH), r"max_size=12 exceeds the n_basis \+ 1"),
    (FixedSizeLSSVR(gamma=0.5, scoring="error_rate"), "scoring must be 'mse' for regression"),
    (NystromLSSVR(gamma=0.5, basis="random", n_basis=10, rank=11), "rank=11 is more than the n_basis=10"),
    (NystromLSSVCCV(basis="random", n_basis=10, rank=11, **SEARCH), "rank=11 is more than the n_basis=10"),
    (SparseLSSVRCV(scoring="error_rate", **SEARCH), "scoring must be 'mse' or 'gcv' or 'evidence'"),
    (NystromLSSVRCV(scoring="gcv", **SEARCH), "scoring must be 'mse'; got 'gcv'"),
    (SparseLSSVR(gamma=0.5, alpha=[0.1, 1.0]), "alpha holds 2 values but y has 1 target"),
    (SparseLSSVC(gamma=0.5, alpha=[0.1, 1.0]), "alpha must be a single number > 0 for fit"),
])
def test_rules_that_span_parameters(est, match):
    X, y = _data(type(est))
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_a_size_is_a_count_or_a_fraction():
    X, y = _data(NystromLSSVR)
    assert NystromLSSVR(gamma=0.5, basis="random", n_basis=0.5, random_state=0).fit(X, y).n_basis_ == 15
    assert FixedSizeLSSVR(gamma=0.5, basis="random", n_basis=1.0, cv=None, random_state=0).fit(X, y).n_basis_ == 30
    for bad in (0, 1.5, -0.2, "all"):
        with pytest.raises(InvalidParameterError, match="'n_basis' parameter of NystromLSSVR"):
            NystromLSSVR(gamma=0.5, n_basis=bad).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'n_basis' parameter of SparseLSSVR"):
        SparseLSSVR(gamma=0.5, basis="random", n_basis=0.5).fit(X, y)  # the sparse family takes counts


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_an_unknown_parameter_gets_the_ordinary_keyword_error(cls):
    # no alias table: a name the constructor does not take is Python's TypeError, and set_params's
    # is scikit-learn's ValueError naming the valid parameters
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_prototypes'"):
        cls(n_prototypes=5)
    with pytest.raises(ValueError, match="Invalid parameter 'n_components'"):
        cls().set_params(n_components=5)
