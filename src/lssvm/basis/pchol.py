"""Pivoted (incomplete) Cholesky basis selection: the default basis.

Written by hand (SciPy's ``lapack.dpstrf`` needs the whole m x m kernel
matrix): the factor is grown one column at a time, each kernel column
computed on demand, with the next pivot the point of largest relative
residual diagonal ``R_jj / k_jj``, ``R_jj = k_jj - K_Sj^T K_SS^{-1} K_Sj``
(the same as the absolute one for RBF and Laplacian kernels).  That is the
point the current basis reconstructs worst, so the greedy choice of feature-vector
selection (:mod:`lssvm.basis.fvs`) with its O(m) scoring of every
candidate replaced by an O(1) look-up: O(m (d + k)) per added point
instead of O(m^2).
"""

from __future__ import annotations

import math
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.linalg import blas, lapack
from sklearn.utils import check_random_state

from .._threads import single_threaded_blas, thread_scope
from ..kernels import Kernel
from ._checks import check_count, check_fraction, check_input, check_kernel, unchecked

__all__ = ["DEFAULT_BASIS_CAP", "DEFAULT_REGRESSION_BASIS_CAP", "PivotedCholeskyResult", "default_n_basis",
           "pivoted_cholesky"]

#: Largest default basis (n_basis=None): beyond it a fit's O(m n^2) would dominate.  700, not 1000:
#: half the search time on 10^4+ rows, test error on MAGIC and adult within 2 %
#: of neo-ls-svm's (docs/benchmarks.md).
DEFAULT_BASIS_CAP = 700
#: The sparse LS-SVM regressors' default cap: 500 points gave the test MSE of 700
#: within 0-2 % on friedman1 (m = 5,000 and 20,000), elevators and ailerons (pol: 21 % more, still 0.65
#: of neo-ls-svm's) at about half the search time; classifiers keep 700, which their error rate needs.
DEFAULT_REGRESSION_BASIS_CAP = 500
#: Default basis size per square root of the number of rows.
DEFAULT_BASIS_PER_SQRT_M = 10.0
#: Candidates of the first block of pivoted_cholesky, and the most of any block.
_FIRST_BLOCK, _MAX_BLOCK = 16, 256
#: Most kernel columns computed in one call (the batch is the number of pivots the last block served).
_MAX_BATCH = 64


def default_n_basis(m: int, cap: int = DEFAULT_BASIS_CAP) -> int:
    """The default basis size for ``m`` training rows:
    ``min(cap, ceil(10 sqrt(m)), m)`` (cap 700; the sparse regressors pass
    ``DEFAULT_REGRESSION_BASIS_CAP``, 500).

    Sub-linear and capped, so the default fit costs O(m n^2) = O(m^2) at
    most while m < 4,900 and O(m) beyond: 317 points at m = 1,000, 448 at
    2,000, 700 from m = 4,900 (500 from m = 2,500 for the sparse
    regressors; chosen with ``benchmarks/defaults_speed.py``,
    ``docs/benchmarks.md``).
    """
    if not isinstance(m, Integral) or m < 1:
        raise ValueError(f"m must be a positive integer; got {m!r}")
    return int(min(cap, math.ceil(DEFAULT_BASIS_PER_SQRT_M * math.sqrt(m)), m))


def _packed(k):
    """Entries of a k x k triangle in LAPACK's packed storage."""
    return k * (k + 1) // 2


@dataclass(frozen=True)
class PivotedCholeskyResult:
    """Outcome of :func:`pivoted_cholesky`.

    Attributes
    ----------
    indices : ndarray of shape (n,)
        Selected rows, in pivot order.
    error_curve : ndarray of shape (n + 1,)
        Mean relative residual ``mean_i R_ii / k_ii`` (rows with
        ``k_ii = 0`` count 0) before any point and after each: the same
        quantity as FVS's reconstruction error ``1 - J(S)``.
    stop_reason : str
        ``"n_basis"``, ``"tol"`` or ``"singular"`` (no residual above
        ``pivot_tol``, or ``K_SS`` would become too ill-conditioned).
    """

    indices: np.ndarray
    error_curve: np.ndarray
    stop_reason: str


