"""The gradient search refits at the user's ``rcond``, not at the search's 1e-14."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVRCV
from lssvm.estimators import gradient_search as gs


def _data(m=150, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(1.5 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=m)  # inputs 0 and 1 matter
    return X, y


def _search(**kw):
    params = dict(kernel="ard", search="gradient", basis="random", n_basis=40, random_state=0, max_evaluations=20,
                  n_restarts=0, gamma=1.0, param_space={"gamma": 2.0 ** np.arange(-6, 2)},
                  alphas=np.logspace(-4, 1, 6))
    return SparseLSSVRCV(**{**params, **kw})


@pytest.mark.parametrize("rcond", [1e-10, 1e-6])
def test_refit_uses_the_users_rcond_and_scores_the_refitted_model(rcond):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = _search(rcond=rcond).fit(X, y)
    model = est.best_estimator_
    assert model.rcond == rcond
    # noise widths shrink until K_BB is singular at the user's rcond (the search goes on to 1e-14): the refit is
    # solved on K_BB's range, and best_score_ is that model's exact LOO error, not the searched point's
    assert model.factorization_.method == "eigh"
    loo = np.mean(model.loo_residuals(est.alpha_) ** 2)
    assert -est.best_score_ == pytest.approx(loo, rel=1e-9)
    # brute force: the same model refitted without the search, at the same rcond
    from lssvm import SparseLSSVR

    again = SparseLSSVR(kernel="ard", gamma=est.gamma_, alpha=est.alpha_, basis=est.basis_rows_, rcond=rcond)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        again.fit(X, y)
    np.testing.assert_allclose(model.predict(X), again.predict(X), rtol=1e-10, atol=1e-12)


def test_refit_at_the_search_rcond_is_the_searched_model():
    X, y = _data()
    est = _search(rcond=gs.SEARCH_RCOND).fit(X, y)
    assert est.best_estimator_.rcond == gs.SEARCH_RCOND
    assert est.best_estimator_.factorization_.method == "cholesky"
    # the point the selection rule kept (one-se: within one standard error of the lowest LOO error)
    assert -est.best_score_ == pytest.approx(est.gradient_trace_["mse"][est.gradient_selection_["chosen_index"]],
                                             rel=1e-12)
    low = _search(rcond=gs.SEARCH_RCOND, selection_rule="min").fit(X, y)
    assert -low.best_score_ == pytest.approx(low.gradient_trace_["mse"].min(), rel=1e-12)


def test_truncated_refit_that_scores_worse_is_reported(monkeypatch):
    X, y = _data()
    monkeypatch.setattr(gs, "REFIT_RTOL", -1.0)  # every truncated refit counts as worse
    with pytest.warns(NumericalWarning, match="refitted model is solved on K_BB's range"):
        est = _search(rcond=1e-6).fit(X, y)
    assert est.best_estimator_.rcond == 1e-6
    # by default (a truncation that changes the LOO error by < 0.1 %) the search says nothing about it
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        warnings.filterwarnings("error", message=".*refitted model is solved", category=NumericalWarning)
        est = _search(rcond=1e-10).fit(X, y)
    assert est.best_estimator_.factorization_.method == "eigh"
