"""With k folds the basis growth scores its sizes with the held-out basis points kept (the prefixes stay
nested), while the search, the ARD stage and ``best_score_`` use the search's ``basis_in_holdout``: the grown
model replaces the searched one only where its error in the search's mode is lower, and ``best_score_`` is then
that error, recomputed here by the model's exact k-fold method (itself checked against refits elsewhere)."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import SparseLSSVRCV


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 4))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=150)


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("ard", ["auto", False])
def test_best_score_is_the_refit_error_in_the_search_mode(seed, ard):
    X, y = _data(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(cv=KFold(5, shuffle=True, random_state=seed), ard=ard, random_state=0).fit(X, y)
        folds = [(np.setdiff1d(np.arange(y.size), f), f) for f in search.cv_folds_]
        refit = float(search.best_estimator_.cv_error(folds, basis_in_holdout=search.basis_in_holdout))
    np.testing.assert_allclose(-search.best_score_, refit, rtol=1e-8)
    stage = search.ard_stage_
    searched = stage["cv_mse_ard"] if stage["kept"] else search.cv_results_["mean_test_mse"][search.best_index_]
    if search.basis_curve_["replaced"]:
        assert refit < searched
    else:
        np.testing.assert_allclose(refit, searched, rtol=1e-8)


@pytest.mark.parametrize("seed", [0, 1])
def test_grown_model_that_is_better_in_the_search_mode_replaces_it(seed):
    # a wavy target at a narrow width: a prefix of about 110 pivots beats the search's 200 with the held-out
    # basis points removed, and best_score_ is its k-fold error in that mode
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = np.sin(8 * X[:, 0]) * np.cos(6 * X[:, 1]) + 0.05 * rng.normal(size=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(param_space={"gamma": [20.0]}, alphas=np.geomspace(1e-8, 1e2, 11), ard=False,
                               cv=KFold(5, shuffle=True, random_state=0), random_state=0).fit(X, y)
    curve = search.basis_curve_
    assert curve["replaced"] and search.best_estimator_.n_basis_ == curve["n_chosen"]
    folds = [(np.setdiff1d(np.arange(y.size), f), f) for f in search.cv_folds_]
    refit = float(search.best_estimator_.cv_error(folds, basis_in_holdout="remove"))
    np.testing.assert_allclose(-search.best_score_, refit, rtol=1e-8)
    assert refit < search.cv_results_["mean_test_mse"][search.best_index_]