def pivoted_cholesky(X, kernel: Kernel, n_basis=None, *, tol=0.0, pivot_tol=1e-6, rcond=1e-10,
                     random_state=None) -> PivotedCholeskyResult:
    """Basis points by pivoted incomplete Cholesky factorisation of the kernel matrix.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (m, d)
    kernel : Kernel
    n_basis : int, optional
        Most points to select; default :func:`default_n_basis` (m).
    tol : float in [0, 1), default=0.0
        Stop once the mean relative residual is at most this.
    pivot_tol : float in (0, 1), default=1e-6
        Stop when no point has relative residual ``R_jj / k_jj`` above this.
    rcond : float in (0, 1), default=1e-10
        Stop, without adding it, when the next point would bring LAPACK's
        reciprocal condition estimate of ``K_SS`` below this.
    random_state : int, RandomState or None
        Breaks ties for the first pivot (all ``k_jj`` equal for RBF and
        Laplacian kernels); later pivots are deterministic.

    Returns
    -------
    PivotedCholeskyResult

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        For invalid ``X`` or parameters, or when every ``k(x, x)`` is 0.

    Notes
    -----
    Cost O(m (d + k)) for the k-th point: one kernel column k(X, x_j)
    (m kernel values, O(m d)) and its O(m k) Cholesky update, so
    O(m n (d + n)) and m n kernel values in all (at most 2 m n, see
    below), O(m n) memory for the factor; no m x m matrix is formed.
    Exact FVS, which scores every candidate, costs O(m^2 n).  The O(m k)
    updates are blocked: the rows of largest residual are candidates, and a
    block lasts while the next pivot is a candidate (same pivots as one
    column at a time, about half the memory traffic); the candidates'
    kernel columns and products with the factor are formed in batches, the
    pivot's and those of the candidates of largest residual together, as
    many as the last block served (one pass over X and one matrix product
    per batch; never more than two columns computed per point); the
    condition estimate reads ``K_SS``'s factor in LAPACK's packed storage
    (``dppcon``), in place, and only where a bound from ``||L^-1||_F``
    (one packed triangular solve per point) cannot prove it passes.  At
    m = 5,000, n = 708 the blocking took the selection from 1.6 s to 0.7 s
    of CPU (one thread); the batches took adult's (m = 30,148, d = 104)
    from 19 s to 10 s; the bound, a preallocated
    factor and one BLAS thread for the per-point steps MAGIC's from 0.73 s
    to 0.50 s and adult's from 3.5 s to 1.9 s.

    References
    ----------
    S. Fine and K. Scheinberg, Efficient SVM training using low-rank kernel
    representations, JMLR 2 (2001).  F. R. Bach and M. I. Jordan, Kernel
    independent component analysis, JMLR 3 (2002), §4.
    """
    X = check_input(X)
    kernel = check_kernel(kernel, X)
    kern = unchecked(kernel)
    m = X.shape[0]
    n_basis = check_count("n_basis", n_basis, allow_none=True)
    tol = check_fraction("tol", tol, low_open=False, meaning=" (the mean relative residual at which to stop)")
    pivot_tol = check_fraction("pivot_tol", pivot_tol, meaning=" (a relative residual, e.g. 1e-6)")
    rcond = check_fraction("rcond", rcond, meaning=" (a reciprocal condition number, e.g. 1e-10)")
    n_max = default_n_basis(m) if n_basis is None else min(n_basis, m)
    kdiag = np.asarray(kernel.diag(X), dtype=float)
    scale = kdiag.max()
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError("pivoted Cholesky needs at least one point with k(x, x) > 0; "
                         "every training point has zero norm in feature space")
    nonzero = kdiag > 1e-14 * scale
    w = np.where(nonzero, 1.0 / np.where(nonzero, kdiag, 1.0), 0.0)
    resid = np.where(nonzero, kdiag, 0.0)
    # preallocated (a factor grown by doubling copied itself each time: a tenth of the selection)
    Lp = np.zeros(_packed(n_max))  # K_SS = L L^T: row k of L at Lp[k(k+1)/2:], i.e. L^T packed
    Gt = np.empty((n_max, m))  # the factor, transposed: contiguous rows for the O(m k) update
    selected: list[int] = []
    curve = [float(w @ resid / m)]
    col_norms = np.zeros(0)
    inv_fro2 = 0.0  # ||L^-1||_F^2, a bound on ||K_SS^-1||_2 that spares most condition estimates
    stop_reason = "n_basis"
    rel = resid * w
    top = np.flatnonzero(rel >= rel.max() * (1 - 1e-12))
    j = int(check_random_state(random_state).choice(top))
    # Blocked by candidates (hand-written: no library grows a factor on demand this way).  At the start
    # of a block, the c rows of largest residual are the candidates and their factor products
    # G_C G^T (c x m) are formed in one GEMM; while the next pivot is a candidate, its column needs only
    # the products with the factor columns added in this block.  The pivots are those of the unblocked
    # algorithm (the next pivot is always the global argmax); only the O(m k) BLAS-2 update becomes
    # mostly BLAS-3, which moves far less memory.  Kernel values: m per pivot, plus at most m per pivot
    # for columns computed in a batch and not used (the batches' size is capped to keep that bound).
    slot = np.full(m, -1, dtype=np.intp)  # row -> its place among the block's candidates
    P = KC = np.zeros((0, m))
    have = np.zeros(0, dtype=bool)
    k0 = k_prev = computed = 0
    n_cand = _FIRST_BLOCK
    # The per-point steps are small or memory-bound: BLAS on one thread for them, the block
    # GEMM and the kernel columns on the call's threads.  The one-thread sections are lssvm's
    # reference-counted ones (single_threaded_blas): the limit is process-wide, and they never raise it.
    # Small problems are left alone (their BLAS calls are below OpenBLAS's threading thresholds anyway,
    # and the scope's plan costs about a millisecond).
    manage = m * n_max >= 1 << 20
    # The scope's plan also sizes the kernel's thread pool.
    with thread_scope() if manage else nullcontext(), ExitStack() as one_thread:
        while len(selected) < n_max:
            if curve[-1] <= tol:
                stop_reason = "tol"
                break
            if rel[j] <= pivot_tol:
                stop_reason = "singular"
                break
            k = len(selected)
            if slot[j] < 0:  # a new block
                if k > k0:  # adapt the block to the pivots the last one served
                    n_cand = int(min(_MAX_BLOCK, max(_FIRST_BLOCK, 2 * (k - k0))))
                k0 = k
                c = min(n_cand, m)
                cand = np.argpartition(rel, m - c)[m - c:] if c < m else np.arange(m)
                cand = cand[rel[cand] > pivot_tol]
                if j not in cand:
                    cand = np.append(cand, j)
                slot = np.full(m, -1, dtype=np.intp)
                slot[cand] = np.arange(cand.size)
                one_thread.close()  # the block GEMM and the kernel batch on the call's threads
                P = Gt[:k, cand].T @ Gt[:k] if k else np.zeros((cand.size, m))  # one GEMM: (c x k) (k x m)
                # the kernel columns of the candidates of largest residual (the pivot's included), as many
                # as the last block served, in one call: one pass over X per block, not per pivot (at
                # m = 30,000, d = 104 a column alone took 20 ms); never more than two columns computed per
                # point so far
                KC, have = np.empty((cand.size, m)), np.zeros(cand.size, dtype=bool)
                size = max(1, min(k - k_prev if k else 1, _MAX_BATCH, 2 * (k + 1) - computed, cand.size))
                computed += _fill_columns(KC, have, kern, X, cand, rel, slot[j], size)
                k_prev = k
                if manage:
                    one_thread.enter_context(single_threaded_blas())
            if not have[slot[j]]:  # a candidate outside the batch: it and the next ones by residual
                one_thread.close()
                size = max(1, min(_MAX_BATCH, 2 * (k + 1) - computed))
                computed += _fill_columns(KC, have, kern, X, cand, rel, slot[j], size)
                if manage:
                    one_thread.enter_context(single_threaded_blas())
            col = KC[slot[j]]  # the only kernel values: m per point (and the batch's unused ones)
            k_SS = col[selected + [j]]
            norms_new = np.append(col_norms + np.abs(k_SS[:-1]), np.abs(k_SS).sum())
            g = col - P[slot[j]]
            if k > k0:
                g -= Gt[k0:k, j] @ Gt[k0:k]
            d = np.sqrt(resid[j])
            g /= d
            g[j] = d
            g[selected] = 0.0  # selected points are reconstructed exactly
            l_row = Gt[:k, j]  # L's new row: [l_row, d]
            Lp[_packed(k) : _packed(k) + k] = l_row  # L lower triangular in pivot order, stored by rows
            Lp[_packed(k + 1) - 1] = d
            # The condition estimate: LAPACK's (dppcon, packed storage: each step appends a row and LAPACK
            # reads it in place) unless a bound proves it passes.  L^-1's new row is
            # [-(L_k^-T l)^T / d, 1 / d] (one triangular solve, a fifth of dppcon's work), and
            # ||K_SS^-1||_1 <= sqrt(k+1) ||K_SS^-1||_2 <= sqrt(k+1) ||L^-1||_F^2, while dppcon's estimate
            # of ||K_SS^-1||_1 is a lower bound: so its rcond estimate is at least the bound's, and
            # skipping it when the bound passes (with a factor 2 for rounding) stops where it would.
            x = blas.dtpsv(k, Lp, l_row) if k else l_row
            inv_new = inv_fro2 + (x @ x + 1.0) / d**2
            anorm = norms_new.max()
            if 1.0 / (anorm * np.sqrt(k + 1) * inv_new) < 2 * rcond:
                est, info = lapack.dppcon(k + 1, Lp[: _packed(k + 1)], anorm, lower=0)
                if info != 0 or est < rcond:
                    stop_reason = "singular"
                    break
            col_norms, inv_fro2 = norms_new, inv_new
            Gt[k] = g
            np.square(g, out=g)
            resid -= g
            np.maximum(resid, 0.0, out=resid)
            resid[j] = 0.0
            selected.append(j)
            slot[j] = -1
            curve.append(float(w @ resid / m))
            np.multiply(resid, w, out=rel)
            j = int(np.argmax(rel))
    if not selected:
        raise ValueError(f"pivoted Cholesky chose no point (stop reason {stop_reason!r}); lower tol or pivot_tol")
    return PivotedCholeskyResult(np.asarray(selected, dtype=np.intp), np.asarray(curve), stop_reason)


def _fill_columns(KC, have, kern, X, cand, rel, pivot, size):
    """Kernel columns ``k(X, x_c)`` into the rows of ``KC`` of the ``size`` candidates not yet computed
    of largest residual, the pivot's (position ``pivot`` in ``cand``) among them, in one kernel call;
    returns how many were computed."""
    todo = np.flatnonzero(~have)
    first = todo[np.argsort(-rel[cand[todo]], kind="stable")[:size]]
    if not np.any(first == pivot):
        first[-1] = pivot
    KC[first] = kern(X, X[cand[first]]).T
    have[first] = True
    return first.size
