"""The rounding guard of the exact LOO residuals flags rows by their own values only.

:meth:`lssvm.solvers.PathSolution.loo_rows` and
:meth:`lssvm.solvers.SparseRLSFactorization.loo_residuals` flag a row when its
residual's estimated relative error (from the eigenvalues' rounding) passes
``LOO_RTOL`` against ``max(|R_i|, target RMS)``.  Checked on ill-conditioned fresh
random data whose targets differ in scale between the first and second half of
the rows (so that a block's RMS is not the whole set's):

- the flagged rows are those of the element-wise estimate on every row, alpha and
  target, with the RMS over all rows, whatever the blocks the rows come in;
- the residuals of the rows not flagged equal explicit refits without the row
  (a Householder QR solve sharing no code with lssvm) of the same model: the ridge
  on the features ``K W``, ``W`` the map of the range of the singular ``K_BB``.
"""

import warnings

import numpy as np
import pytest

import lssvm.solvers.sparse_rls as sparse_rls
from lssvm import NumericalWarning
from lssvm.kernels import make_kernel
from lssvm.solvers import factorize_sparse_rls
from lssvm.solvers.sparse_rls import _EPS, LEVERAGE_TOL, LOO_RTOL

from _reference import lstsq_solve

SEEDS = range(6)


def _problem(seed, m=160, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    Z = X[:n]
    kernel = make_kernel("rbf", gamma=0.05)  # wide: K_BB is numerically singular, lambda_max / alpha large
    y = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2]) + 0.1 * rng.normal(size=(m, 2))
    y[m // 2:] *= 1e3  # the halves' RMS differ by 1e3
    K, K_BB = kernel(X, Z), kernel(Z, Z)
    # K_BB is numerically singular: the model on its range, ridge on the features K W with this map W
    s, U = np.linalg.eigh(K_BB)
    keep = s > 1e-10 * s.max()
    W = U[:, keep] / np.sqrt(s[keep])
    fac = factorize_sparse_rls(K, K_BB, y, whitener=W)
    lam = fac.eigenvalues.max()
    alphas = lam / np.array([1e4, 1e8, 1e10])
    return fac, alphas, K @ W, y


def _elementwise_flags(fac, alphas):
    """The guard's estimate on every row, alpha and target, the targets' RMS over all rows."""
    M, z, m = fac.M, fac.z, fac.n_samples
    D = 1.0 / (fac.eigenvalues[:, None] + alphas[None])
    Yc = fac.y - fac.y_mean
    E = Yc[:, None, :] - np.einsum("ir,rav->iav", M, D[:, :, None] * z[:, None, :])
    denom = 1.0 - 1.0 / m - (M * M) @ D
    R = E / denom[:, :, None]
    y_scale = np.sqrt(np.mean(Yc ** 2, axis=0))
    dF = np.einsum("ir,rav->iav", np.abs(M), np.abs(z)[:, None, :] * (D * D)[:, :, None])
    err = _EPS * fac.eigenvalues.max() * (dF + np.abs(R) * ((M * M) @ (D * D))[:, :, None]) / np.abs(denom)[:, :, None]
    over = (err > LOO_RTOL * np.maximum(np.abs(R), y_scale)) | np.isnan(err)
    return np.flatnonzero(over.any(axis=(1, 2)) | (denom <= LEVERAGE_TOL).any(axis=1))


def _flags_in_blocks(fac, alphas, block):
    flagged = []
    for lo in range(0, fac.n_samples, block):
        rows = slice(lo, lo + block)
        _, tiny = fac.loo_rows(fac.M[rows], fac.centred_rows(rows), alphas)
        flagged.append(lo + tiny)
    return np.concatenate(flagged)


def test_flagged_rows_do_not_depend_on_the_blocks():
    counts = []
    for seed in SEEDS:
        fac, alphas, *_ = _problem(seed)
        expected = _elementwise_flags(fac, alphas)
        counts.append(expected.size)
        for block in (7, 50, fac.n_samples):
            np.testing.assert_array_equal(_flags_in_blocks(fac, alphas, block), expected, err_msg=f"seed {seed}, block {block}")
    # the data exercise the guard: some rows flagged, never all
    assert sum(counts) > 0 and max(counts) < 160


@pytest.mark.parametrize("chunk", [5, 1 << 18])
def test_loo_residuals_warns_of_the_elementwise_rows(monkeypatch, chunk):
    monkeypatch.setattr(sparse_rls, "_GUARD_CHUNK", chunk, raising=False)
    seen = []
    monkeypatch.setattr(sparse_rls, "warn_tiny_leverage", lambda rows, **kw: seen.append(np.asarray(rows)))
    for seed in SEEDS:
        fac, alphas, *_ = _problem(seed)
        fac.loo_residuals(alphas)
        np.testing.assert_array_equal(seen[-1], _elementwise_flags(fac, alphas), err_msg=f"seed {seed}")


def test_unflagged_residuals_equal_explicit_refits():
    for seed in SEEDS[:3]:
        fac, alphas, features, y = _problem(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            R = fac.loo_residuals(alphas)  # (A, m, v)
        flagged = set(_elementwise_flags(fac, alphas).tolist())
        y_scale = np.sqrt(np.mean((y - y.mean(axis=0)) ** 2, axis=0))
        m = y.shape[0]
        checked = 0
        for i in range(m):
            if i in flagged:
                continue
            keep = np.arange(m) != i
            for k, alpha in enumerate(alphas):
                a, b = lstsq_solve(features[keep], np.eye(features.shape[1]), y[keep], alpha)
                expected = y[i] - (features[i] @ a + b)
                np.testing.assert_allclose(R[k, i], expected, rtol=0, atol=1e-6 * np.maximum(np.abs(expected), y_scale).max(),
                                           err_msg=f"seed {seed}, row {i}, alpha {alpha:g}")
            checked += 1
        assert checked > m // 2
