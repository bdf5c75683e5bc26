"""The path factorisation against dense direct solves of the same objective.

Tolerance: the problems are built with cond(normal equations) < 1e7
(asserted), so a backward-stable dense solve is accurate to about
cond * eps < 3e-9 and both paths agree to better than 1e-8 relative.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lssvm.exceptions import NumericalWarning
from lssvm.kernels import RBF, Polynomial
from lssvm.solvers import check_alphas, factorize_sparse_rls

from _reference import dense_hat_matrix, dense_solve, retrain_loo
from conftest import rel_err

TOL = 1e-8


def normal_cond(K_mn, K_BB, alpha):
    m, n = K_mn.shape
    Phi = np.hstack([K_mn, np.ones((m, 1))])
    P = np.zeros((n + 1, n + 1))
    P[:n, :n] = alpha * K_BB
    return np.linalg.cond(Phi.T @ Phi + P)


def problem(rng, m=50, n=10, d=3, v=1, gamma=0.5, kernel=None, basis_from_x=True):
    X = rng.standard_normal((m, d))
    Z = X[rng.choice(m, n, replace=False)] if basis_from_x else rng.standard_normal((n, d))
    kern = kernel or RBF(gamma)
    Y = rng.standard_normal((m, v)) + 3.0
    return kern(X, Z), kern(Z, Z), Y


@pytest.mark.parametrize("v", [1, 3])
@pytest.mark.parametrize("alpha", [1e-3, 0.1, 10.0])
def test_coef_equals_dense_solve(rng, v, alpha):
    K_mn, K_BB, Y = problem(rng, v=v)
    assert normal_cond(K_mn, K_BB, alpha) < 1e7
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    a, b = fac.coef(alpha)
    a_ref, b_ref = dense_solve(K_mn, K_BB, Y, alpha)
    assert rel_err(K_mn @ a + b, K_mn @ a_ref + b_ref) < TOL
    assert rel_err(a, a_ref) < 1e-7  # coefficients carry cond(K_BB) more
    assert rel_err(b, b_ref) < 1e-7
    assert rel_err(fac.residuals(alpha), Y - (K_mn @ a_ref + b_ref)) < TOL


def test_more_basis_points_than_samples(rng):
    # n > m: the centred Gram matrix is rank deficient, P(alpha) is not
    K_mn, K_BB, Y = problem(rng, m=12, n=20, basis_from_x=False, gamma=0.3)
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    a, b = fac.coef(0.5)
    a_ref, b_ref = dense_solve(K_mn, K_BB, Y, 0.5)
    assert rel_err(K_mn @ a + b, K_mn @ a_ref + b_ref) < TOL


def test_alpha_path_equals_one_alpha_at_a_time(rng):
    K_mn, K_BB, Y = problem(rng, v=2)
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    alphas = np.geomspace(1e-4, 1e2, 7)
    A, B = fac.coef(alphas)
    L = fac.loo_residuals(alphas)
    H = fac.hat_diag(alphas)
    assert A.shape == (7, 10, 2) and B.shape == (7, 2) and L.shape == (7, 50, 2) and H.shape == (7, 50)
    for k, al in enumerate(alphas):
        a, b = fac.coef(al)
        np.testing.assert_allclose(A[k], a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(L[k], fac.loo_residuals(al), rtol=1e-12, atol=1e-12)


def test_hat_diag_equals_explicit_hat_matrix(rng):
    K_mn, K_BB, Y = problem(rng)
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    for alpha in (1e-2, 1.0):
        assert rel_err(fac.hat_diag(alpha), np.diag(dense_hat_matrix(K_mn, K_BB, alpha))) < TOL


@settings(max_examples=30, deadline=None)
@given(
    m=st.integers(8, 40),
    n=st.integers(2, 8),
    v=st.integers(1, 3),
    log_alpha=st.floats(-2, 2),
    log_gamma=st.floats(-1.5, 0.5),
    seed=st.integers(0, 2**31),
)
def test_loo_equals_retraining_property(m, n, v, log_alpha, log_gamma, seed):
    rng = np.random.default_rng(seed)
    K_mn, K_BB, Y = problem(rng, m=m, n=n, v=v, gamma=10.0**log_gamma)
    alpha = 10.0**log_alpha
    cond = normal_cond(K_mn, K_BB, alpha)
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    ref = retrain_loo(K_mn, K_BB, Y, alpha)
    # error bound of the reference itself: cond * eps, with a floor at 1e-8
    assert rel_err(fac.loo_residuals(alpha), ref) < max(TOL, 100 * cond * np.finfo(float).eps)


def test_singular_basis_matrix_uses_range_with_warning(rng):
    X = rng.standard_normal((40, 2))
    Z = X[:6]
    Zdup = np.vstack([Z, Z[:2]])  # two exact duplicates: K_BB has rank 6 of 8
    kern = RBF(0.7)
    Y = rng.standard_normal((40, 1))
    with pytest.warns(NumericalWarning, match="rank 6 of 8"):
        fac = factorize_sparse_rls(kern(X, Zdup), kern(Zdup, Zdup), Y)
    assert fac.method == "eigh" and fac.rank == 6
    ref = factorize_sparse_rls(kern(X, Z), kern(Z, Z), Y)
    # the duplicates add nothing: same fitted values and LOO residuals
    assert rel_err(fac.residuals(0.1), ref.residuals(0.1)) < 1e-8
    assert rel_err(fac.loo_residuals(0.1), ref.loo_residuals(0.1)) < 1e-8


def test_polynomial_kernel_far_from_centre(rng):
    # large kernel means: the centring keeps the Gram matrix accurate
    K_mn, K_BB, Y = problem(rng, kernel=Polynomial(gamma=0.5, degree=2, coef0=5.0), n=6)
    fac = factorize_sparse_rls(K_mn, K_BB, Y)
    a_ref, b_ref = dense_solve(K_mn, K_BB, Y, 1.0)
    a, b = fac.coef(1.0)
    assert rel_err(K_mn @ a + b, K_mn @ a_ref + b_ref) < 1e-7


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, [], [[1.0]], "x", [1.0, -2.0]])
def test_check_alphas_rejects(bad):
    with pytest.raises(ValueError, match="alpha"):
        check_alphas(bad)


def test_small_alpha_accuracy_against_high_precision(rng):
    """At small alpha on an ill-conditioned basis, forming Kc^T Kc alone loses
    ~5e-7 of the fitted residuals; the refinement step must keep them to
    1e-9 and the LOO residuals to 1e-8 of a 30-digit reference."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    X = np.sort(rng.uniform(0, 1, (40, 1)), axis=0)
    y = np.sin(6 * X[:, 0]) * 50 + 20 * rng.standard_normal(40)
    Z = np.linspace(0, 1, 14)[:, None]
    kern, alpha = RBF(13.1), 1e-4
    K_mn, K_BB = kern(X, Z), kern(Z, Z)
    assert np.linalg.cond(K_BB) > 1e6  # the regime this test is about
    fac = factorize_sparse_rls(K_mn, K_BB, y[:, None])
    m, n = K_mn.shape
    Phi = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] + [1] for row in K_mn])
    A = Phi.T * Phi
    for i in range(n):
        for j in range(n):
            A[i, j] += alpha * mpmath.mpf(float(K_BB[i, j]))
    Y = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
    res = Y - Phi * mpmath.lu_solve(A, Phi.T * Y)
    Ainv = mpmath.inverse(A)
    h = [(Phi[i, :] * Ainv * Phi[i, :].T)[0] for i in range(m)]
    ref_res = np.array([float(v) for v in res])
    ref_loo = np.array([float(res[i] / (1 - h[i])) for i in range(m)])
    assert rel_err(fac.residuals(alpha)[:, 0], ref_res) < 1e-9
    assert rel_err(fac.loo_residuals(alpha)[:, 0], ref_loo) < 1e-8


