"""Greedy feature-vector selection (Baudat & Anouar 2001; Cawley & Talbot 2004, §2.4.1).

Written by hand: no maintained library offers it.  It is a pivoted,
partial Cholesky factorisation of the kernel matrix in which the next pivot
is the point that most increases the mean relative reconstruction quality

    J(S) = (1/m) sum_i  K_Si^T K_SS^{-1} K_Si / k_ii

rather than the point with the largest residual diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack
from sklearn.utils import check_random_state

from ..kernels import DEFAULT_BLOCK_SIZE, Kernel, iter_row_blocks
from ._checks import check_count, check_fraction, check_input, check_kernel, unchecked

__all__ = ["FVSResult", "feature_vector_selection"]

#: Largest kernel matrix (bytes) the exact search keeps in memory.
DEFAULT_CACHE_BYTES = 1 << 30


@dataclass(frozen=True)
class FVSResult:
    """Outcome of :func:`feature_vector_selection`.

    Attributes
    ----------
    indices : ndarray of shape (n,)
        Selected rows of ``X``, in the order they were chosen.
    error_curve : ndarray of shape (n + 1,)
        Mean relative reconstruction error ``1 - J(S)`` before any point
        (1.0 when no row has zero norm) and after each addition; never
        increases.
    stop_reason : str
        ``"n_basis"``, ``"tol"`` (error below ``tol``) or ``"singular"`` (no
        remaining point is numerically independent of the selected ones, or
        the next one would make ``K_SS`` too ill-conditioned).
    """

    indices: np.ndarray
    error_curve: np.ndarray
    stop_reason: str


def feature_vector_selection(
    X,
    kernel: Kernel,
    *,
    n_basis: int | None = None,
    tol: float = 0.0,
    pivot_tol: float = 1e-10,
    rcond: float = 1e-10,
    n_candidates: int | None = None,
    random_state=None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> FVSResult:
    """Select basis points greedily by mean relative reconstruction quality.

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Candidate points (the training inputs).
    kernel : Kernel
        Kernel defining the feature space.
    n_basis : int, optional
        Maximum number of points to select (default ``m``).
    tol : float in [0, 1), default=0.0
        Stop once the mean relative reconstruction error ``1 - J(S)`` is at
        most ``tol``.
    pivot_tol : float in (0, 1), default=1e-10
        A point is a candidate only while its relative residual
        ``(k_jj - K_Sj^T K_SS^{-1} K_Sj) / k_jj`` exceeds ``pivot_tol``; when
        no point qualifies ``K_SS`` would stop being numerically invertible
        and the search ends (the stopping rule of Cawley & Talbot 2004).
    rcond : float in (0, 1), default=1e-10
        The search also ends, without adding it, when the best point would
        bring the reciprocal condition number of ``K_SS`` (LAPACK's estimate
        from the Cholesky factor, O(k^2) per step) below ``rcond``; with the
        solvers' default ``rcond`` this keeps an FVS basis safely invertible.
    n_candidates : int, optional
        ``None`` (default): exact greedy search over every point.  An int
        ``c``: each step scores only ``c`` points drawn at random among the
        remaining candidates (the stochastic variant; reproducible with
        ``random_state``).
    random_state : int, RandomState or None
        Seeds the candidate draws when ``n_candidates`` is set.
    block_size : int, default=2048
        Rows per kernel block.
    cache_bytes : int, default=1 GiB
        The exact search keeps the m x m kernel matrix when it fits in this
        many bytes; otherwise it re-evaluates it in row blocks each step.

    Returns
    -------
    FVSResult
        With at least one point.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        If ``X`` is not a non-empty finite 2-D array, ``n_basis`` or
        ``n_candidates`` is not a positive integer (or None), ``tol`` is
        not in [0, 1), ``pivot_tol`` or ``rcond`` not in (0, 1), or no point
        can be selected (every point has ``k(x, x) = 0``).

    Notes
    -----
    With the incomplete Cholesky factor ``G`` (m x k, ``G G^T = K_{:S}
    K_SS^{-1} K_{S:}``) and residual kernel ``R = K - G G^T``, adding point j
    raises J by ``(1/m) sum_i R_ij^2 / (k_ii R_jj)``.  Adding a point costs
    O(m (d + k)) for its new column of ``G`` (the O(m k) Cholesky-style
    update instead of a refit).  Scoring is where the two modes differ:

    * exact search keeps ``s_j = sum_i R_ij^2 / k_ii`` for every j up to date
      with one kernel matrix-vector product per step, O(m^2) per step (after
      an O(m^2 d) start), so O(m^2 n) in all instead of the O(m^2 n^2) of a
      naive implementation;
    * with ``n_candidates = c`` a step costs O(c m (d + k)), O(c m n^2) in
      all, with no m x m work or memory.

    References
    ----------
    G. Baudat and F. Anouar, Kernel-based methods and function
    approximation, IJCNN 2001.  G. C. Cawley and N. L. C. Talbot, Fast exact
    leave-one-out cross-validation of sparse least-squares support vector
    machines, Neural Networks 17 (2004), §2.4.1.
    """
    X = check_input(X)
    kernel = check_kernel(kernel, X)
    kern = unchecked(kernel)  # X was validated once: no per-call checks in the loops
    m = X.shape[0]
    n_basis = check_count("n_basis", n_basis, allow_none=True)
    tol = check_fraction("tol", tol, low_open=False,
                         meaning=" (the mean relative reconstruction error at which to stop)")
    pivot_tol = check_fraction("pivot_tol", pivot_tol, meaning=" (a relative residual, e.g. 1e-10)")
    rcond = check_fraction("rcond", rcond, meaning=" (a reciprocal condition number, e.g. 1e-10)")
    n_candidates = check_count("n_candidates", n_candidates, allow_none=True)
    n_max = m if n_basis is None else min(n_basis, m)
    kdiag = np.asarray(kernel.diag(X), dtype=float)
    scale = kdiag.max() if m else 0.0
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(
            "feature vector selection needs at least one point with k(x, x) > 0; "
            "every training point has zero norm in feature space"
        )
    nonzero = kdiag > 1e-14 * scale
    w = np.where(nonzero, 1.0 / np.where(nonzero, kdiag, 1.0), 0.0)

    resid = kdiag.copy()  # diagonal of R = K - G G^T
    G = np.zeros((m, min(n_max, 64)))  # grown by doubling: no m x m allocation
    chosen = np.zeros(m, dtype=bool)
    selected: list[int] = []
    curve = [float(np.sum(w * resid) / m)]
    col_norms = np.zeros(0)  # column sums of |K_SS|, for the condition estimate

    exact = n_candidates is None
    if exact:
        K = kern(X, X, block_size=block_size) if m * m * 8 <= cache_bytes else None
        s = _initial_scores(X, kern, w, K, block_size)
    else:
        rng = check_random_state(random_state)

    stop_reason = "n_basis"
    while len(selected) < n_max:
        if curve[-1] <= tol:
            stop_reason = "tol"
            break
        eligible = (~chosen) & nonzero & (resid > pivot_tol * kdiag)
        if not eligible.any():
            stop_reason = "singular"
            break
        k = len(selected)
        if exact:
            gain = np.where(eligible, s / np.where(eligible, resid, 1.0), -np.inf)
            j = int(np.argmax(gain))
            col = (K[:, j] if K is not None else kern(X, X[j : j + 1])[:, 0]) - G[:, :k] @ G[j, :k]
        else:
            pool = np.flatnonzero(eligible)
            cand = pool if pool.size <= n_candidates else rng.choice(pool, n_candidates, replace=False)
            cols = kern(X, X[cand]) - G[:, :k] @ G[cand, :k].T  # (m, c) residual columns
            gain = (w @ cols**2) / resid[cand]
            best = int(np.argmax(gain))
            j, col = int(cand[best]), cols[:, best]
        if k == G.shape[1]:
            G = np.hstack([G, np.zeros((m, min(G.shape[1], n_max - k)))])
        g = col / np.sqrt(resid[j])
        g[j] = np.sqrt(resid[j])  # exact value, free of rounding in the subtraction
        g[chosen] = 0.0  # selected points are reconstructed exactly
        # K_SS = L L^T with L = G[S, :k] (lower triangular in selection order)
        k_new = kern(X[selected + [j]], X[j : j + 1])[:, 0]
        norms_new = np.append(col_norms + np.abs(k_new[:-1]), np.abs(k_new).sum())
        L = G[selected + [j], : k + 1].copy()
        L[k, : k + 1] = np.append(G[j, :k], g[j])
        est, info = lapack.dpocon(L, norms_new.max(), uplo="L")
        if info != 0 or est < rcond:
            stop_reason = "singular"
            break
        col_norms = norms_new
        G[:, k] = g
        if exact:
            wg = w * g
            Kwg = K @ wg if K is not None else _kernel_matvec(X, kern, wg, block_size)
            t = Kwg - G[:, :k] @ (G[:, :k].T @ wg)  # R_old (w * g), O(m^2) with K
            s = np.maximum(s - 2.0 * g * t + g**2 * (wg @ g), 0.0)
        resid = np.maximum(resid - g**2, 0.0)
        resid[j] = 0.0
        chosen[j] = True
        selected.append(j)
        curve.append(float(np.sum(w * resid) / m))

    if not selected:
        raise ValueError(
            f"feature vector selection chose no point (stop reason {stop_reason!r}: the initial "
            f"reconstruction error {curve[0]:.3g} is already <= tol={tol:g}, or no point is usable); "
            "lower tol or check the kernel and X"
        )
    return FVSResult(
        indices=np.asarray(selected, dtype=np.intp),
        error_curve=np.asarray(curve),
        stop_reason=stop_reason,
    )


def _initial_scores(X, kern, w, K, block_size):
    """``s_j = sum_i w_i K_ij^2`` for every j, O(m^2 d) in row blocks."""
    if K is not None:
        return w @ K**2
    s = np.zeros(X.shape[0])
    for rows in iter_row_blocks(X.shape[0], block_size):
        s += w[rows] @ kern(X[rows], X) ** 2
    return s


def _kernel_matvec(X, kern, v, block_size):
    """``K v`` without storing K, O(m^2 d) in row blocks."""
    out = np.empty(X.shape[0])
    for rows in iter_row_blocks(X.shape[0], block_size):
        out[rows] = kern(X[rows], X) @ v
    return out
