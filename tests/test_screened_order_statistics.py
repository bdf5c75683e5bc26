"""Screened order statistics (:mod:`lssvm.cv.conformal.screened`): jackknife+
and full conformal bounds for many test rows, each computing only the
cross-leverages near the k-th smallest value, against the direct
definition (every one of the t x m values formed and sorted) and against
explicit leave-one-out refits, on fresh random data.
"""

import numpy as np
import pytest

import lssvm.cv.conformal.full as full_module
import lssvm.cv.conformal.jackknife as jackknife_module
from lssvm import SparseLSSVR
from lssvm.cv.conformal import (
    MonotoneValues,
    conformal_ranks,
    eigen_rows,
    full_conformal_bounds,
    interval_from_values,
    loo_values,
    ridge_full_conformal,
    screened_full_conformal,
    screened_kth,
    sparse_full_conformal,
    sparse_jackknife_plus,
)

from _reference import dense_solve
from conftest import rel_err

TOL = 1e-10


def spy_windows(monkeypatch, module):
    """The window sizes of every screened group run through ``module``."""
    seen = []

    def spy(*args, **kw):
        return screened_kth(*args, **kw, windows=seen)

    monkeypatch.setattr(module, "screened_kth", spy)
    return seen


def sorted_values(Ax, A, values):
    """Every value at every new point, sorted per point: the definition."""
    return np.sort(values.at(Ax @ A.T, np.arange(A.shape[0])), axis=1)


