"""The Nyström and fixed-size models' shared CV, interval and Bayesian methods
against brute force: explicit refits of ridge with an unpenalised intercept on
each fold's training rows at the same basis (dense solves), on fresh random data.

* Nyström (low-rank predictor): features ``k(x, Z) U_k L_k^(-1/2)`` of the
  sampled columns Z, penalty ``alpha ||w||^2``; with basis points removed
  from a fold, the map re-truncated on the kept columns.
* Fixed size: features ``k(x, Z_S)`` of the supported prototypes, penalty
  ``alpha w^T K_SS w`` (the sparse model at the support; the fitted model's
  intercept regulariser ``nu`` = 1e-8 moves predictions by ~1e-10).
"""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR, NystromLSSVC, NystromLSSVR
from lssvm.cv.conformal import interval_from_values
from lssvm.exceptions import NumericalWarning
from lssvm.kernels import make_kernel

from conftest import rel_err

GAMMA, ALPHA = 0.4, 0.3
TOL = 1e-8


def _data(rng, m=70, d=3, v=1):
    X = rng.normal(size=(m, d))
    Y = np.column_stack([np.sin(X[:, j % d]) + 0.1 * rng.normal(size=m) for j in range(v)])
    return X, Y


def _nystrom_map(K_SS, k):
    """Brute force: top-k eigenpairs of the sampled block, ``U_k L_k^(-1/2)``."""
    lam, U = np.linalg.eigh(K_SS)
    lam, U = lam[::-1][:k], U[:, ::-1][:, :k]
    return U / np.sqrt(lam)


def _refit(F, Y, train, pen, F_test):
    """Ridge with an unpenalised intercept on rows ``train``: predictions at ``F_test``."""
    A = np.column_stack([F[train], np.ones(train.size)])
    P = A.T @ A
    P[:-1, :-1] += pen
    w = np.linalg.solve(P, A.T @ Y[train])
    return np.column_stack([F_test, np.ones(F_test.shape[0])]) @ w


def _nystrom_case(rng, points):
    X, Y = _data(rng)
    kernel = make_kernel("rbf", gamma=GAMMA)
    c, k = 12, 6
    if points:
        basis = rng.normal(size=(c, X.shape[1]))
        Z = basis
    else:
        basis = np.sort(rng.choice(X.shape[0], c, replace=False))
        Z = X[basis]
    est = NystromLSSVR(gamma=GAMMA, alpha=ALPHA, basis=basis, rank=k).fit(X, Y[:, 0])

    def features(cols, rows=slice(None), X_at=X):
        return kernel(X_at[rows], Z[cols]) @ _nystrom_map(kernel(Z[cols], Z[cols]), min(k, len(cols)))

    return X, Y, Z, basis, est, features, kernel


