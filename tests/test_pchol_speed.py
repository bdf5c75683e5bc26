"""The pivoted Cholesky's shortcuts stop and pivot where the plain algorithm does.

The condition estimate (LAPACK ``dppcon``) is skipped while a bound on ``||K_SS^-1||`` proves it would
pass; kernel columns that a block's first batch missed are computed in batches; BLAS runs on one thread
for the per-point steps.  Brute force here: dense ``K``, LAPACK's condition estimate of every prefix.
"""

import numpy as np
import pytest
from scipy import linalg
from scipy.linalg import lapack

from lssvm._threads import blas_threads_now, cholesky_threads
from lssvm.basis import pivoted_cholesky
from lssvm.kernels import RBF, Laplacian


def _rcond(K, S):
    """LAPACK's reciprocal condition estimate (1-norm) of ``K[S, S]``."""
    A = K[np.ix_(S, S)]
    L = linalg.cholesky(A, lower=True)
    est, info = lapack.dpocon(L, np.abs(A).sum(axis=0).max(), uplo="L")
    assert info == 0
    return est


def _next_pivot(K, S):
    """The point of largest residual after the points ``S`` (dense)."""
    R = np.diag(K) - np.einsum("ij,ji->i", K[:, S], np.linalg.solve(K[np.ix_(S, S)], K[S]))
    R[S] = 0.0
    return int(np.argmax(R))


@pytest.mark.parametrize("rcond", [1e-4, 1e-7])
def test_stops_where_the_condition_estimate_first_fails(rng, rcond):
    """A wide RBF kernel: K_SS becomes ill-conditioned long before n_basis; the selection must stop at
    the first point whose addition brings the estimate below rcond (fails if the bound skips wrongly)."""
    X = rng.standard_normal((300, 2))
    kern = RBF(gamma=0.05)
    res = pivoted_cholesky(X, kern, n_basis=200, pivot_tol=1e-14, rcond=rcond, random_state=0)
    K = kern(X, X)
    S = [int(i) for i in res.indices]
    assert res.stop_reason == "singular" and 3 < len(S) < 200
    assert min(_rcond(K, S[:k]) for k in range(1, len(S) + 1)) >= rcond
    assert _rcond(K, S + [_next_pivot(K, S)]) < rcond


def test_condition_bound_spares_most_estimates(rng, monkeypatch):
    """On a well-conditioned basis dppcon is called for few points, not for every one."""
    import lssvm.basis.pchol as pchol

    calls = []
    real = pchol.lapack.dppcon

    class Spy:
        def __getattr__(self, name):
            return getattr(lapack, name)

        @staticmethod
        def dppcon(*args, **kwargs):
            calls.append(args[0])
            return real(*args, **kwargs)

    monkeypatch.setattr(pchol, "lapack", Spy())
    X = rng.standard_normal((400, 3))
    res = pivoted_cholesky(X, RBF(gamma=1.0), n_basis=60, pivot_tol=1e-12, random_state=0)
    assert res.indices.size == 60
    assert len(calls) < 10


@pytest.mark.parametrize("kern", [RBF(0.8), Laplacian(0.5)], ids=["rbf", "laplacian"])
def test_pivots_and_curve_match_a_dense_reference(rng, kern):
    """The batched kernel columns and the in-place residual updates leave pivots and error curve as the
    dense algorithm's (all columns of K at hand)."""
    X = rng.standard_normal((400, 3))
    res = pivoted_cholesky(X, kern, n_basis=120, pivot_tol=1e-12, rcond=1e-14)
    K = kern(X, X)
    d = np.diag(K).copy()
    G = np.zeros((X.shape[0], 0))
    piv, curve = [], [float(np.mean(d / np.diag(K)))]
    j = int(res.indices[0])
    for _ in range(res.indices.size):
        g = (K[:, j] - G @ G[j]) / np.sqrt(d[j])
        G = np.column_stack([G, g])
        d = np.maximum(d - g**2, 0.0)
        d[piv + [j]] = 0.0
        piv.append(j)
        curve.append(float(np.mean(d / np.diag(K))))
        j = int(np.argmax(d))
    np.testing.assert_array_equal(res.indices, piv)
    np.testing.assert_allclose(res.error_curve, curve, rtol=1e-7, atol=1e-12)


def test_blas_thread_limits_are_restored():
    before = blas_threads_now()
    with cholesky_threads(100):
        assert blas_threads_now() in (None, 1)
    with cholesky_threads(5000):
        assert blas_threads_now() == before
    assert blas_threads_now() == before
    X = np.random.default_rng(0).standard_normal((6000, 2))  # m n >= 2^20: the thread sections are used
    pivoted_cholesky(X, RBF(gamma=1.0), n_basis=200, random_state=0)
    assert blas_threads_now() == before


def test_one_thread_section_beside_a_scope_leaves_the_limit_as_found():
    """Thread B in a small Cholesky's one-thread section while thread A's fit scope starts and ends
    around B's exit: the limit must end as it began (not at one thread for good)."""
    import threading

    from lssvm._threads import thread_scope

    before = blas_threads_now()
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with cholesky_threads(100):
            entered.set()
            leave.wait(10)

    b = threading.Thread(target=hold)
    b.start()
    entered.wait(10)
    with thread_scope(2):
        leave.set()
        b.join(10)
    assert blas_threads_now() == before


