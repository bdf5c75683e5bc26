"""Order statistics over the m training rows of values that depend on a new
point only through one inner product, for many new points, without the
(t x m) matrix of values.

Jackknife+ and full conformal prediction (:mod:`.jackknife`, :mod:`.full`)
take, at each new point x, the k-th smallest over the training rows i of a
value ``w_i(g_i)`` that is monotone in the scalar ``g_i = a_i . a_x``: the
new point's cross-leverage with row i, from rows ``a`` of one fixed
(m x r) matrix ``A`` (the whitened eigenbasis rows).  Done directly that is
one (t x m x r) product and a selection over each of the t rows of m
values: at t = m = 20,000 and r = 500, 4e11 flops and 4e8 values.

**Screening.**  By Cauchy-Schwarz ``|g_i| <= ||a_x|| ||a_i||``, so each value
lies between ``lo_i = w_i(-gamma ||a_i||)`` and ``hi_i = w_i(gamma ||a_i||)``
(in either order) for any ``gamma >= ||a_x||``.  Let ``L`` be the k-th
smallest of the ``lo_i`` and ``U`` the k-th smallest of the ``hi_i``: the
answer ``q`` lies in ``[L, U]`` (at least k values are ``<= U``, and at least
m - k + 1 are ``>= L``).  Rows with ``hi_i < L`` are certainly below ``q``,
rows with ``lo_i > U`` certainly above, so ``q`` is the ``(k - #below)``-th
smallest of the values of the remaining rows, the *window*: only those need
``g_i``.  New points are taken in groups of similar ``||a_x||`` sharing one
``gamma`` (the group's largest), one window and one product of the group's
``a_x`` with the window's rows.  Residual scores near the k-th smallest
differ from it by more than the perturbation ``||a_x|| ||a_i|| |R_i|``
(about ``r / m`` of it), so the window is a few per cent of the rows.

The rows may also be weighted, ``g_i = (D m_x) . m_i`` with norms
``||D^1/2 m||`` (Cauchy-Schwarz on ``D^1/2 m_x`` and ``D^1/2 m_i``), so that
the training rows are read in place.

**Exact, with rounding.**  The computed ``g_i`` is within ``(r + 2) eps``
times the product of the norms of the exact one, and the computed norms
are as close to theirs: ``gamma`` carries a relative slack of ``8 (r + 4) eps``, so the
computed ``g_i`` lies within ``[-gamma ||a_i||, gamma ||a_i||]``.  Each value
is computed by one fixed sequence of rounded operations, monotone in
``g``, so its computed value lies between its computed bounds, and the
argument above holds for the computed values: the result is the k-th
smallest of the values as computed here.  (A direct computation forms
``g`` in another product and may differ from it by rounding.)

Cost per group of new points: O(m) for the bounds and two selections, then
O(t_g w r) for the product and O(t_g w) for the selection, w the window:
memory O(t_g w).  Hand-written: NumPy selects, it does not screen.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MonotoneValues", "screened_kth"]

_EPS = np.finfo(float).eps

#: new points per group (sorted by ||a_x||, one window per group)
_GROUP_ROWS = 256
#: past this share of the m rows in a group's window, the group takes all rows (the direct product)
_MAX_WINDOW_SHARE = 0.5
#: a selection whose window holds this share of the group's union of windows selects over the whole union
#: (its few extra rows cost less than gathering the window's columns: jackknife+ and full conformal's lower and
#: upper windows are nearly the same rows, those whose score is near the quantile)
_UNION_SHARE = 0.75


class MonotoneValues:
    """Per training row i a value monotone in the scalar ``g``:
    ``w_i(g) = c_i + b_i g`` ("affine") or ``p_i / (c_i + b_i g)`` ("ratio",
    ``p_i >= 0``, used only where ``c_i + b_i g > 0``).

    Parameters
    ----------
    c, b : ndarray of shape (m,)
    p : ndarray of shape (m,), optional
        The numerators (makes the form "ratio").
    """

    def __init__(self, c, b, p=None):
        self.c, self.b, self.p = c, b, p

    def at(self, G, rows):
        """Values (t, w) at cross-leverages ``G`` (t, w) of training rows ``rows`` (w,)."""
        out = G * self.b[rows]
        out += self.c[rows]
        if self.p is not None:
            np.divide(self.p[rows], out, out=out)
        return out

    def bounds(self, reach):
        """``(lo, hi)`` (m,) of each value over ``|g_i| <= reach_i``, or
        ``None`` where a ratio's denominator may reach 0 there."""
        step = self.b * reach
        one, two = self.c - step, self.c + step
        if self.p is not None:
            if not np.all(np.minimum(one, two) > 0):
                return None
            one, two = self.p / one, self.p / two
        return np.minimum(one, two), np.maximum(one, two)

    def finite(self):
        return all(x is None or np.all(np.isfinite(x)) for x in (self.c, self.b, self.p))