@pytest.mark.parametrize("form", ["affine", "ratio"])
def test_screened_kth_is_the_kth_smallest_of_all_values(rng, form):
    m, r, t = 3000, 30, 700
    A = 0.03 * rng.standard_normal((m, r)) * rng.uniform(0.2, 2.0, (m, 1))
    Ax = 0.03 * rng.standard_normal((t, r)) * rng.uniform(0.2, 3.0, (t, 1))
    if form == "affine":
        c = np.round(rng.standard_normal(m), 1)  # ties among the values
        b = rng.standard_normal(m) * (rng.random(m) < 0.9)  # and rows that do not move
        values = MonotoneValues(c, b)
    else:
        s = rng.choice([-1.0, 0.0, 1.0], m, p=[0.45, 0.1, 0.45])
        values = MonotoneValues(1.0 + s / m, s, np.abs(rng.standard_normal(m)))
    ks = [1, 2, 17, m // 2, m - 40, m - 1, m]
    windows = []
    got, done = screened_kth(Ax, A, np.linalg.norm(A, axis=1), [(values, k) for k in ks], windows=windows)
    assert done.all()
    assert max(windows) < m / 4  # the screening did the work
    ref = sorted_values(Ax, A, values)
    for s, k in enumerate(ks):
        np.testing.assert_allclose(got[:, s], ref[:, k - 1], rtol=1e-13, atol=1e-15)


def test_screened_kth_out_of_range_ranks_are_infinite(rng):
    A, Ax = rng.standard_normal((50, 3)), rng.standard_normal((4, 3))
    values = MonotoneValues(rng.standard_normal(50), rng.standard_normal(50))
    got, done = screened_kth(Ax, A, np.linalg.norm(A, axis=1), [(values, 0), (values, 51)])
    assert done.all()
    assert np.all(got[:, 0] == -np.inf) and np.all(got[:, 1] == np.inf)


def test_a_ratio_whose_denominator_may_vanish_is_left_to_the_direct_route(rng):
    A = rng.standard_normal((200, 4))
    Ax = np.vstack([1e-4 * rng.standard_normal((3, 4)), 10 * rng.standard_normal((3, 4))])
    values = MonotoneValues(np.ones(200), np.ones(200), np.abs(rng.standard_normal(200)))
    got, done = screened_kth(Ax, A, np.linalg.norm(A, axis=1), [(values, 100)], group_rows=3)
    assert done.tolist() == [True] * 3 + [False] * 3
    assert np.all(np.isnan(got[3:]))
    np.testing.assert_allclose(got[:3, 0], sorted_values(Ax[:3], A, values)[:, 99], rtol=1e-13)


def fit(rng, m, n, v=1, alpha=1e-2):
    X = rng.standard_normal((m, 4))
    F = np.column_stack([np.sin(2 * X[:, 0]), X[:, 1] * X[:, 2]])[:, :v]
    Y = F + 0.2 * rng.standard_normal((m, v)) * rng.uniform(0.3, 2.0, (m, 1))  # varied residual scales
    est = SparseLSSVR(gamma=0.25, alpha=alpha, basis="random", n_basis=n, random_state=1).fit(X, Y[:, 0] if v == 1 else Y)
    return est, X, Y


@pytest.mark.parametrize("v", [1, 2])
@pytest.mark.parametrize("coverage", [0.9, 0.5])
def test_jackknife_plus_for_many_rows_equals_the_direct_values(rng, monkeypatch, v, coverage):
    est, _, _ = fit(rng, 2000, 40, v)
    Xt = 1.3 * rng.standard_normal((600, 4))
    fac, a = est.factorization_, est.alpha
    windows = spy_windows(monkeypatch, jackknife_module)
    fast = sparse_jackknife_plus(fac, est.kernel_, est.basis_vectors_, Xt, coverage, a)
    assert windows and max(windows) < 2000 / 4
    R = fac.loo_residuals(a)
    _, values = loo_values(fac, eigen_rows(fac, est.kernel_(Xt, est.basis_vectors_)), a, R)
    assert rel_err(fast, interval_from_values(values, np.abs(R), coverage)) < TOL
    out = est.predict_interval(Xt, coverage, method="jackknife+")
    assert rel_err(out, fast[:, :, 0] if v == 1 else fast) < TOL


def test_jackknife_plus_equals_explicit_leave_one_out_refits(rng, monkeypatch):
    m, alpha = 400, 0.05
    est, X, Y = fit(rng, m, 12, alpha=alpha)
    Xt = rng.standard_normal((40, 4))
    monkeypatch.setattr(jackknife_module, "_BLOCK_FLOATS", 12 * 16)  # several blocks of test rows
    windows = spy_windows(monkeypatch, jackknife_module)
    fast = est.predict_interval(Xt, 0.8, method="jackknife+")
    assert len(windows) > 1 and max(windows) < m / 2
    Z = est.basis_vectors_
    K, K_BB, K_t = est.kernel_(X, Z), est.kernel_(Z, Z), est.kernel_(Xt, Z)
    centres, scores = np.empty((Xt.shape[0], m)), np.empty(m)
    for i in range(m):
        train = np.arange(m) != i
        w, b = dense_solve(K[train], K_BB, Y[train], alpha)
        centres[:, i] = K_t @ w[:, 0] + b[0]
        scores[i] = abs(Y[i, 0] - (K[i] @ w[:, 0] + b[0]))
    k_lo, k_hi = conformal_ranks(0.8, m)
    ref = np.column_stack([np.sort(centres - scores, axis=1)[:, k_lo - 1], np.sort(centres + scores, axis=1)[:, k_hi - 1]])
    assert rel_err(fast, ref) < 1e-8


def direct_full(fac, est, Xt, coverage, a):
    """The full conformal bounds from the explicit (t, m) cross-leverages."""
    d = 1.0 / (fac.eigenvalues + a)
    Mx = eigen_rows(fac, est.kernel_(Xt, est.basis_vectors_))
    U = (Mx * d) @ fac.M.T + 1.0 / fac.n_samples
    h = np.einsum("ij,ij->i", Mx * d, Mx) + 1.0 / fac.n_samples
    centre = fac.y_mean + Mx @ (d[:, None] * fac.z)
    return full_conformal_bounds(fac.residuals(a), U, h, centre, coverage)


@pytest.mark.parametrize("v", [1, 2])
def test_full_conformal_for_many_rows_equals_the_direct_sets(rng, monkeypatch, v):
    est, _, _ = fit(rng, 2000, 40, v)
    Xt = 1.3 * rng.standard_normal((500, 4))
    fac, a = est.factorization_, est.alpha
    windows = spy_windows(monkeypatch, full_module)
    fast = sparse_full_conformal(fac, est.kernel_, est.basis_vectors_, Xt, 0.9, a)
    assert windows and max(windows) < 2000 / 4
    assert rel_err(fast, direct_full(fac, est, Xt, 0.9, a)) < TOL


def test_full_conformal_rows_past_unit_leverage_take_the_sorted_route(rng, monkeypatch):
    # a small alpha on few rows: leverages near 1, so some test points cannot be certified |u_i| < 1
    est, _, _ = fit(rng, 300, 60, alpha=1e-7)
    Xt = np.vstack([rng.standard_normal((200, 4)), 4 * rng.standard_normal((50, 4))])
    fac, a = est.factorization_, est.alpha
    dones = []

    def spy(*args, **kw):
        got, done = screened_kth(*args, **kw)
        dones.append(done)
        return got, done

    monkeypatch.setattr(full_module, "screened_kth", spy)
    fast = sparse_full_conformal(fac, est.kernel_, est.basis_vectors_, Xt, 0.8, a)
    done = np.concatenate(dones)
    assert not done.all()
    ref = direct_full(fac, est, Xt, 0.8, a)
    assert np.array_equal(np.isfinite(fast), np.isfinite(ref))
    assert rel_err(fast[np.isfinite(ref)], ref[np.isfinite(ref)]) < 1e-8


def test_ridge_full_conformal_equals_the_direct_sets(rng, monkeypatch):
    m, p = 2500, 25
    Z = np.hstack([0.3 * rng.standard_normal((m, p - 1)), np.ones((m, 1))])
    penalty = np.diag(np.r_[np.full(p - 1, 0.5), 0.0])
    theta = rng.standard_normal(p)
    Y = Z @ theta + rng.standard_normal(m) * rng.uniform(0.3, 2.0, m)
    A = Z.T @ Z + penalty
    fitted = np.linalg.solve(A, Z.T @ Y)
    E = (Y - Z @ fitted)[:, None]
    Xt = 0.3 * rng.standard_normal((400, p - 1)) * rng.uniform(0.5, 2.0, (400, 1))
    rows = lambda X: np.hstack([X, np.ones((X.shape[0], 1))])  # noqa: E731
    centre = (rows(Xt) @ fitted)[:, None]
    windows = spy_windows(monkeypatch, full_module)
    fast = ridge_full_conformal(Z, penalty, rows, Xt, E, centre, 0.9)
    assert windows and max(windows) < m / 4
    S = np.linalg.solve(A, rows(Xt).T)
    ref = full_conformal_bounds(E, (Z @ S).T, np.einsum("ij,ji->i", rows(Xt), S), centre, 0.9)
    assert rel_err(fast, ref) < TOL


def test_non_finite_residuals_take_the_direct_route(rng):
    m, r = 300, 5
    A = 0.05 * rng.standard_normal((m, r))
    Ax = 0.05 * rng.standard_normal((20, r))
    E = rng.standard_normal((m, 1))
    E[7] = np.inf
    centre = rng.standard_normal((20, 1))
    got = screened_full_conformal(E, A, np.linalg.norm(A, axis=1), Ax, 1.0 / m, centre, 0.9)
    ref = full_conformal_bounds(E, Ax @ A.T + 1.0 / m, 1.0 / m + np.einsum("ij,ij->i", Ax, Ax), centre, 0.9)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


def test_a_non_finite_training_row_takes_the_direct_route(rng):
    """The finiteness of the training rows is read from their norms (no pass over the rows per block)."""
    m, r = 300, 5
    A = 0.05 * rng.standard_normal((m, r))
    A[11, 2] = np.nan
    Ax = 0.05 * rng.standard_normal((20, r))
    E = rng.standard_normal((m, 1))
    centre = rng.standard_normal((20, 1))
    with np.errstate(invalid="ignore"):
        got = screened_full_conformal(E, A, np.linalg.norm(A, axis=1), Ax, 1.0 / m, centre, 0.9)
        ref = full_conformal_bounds(E, Ax @ A.T + 1.0 / m, 1.0 / m + np.einsum("ij,ij->i", Ax, Ax), centre, 0.9)
    np.testing.assert_array_equal(got, ref)


def test_jackknife_plus_with_a_non_finite_loo_residual_takes_the_direct_route(rng, monkeypatch):
    est, _, _ = fit(rng, 300, 12)
    fac, a = est.factorization_, est.alpha
    R = fac.loo_residuals(a).copy()
    R[5] = np.inf  # a row of leverage 1 has no finite LOO residual

    class WithR:  # the factorisation, with these LOO residuals
        def __getattr__(self, name):
            return getattr(fac, name)

        def loo_residuals(self, alpha):
            return R

    windows = spy_windows(monkeypatch, jackknife_module)
    monkeypatch.setattr(jackknife_module, "_BLOCK_FLOATS", 300 * 7)  # direct sub-blocks of 7 rows in blocks of 175
    Xt = rng.standard_normal((200, 4))
    with np.errstate(invalid="ignore"):  # inf - inf in the direct values, as there
        got = sparse_jackknife_plus(WithR(), est.kernel_, est.basis_vectors_, Xt, 0.8, a)
        _, values = loo_values(fac, eigen_rows(fac, est.kernel_(Xt, est.basis_vectors_)), a, R)
        ref = interval_from_values(values, np.abs(R), 0.8)
    assert not windows
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
