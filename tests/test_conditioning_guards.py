"""Conditioning guards of the fast paths: each fast result
equals a stable brute-force refit, or carries a NumericalWarning."""

import warnings

import numpy as np
import pytest

import lssvm.cv.holdout as holdout_module
from lssvm import NumericalWarning, SparseLSSVR
from lssvm.cv.fold_solver import GUARD_RTOL, stable_fold_predictions

from _reference import lstsq_solve

SIDES = ["h", "refactor", None]
MODES = ["remove", "keep", "train"]


def brute_holdout(est, X, y, H, mode, alpha):
    """Hold-out predictions of a model refitted by a QR solve of the
    augmented least-squares problem (shares no code with lssvm)."""
    m = X.shape[0]
    basis = est.basis_indices_
    train = np.ones(m, dtype=bool)
    train[H] = False
    keep = np.ones(basis.size, dtype=bool)
    if mode == "remove":
        keep &= ~np.isin(basis, H)
    elif mode == "train":
        train[basis[np.isin(basis, H)]] = True
    Z = X[basis[keep]]
    kern = est.kernel_
    a, b = lstsq_solve(kern(X[train], Z), kern(Z, Z), y[train], alpha)
    return (kern(X[H], Z) @ a + b).ravel(), y[train].std()


def holdout_error(f, ref, y_scale):
    return np.abs(np.ravel(f) - ref).max() / max(np.abs(ref).max(), y_scale)


def call_warned(func):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = func()
    return out, any(issubclass(w.category, NumericalWarning) for w in rec), rec


@pytest.mark.parametrize("seed", [31, 37, 51])
@pytest.mark.parametrize("mode", MODES)
def test_poly_holdout_every_mode(seed, mode):
    # poly kernel, gamma 100, degree 4, alpha 1e-2, 10 rows
    # (lambda_max / alpha up to 1e17): the unguarded downdates were up to
    # 50 % off or NaN ("keep"); guarded, every side matches the refit.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-2, basis=np.arange(5)).fit(X, y)
    H = np.array([0, 1, 5, 6, 7, 8])
    ref, y_scale = brute_holdout(est, X, y, H, mode, 1e-2)
    engine = est._holdout_engine()
    for side in SIDES:
        f, warned, rec = call_warned(lambda: engine.predict(H, 1e-2, mode, _side=side))
        assert not any("LinAlgWarning" in type(w.message).__name__ for w in rec)
        assert warned or holdout_error(f, ref, y_scale) < 1e-6, (side, holdout_error(f, ref, y_scale))


@pytest.mark.parametrize("side", SIDES)
def test_holdout_leaving_one_training_row_gives_its_target(side):
    # trained on one row, the model is that row's target
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-2, basis=np.array([3])).fit(X, y)
    H = np.setdiff1d(np.arange(10), [5])
    f = est._holdout_engine().predict(H, 1e-2, "keep", _side=side)
    np.testing.assert_allclose(f, y[5], rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.holdout_predict(H, basis_in_holdout="keep"), y[5], rtol=0, atol=1e-12)


def test_stable_route_matches_refit_where_the_downdate_fails():
    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-2, basis=np.arange(5)).fit(X, y)
    fac = est.factorization_
    H = np.array([0, 1, 5, 6, 7, 8])
    for mode in MODES:
        E = np.array([0, 1]) if mode == "remove" else np.empty(0, dtype=np.intp)
        p = np.arange(2, 6) if mode == "train" else np.arange(6)
        out, err = stable_fold_predictions(fac, fac.y_centered + fac.y_mean, H, p, E, np.array([1e-2, 1.0]))
        for k, a in enumerate([1e-2, 1.0]):
            ref, y_scale = brute_holdout(est, X, y, H, mode, a)
            assert holdout_error(out[k], ref, y_scale) < max(1e3 * err[k], 1e-10)


def test_guard_is_quiet_and_free_on_well_conditioned_cv(monkeypatch):
    # the guard neither warns nor takes the stable route on ordinary problems
    calls = []
    real = holdout_module.stable_fold_predictions
    monkeypatch.setattr(holdout_module, "stable_fold_predictions", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 5))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(400)
    est = SparseLSSVR(gamma=0.2, alpha=1e-3, basis="random", n_basis=80, random_state=0).fit(X, y)
    alphas = np.geomspace(1e-6, 1e2, 9)
    for mode in MODES:
        _, warned, _ = call_warned(lambda: est.cv_predict(5, alphas, basis_in_holdout=mode))
        assert not warned
    assert calls == []