@pytest.mark.parametrize("points", [False, True], ids=["rows", "points"])
def test_nystrom_loo_kfold_and_holdout_are_refits_on_the_rank_k_features(rng, points):
    X, Y, Z, basis, est, features, _ = _nystrom_case(rng, points)
    m, c = X.shape[0], Z.shape[0]
    F = features(np.arange(c))
    pen = ALPHA * np.eye(F.shape[1])
    assert rel_err(est.predict(X), _refit(F, Y, np.arange(m), pen, F)[:, 0]) < TOL
    loo = est.loo_residuals()
    for i in (0, 31, m - 1):
        train = np.setdiff1d(np.arange(m), [i])
        assert abs(loo[i] - (Y[i, 0] - _refit(F, Y, train, pen, F[i:i + 1])[0, 0])) < TOL
    folds = [test for _, test in KFold(4).split(X)]
    oof = est.cv_predict(4, basis_in_holdout="keep")  # the fitted map kept
    want = np.empty(m)
    for test in folds:
        want[test] = _refit(F, Y, np.setdiff1d(np.arange(m), test), pen, F[test])[:, 0]
    assert rel_err(oof, want) < TOL
    assert est.cv_error(4, basis_in_holdout="keep") == pytest.approx(np.mean((Y[:, 0] - want) ** 2), rel=1e-10)
    # hold-out that removes basis points: the map re-truncated on the kept columns
    H = np.sort(np.concatenate([basis[:3], [5, 6]])) if not points else np.array([1, 2, 3])
    H = np.unique(H)
    train = np.setdiff1d(np.arange(m), H)
    kept = np.arange(3, c) if not points else np.arange(c)
    FL = features(kept)
    got = est.holdout_predict(H, basis_in_holdout="remove")
    assert rel_err(got, _refit(FL, Y, train, ALPHA * np.eye(FL.shape[1]), FL[H])[:, 0]) < TOL
    assert rel_err(est.holdout_predict(H, basis_in_holdout="keep"), _refit(F, Y, train, pen, F[H])[:, 0]) < TOL
    # "train": held-out rows that hold basis points stay in training
    left_out = H if points else H[~np.isin(H, basis)]
    train_rows = np.setdiff1d(np.arange(m), left_out)
    assert rel_err(est.holdout_predict(H, basis_in_holdout="train"), _refit(F, Y, train_rows, pen, F[H])[:, 0]) < TOL
    # "remove" k-fold: every fold that holds a column refitted at the kept columns
    if not points:
        got = est.cv_predict(KFold(4), basis_in_holdout="remove")
        for test in folds:
            keep = np.flatnonzero(~np.isin(basis, test))
            FL = features(keep)
            want[test] = _refit(FL, Y, np.setdiff1d(np.arange(m), test), ALPHA * np.eye(FL.shape[1]), FL[test])[:, 0]
        assert rel_err(got, want) < TOL


def test_nystrom_basis_points_stay_fixed_when_refitted_on_other_rows(rng):
    X, Y = _data(rng)
    Z = rng.normal(size=(10, 3))
    est = NystromLSSVR(gamma=GAMMA, alpha=ALPHA, basis=Z, rank=5)
    est.fit(X, Y[:, 0])
    assert est.basis_indices_ is None and np.array_equal(est.basis_vectors_, Z)
    X2, Y2 = _data(rng, m=40)
    est.fit(X2, Y2[:, 0])
    assert np.array_equal(est.basis_vectors_, Z) and est.rank_ == 5
    with pytest.raises(ValueError, match="basis points must be an array of shape"):
        NystromLSSVR(basis=np.ones((4, 2))).fit(X, Y[:, 0])


def test_nystrom_predict_std_and_gcv_are_the_ridge_models(rng):
    X, Y, Z, _, est, features, kernel = _nystrom_case(rng, points=True)
    m, c = X.shape[0], Z.shape[0]
    F = features(np.arange(c))
    Fc, Yc = F - F.mean(0), Y[:, 0] - Y[:, 0].mean()
    G = Fc.T @ Fc + ALPHA * np.eye(F.shape[1])
    w = np.linalg.solve(G, Fc.T @ Yc)
    e = Yc - Fc @ w
    S = e @ e + ALPHA * w @ w  # the ridge objective at its minimum
    zeta = (m - 1) / S
    Xt = rng.normal(size=(5, 3))
    Ft = features(np.arange(c), X_at=Xt) - F.mean(0)
    h = 1 / m + np.einsum("ti,ij,tj->t", Ft, np.linalg.inv(G), Ft)
    residual = 1.0 - np.sum(features(np.arange(c), X_at=Xt) ** 2, axis=1)  # k(x, x) = 1 minus the rank-k Nystrom
    var = (h + 1) / zeta + residual / (ALPHA * zeta)
    assert rel_err(est.predict_std(Xt), np.sqrt(var)) < 1e-7
    assert rel_err(est.predict_std(Xt, basis_residual=False, noise=False), np.sqrt(h / zeta)) < 1e-7
    trace = 1 + np.trace(Fc @ np.linalg.solve(G, Fc.T))
    assert est.gcv() == pytest.approx((e @ e / m) / (1 - trace / m) ** 2, rel=1e-8)
    assert np.isfinite(est.log_evidence())