def _kth(x, k):
    return np.partition(x, k - 1)[k - 1]


def screened_kth(Ax, A, row_norms, selections, max_reach=np.inf, group_rows=None, windows=None, x_norms=None):
    """The k-th smallest over training rows of ``w_i(a_i . a_x)`` for every
    new point and every selection (module docstring).

    Parameters
    ----------
    Ax : ndarray of shape (t, r)
        The new points' rows ``a_x``.
    A : ndarray of shape (m, r)
        The training rows ``a_i``.
    row_norms : ndarray of shape (m,)
        ``||a_i||``.
    selections : list of (MonotoneValues, int)
        Each selection's values and its rank k (1-based; -inf below 1,
        +inf past m).
    max_reach : float, default=inf
        A group is screened only where every ``gamma ||a_i||`` is below
        this (full conformal: every ``|u_i| < 1``, its sets' simple case).
    group_rows : int, optional
        New points per group (default 256).
    x_norms : ndarray of shape (t,), optional
        Norms of the new points with ``|a_x . a_i| <= x_norms[x]
        row_norms[i]`` (a weighted Cauchy-Schwarz: ``a_x = D m_x`` and
        ``a_i = m_i`` with the norms ``||D^1/2 m||``, so that ``A`` need not
        be scaled and copied); default ``||a_x||``.
    windows : list, optional
        If given, each screened group's number of window rows is appended
        (m where the group took every row).

    Returns
    -------
    out : ndarray of shape (t, S)
        The k-th smallest of each selection at each new point.
    done : ndarray of bool, shape (t,)
        False for new points whose group could not be screened (a ratio's
        denominator may vanish within reach, so its value is not monotone
        there, or a reach passes ``max_reach``); their ``out`` is NaN and the caller takes the direct route.

    Notes
    -----
    Needs finite inputs (the caller checks).  O(t / t_g) screenings of O(m)
    each, then O(t w r) for the products and O(t w) for the selections.
    """
    t, r = Ax.shape
    m = A.shape[0]
    S = len(selections)
    out = np.full((t, S), np.nan)
    done = np.zeros(t, dtype=bool)
    if t == 0:
        return out, done
    step = int(group_rows or _GROUP_ROWS)
    norms_x = np.sqrt(np.einsum("ij,ij->i", Ax, Ax)) if x_norms is None else x_norms
    order = np.argsort(norms_x, kind="stable")
    slack = 1.0 + 8.0 * (r + 4) * _EPS
    widest = float(row_norms.max(initial=0.0))
    for start in range(0, t, step):
        rows = order[start:start + step]
        gamma = float(norms_x[rows[-1]]) * slack
        if not gamma * widest < max_reach:
            continue
        reach = row_norms * gamma
        plans = []  # per selection: (window rows, rank within the window) or a fixed answer
        for values, k in selections:
            if k < 1 or k > m:
                plans.append(-np.inf if k < 1 else np.inf)
                continue
            got = values.bounds(reach)
            if got is None:
                plans = None
                break
            lo, hi = got
            L, U = _kth(lo, k), _kth(hi, k)
            low = hi < L
            window = np.flatnonzero(~low & (lo <= U))
            plans.append((window, k - np.count_nonzero(low), low))
        if plans is None:
            continue
        parts = [p[0] for p in plans if isinstance(p, tuple)]
        if len(parts) == 1:
            union = parts[0]
        else:  # (a mask, not np.unique: no sort)
            mask = np.zeros(m, dtype=bool)
            for part in parts:
                mask[part] = True
            union = np.flatnonzero(mask)
        if union.size > _MAX_WINDOW_SHARE * m:
            union = np.arange(m)
        if windows is not None:
            windows.append(union.size)
        G = Ax[rows] @ A[union].T if union.size else np.empty((rows.size, 0))
        for s, plan in enumerate(plans):
            if not isinstance(plan, tuple):
                out[rows, s] = plan
                continue
            window, kk, low = plan
            if window.size >= _UNION_SHARE * union.size:
                # the whole union, no column gather: its rows outside this window are certainly below (hi_i <
                # L <= q, and so is their computed value) or certainly above (> U >= q), so q is the same value
                # at rank kk plus the union's rows certainly below
                vals = selections[s][0].at(G, union)
                kk += np.count_nonzero(low[union])
            else:
                vals = selections[s][0].at(G[:, np.searchsorted(union, window)], window)
            vals.partition(kk - 1, axis=1)  # in place: vals is this selection's own array
            out[rows, s] = vals[:, kk - 1]
        done[rows] = True
    return out, done
