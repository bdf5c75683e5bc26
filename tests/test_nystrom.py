"""Nyström LS-SVM solver (paper 003 Alg. 1): Woodbury solves, LOO and
hold-out against dense solves and explicit retraining of the same
approximate model."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from lssvm.solvers.nystrom import nystrom_factorize

from conftest import rel_err


def dual_solve(K, y, delta):
    """Dense LS-SVM dual [K + delta I, 1; 1^T, 0][a; b] = [y; 0]."""
    n = K.shape[0]
    D = np.zeros((n + 1, n + 1))
    D[:n, :n] = K + delta * np.eye(n)
    D[:n, n] = D[n, :n] = 1.0
    sol = np.linalg.solve(D, np.append(y, 0.0))
    return sol[:n], sol[n]


def setup(rng, n=60, c=25, k=12, gamma=0.5):
    X = rng.standard_normal((n, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    K = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
    S = rng.choice(n, c, replace=False)
    return K, y, nystrom_factorize(K[:, S], K[np.ix_(S, S)], y[:, None], rank=k)


def test_nystrom_kernel_is_c_w_plus_c(rng):
    K, y, fac = setup(rng, k=25)
    n = K.shape[0]
    S = rng.choice(n, 25, replace=False)
    fac = nystrom_factorize(K[:, S], K[np.ix_(S, S)], y[:, None])
    ref = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], rcond=1e-10, hermitian=True) @ K[S]
    assert rel_err(fac.kernel(), ref) < 1e-8


@pytest.mark.parametrize("delta", [1e-3, 0.1, 10.0])
def test_woodbury_solve_equals_dense_dual(rng, delta):
    K, y, fac = setup(rng)
    a, b, _ = fac.solve(delta)
    a_ref, b_ref = dual_solve(fac.kernel(), y, delta)
    # cond(K~ + delta I) <= (||K~|| + delta) / delta; dense and Woodbury both backward stable
    tol = max(1e-10, 1e2 * np.finfo(float).eps * (fac.s2.max() + delta) / delta)
    assert rel_err(a[:, 0], a_ref) < tol
    assert abs(b[0] - b_ref) < tol * max(1.0, abs(b_ref))


def test_full_rank_nystrom_equals_the_exact_ls_svm(rng):
    K, y, _ = setup(rng)
    n = K.shape[0]
    fac = nystrom_factorize(K, K, y[:, None], rank=n, rcond=1e-14)
    a, b, _ = fac.solve(0.1)
    a_ref, b_ref = dual_solve(K, y, 0.1)
    assert rel_err(K @ a[:, 0] + b[0], K @ a_ref + b_ref) < 1e-8


def test_loo_and_holdout_equal_explicit_retraining_of_the_approximate_model(rng):
    K, y, fac = setup(rng, n=40, c=15, k=8)
    Kt, n = fac.kernel(), 40
    deltas = [0.01, 1.0]
    loo = fac.loo_residuals(deltas)
    T = rng.choice(n, 7, replace=False)
    hold = fac.holdout_residuals(T, deltas)
    for i, d in enumerate(deltas):
        ex = np.empty(n)
        for j in range(n):
            tr = np.setdiff1d(np.arange(n), [j])
            a, b = dual_solve(Kt[np.ix_(tr, tr)], y[tr], d)
            ex[j] = y[j] - (Kt[j, tr] @ a + b)
        assert rel_err(loo[i, :, 0], ex) < 1e-9
        tr = np.setdiff1d(np.arange(n), T)
        a, b = dual_solve(Kt[np.ix_(tr, tr)], y[tr], d)
        assert rel_err(hold[i, :, 0], y[T] - (Kt[np.ix_(T, tr)] @ a + b)) < 1e-9


def test_rank_must_fit_the_sample(rng):
    K, y, _ = setup(rng)
    with pytest.raises(ValueError, match="rank"):
        nystrom_factorize(K[:, :5], K[:5, :5], y[:, None], rank=6)
