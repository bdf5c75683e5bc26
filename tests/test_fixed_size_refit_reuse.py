"""The fixed-size search's refit reuses the whole-pool factorisation the search scored: the same model,
coefficients and scores as a fresh fit at the chosen parameters and pool, without factorising again."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

import lssvm.solvers
from lssvm import FixedSizeLSSVC, FixedSizeLSSVCCV, FixedSizeLSSVR, FixedSizeLSSVRCV


def _data(m, seed=0):
    X, y = make_friedman1(n_samples=m, noise=1.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def _counting(monkeypatch):
    calls = []
    original = lssvm.solvers.factorize_sparse_rls

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return original(*args, **kwargs)

    monkeypatch.setattr(lssvm.solvers, "factorize_sparse_rls", counted)
    return calls


@pytest.mark.parametrize("classify", [False, True])
def test_refit_takes_the_searched_factorisation_and_equals_a_fresh_fit(monkeypatch, classify):
    X, y = _data(300, seed=3)
    if classify:
        y = np.where(y > np.median(y), "a", "b")
    search_cls, model_cls = (FixedSizeLSSVCCV, FixedSizeLSSVC) if classify else (FixedSizeLSSVRCV, FixedSizeLSSVR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = search_cls(param_space={"gamma": [0.001]}, alphas=[1e-6, 1e-5], n_basis=100, random_state=0).fit(X, y)
    best = search.best_estimator_
    assert best.cv_curve_ is not None
    assert len(best.cv_curve_) < best.n_basis_  # SCDP stopped short: the refit scored the whole pool
    if not classify:
        assert best.model_size_ == best.n_basis_ + 1  # and kept it: its coefficients are the ones compared
    calls = _counting(monkeypatch)  # a fresh fit of the same model factorises the whole pool itself
    params = {k: v for k, v in best.get_params().items()}
    params["basis"] = best.basis_indices_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = model_cls(**params).fit(X, y)
    assert calls, "the fresh fit must factorise the whole pool (else this test compares nothing)"
    np.testing.assert_array_equal(fresh.basis_indices_, best.basis_indices_)
    assert fresh.model_size_ == best.model_size_
    np.testing.assert_allclose(fresh.coef_full_, best.coef_full_, rtol=1e-9, atol=1e-12 * np.abs(best.coef_full_).max())
    np.testing.assert_allclose(fresh.cv_score_, best.cv_score_, rtol=1e-9)
    np.testing.assert_allclose(fresh.cv_curve_, best.cv_curve_, rtol=1e-9)


def test_refit_factorises_the_whole_pool_once(monkeypatch):
    """The search scores every candidate with one factorisation each; the refit adds none."""
    X, y = _data(300, seed=3)
    calls = _counting(monkeypatch)
    import lssvm.selection.sparse_cv as sparse_cv  # the search's criterion imports the name itself

    searched = []
    original = sparse_cv.factorize_sparse_rls

    def counted(*args, **kwargs):
        searched.append(args[0].shape)
        return original(*args, **kwargs)

    monkeypatch.setattr(sparse_cv, "factorize_sparse_rls", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = FixedSizeLSSVRCV(param_space={"gamma": [0.001]}, alphas=[1e-6, 1e-5], n_basis=100, random_state=0).fit(X, y)
    assert len(searched) == 1  # one candidate width
    assert calls == []  # the refit's whole-pool scores and coefficients come from the search's factorisation
    best = search.best_estimator_
    assert len(best.cv_curve_) < best.n_basis_  # SCDP stopped short: the whole pool was scored in the refit
    assert best.model_size_ == best.n_basis_ + 1
