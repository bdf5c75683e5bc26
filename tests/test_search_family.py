"""The ``*CV`` estimators are one search over a family: the generic search
knows no family, each preset's family names its base estimators, and the
gradient search is an object whose result the estimator stores unchanged."""

import ast
import pathlib

import numpy as np
import pytest

import lssvm
from lssvm.estimators import family_search_cv, fixed_size, nystrom, search_cv
from lssvm.estimators.gradient_search import GradientSearch, GradientSearchResult

SEARCH_MODULE = pathlib.Path(search_cv.__file__)
FAMILY_MODULES = {"family_search_cv", "regressor", "classifier", "fixed_size", "nystrom", "_base"}


def _imported_estimator_modules(path):
    """Every module of ``lssvm.estimators`` that ``path`` imports, function-level imports included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add(node.module or "")
            if node.module is None:
                found.update(alias.name for alias in node.names)
    return found


def test_the_generic_search_imports_no_family():
    assert not _imported_estimator_modules(SEARCH_MODULE) & FAMILY_MODULES
    # and no module of the search imports the presets back (the cycle the presets once closed)
    for name in ("gradient_search", "gradient_select", "_basis_size", "_per_target", "_numerical_notes",
                 "_weighted_search", "_scale"):
        path = SEARCH_MODULE.with_name(f"{name}.py")
        assert not _imported_estimator_modules(path) & {"search_cv", "family_search_cv"}, name


@pytest.mark.parametrize("name, family, base", [
    ("SparseLSSVRCV", family_search_cv.SparseFamily, lssvm.SparseLSSVR),
    ("SparseLSSVCCV", family_search_cv.SparseFamily, lssvm.SparseLSSVC),
    ("FixedSizeLSSVRCV", fixed_size.FixedSizeFamily, lssvm.FixedSizeLSSVR),
    ("FixedSizeLSSVCCV", fixed_size.FixedSizeFamily, lssvm.FixedSizeLSSVC),
    ("NystromLSSVRCV", nystrom.NystromFamily, lssvm.NystromLSSVR),
    ("NystromLSSVCCV", nystrom.NystromFamily, lssvm.NystromLSSVC),
])
def test_each_preset_is_the_search_over_its_family(name, family, base):
    est = getattr(lssvm, name)()
    assert isinstance(est, search_cv.FamilySearchCV) and est._family is family
    assert est._estimator_class is base
    # the refit takes every model parameter of the family under the same name
    params = est.get_params()
    assert set(family.model_params) <= set(params)
    assert set(family.model_params) <= set(base().get_params())


def test_the_gradient_search_object_gives_what_the_estimator_stores():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=90)
    gammas, alphas = np.array([0.1, 0.5, 2.0]), np.logspace(-4, 1, 6)
    kw = dict(kernel="ard", basis="random", n_basis=25, max_evaluations=8, n_restarts=1)
    est = lssvm.SparseLSSVRCV(search="gradient", param_space={"gamma": gammas}, alphas=alphas, random_state=0,
                              **kw).fit(X, y)
    search = GradientSearch(lambda **p: lssvm.SparseLSSVR(kernel="ard", **p), **kw).check()
    result = search.run(X, y, gammas, alphas, "loo", np.random.RandomState(0))
    assert isinstance(result, GradientSearchResult)
    np.testing.assert_array_equal(result.gamma, est.gamma_)
    assert result.alpha == est.alpha_ and result.best_score == est.best_score_
    np.testing.assert_array_equal(result.basis_rows, est.basis_rows_)
    np.testing.assert_array_equal(result.trace["theta"], est.gradient_trace_["theta"])
    np.testing.assert_array_equal(result.model.dual_coef_, est.best_estimator_.dual_coef_)
    assert result.n_evaluations == est.n_evaluations_ and result.selection == est.gradient_selection_
    # the search object leaves the estimator alone: a second run gives the same record
    again = search.run(X, y, gammas, alphas, "loo", np.random.RandomState(0))
    np.testing.assert_array_equal(again.trace["theta"], result.trace["theta"])


def test_the_gradient_search_refuses_other_families_clearly():
    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(ValueError, match="search='gradient' is available in SparseLSSVRCV and SparseLSSVCCV only"):
        lssvm.NystromLSSVRCV(search="gradient", param_space={"gamma": [0.5, 1.0]}).fit(X, X[:, 0])
