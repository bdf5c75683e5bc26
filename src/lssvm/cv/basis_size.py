"""Exact CV error of every basis size, from one growing pivoted Cholesky factor.

Pivoted Cholesky is nested: the first n pivots of a longer run are the
n-point basis.  With ``K_BB = L L^T`` on the pivots and the factor
``G = K_mB L^-T`` (m x N), the sparse LS-SVM on the first n pivots,
``min ||y - K_mB a - b||^2 + alpha a^T K_BB a``, is ridge regression on the
first n columns of G (``w = L^T a``) with an unpenalised intercept.  Put
``F = [1, G]`` and ``A = F^T F + alpha diag(0, 1, ..., 1) = R^T R`` (R upper
triangular): the leading (n+1) x (n+1) block of R is the factor of the
n-point system, so with ``Q = F R^-1`` the model of size n has

* hat diagonal ``h_i(n) = sum_{k <= n} Q_ik^2``,
* fitted values ``f_i(n) = sum_{k <= n} Q_ik (Q^T y)_k``,

both running sums over the columns of Q.  One triangular solve per row
(O(m N^2 / 2) in all) gives the exact LOO error of every size 1..N; per
fold, one downdate of ``F^T F`` and a triangular solve of the fold's rows
give the exact hold-out error of every size (the basis kept: a held-out
basis point stays a basis function, ``basis_in_holdout="keep"``).  That
is paper 002's CV per model size (Karsmakers et al. 2011, §4.4) applied to
the sparse LS-SVM's basis (the documentation's Mathematics page, §2).

:func:`grow_basis` grows the factor by doublings and stops on a plateau
of the CV error, at a size cap, or when the next doubling would not fit a
time budget; :func:`choose_basis_size` keeps the size of lowest CV error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack, solve_triangular
from sklearn.utils import check_random_state

from ..basis import pivoted_cholesky
from ..exceptions import warn_numerical

__all__ = [
    "AUTO_BASIS_BYTES",
    "AUTO_MAX_BASIS",
    "AUTO_START_BASIS",
    "BasisSizeCurve",
    "DEFAULT_SIZE_RULE",
    "auto_basis_cap",
    "choose_basis_size",
    "gram_of_features",
    "grow_basis",
    "pivot_cholesky_factor",
    "prefix_cv_sums",
]

#: Most basis points the growth tries.
AUTO_MAX_BASIS = 2000
#: Bytes of the factor G (m x N doubles) the growth may hold; the pivoted Cholesky run and the final fit
#: hold one more matrix of this size each.
AUTO_BASIS_BYTES = 256 * 2**20
#: Size of the first stage; each later stage doubles it.
AUTO_START_BASIS = 50
#: Rows per block of the running sums (the block's sums over sizes take (N + 1) x rows x outputs doubles).
_CELLS = 1 << 21


def auto_basis_cap(m, max_size=None):
    """Largest basis the growth tries for ``m`` rows: ``min(m, max_size, AUTO_BASIS_BYTES / (8 m))``
    (``max_size`` default :data:`AUTO_MAX_BASIS`)."""
    cap = AUTO_MAX_BASIS if max_size is None else int(max_size)
    return int(max(1, min(m, cap, AUTO_BASIS_BYTES // (8 * m))))


def pivot_cholesky_factor(X, kernel, indices, G=None, L=None):
    """The factor ``G = K_mB L^-T`` of the pivots ``indices``, extended from that of a prefix.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    kernel : lssvm.kernels.Kernel
    indices : ndarray of shape (N,)
        Pivots in order; the first ``G.shape[1]`` are those of ``G``.
    G : ndarray of shape (m, n), optional
        The factor of the first n pivots.
    L : ndarray of shape (n, n), optional
        Lower Cholesky factor of their ``K_BB``.

    Returns
    -------
    G : ndarray of shape (m, N')
    L : ndarray of shape (N', N')
        N' = N unless a new pivot is numerically dependent on the earlier
        ones (its Schur complement not positive): the factor stops before it.

    Notes
    -----
    Block Cholesky: ``L21 = K_new,old L11^-T``, ``L22 L22^T = K_new,new - L21 L21^T``,
    ``G_new = (K_m,new - G_old L21^T) L22^-T``: O(m c d) kernel values and O(m c (n + c))
    for c new pivots.
    """
    n = 0 if G is None else G.shape[1]
    new = np.asarray(indices[n:], dtype=np.intp)
    if new.size == 0:
        return G, L
    K_new = kernel(X, X[new])  # (m, c)
    if n:
        L21 = solve_triangular(L, K_new[indices[:n]], lower=True).T  # (c, n)
        S = K_new[new] - L21 @ L21.T
        B = K_new - G @ L21.T
    else:
        L21 = np.zeros((new.size, 0))
        S = K_new[new].copy()
        B = K_new
    L22, info = lapack.dpotrf(S, lower=1, clean=1)
    keep = new.size if info == 0 else max(int(info) - 1, 0)
    L22 = L22[:keep, :keep]
    G_new = solve_triangular(L22, B[:, :keep].T, lower=True).T if keep else np.zeros((X.shape[0], 0))
    N = n + keep
    L_out = np.zeros((N, N))
    if n:
        L_out[:n, :n] = L
    L_out[n:, :n] = L21[:keep]
    L_out[n:, n:] = L22
    G_out = G_new if G is None else np.hstack([G, G_new])
    return G_out, L_out


def _penalised(FtF, alpha):
    A = FtF.copy()
    idx = np.arange(1, A.shape[0])
    A[idx, idx] += alpha
    return A


def _accumulate(P, c, Y_rows, sse, s4, loo=False):
    """Add the squared errors of rows (running sums over sizes) to ``sse`` and their squares to ``s4``.

    ``P`` (b, N+1) rows of ``F R^-1``; ``c`` (N+1, v) ``R^-T F^T y``; LOO when ``loo`` (residuals divided
    by ``1 - h``).  Returns the smallest ``1 - h`` seen (LOO) or 1."""
    b, k = P.shape
    v = c.shape[1]
    low = 1.0
    if loo:
        den = np.square(P)
        np.cumsum(den, axis=1, out=den)
        np.subtract(1.0, den, out=den)  # 1 - h_i(n), (b, N+1)
        low = float(den.min())
    e2 = np.zeros((b, k))
    E = np.empty((b, k))
    for j in range(v):  # one output at a time: (b, N+1) work arrays, in place
        np.multiply(P, c[:, j], out=E)
        np.cumsum(E, axis=1, out=E)
        np.subtract(Y_rows[:, j, None], E, out=E)
        if loo:
            E /= den
        np.square(E, out=E)
        e2 += E
    if v > 1:
        e2 /= v
    sse += e2.sum(axis=0)
    s4 += np.einsum("ij,ij->j", e2, e2)
    return low


def gram_of_features(G, Y, FtF=None):
    """``F^T F`` and ``F^T Y`` of ``F = [1, G]``, extending ``FtF`` of the first columns (the growth adds
    columns: only the new blocks are formed, O(m N c) for c new columns).

    Returns
    -------
    FtF : ndarray of shape (N + 1, N + 1)
    FtY : ndarray of shape (N + 1, v)
    """
    m, N = G.shape
    F = np.hstack([np.ones((m, 1)), G])
    k = 0 if FtF is None else FtF.shape[0]
    out = np.empty((N + 1, N + 1))
    if k:
        out[:k, :k] = FtF
    new = F[:, k:]
    cross = F.T @ new  # (N+1, c)
    out[:, k:] = cross
    out[k:, :] = cross.T
    return out, F.T @ Y


def prefix_cv_sums(G, Y, alphas, folds=None, grams=None):
    """Sums of squared CV errors of every prefix size of the factor ``G``, per alpha.

    Parameters
    ----------
    G : ndarray of shape (m, N)
        Features: the Cholesky columns in pivot order (:func:`pivot_cholesky_factor`).
    Y : ndarray of shape (m, v)
    alphas : ndarray of shape (A,)
    folds : list of ndarray, optional
        Test indices of folds partitioning the rows; None is LOO.
    grams : tuple, optional
        ``(F^T F, F^T Y)`` from :func:`gram_of_features`, if already formed.

    Returns
    -------
    sse : ndarray of shape (A, N + 1)
        Sum over rows of the squared out-of-sample error (mean over outputs)
        of the model with the intercept and the first n columns, n = 0..N.
    s4 : ndarray of shape (A, N + 1)
        Sum over rows of that squared error squared (for the standard error).

    Notes
    -----
    LOO: per alpha one (N+1)^3 / 3 Cholesky factorisation and one
    triangular solve of all rows, O(m N^2 / 2); k folds: per fold a
    downdate O(h N^2) and the fold's triangular solve.  The rows go in
    blocks: O(N (b + N)) memory besides G.
    """
    m, N = G.shape
    Y = np.asarray(Y, dtype=float).reshape(m, -1)
    F = np.hstack([np.ones((m, 1)), G])
    FtF, FtY = gram_of_features(G, Y) if grams is None else grams
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    sse = np.zeros((alphas.size, N + 1))
    s4 = np.zeros_like(sse)
    low = 1.0
    bad = []
    tests = [None] if folds is None else [np.asarray(f, dtype=np.intp) for f in folds]
    for t in tests:
        if t is None:
            A0, b0 = FtF, FtY
        else:
            Ft = F[t]
            A0, b0 = FtF - Ft.T @ Ft, FtY - Ft.T @ Y[t]
        for a, alpha in enumerate(alphas):
            R, info = lapack.dpotrf(_penalised(A0, alpha), lower=0, clean=1)
            if info != 0:
                sse[a] = s4[a] = np.inf
                bad.append(float(alpha))
                continue
            c = solve_triangular(R, b0, trans="T")
            if t is None:
                step = max(1, _CELLS // (N + 1))
                for s in range(0, m, step):
                    P = solve_triangular(R, F[s:s + step].T, trans="T").T
                    low = min(low, _accumulate(P, c, Y[s:s + step], sse[a], s4[a], loo=True))
            else:
                P = solve_triangular(R, F[t].T, trans="T").T
                _accumulate(P, c, Y[t], sse[a], s4[a])
    if bad:
        warn_numerical(f"the basis-size CV could not factorise the ridge system at alpha={sorted(set(bad))} "
                      "(not positive definite in floating point); those alphas are scored as infinite error", stacklevel=2)
    if low < 1e-10:
        warn_numerical(f"a leave-one-out leverage is 1 - {low:.1e} at some basis size: the LOO residuals there "
                      "are ill-conditioned (raise alpha)", stacklevel=2)
    return sse, s4


@dataclass(frozen=True)
class BasisSizeCurve:
    """The CV error of every basis size grown by :func:`grow_basis`.

    Attributes
    ----------
    n_basis : ndarray of shape (N,)
        Sizes 1..N.
    cv_error : ndarray of shape (N,)
        Mean squared CV error (LOO or k-fold) at each size, at its best alpha.
    cv_error_se : ndarray of shape (N,)
        Its standard error: the standard deviation over rows of the squared
        errors divided by sqrt(m).
    alpha : ndarray of shape (N,)
        The alpha of ``alphas`` that gives ``cv_error`` at each size.
    alphas : ndarray of shape (A,)
    cv_error_per_alpha : ndarray of shape (A, N)
    pivots : ndarray of shape (N,)
        Training rows in pivot order: the first n are the n-point basis.
    stop_reason : str
        "plateau" (the last doubling did not lower the CV error by more
        than one standard error), "max_size", "singular" (no pivot left
        above the pivoted Cholesky tolerances) or "time_budget".
    stages : list of tuple
        ``(size, seconds since the start)`` at the end of each stage.
    """

    n_basis: np.ndarray
    cv_error: np.ndarray
    cv_error_se: np.ndarray
    alpha: np.ndarray
    alphas: np.ndarray
    cv_error_per_alpha: np.ndarray
    pivots: np.ndarray
    stop_reason: str
    stages: list

    def as_dict(self):
        """``{"n_basis", "cv_error", "cv_error_se", "alpha"}``: the curve as plain arrays."""
        return {"n_basis": self.n_basis.copy(), "cv_error": self.cv_error.copy(),
                "cv_error_se": self.cv_error_se.copy(), "alpha": self.alpha.copy()}


def _curve_arrays(sse, s4, count):
    mean = sse / count
    var = np.maximum(s4 / count - mean * mean, 0.0)
    return mean, np.sqrt(var / count)


#: How :func:`choose_basis_size` picks: "min", the size of lowest CV error.  The one-standard-error rule
#: ("one-se") picked smaller bases that tested worse on all of Boston, puma32H, elevators, ailerons and MAGIC
#: (benchmarks/basis_size.py): the CV error of a size is an average over many rows, and its decrease with
#: the size is real even when it is within one standard error.
DEFAULT_SIZE_RULE = "min"


def choose_basis_size(cv_error, cv_error_se=None, rule=DEFAULT_SIZE_RULE):
    """The basis size kept from a curve of CV errors per size.

    Parameters
    ----------
    cv_error : ndarray of shape (N,)
        Per size 1..N.
    cv_error_se : ndarray of shape (N,), optional
        Standard errors; needed by "one-se".
    rule : {"min", "one-se"}, default="min"
        "min": the size of lowest CV error (the smallest of ties); "one-se":
        the smallest size whose CV error is within one standard error of the
        lowest (Hastie, Tibshirani & Friedman, ESL §7.10).

    Returns
    -------
    int
        The chosen size (1-based).
    """
    err = np.asarray(cv_error, dtype=float)
    if err.size == 0 or not np.any(np.isfinite(err)):
        raise ValueError("no finite CV error to choose a basis size from")
    best = int(np.argmin(np.where(np.isfinite(err), err, np.inf)))
    if rule == "min":
        return best + 1
    if rule != "one-se":
        raise ValueError(f"rule must be 'min' or 'one-se'; got {rule!r}")
    se = np.asarray(cv_error_se, dtype=float)
    return int(np.flatnonzero(err <= err[best] + se[best])[0]) + 1


def _plateau(err, se, n_prev, n):
    """Whether the sizes (n_prev, n] failed to lower the best error of sizes 1..n_prev by more than one
    standard error."""
    best_prev = int(np.argmin(err[:n_prev]))
    return float(np.min(err[n_prev:n])) >= err[best_prev] - se[best_prev]


def grow_basis(X, Y, kernel, alphas, folds=None, *, max_size=None, start=None, time_budget=None,
               clock_start=None, reserve=0.0, pivot_tol=1e-6, rcond=1e-10, random_state=None):
    """Grow a pivoted Cholesky basis by doublings, scoring the exact CV error of every prefix size.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        Targets (coded +1/-1 for classifiers).
    kernel : lssvm.kernels.Kernel
    alphas : array-like of shape (A,)
        Regularisation values scored at every size; each size keeps its best.
    folds : list of ndarray, optional
        Test indices of the folds; None is LOO.
    max_size : int, optional
        Most points; default :func:`auto_basis_cap`.
    start : int, optional
        Size of the first stage (default :data:`AUTO_START_BASIS`); each later stage doubles.
    time_budget : float, optional
        Seconds from ``clock_start`` (default: now) within which the growth
        must finish: before each doubling its time is predicted from the last
        stage's (times the squared size ratio, which also covers the final
        fit) and the growth stops if it would not fit, keeping ``reserve``
        seconds free.
    clock_start : float, optional
        ``time.perf_counter()`` at which the budget started.
    reserve : float
        Seconds kept free for work after the growth.
    pivot_tol, rcond, random_state
        As for :func:`lssvm.basis.pivoted_cholesky`, except that the pivot
        tolerance is lowered to ``rcond``: the growth stops at the numerical
        rank the fit supports (``K_BB``'s reciprocal condition estimate above
        ``rcond``, the fit's own guard), not at a relative residual of 1e-6,
        which at the wide widths the searches choose stopped first (Boston:
        324 of 380 points where ``rcond`` allows 348; MAGIC: pivot_tol 1e-6
        and 1e-9 both stop at 892 points, the ``rcond`` limit).

    Returns
    -------
    BasisSizeCurve

    Notes
    -----
    Stage s runs pivoted Cholesky to N_s points (O(m N_s (d + N_s))),
    extends the factor G by the new pivots, and scores all sizes 1..N_s for
    every alpha (:func:`prefix_cv_sums`, O(A m N_s^2 / 2)); with doublings
    the stages cost about 4/3 of the last.  Growth stops when a doubling
    lowers the best CV error by less than one standard error (a plateau:
    the next doubling, costing four times more, is unlikely to do better).
    """
    t0 = time.perf_counter() if clock_start is None else clock_start
    # one seed for every stage: the first pivot breaks ties by it, so each stage extends the last
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    X = np.asarray(X)
    m = X.shape[0]
    Y = np.asarray(Y, dtype=float).reshape(m, -1)
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    cap = auto_basis_cap(m, max_size)
    size = min(cap, AUTO_START_BASIS if start is None else int(start))
    G = L = FtF = None
    pivots = np.zeros(0, dtype=np.intp)
    stages = []
    stop = "max_size"
    mean = se = None
    while True:
        t_stage = time.perf_counter()
        res = pivoted_cholesky(X, kernel, size, pivot_tol=min(pivot_tol, rcond), rcond=rcond, random_state=seed)
        idx = res.indices
        n_old = pivots.size
        if idx.size < n_old or not np.array_equal(idx[:n_old], pivots):  # not nested (ties): start over
            G = L = FtF = None
        G, L = pivot_cholesky_factor(X, kernel, idx, G, L)
        pivots = idx[: G.shape[1]]
        FtF, FtY = gram_of_features(G, Y, FtF)
        sse, s4 = prefix_cv_sums(G, Y, alphas, folds, grams=(FtF, FtY))
        mean, se = _curve_arrays(sse[:, 1:], s4[:, 1:], m)  # size 0 (intercept only) left out
        now = time.perf_counter()
        stages.append((int(pivots.size), now - t0))
        best_a = np.argmin(mean, axis=0)
        err = mean[best_a, np.arange(mean.shape[1])]
        err_se = se[best_a, np.arange(mean.shape[1])]
        n = pivots.size
        if res.stop_reason != "n_basis" or n < size:
            stop = "singular"
            break
        if n_old and _plateau(err, err_se, n_old, n):
            stop = "plateau"
            break
        if n >= cap:
            stop = "max_size"
            break
        nxt = min(cap, 2 * n)
        if time_budget is not None:
            # the next stage's cost, from this one's: O(m N^2) terms (triangular solves, pivoted Cholesky)
            # and O(m N (d + 1)) ones (kernel columns, running sums).  A doubling measured 1.7-3.1 times
            # the stage before it (m = 6,000-9,000, N = 400-1,600); the square of the size ratio covers
            # that, the final fit, and a machine getting busier (an exponent of 1.5 with a quarter for the
            # fit overshot a 60 s budget by 1.75x on pol under a rising load)
            predicted = (now - t_stage) * (nxt / n) ** 2
            if now - t0 + predicted + reserve > time_budget:
                stop = "time_budget"
                break
        size = nxt
    best_a = np.argmin(mean, axis=0)
    cols = np.arange(mean.shape[1])
    return BasisSizeCurve(
        n_basis=np.arange(1, mean.shape[1] + 1), cv_error=mean[best_a, cols], cv_error_se=se[best_a, cols],
        alpha=alphas[best_a], alphas=alphas, cv_error_per_alpha=mean, pivots=pivots, stop_reason=stop,
        stages=stages,
    )
