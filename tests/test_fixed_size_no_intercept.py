"""A fixed-size model whose SCDP run left the intercept out is ridge without intercept on its supported
prototypes: its exact CV methods give that model's held-out values, checked against explicit refits
solved by least squares on the stacked system [K_S; sqrt(alpha) R^T] (K_SS = R R^T) on fresh data."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR
from lssvm.cv.no_intercept import NoInterceptRidgeEngine
from lssvm.exceptions import NumericalWarning
from lssvm.kernels import make_kernel


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SCDP's dependent-coordinate notes on these small sets
        return est.fit(X, y)


def _regressor(seed):
    """Zero-mean targets: SCDP leaves the intercept out (the precondition is asserted)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (50, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    est = _quiet_fit(FixedSizeLSSVR(gamma=0.8, alpha=10.0, random_state=seed), X, y)
    assert est.coef_full_[est.n_basis_, 0] == 0, "precondition: SCDP left the intercept out"
    return est, X, y


def _refit(est, X, t, train, predict, keep, alpha=None):
    """min ||t - K w||^2 + alpha w^T K_SS w on rows ``train`` and supported prototypes ``keep``."""
    alpha = est.alpha if alpha is None else alpha
    Z = est.support_vectors_[keep]
    if Z.shape[0] == 0:
        return np.zeros(np.size(predict))
    s, U = np.linalg.eigh(est.kernel_(Z, Z))
    root = U * np.sqrt(np.clip(s, 0.0, None))
    A = np.vstack([est.kernel_(X[train], Z), np.sqrt(alpha) * root.T])
    w = np.linalg.lstsq(A, np.concatenate([t[train], np.zeros(Z.shape[0])]), rcond=None)[0]
    return est.kernel_(X[predict], Z) @ w


def _held_out(est, X, t, folds, mode):
    """Explicit refits per fold with the held-out support points handled as ``mode`` says."""
    m = len(t)
    support_rows = np.asarray(est.basis_indices_)[est.support_]
    out = np.empty(m)
    for test in folds:
        train = np.setdiff1d(np.arange(m), test)
        keep = np.ones(support_rows.size, dtype=bool)
        if mode == "remove":
            keep = ~np.isin(support_rows, test)
        elif mode == "train":
            train = np.union1d(train, np.intersect1d(test, support_rows))
        out[test] = _refit(est, X, t, train, test, np.flatnonzero(keep))
    return out


@pytest.mark.parametrize("seed", [0, 2])
def test_the_fitted_model_is_ridge_without_intercept_on_its_support(seed):
    est, X, y = _regressor(seed)
    want = _refit(est, X, y, np.arange(len(y)), np.arange(len(y)), np.arange(est.n_support_))
    np.testing.assert_allclose(est.predict(X), want, rtol=1e-6, atol=1e-8 * np.abs(y).max())


@pytest.mark.parametrize("seed", [0, 2])
def test_loo_residuals_equal_explicit_refits(seed):
    est, X, y = _regressor(seed)
    m = len(y)
    for alpha in (None, 0.5, 40.0):  # the support stays the fitted one at every alpha
        want = np.array([y[i] - _refit(est, X, y, np.delete(np.arange(m), i), [i], np.arange(est.n_support_),
                                       alpha)[0] for i in range(m)])
        np.testing.assert_allclose(est.loo_residuals(alpha=alpha), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(est.press(), np.sum(est.loo_residuals() ** 2), rtol=1e-10)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_cv_and_holdout_equal_explicit_refits(mode):
    est, X, y = _regressor(3)
    folds = [test for _, test in KFold(5).split(X)]
    want = _held_out(est, X, y, folds, mode)
    np.testing.assert_allclose(est.cv_predict(cv=5, basis_in_holdout=mode), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(est.cv_error(cv=5, basis_in_holdout=mode), np.mean((y - want) ** 2), rtol=1e-6)
    test = np.concatenate([np.asarray(est.basis_indices_)[est.support_[:2]], [7, 11]])
    test = np.unique(test)
    np.testing.assert_allclose(est.holdout_predict(test, basis_in_holdout=mode),
                               _held_out(est, X, y, [test], mode)[test], rtol=1e-6, atol=1e-9)


def test_methods_that_need_the_intercept_say_why():
    est, X, _ = _regressor(0)
    for call in (lambda: est.predict_std(X[:3]), lambda: est.log_evidence(),
                 lambda: est.predict_interval(X[:3], method="jackknife+")):
        with pytest.raises(ValueError, match="left the intercept out"):
            call()


def test_classifier_decision_values_equal_explicit_refits():
    rng = np.random.default_rng(4)
    y = np.arange(60) % 2
    X = rng.standard_normal((60, 2)) + 0.6 * np.column_stack([np.cos(np.pi * y), np.sin(np.pi * y)])
    labels = np.array(["a", "b"])[y]
    est = _quiet_fit(FixedSizeLSSVC(gamma=1.0, alpha=0.05, n_basis=15, cv=3, random_state=0, calibration=None),
                     X, labels)
    assert est.coef_full_[est.n_basis_, 0] == 0, "precondition: SCDP left the intercept out"
    t = np.where(labels == est.classes_[1], 1.0, -1.0)
    m = len(t)
    want = _held_out(est, X, t, [np.array([i]) for i in range(m)], "keep")
    np.testing.assert_allclose(est.loo_decision_function(), want, rtol=1e-6, atol=1e-9)
    folds = [test for _, test in StratifiedKFold(4).split(X, labels)]
    want = _held_out(est, X, t, folds, "remove")
    np.testing.assert_allclose(est.cv_decision_function(cv=4), want, rtol=1e-6, atol=1e-9)
    assert est.cv_error(cv=4) == pytest.approx(np.mean((want > 0) != (t > 0)))  # a 0 output is the negative class


def test_a_row_that_is_its_own_fit_warns():
    # an isolated basis point under a narrow kernel: its column is its own row's indicator, so at a tiny
    # alpha its leverage is 1 - alpha / (1 + alpha) and its leave-one-out residual is not determined
    rng = np.random.default_rng(5)
    X = np.vstack([rng.standard_normal((20, 2)), [[50.0, 50.0]]])
    y = rng.standard_normal(21)
    engine = NoInterceptRidgeEngine(X, y[:, None], X[[0, 20]], np.array([0, 20]), make_kernel("rbf", gamma=1.0))
    with pytest.warns(NumericalWarning, match="hat-matrix diagonal of training row"):
        engine.loo_residuals(np.array([1e-12]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R = engine.loo_residuals(np.array([1.0]))
    # the far row at alpha = 1: its weight fits y / 2, its LOO model is 0, so the residual is y
    assert R[0, 20, 0] == pytest.approx(y[20], rel=1e-9)


def _loo_with_or_without_intercept(est, X, t, j):
    """Explicit leave-one-out residuals of output ``j`` on its own coordinates: ridge on its supported
    prototypes, with an unpenalised intercept where its SCDP run chose one."""
    M = est.n_basis_
    Z = est.basis_vectors_[np.flatnonzero(est.coef_full_[:M, j] != 0)]
    intercept = est.coef_full_[M, j] != 0
    s, U = np.linalg.eigh(est.kernel_(Z, Z))
    root = (U * np.sqrt(np.clip(s, 0.0, None))).T
    A = est.kernel_(X, Z)
    if intercept:
        A, root = np.column_stack([A, np.ones(len(X))]), np.column_stack([root, np.zeros(len(Z))])
    out = np.empty(len(t))
    for i in range(len(t)):
        train = np.delete(np.arange(len(t)), i)
        c = np.linalg.lstsq(np.vstack([A[train], np.sqrt(est.alpha) * root]),
                            np.concatenate([t[train], np.zeros(len(Z))]), rcond=None)[0]
        out[i] = t[i] - A[i] @ c
    return out


@pytest.mark.parametrize("seed", [0, 3])
def test_outputs_on_the_same_prototypes_with_and_without_the_intercept(seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (50, 1))
    base = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    Y = np.column_stack([base, base + 3.0])
    est = _quiet_fit(FixedSizeLSSVR(gamma=0.8, alpha=10.0, random_state=seed), X, Y)
    W, M = est.coef_full_, est.n_basis_
    assert W[M, 0] == 0 and W[M, 1] != 0, "precondition: one output without the intercept, one with"
    assert np.array_equal(W[:M, 0] != 0, W[:M, 1] != 0), "precondition: the same prototypes"
    R = est.loo_residuals()
    for j in range(2):
        np.testing.assert_allclose(R[:, j], _loo_with_or_without_intercept(est, X, Y[:, j], j), rtol=1e-6,
                                   atol=1e-8)