@pytest.mark.parametrize("duplicate", [False, True], ids=["cholesky", "range"])
def test_generalised_eigenvectors(rng, duplicate):
    K_mn, K_BB, Y = problem(rng, n=8)
    if duplicate:  # a repeated basis column forces the range-of-K_BB path
        K_mn, K_BB = np.hstack([K_mn, K_mn[:, :1]]), np.block([[K_BB, K_BB[:, :1]], [K_BB[:1, :], K_BB[:1, :1]]])
        with pytest.warns(NumericalWarning):
            fac = factorize_sparse_rls(K_mn, K_BB, Y)
    else:
        fac = factorize_sparse_rls(K_mn, K_BB, Y)
    Kc = K_mn - K_mn.mean(axis=0)
    Q, lam = fac.Q, fac.eigenvalues
    np.testing.assert_allclose(Q.T @ K_BB @ Q, np.eye(fac.rank), atol=1e-8)
    np.testing.assert_allclose(Kc.T @ Kc @ Q, K_BB @ Q * lam, atol=1e-8 * lam.max())
    np.testing.assert_allclose(fac.M, Kc @ Q, atol=1e-10 * np.abs(fac.M).max())


def test_factorize_checks_shapes(rng):
    K_mn, K_BB, Y = problem(rng)
    with pytest.raises(ValueError, match="2-D Y"):
        factorize_sparse_rls(K_mn, K_BB, Y[:, 0])
    with pytest.raises(ValueError, match="expected K_mn"):
        factorize_sparse_rls(K_mn, K_BB[:-1, :-1], Y)
