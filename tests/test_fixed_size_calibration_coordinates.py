"""Calibration of a fixed-size classifier whose SCDP run left the intercept out: its held-out decision
values are those of its own coordinates (no sparse model with an unpenalised intercept is the fitted
one), checked against explicit refits solved by least squares on the stacked system."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from lssvm import FixedSizeLSSVC
from lssvm.cv.fixed_size import selected_coordinates_held_out


def _blobs(seed, m=60, k=2, shift=0.6):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % k
    X = rng.standard_normal((m, 2)) + shift * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
    return X, np.array(["a", "b", "c"])[y]


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a flat Platt map on these poorly separated classes says so
        return FixedSizeLSSVC(**{"gamma": 1.0, "alpha": 0.05, "n_basis": 15, "cv": 3, "random_state": 0,
                                 **kw}).fit(X, y)


def _refit_values(est, X, t, train, test, coords):
    """min ||t - A c||^2 + c^T P c on the training rows by least squares on [A; L^T] (P = L L^T)."""
    M = est.n_basis_
    A = np.column_stack([est.kernel_(X, est.basis_vectors_), np.ones(len(X))])[:, coords]
    P = np.zeros((M + 1, M + 1))
    P[:M, :M] = est.alpha * est.kernel_(est.basis_vectors_, est.basis_vectors_)
    P[M, M] = est.nu
    s, U = np.linalg.eigh(P[np.ix_(coords, coords)])
    root = U * np.sqrt(np.clip(s, 0.0, None))  # P_S = root root^T
    stacked = np.vstack([A[train], root.T])
    c = np.linalg.lstsq(stacked, np.concatenate([t[train], np.zeros(len(coords))]), rcond=None)[0]
    return A[test] @ c


@pytest.mark.parametrize("calibration_cv", [None, 4])
def test_intercept_free_model_calibrates_on_its_own_held_out_values(calibration_cv):
    X, y = _blobs(4)
    est = _fit(X, y, calibration="sigmoid", calibration_cv=calibration_cv)
    if calibration_cv is None:  # the same SCDP model without the size CV, whose fold models would calibrate it
        est = _fit(X, y, calibration="sigmoid", cv=None, max_size=est.model_size_)
    M = est.n_basis_
    assert est.coef_full_[M, 0] == 0, "precondition: SCDP left the intercept out"
    t = np.where(y == est.classes_[1], 1.0, -1.0)
    coords = np.flatnonzero(est.coef_full_[:, 0] != 0)
    m = len(y)
    held = [np.array([i]) for i in range(m)] if calibration_cv is None else \
        [test for _, test in StratifiedKFold(calibration_cv).split(X, y)]
    want = np.empty(m)
    for test in held:
        train = np.setdiff1d(np.arange(m), test)
        kept = coords if calibration_cv is None else \
            coords[~np.isin(coords, np.flatnonzero(np.isin(est.basis_indices_, test)))]
        want[test] = _refit_values(est, X, t, train, test, kept)
    got = selected_coordinates_held_out(est, X, t[:, None], None if calibration_cv is None else held)[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    # and the fitted map is Platt's on them: the probabilities of a new point follow
    from lssvm.estimators._calibration import fit_platt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A, B = fit_platt(want, y == est.classes_[1])
    Xt = np.random.default_rng(9).standard_normal((7, 2))
    p1 = 1.0 / (1.0 + np.exp(A * est.decision_function(Xt) + B))
    np.testing.assert_allclose(est.predict_proba(Xt)[:, 1], p1, rtol=1e-7, atol=1e-9)


def test_with_the_intercept_the_coordinates_give_the_engine_values():
    # nu -> 0: the model on its coordinates is the sparse model at its support (unpenalised intercept)
    X, y = _blobs(0)
    est = _fit(X, y, nu=1e-12)
    assert est.coef_full_[est.n_basis_, 0] != 0
    t = np.where(y == est.classes_[1], 1.0, -1.0)[:, None]
    np.testing.assert_allclose(selected_coordinates_held_out(est, X, t)[:, 0], est.loo_decision_function(),
                               rtol=1e-7, atol=1e-9)