# ------------------------------------------------ whitening by column blocks (solvers.whitening)
@pytest.mark.parametrize("n", [5, 128, 300, 700])
def test_blocked_whitening_solves_in_place(rng, n):
    from lssvm.solvers.whitening import solve_lower_transposed_right, whiten_rows

    A = rng.standard_normal((n, n))
    L = np.linalg.cholesky(A @ A.T + n * np.eye(n))
    B = np.asfortranarray(rng.standard_normal((400, n)))
    ref = np.linalg.solve(L, B.T).T  # X L^T = B
    X = solve_lower_transposed_right(L, B.copy(order="F"), block=64)
    np.testing.assert_allclose(X, ref, rtol=1e-10, atol=1e-12)
    Bw = B.copy(order="F")
    Phi = whiten_rows(Bw, L, "cholesky", overwrite=True)
    np.testing.assert_allclose(Phi, ref, rtol=1e-10, atol=1e-12)
    if n > 128:
        assert np.shares_memory(Phi, Bw)  # in place
    with pytest.raises(ValueError, match="Fortran"):
        solve_lower_transposed_right(L, np.ascontiguousarray(B) if n > 1 else B.astype(np.float32))


def test_factorisation_of_fortran_rows_matches_brute_force(rng):
    """The sparse RLS factorisation of Fortran-ordered kernel rows (the search's layout) against the
    C-ordered ones and a dense direct solve of the regularised normal equations."""
    from lssvm.solvers import factorize_sparse_rls

    X = rng.standard_normal((900, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(900)
    kern = RBF(gamma=2.0)
    Z = X[:200]  # more than one block of columns
    K, K_BB, Y = kern(X, Z), kern(Z, Z), y[:, None]
    fac_c = factorize_sparse_rls(K.copy(), K_BB, Y)
    fac_f = factorize_sparse_rls(np.asfortranarray(K), K_BB, Y, overwrite_k=True)
    assert fac_f.method == "cholesky"
    alpha = 1e-2
    Kc, Yc = K - K.mean(axis=0), Y - Y.mean()
    a_ref = np.linalg.solve(Kc.T @ Kc + alpha * K_BB, Kc.T @ Yc)  # dense direct solve
    fit_ref = Kc @ a_ref
    for fac in (fac_f, fac_c):
        np.testing.assert_allclose(Yc - fac.residuals(alpha), fit_ref, atol=1e-8 * np.abs(fit_ref).max())
    # exact LOO against explicit retraining on a few rows
    loo = fac_f.loo_residuals(alpha)
    np.testing.assert_allclose(loo, fac_c.loo_residuals(alpha), rtol=1e-8, atol=1e-10)
    for i in (0, 5, 450):
        keep = np.arange(900) != i
        Ki = K[keep]
        mu = Ki.mean(axis=0)
        a_i = np.linalg.solve((Ki - mu).T @ (Ki - mu) + alpha * K_BB, (Ki - mu).T @ (Y[keep] - Y[keep].mean()))
        pred = (K[i] - mu) @ a_i + Y[keep].mean()
        np.testing.assert_allclose(loo[i], Y[i] - pred, rtol=1e-6, atol=1e-9)


def test_search_on_fortran_columns_matches_explicit_retraining(rng):
    """The criterion's LOO path on a basis of more than one block (Fortran-ordered columns, whitened by
    blocks) against the estimator's own C-ordered fit and explicit retraining without each row (the
    criterion's LOO keeps a left-out basis point as a basis function: ``basis_in_holdout="keep"``)."""
    from lssvm import SparseLSSVR
    from lssvm.selection import SparseLSSVMCV

    X = rng.standard_normal((600, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(600)
    alphas = np.array([1e-3, 1e-1, 10.0])
    crit = SparseLSSVMCV(X, y, cv="loo", alphas=alphas, basis="pchol", n_basis=200, random_state=0)
    path = crit(gamma=3.0)
    rows = crit.rows_for(gamma=3.0)
    assert rows.size > 128 and crit._D.flags.f_contiguous
    est = SparseLSSVR(gamma=3.0, alpha=0.1, basis=rows).fit(X, y)
    np.testing.assert_allclose(path.mse, est.cv_error(cv="loo", alpha=alphas, basis_in_holdout="keep"), rtol=1e-8)
    # brute force for a few rows: the same basis points, row i left out, a dense direct solve
    kern = RBF(gamma=3.0)
    R = crit._fit_engine(kern, {"gamma": 3.0}).loo_residuals(np.array([0.1]))[0, :, 0]  # the F path
    K, K_BB = kern(X, X[rows]), kern(X[rows], X[rows])
    for i in range(0, 600, 37):
        keep = np.arange(600) != i
        mu, y_mean = K[keep].mean(axis=0), y[keep].mean()
        Kc = K[keep] - mu
        a = np.linalg.solve(Kc.T @ Kc + 0.1 * K_BB, Kc.T @ (y[keep] - y_mean))
        np.testing.assert_allclose(R[i], y[i] - (K[i] - mu) @ a - y_mean, rtol=1e-6, atol=1e-9)
