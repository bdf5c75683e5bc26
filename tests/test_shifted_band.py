"""Band reduction for shifted solves (``lssvm.solvers.shifted_band``) and the
GIL-free BLAS calls under it (``lssvm.solvers._nogil``), against dense
direct solves and explicit products.

Tolerances: the reduction is an orthogonal similarity (backward stable), so
a solve of ``(C + alpha I) x = b`` has relative error of order
``eps * cond(C + alpha I)``; the tests allow ``100 * eps * cond`` (measured:
below ``3 * eps * cond`` on these sizes).  Products are checked to
``1e-12`` relative, a few hundred roundings of O(1) entries.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lssvm.exceptions import PerformanceWarning
from lssvm.solvers import _nogil
from lssvm.solvers._nogil import symm_lower, syr2k_lower_
from lssvm.solvers.shifted_band import BlockReflector, ShiftedBandSolver

EPS = np.finfo(float).eps


def _psd(rng, r, rank=None):
    G = rng.standard_normal((r, rank or r + 3))
    return G @ G.T


def _check_solves(C, alphas, b, X):
    r, s = b.shape
    for i, a in enumerate(alphas):
        A = C + a * np.eye(r)
        ref = np.linalg.solve(A, b)
        err = np.linalg.norm(X[:, i * s : (i + 1) * s] - ref) / np.linalg.norm(ref)
        assert err <= 100 * EPS * np.linalg.cond(A), (r, a, err)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    r=st.integers(1, 140),
    bandwidth=st.integers(1, 70),
    rank_frac=st.floats(0.1, 1.5),
    n_rhs=st.integers(1, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_shifted_solves_equal_dense_solves(r, bandwidth, rank_frac, n_rhs, seed):
    # random sizes around the panel boundaries (r < w, r = w + 1, multiples of w),
    # rank-deficient C (the usual centred normal matrix), several right-hand sides
    rng = np.random.default_rng(seed)
    C = _psd(rng, r, max(1, int(rank_frac * r)))
    alphas = np.array([1e-3, 0.3, 50.0])
    b = rng.standard_normal((r, n_rhs))
    X = ShiftedBandSolver(C, bandwidth).solve(alphas, b)
    assert X.shape == (r, alphas.size * n_rhs)
    _check_solves(C, alphas, b, X)


@pytest.mark.parametrize("r", [1, 2, 64, 65, 66, 129, 300])
def test_band_form_is_similar_to_the_matrix(r):
    # B = Q^T C Q is banded, has C's spectrum, and Q is orthogonal
    rng = np.random.default_rng(r)
    C = _psd(rng, r)
    S = ShiftedBandSolver(C, 64)
    Q = S.rotate(np.eye(r), inverse=True)
    np.testing.assert_allclose(Q.T @ Q, np.eye(r), atol=1e-13)
    w = S.bandwidth
    B = Q.T @ C @ Q
    outside = np.abs(np.tril(B, -w - 1)) + np.abs(np.triu(B, w + 1))
    assert outside.max(initial=0.0) <= 1e-12 * np.abs(C).max()
    for i in range(w + 1):
        np.testing.assert_allclose(S._band[i, : r - i], np.diagonal(B, -i), atol=1e-12 * np.abs(C).max())


def test_only_the_lower_triangle_is_read():
    rng = np.random.default_rng(1)
    C = _psd(rng, 150)
    garbage = C + np.triu(rng.standard_normal((150, 150)) * 1e3, 1)
    b = rng.standard_normal((150, 2))
    alphas = np.array([0.01, 1.0])
    np.testing.assert_allclose(ShiftedBandSolver(garbage).solve(alphas, b), ShiftedBandSolver(C).solve(alphas, b),
                               rtol=1e-10, atol=1e-12)


def test_indefinite_shifted_matrix_falls_back_to_banded_lu():
    # C + alpha I not positive definite: the banded Cholesky fails and the LU path answers
    rng = np.random.default_rng(2)
    G = rng.standard_normal((90, 90))
    C = G + G.T
    alphas = np.array([0.5, 3.0])
    b = rng.standard_normal((90, 1))
    _check_solves(C, alphas, b, ShiftedBandSolver(C, 16).solve(alphas, b))


def test_rejects_non_square_empty_and_non_finite():
    with pytest.raises(ValueError, match="square"):
        ShiftedBandSolver(np.ones((3, 4)))
    with pytest.raises(ValueError, match="empty"):
        ShiftedBandSolver(np.ones((0, 0)))
    with pytest.raises(ValueError, match="NaN"):
        ShiftedBandSolver(np.diag([1.0, np.nan]))


@pytest.mark.parametrize("shape", [(50, 7), (7, 7), (5, 9), (1, 1), (30, 1)])
def test_block_reflector_is_the_qr_factor(shape):
    rng = np.random.default_rng(sum(shape))
    A = rng.standard_normal(shape)
    H = BlockReflector(A)
    p, q = shape
    k = min(p, q)
    Qm = H.apply(np.eye(p))
    np.testing.assert_allclose(Qm.T @ Qm, np.eye(p), atol=1e-13)
    HtA = H.apply(A, transpose=True)
    np.testing.assert_allclose(HtA[:k], H.R, atol=1e-12)
    np.testing.assert_allclose(HtA[k:], 0.0, atol=1e-12)


def test_congruence_on_a_fortran_sub_block_updates_only_its_lower_triangle():
    # the band reduction updates trailing blocks A[lo:, lo:] of a column-major
    # array in place (leading dimension > block size): check against H^T A H
    rng = np.random.default_rng(3)
    r, lo = 120, 37
    full = np.asfortranarray(_psd(rng, r))
    before = full.copy()
    H = BlockReflector(rng.standard_normal((r - lo, 11)))
    H.congruence_(full[lo:, lo:])
    Qm = H.apply(np.eye(r - lo))
    ref = Qm.T @ before[lo:, lo:] @ Qm
    np.testing.assert_allclose(np.tril(full[lo:, lo:]), np.tril(ref), rtol=1e-12, atol=1e-10)
    # nothing outside the block moved
    np.testing.assert_array_equal(full[:lo], before[:lo])
    np.testing.assert_array_equal(full[:, :lo], before[:, :lo])


@pytest.mark.parametrize("fast", [True, False])
def test_nogil_products_equal_numpy(monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(_nogil, "AVAILABLE", False)
        monkeypatch.setattr(_nogil, "_warned", True)  # its warning is tested below
    rng = np.random.default_rng(4)
    big = np.asfortranarray(_psd(rng, 80))
    A = big[10:60, 10:60]  # strided sub-block, lda = 80
    W = rng.standard_normal((50, 6))
    np.testing.assert_allclose(symm_lower(A, W), A @ W, rtol=1e-12, atol=1e-12)
    # only the lower triangle is read
    stale = np.asfortranarray(big.copy())
    stale[10:60, 10:60] += np.triu(np.ones((50, 50)), 1) * 1e6
    np.testing.assert_allclose(symm_lower(stale[10:60, 10:60], W), A @ W, rtol=1e-12, atol=1e-12)
    X, V = rng.standard_normal((50, 6)), rng.standard_normal((50, 6))
    C = np.asfortranarray(big.copy())
    syr2k_lower_(C[10:60, 10:60], X, V, -0.5)
    ref = A - 0.5 * (X @ V.T + V @ X.T)
    np.testing.assert_allclose(np.tril(C[10:60, 10:60]), np.tril(ref), rtol=1e-12, atol=1e-10)
    np.testing.assert_array_equal(C[:10], big[:10])


@pytest.mark.parametrize("fast", [True, False])
def test_solver_without_the_nogil_path_gives_the_same_solutions(monkeypatch, fast):
    # SciPy's f2py wrappers (dgeqrt, dpbsv) and NumPy products stand in when
    # the Cython API is unavailable; both paths must equal the dense solve
    if not fast:
        monkeypatch.setattr(_nogil, "AVAILABLE", False)
        monkeypatch.setattr(_nogil, "_warned", True)  # its warning is tested below
    rng = np.random.default_rng(6)
    C = _psd(rng, 150, 120)
    alphas = np.array([1e-4, 1.0])
    b = rng.standard_normal((150, 2))
    _check_solves(C, alphas, b, ShiftedBandSolver(C, 32).solve(alphas, b))
    H = BlockReflector(rng.standard_normal((60, 9)))
    np.testing.assert_allclose(H.apply(H.apply(np.eye(60)), transpose=True), np.eye(60), atol=1e-13)


def test_pbsv_reports_an_indefinite_matrix():
    ab = np.asfortranarray(np.array([[1.0, -1.0, 1.0], [2.0, 2.0, 0.0]]))  # [[1,2,0],[2,-1,2],[0,2,1]]
    assert not _nogil.pbsv_lower_(ab, np.ones((3, 1), order="F"))


def test_nogil_products_accept_c_ordered_arrays():
    # a C-ordered (row-major) block has no column-major leading dimension: the
    # NumPy fallback answers, with the same result
    rng = np.random.default_rng(5)
    A = np.ascontiguousarray(_psd(rng, 40))[5:, 5:]
    W = rng.standard_normal((35, 3))
    np.testing.assert_allclose(symm_lower(A, W), A @ W, rtol=1e-12, atol=1e-12)
    C = A.copy()
    X, V = rng.standard_normal((35, 2)), rng.standard_normal((35, 2))
    syr2k_lower_(C, X, V, 1.0)
    np.testing.assert_allclose(np.tril(C), np.tril(A + X @ V.T + V @ X.T), rtol=1e-12, atol=1e-10)


def test_nogil_is_in_use_with_this_scipy():
    # the fallback is correct but holds the GIL in places and copies blocks; the
    # hold-out benchmark assumes the GIL-free path (SciPy's Cython BLAS API)
    assert _nogil.AVAILABLE


@pytest.mark.parametrize("fast", [True, False])
def test_nogil_refuses_mis_shaped_arguments(monkeypatch, fast):
    # a 10 x 10 view given 50-row factors: BLAS would address 50 x 50 entries
    # of it (1,220 were measured written outside); refused, nothing written
    if not fast:
        monkeypatch.setattr(_nogil, "AVAILABLE", False)
        monkeypatch.setattr(_nogil, "_warned", True)
    rng = np.random.default_rng(5)
    big = np.asfortranarray(rng.standard_normal((80, 80)))
    before = big.copy()
    view = big[10:20, 10:20]
    X, V, W = rng.standard_normal((50, 3)), rng.standard_normal((50, 3)), rng.standard_normal((50, 3))
    with pytest.raises(ValueError, match=r"C must have shape \(50, 50\)"):
        syr2k_lower_(view, X, V)
    with pytest.raises(ValueError, match=r"A must have shape \(50, 50\)"):
        symm_lower(view, W)
    with pytest.raises(ValueError, match=r"V must have shape \(50, 3\)"):
        syr2k_lower_(big[:50, :50], X, V[:40])
    with pytest.raises(ValueError, match="float64"):
        syr2k_lower_(np.asfortranarray(big[:50, :50], dtype=np.float32), X, V)
    with pytest.raises(ValueError, match="float64"):
        _nogil.geqrt_(big[:10, :5].astype(np.int64))
    ab = np.asfortranarray(rng.standard_normal((3, 20)))
    with pytest.raises(ValueError, match=r"B must have shape \(20, 2\)"):
        _nogil.pbsv_lower_(ab, np.asfortranarray(rng.standard_normal((10, 2))))
    frozen = np.asfortranarray(rng.standard_normal((50, 50)))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        syr2k_lower_(frozen, X, V)
    np.testing.assert_array_equal(big, before)


def test_nogil_warns_once_when_the_fast_path_is_unavailable(monkeypatch):
    # a signature mismatch (another SciPy build, e.g. ILP64) loads no pointer
    assert _nogil._load("blas", "dsymm", "void (int64_t *, int64_t *)") is None
    assert _nogil._load("blas", "dsymm", _nogil._SYMM) is not None
    monkeypatch.setattr(_nogil, "AVAILABLE", False)
    monkeypatch.setattr(_nogil, "_warned", False)
    rng = np.random.default_rng(7)
    A = np.asfortranarray(_psd(rng, 30))
    W = rng.standard_normal((30, 4))
    with pytest.warns(PerformanceWarning, match="GIL-free"):
        out = symm_lower(A, W)
    np.testing.assert_allclose(out, A @ W, rtol=1e-12, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        symm_lower(A, W)  # once only