def test_guard_warns_when_even_the_stable_route_cannot_resolve():
    # lambda_max / alpha ~ 1e20: no float64 route keeps digits; say so
    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-6, basis=np.arange(5)).fit(X, y)
    with pytest.warns(NumericalWarning, match="estimated relative error"):
        est.holdout_predict(np.array([0, 1, 5, 6, 7, 8]), alpha=1e-5, basis_in_holdout="keep")
    assert GUARD_RTOL == 1e-8


# ------------------------------------------- fixed-size normal equations
def _fs_problem(seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 2)) * rng.choice([1, 3])
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    return X, y


def _fs_objective(est, X, y, alpha, nu=1e-8):
    K = est.kernel_(X, est.basis_vectors_)
    K_ZZ = est.kernel_(est.basis_vectors_, est.basis_vectors_)
    W = est.coef_full_[:, 0]
    w, b = W[:-1], W[-1]
    return np.sum((y - K @ w - b) ** 2) + alpha * w @ K_ZZ @ w + nu * b * b, K, K_ZZ


@pytest.mark.parametrize("seed", [1, 2])
def test_fixed_size_direct_reaches_the_minimum_when_normal_equations_square_conditioning(seed):
    # RBF gamma 0.02, alpha 1e-6, 20 prototypes; the
    # Cholesky of the normal equations succeeded 0.3 % - 30 % above the minimum
    from lssvm import FixedSizeLSSVR

    X, y = _fs_problem(seed)
    est = FixedSizeLSSVR(gamma=0.02, alpha=1e-6, n_basis=20, solver="direct", cv=None, random_state=0)
    _, warned, _ = call_warned(lambda: est.fit(X, y))
    obj, K, K_ZZ = _fs_objective(est, X, y, 1e-6)
    a, b = lstsq_solve(K, K_ZZ, y, 1e-6, nu=1e-8)
    best = np.sum((y - K @ a.ravel() - b[0]) ** 2) + 1e-6 * a.ravel() @ K_ZZ @ a.ravel() + 1e-8 * b[0] ** 2
    assert warned or obj <= best * (1 + 1e-9)


def test_fixed_size_scdp_says_when_it_keeps_fewer_prototypes_than_asked():
    from lssvm import FixedSizeLSSVR

    X, y = _fs_problem(1)
    # a k-center pool: pivoted Cholesky (the default) stops before the numerically dependent points
    est = FixedSizeLSSVR(gamma=0.02, alpha=1e-6, basis="kcenter", n_basis=20, cv=None, random_state=0)
    with pytest.warns(NumericalWarning, match=r"SCDP kept \d+ of the 21 requested"):
        est.fit(X, y)
    assert est.n_support_ < 20


def test_fixed_size_guarded_solve_matches_cholesky_when_well_conditioned():
    from lssvm.solvers.fixed_size import FixedSizeSystem, solve_by_qr, solve_guarded

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Z = X[:8]
    K = np.exp(-0.5 * ((X[:, None] - Z[None]) ** 2).sum(-1))
    K_ZZ = K[:8]
    Y = rng.normal(size=(60, 2))
    system = FixedSizeSystem.from_kernel(K, K_ZZ, Y)
    A = system.matrix(0.1, 1e-8)
    W_chol = np.linalg.solve(A, system.rhs)
    W_qr, err = solve_by_qr(K, K_ZZ, Y, 0.1, 1e-8)
    np.testing.assert_allclose(W_qr, W_chol, rtol=1e-9, atol=1e-12)
    assert err < 1e-12
    np.testing.assert_allclose(solve_guarded(A, system.rhs, K, K_ZZ, Y, 0.1, 1e-8), W_chol, rtol=1e-12)


def test_scdp_skips_a_rounding_negative_pivot_and_explains_an_indefinite_matrix():
    from lssvm.solvers.fixed_size import scdp

    A = np.array([[1.0, 1.0], [1.0, 1.0 - 1e-13]])  # PSD up to rounding
    w = scdp(A, np.array([1.0, 1.0])).coef()
    np.testing.assert_allclose(A @ w, [1.0, 1.0], atol=1e-9)
    with pytest.raises(ValueError, match="positive definite.*Schur complement.*scale the features"):
        scdp(np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([1.0, -1.0]))


