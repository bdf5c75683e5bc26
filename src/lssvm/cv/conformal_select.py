"""The CV+ order statistics from sorted per-fold scores, without the (t x m)
matrix of candidate values (issue 19).

CV+ (Barber, Candes, Ramdas & Tibshirani 2021) takes, at each new point x,
the k-th smallest of ``mu_k(i)(x) -+ R_i`` over the m training rows, where
``k(i)`` is row i's fold.  Done directly that is an (t x m) gather and
selection per bound.  But the values come in K blocks, one per fold, each a
single shift ``mu_k(x)`` of the fold's scores: with the scores of every fold
sorted once, each block is sorted too (rounding ``fl(mu + s)`` is monotone
in ``s``), and the k-th smallest of K sorted blocks needs only a window of
each block:

* with ``c_j = ceil(k n_j / m)`` and ``d_j = floor((k - 1) n_j / m)`` (n_j
  the fold sizes; ``sum c_j >= k``, ``sum d_j <= k - 1``), the k-th smallest
  ``q`` lies in ``[L, U]``, ``U = max_j fl(mu_j + S_j[c_j])`` (c_j values of
  each block are <= U) and ``L = min_j fl(mu_j + S_j[d_j + 1])`` (fewer than
  k values are < L; 1-based positions);
* in block j the values below ``L`` and above ``U`` are a prefix and a
  suffix, found by binary search on the sorted scores with thresholds
  widened by a few rounding errors (``8 eps (|L| + |U| + |mu_j|)``), so
  every value left out is certainly below L or above U;
* ``q`` is the ``(k - #below)``-th smallest of the values left in the
  windows, computed exactly as the brute force computes them.

When the folds' models agree closely the windows hold a few values each:
O(t K log m) binary searches plus a sort of t x (K w) values, instead of
O(t m).  The result is the same floating-point number as
:func:`lssvm.cv.conformal.kth_smallest` on the full matrix (``fl(mu - R) =
fl(mu + (-R))`` exactly).  Hand-written: NumPy selects along an axis, not
across shifted sorted blocks.  Wide windows (folds whose models disagree,
many ties), non-finite values, or many small folds fall back to that full
selection.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SortedFoldScores", "kth_of_shifted_blocks"]

_EPS = np.finfo(float).eps
_TINY = np.finfo(float).smallest_subnormal

#: use the windows when the folds are this many rows on average, at least
_MIN_FOLD_ROWS = 8
#: fall back to the full selection when the windows hold more than this share of the m values
_MAX_WINDOW_SHARE = 0.25
#: Newton steps on the count, the half-width of the first window (in values' spacing), and window tries
_NEWTON_STEPS = 1
_WINDOW_VALUES = 8
_TRIES = 3


def _full_kth(mu, S, sizes, k):
    """The k-th smallest of ``mu[:, j] + S_j`` over all blocks by a full
    selection (t x m): the reference the windows reproduce."""
    vals = np.repeat(mu, sizes, axis=1)
    vals += S
    return np.partition(vals, k - 1, axis=1)[:, k - 1]


def _windows(mu, S, offsets, L, U):
    """Per block, the positions ``[lo, hi)`` of the sorted scores whose
    shifted values may lie in ``[L, U]``: every value before ``lo`` is
    certainly ``< L`` and every value from ``hi`` on certainly ``> U`` (the
    thresholds are widened by a few rounding errors).  2K binary searches."""
    t, K = mu.shape
    slack = 8 * _EPS * ((np.abs(L) + np.abs(U))[:, None] + np.abs(mu)) + 4 * _TINY
    lo_at = (L[:, None] - mu) - slack
    hi_at = (U[:, None] - mu) + slack
    lo = np.empty((t, K), dtype=np.intp)
    hi = np.empty((t, K), dtype=np.intp)
    for j in range(K):
        block = S[offsets[j] : offsets[j + 1]]
        lo[:, j] = np.searchsorted(block, lo_at[:, j], side="left")
        hi[:, j] = np.searchsorted(block, hi_at[:, j], side="right")
    return lo, hi


def _count_below(mu, S, offsets, v):
    """About how many shifted values are <= ``v`` (t,): exact but for values
    within a rounding error of ``v``.  K binary searches."""
    at = v[:, None] - mu
    return sum(np.searchsorted(S[offsets[j] : offsets[j + 1]], at[:, j], side="right")
               for j in range(mu.shape[1]))


def _select_in_windows(mu, S, offsets, k, L, U):
    """The k-th smallest where it can be certified from the windows of
    ``[L, U]`` (t,), and which rows were certified.

    The value picked is the ``(k - #below)``-th smallest of the window values,
    computed as the brute force computes them; it is the k-th smallest of
    all values exactly when it lies in ``[L, U]`` (every value left out below
    is ``< L``, every one above ``> U``).  None when the windows are too wide."""
    t, K = mu.shape
    lo, hi = _windows(mu, S, offsets, L, U)
    width = hi - lo
    w = int(width.max(initial=0))
    if K * w > _MAX_WINDOW_SHARE * S.size:
        return None, None
    rank = k - lo.sum(axis=1)  # 1-based rank of the answer among the window values
    ok = (rank >= 1) & (rank <= width.sum(axis=1))
    out = np.full(t, np.nan)
    if w == 0 or not ok.any():
        return out, np.zeros(t, dtype=bool)
    pos = np.arange(w)
    idx = np.minimum((offsets[:-1] + lo)[:, :, None] + pos, S.size - 1)
    vals = mu[:, :, None] + S[idx]
    vals[pos >= width[:, :, None]] = np.inf
    vals = vals.reshape(t, K * w)
    vals.sort(axis=1)
    q = vals[np.arange(t), np.clip(rank, 1, K * w) - 1]
    ok &= (q >= L) & (q <= U)
    out[ok] = q[ok]
    return out, ok


def kth_of_shifted_blocks(mu, S, offsets, k, pooled=None):
    """The k-th smallest (1-based) of ``{fl(mu[i, j] + S[l]) : offsets[j] <= l
    < offsets[j + 1]}`` for every row i.

    Parameters
    ----------
    mu : ndarray of shape (t, K)
        Shift of each block, per row.
    S : ndarray of shape (m,)
        The K blocks, each sorted ascending; finite.
    offsets : ndarray of shape (K + 1,)
        Block boundaries, ``offsets[0] = 0``, ``offsets[-1] = m``; no block
        is empty.
    k : int
        -inf for k < 1, +inf for k > m.
    pooled : ndarray of shape (m,), optional
        ``np.sort(S)`` (computed if not given).

    Returns
    -------
    ndarray of shape (t,)
        Exactly the value a full sort of the t x m values would give.

    Notes
    -----
    A guess ``q = pooled[k] + sum_j n_j mu_j / m`` is corrected by Newton
    steps on the count of values below it (K binary searches each; the
    slope from the pooled scores' local density), and the k-th smallest is
    selected in the windows of ``[q - g, q + g]``, ``g`` about 8 values'
    spacing; rows it cannot certify retry with 8x wider windows, then take
    the full selection.  O(t K log m) plus a sort of about t x 16 values
    when the folds' models agree closely; O(t m) at worst.
    """
    t, K = mu.shape
    m = S.size
    if k < 1:
        return np.full(t, -np.inf)
    if k > m:
        return np.full(t, np.inf)
    sizes = np.diff(offsets)
    if m < _MIN_FOLD_ROWS * K or not np.isfinite(mu).all():
        return _full_kth(mu, S, sizes, k)
    if pooled is None:
        pooled = np.sort(S)
    # local spacing of the pooled values around rank k (0 where they tie)
    g = max(2, int(np.sqrt(m)) // 2)
    spacing = (pooled[min(k - 1 + g, m - 1)] - pooled[max(k - 1 - g, 0)]) / (min(k - 1 + g, m - 1) - max(k - 1 - g, 0))
    q = pooled[k - 1] + mu @ (sizes / m)
    if spacing > 0:
        for _ in range(_NEWTON_STEPS):
            q = q - (_count_below(mu, S, offsets, q) - k + 0.5) * spacing
    half = np.full(t, _WINDOW_VALUES * spacing) if spacing > 0 else _tie_width(q)
    out = np.empty(t)
    todo = np.arange(t)
    for _ in range(_TRIES):
        if not np.isfinite(q[todo]).all():
            break
        got, ok = _select_in_windows(mu[todo], S, offsets, k, q[todo] - half[todo], q[todo] + half[todo])
        if got is None:
            break
        out[todo[ok]] = got[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return out
        half[todo] *= 8
    out[todo] = _full_kth(mu[todo], S, sizes, k)
    return out


def _tie_width(q):
    """A window half-width where the scores around rank k tie (zero
    spacing): a few ulps of ``q``."""
    return 64 * _EPS * np.abs(q) + 4 * _TINY


class SortedFoldScores:
    """Each fold's out-of-fold scores, sorted once per call, for the CV+
    bounds at any number of new points.

    Parameters
    ----------
    scores : ndarray of shape (m, v)
        ``|R_i|``, the out-of-fold absolute residuals.
    folds : list of ndarray
        Test rows of each fold (a partition of the m rows, none empty).

    Notes
    -----
    O(m log m) once; non-finite scores make :meth:`bounds` use the full
    selection.
    """

    def __init__(self, scores, folds):
        self.n_rows, self.n_outputs = scores.shape
        self.offsets = np.concatenate([[0], np.cumsum([f.size for f in folds])]).astype(np.intp)
        by_fold = scores[np.concatenate(folds)]  # (m, v), fold blocks
        self.finite = bool(np.isfinite(by_fold).all())
        up = np.empty_like(by_fold)
        for j in range(len(folds)):
            blk = slice(self.offsets[j], self.offsets[j + 1])
            up[blk] = np.sort(by_fold[blk], axis=0)
        self.upper = np.ascontiguousarray(up.T)  # (v, m): R_i, ascending per fold
        self.lower = np.ascontiguousarray(-up[::-1].T)  # -R_i ascending per fold, folds reversed
        self.lower_offsets = self.n_rows - self.offsets[::-1]
        self.pooled = np.sort(self.upper, axis=1)  # all R_i ascending, per output

    def bounds(self, values, ranks):
        """CV+ bounds from the folds' models at new points.

        Parameters
        ----------
        values : ndarray of shape (t, K, v)
            ``mu_k(x)``, fold k's model at each new point.
        ranks : (int, int)
            ``(k_lo, k_hi)`` of :func:`lssvm.cv.conformal.conformal_ranks`.

        Returns
        -------
        ndarray of shape (t, 2, v)
            The ``k_lo``-th smallest of ``mu_k(i)(x) - R_i`` and the
            ``k_hi``-th smallest of ``mu_k(i)(x) + R_i``.
        """
        k_lo, k_hi = ranks
        t, K, v = values.shape
        out = np.empty((t, 2, v))
        sizes = np.diff(self.offsets)
        for j in range(v):
            mu = values[:, :, j]
            mu_rev = np.ascontiguousarray(mu[:, ::-1])
            if self.finite:
                pooled = self.pooled[j]
                out[:, 0, j] = kth_of_shifted_blocks(mu_rev, self.lower[j], self.lower_offsets, k_lo, -pooled[::-1])
                out[:, 1, j] = kth_of_shifted_blocks(mu, self.upper[j], self.offsets, k_hi, pooled)
            else:
                out[:, 0, j] = _full_or_inf(mu_rev, self.lower[j], sizes[::-1], k_lo)
                out[:, 1, j] = _full_or_inf(mu, self.upper[j], sizes, k_hi)
        return out


def _full_or_inf(mu, S, sizes, k):
    if k < 1:
        return np.full(mu.shape[0], -np.inf)
    if k > S.size:
        return np.full(mu.shape[0], np.inf)
    return _full_kth(mu, S, sizes, k)