def test_nystrom_jackknife_plus_is_the_leave_one_out_refits(rng):
    X, Y, Z, _, est, features, _ = _nystrom_case(rng, points=False)
    m, c = X.shape[0], Z.shape[0]
    F = features(np.arange(c))
    pen = ALPHA * np.eye(F.shape[1])
    Xt = rng.normal(size=(4, 3))
    Ft = features(np.arange(c), X_at=Xt)
    values, scores = np.empty((4, m, 1)), np.empty((m, 1))
    for i in range(m):
        train = np.setdiff1d(np.arange(m), [i])
        values[:, i] = _refit(F, Y, train, pen, Ft)
        scores[i] = abs(Y[i, 0] - _refit(F, Y, train, pen, F[i:i + 1])[0, 0])
    want = interval_from_values(values, scores, 0.8)[:, :, 0]
    assert rel_err(est.predict_interval(Xt, 0.8), want) < TOL


def test_nystrom_classifier_and_the_exact_predictor(rng):
    X, Y = _data(rng)
    y = np.where(Y[:, 0] > 0, "p", "n")
    S = np.sort(rng.choice(len(y), 12, replace=False))
    clf = NystromLSSVC(gamma=GAMMA, alpha=ALPHA, basis=S, rank=6).fit(X, y)
    kernel = make_kernel("rbf", gamma=GAMMA)
    F = kernel(X, X[S]) @ _nystrom_map(kernel(X[S], X[S]), 6)
    T = np.where(y == "p", 1.0, -1.0)[:, None]
    loo = clf.loo_decision_function()
    for i in (0, 40):
        train = np.setdiff1d(np.arange(len(y)), [i])
        assert abs(loo[i] - _refit(F, T, train, ALPHA * np.eye(6), F[i:i + 1])[0, 0]) < TOL
    assert clf.loo_error_rate() == np.mean(np.where(loo > 0, "p", "n") != y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        exact = NystromLSSVR(gamma=GAMMA, alpha=ALPHA, basis=S, rank=6, predictor="exact").fit(X, Y[:, 0])
    for call in (exact.loo_residuals, lambda: exact.cv_error(3), lambda: exact.predict_std(X[:2])):
        with pytest.raises(ValueError, match="predictor='exact' predicts with the true kernel"):
            call()


@pytest.mark.parametrize("mode", ["keep", "remove"])
def test_nystrom_cv_plus_is_the_fold_refits(rng, mode):
    """CV+ with the fitted map kept, or with each fold's columns removed and the map re-truncated."""
    X, Y, Z, basis, est, features, _ = _nystrom_case(rng, points=False)
    m, c = X.shape[0], Z.shape[0]
    Xt = rng.normal(size=(3, 3))
    values, scores = np.empty((3, m, 1)), np.empty((m, 1))
    for _, test in KFold(4).split(X):
        keep = np.arange(c) if mode == "keep" else np.flatnonzero(~np.isin(basis, test))
        F, Ft = features(keep), features(keep, X_at=Xt)
        train = np.setdiff1d(np.arange(m), test)
        pen = ALPHA * np.eye(F.shape[1])
        values[:, test] = _refit(F, Y, train, pen, Ft)[:, None]
        scores[test] = np.abs(Y[test] - _refit(F, Y, train, pen, F[test]))
    want = interval_from_values(values, scores, 0.8)[:, :, 0]
    assert rel_err(est.predict_interval(Xt, 0.8, "cv+", cv=4, basis_in_holdout=mode), want) < TOL


def _fixed_case(rng, points, solver="scdp", v=1):
    X, Y = _data(rng, m=80, v=v)
    basis = rng.normal(size=(15, 3)) if points else "random"
    est = FixedSizeLSSVR(gamma=GAMMA, alpha=ALPHA, basis=basis, n_basis=15, solver=solver, cv=4, random_state=0)
    est.fit(X, Y[:, 0] if v == 1 else Y)
    return X, Y, est


@pytest.mark.parametrize("points", [False, True], ids=["rows", "points"])
@pytest.mark.parametrize("solver", ["scdp", "direct"])
def test_fixed_size_methods_are_refits_at_its_support(rng, points, solver):
    X, Y, est = _fixed_case(rng, points, solver)
    m = X.shape[0]
    kernel = est.kernel_
    Zs = est.support_vectors_
    F = kernel(X, Zs)
    pen = ALPHA * kernel(Zs, Zs)
    # the fitted model is the sparse model at its support, up to the intercept's nu = 1e-8
    assert rel_err(est.predict(X), _refit(F, Y, np.arange(m), pen, F)[:, 0]) < 1e-7
    loo = est.loo_residuals()
    for i in (0, 55):
        train = np.setdiff1d(np.arange(m), [i])
        assert abs(loo[i] - (Y[i, 0] - _refit(F, Y, train, pen, F[i:i + 1])[0, 0])) < TOL
    folds = [test for _, test in KFold(5).split(X)]
    rows = None if est.basis_indices_ is None else np.asarray(est.basis_indices_)[est.support_]
    for mode in ("remove", "keep"):
        got = est.cv_predict(5, basis_in_holdout=mode)
        want = np.empty(m)
        for test in folds:
            keep = np.arange(Zs.shape[0]) if rows is None or mode == "keep" else np.flatnonzero(~np.isin(rows, test))
            FL = F[:, keep]
            want[test] = _refit(FL, Y, np.setdiff1d(np.arange(m), test), pen[np.ix_(keep, keep)], FL[test])[:, 0]
        assert rel_err(got, want) < TOL, mode
    Xt = rng.normal(size=(3, 3))
    assert est.predict_interval(Xt, 0.8).shape == (3, 2)
    assert est.predict_std(Xt).shape == (3,) and np.isfinite(est.gcv())


def test_fixed_size_classifier_loo_and_refusals(rng):
    X, Y = _data(rng, m=90)
    y = (Y[:, 0] > 0).astype(int)
    clf = FixedSizeLSSVC(gamma=GAMMA, alpha=ALPHA, n_basis=15, solver="direct", cv=None, random_state=0).fit(X, y)
    kernel = clf.kernel_
    Zs = clf.support_vectors_
    F, T = kernel(X, Zs), np.where(y == 1, 1.0, -1.0)[:, None]
    loo = clf.loo_decision_function()
    for i in (3, 70):
        train = np.setdiff1d(np.arange(90), [i])
        assert abs(loo[i] - _refit(F, T, train, ALPHA * kernel(Zs, Zs), F[i:i + 1])[0, 0]) < TOL
    assert clf.cv_error(3) == np.mean((clf.cv_decision_function(3) > 0) != y)
    # one-vs-rest outputs whose SCDP runs chose different prototypes: each output at its own support
    labels = np.digitize(Y[:, 0], [-.3, .3])
    three = FixedSizeLSSVC(gamma=GAMMA, alpha=ALPHA, n_basis=15, cv=3, random_state=0).fit(X, labels)
    W = three.coef_full_
    assert not np.all((W[:-1] != 0) == (W[:-1, :1] != 0))  # the case: supports differ
    T3 = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)
    loo = three.loo_decision_function()
    for j in range(3):
        Zj = three.basis_vectors_[np.flatnonzero(W[:-1, j] != 0)]
        Fj = kernel(X, Zj)
        for i in (3, 70):
            train = np.setdiff1d(np.arange(90), [i])
            want = _refit(Fj, T3[:, j:j + 1], train, ALPHA * kernel(Zj, Zj), Fj[i:i + 1])[0, 0]
            assert abs(loo[i, j] - want) < TOL
    assert three.loo_error_rate() == np.mean(np.argmax(loo, axis=1) != labels)
    oof = three.cv_decision_function(4)
    assert three.cv_error(4) == np.mean(np.argmax(oof, axis=1) != labels)
    assert three.cv_error(4, scoring="mse") == pytest.approx(np.mean((oof - T3) ** 2, axis=0), rel=1e-12)