# ------------------------------------------------ Nyström factorisations
def test_dense_factorize_loo_cuts_rounding_eigenvalues_rank13_linear():
    # a rank-13 linear kernel once kept ~half of its rounding
    # noise eigenvalues, and LOO was only ~1e-9 accurate
    from lssvm.solvers.nystrom import dense_factorize

    rng = np.random.default_rng(0)
    m = 200
    X = rng.normal(size=(m, 13)) * rng.uniform(0.1, 10, size=13)
    y = X @ rng.normal(size=13) + rng.normal(size=m)
    fac = dense_factorize(X @ X.T, y[:, None])
    assert fac.rank == 13
    delta = 1e-3
    R = fac.loo_residuals([delta])[0, :, 0]
    ref = np.empty(m)
    for i in range(m):  # ridge with an unpenalised intercept, refitted without row i
        train = np.arange(m) != i
        w, b = lstsq_solve(X[train], np.eye(13), y[train], delta)
        ref[i] = y[i] - (X[i] @ w.ravel() + b[0])
    assert np.abs(R - ref).max() / np.abs(ref).max() < 1e-11


def test_nystrom_with_every_column_is_the_exact_lssvm():
    from lssvm import NystromLSSVR

    rng = np.random.default_rng(1)
    n = 60
    X = rng.normal(size=(n, 2))
    y = np.sin(X[:, 0])
    est = NystromLSSVR(gamma=0.5, alpha=1e-3, n_basis=n, rank=n, basis=np.arange(n), rcond=n * 2.2e-16)
    est.fit(X, y)
    K = est.kernel_(X, X)
    A = np.block([[K + 1e-3 * np.eye(n), np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.r_[y, 0.0])
    assert np.abs(est.dual_coef_ - sol[:n]).max() < 1e-10 * np.abs(sol[:n]).max()
    np.testing.assert_allclose(est.predict(X[:5]), K[:5] @ sol[:n] + sol[n], rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="rcond"):
        NystromLSSVR(rcond=0.0).fit(X, y)


@pytest.mark.parametrize("alpha", [1e-2, 1e-8, 1e-12, 1e-300])
def test_nystrom_low_rank_predictor_keeps_its_digits(alpha):
    # k(x, X_S) W_k^+ C^T a cancels (1.7 % off at
    # lambda_max / alpha ~ 1e13, +-1e286 at alpha=1e-300)
    from scipy import linalg

    from lssvm import NystromLSSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    est = NystromLSSVR(gamma=0.5, alpha=alpha, n_basis=40, rank=20, predictor="low-rank", random_state=0)
    est.fit(X, y)
    P = est.factorization_.whitener  # the rank-k Nystrom map
    F = est.kernel_(X, est.basis_vectors_) @ P  # Nystrom features: ridge with an unpenalised intercept
    k = F.shape[1]
    A = np.block([[F, np.ones((200, 1))], [np.sqrt(alpha) * np.eye(k), np.zeros((k, 1))]])
    scale = np.linalg.norm(A, axis=0)
    Q, R = linalg.qr(A / scale, mode="economic")
    sol = linalg.solve_triangular(R, Q.T @ np.r_[y, np.zeros(k)]) / scale
    ref = est.kernel_(X[:5], est.basis_vectors_) @ P @ sol[:-1] + sol[-1]
    np.testing.assert_allclose(est.predict(X[:5]), ref, rtol=1e-10, atol=1e-12)


def test_nystrom_exact_predictor_warns_at_tiny_alpha():
    from lssvm import NystromLSSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = np.sin(X[:, 0])
    with pytest.warns(NumericalWarning, match="exact predictor's coefficients"):
        NystromLSSVR(gamma=0.5, alpha=1e-300, n_basis=20, rank=10, predictor="exact", random_state=0).fit(X, y)


def test_nystrom_rank_inside_a_degenerate_cluster_warns():
    # narrow RBF, W ~ I; reversing the columns once changed
    # the predictions by ~1 without a word
    from lssvm import NystromLSSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3)) * 5
    y = np.sin(X[:, 0])
    with pytest.warns(NumericalWarning, match=r"rank=10 cuts through a cluster.*another column order"):
        NystromLSSVR(gamma=50.0, alpha=1e-3, rank=10, basis=np.arange(20), predictor="low-rank").fit(X, y)
    _, warned, _ = call_warned(lambda: NystromLSSVR(gamma=0.1, alpha=1e-3, n_basis=20, rank=10,
                                                    random_state=0).fit(X, y))
    assert not warned
