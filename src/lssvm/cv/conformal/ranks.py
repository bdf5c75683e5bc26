"""Coverage levels, the conformal ranks and the order statistics shared by
every conformal method (jackknife, jackknife+, CV+, full conformal and the
classification sets).

For m calibration scores and coverage ``1 - alpha_c``, jackknife+ and CV+
(Barber, Candes, Ramdas & Tibshirani 2021, Ann. Statist. 49) take the
``floor(alpha_c (m + 1))``-th smallest of the lower candidates and the
``ceil((1 - alpha_c)(m + 1))``-th smallest of the upper ones; split and full
conformal (Lei et al. 2018, JASA 113) and the classification sets take the
latter rank of the scores.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

__all__ = [
    "INTERVAL_METHODS",
    "check_coverage",
    "conformal_ranks",
    "interval_from_values",
    "kth_smallest",
    "min_rows_for",
]

INTERVAL_METHODS = ("jackknife+", "jackknife", "cv+", "full")

#: floor/ceil of alpha_c (m + 1) are taken with this relative slack, so that
#: 1 - 0.9 = 0.09999999999999998 times 100 still counts as 10.
_RANK_SLACK = 1e-9


def check_coverage(coverage):
    """Validate a coverage level; returns it as float.

    Raises
    ------
    ValueError
        Unless ``coverage`` is a real number strictly between 0 and 1.
    """
    ok = isinstance(coverage, Real) and not isinstance(coverage, bool) and np.isfinite(coverage)
    if not ok or not 0.0 < coverage < 1.0:
        raise ValueError(
            f"coverage must be a number strictly between 0 and 1 (e.g. 0.9 for 90% intervals); got {coverage!r}"
        )
    return float(coverage)


def conformal_ranks(coverage, n):
    """The order statistics (1-based) of jackknife+ / CV+ (Barber et al.
    2021): lower ``floor(alpha_c (n + 1))``, upper ``ceil((1 - alpha_c)(n +
    1))`` with ``alpha_c = 1 - coverage``; outside 1..n the bound is -inf /
    +inf.

    Returns
    -------
    k_lo, k_hi : int
    """
    a = 1.0 - coverage
    x_lo, x_hi = a * (n + 1), (1.0 - a) * (n + 1)
    k_lo = math.floor(x_lo + _RANK_SLACK * (n + 1))
    k_hi = math.ceil(x_hi - _RANK_SLACK * (n + 1))
    return k_lo, k_hi


def min_rows_for(coverage):
    """Smallest number of calibration rows m for which the jackknife+ bounds
    at ``coverage`` are finite: ``ceil((1 - a) (m + 1)) <= m`` and
    ``floor(a (m + 1)) >= 1`` with ``a = 1 - coverage``."""
    m = 1
    while True:
        k_lo, k_hi = conformal_ranks(coverage, m)
        if k_lo >= 1 and k_hi <= m:
            return m
        m = max(m + 1, int(m * 1.5)) if m < 10**9 else m + 1
        if m > 10**9:  # coverage so close to 1 that no data set reaches it
            return m


def kth_smallest(V, k, axis=1):
    """The k-th smallest (1-based) along ``axis``; -inf for k < 1 and +inf
    for k > the axis length."""
    n = V.shape[axis]
    shape = list(V.shape)
    del shape[axis]
    if k < 1:
        return np.full(shape, -np.inf)
    if k > n:
        return np.full(shape, np.inf)
    return np.take(np.partition(V, k - 1, axis=axis), k - 1, axis=axis)


def interval_from_values(centres, scores, coverage, symmetric_centre=None):
    """Conformal bounds from per-row model values and non-conformity scores.

    Parameters
    ----------
    centres : ndarray of shape (t, N, v)
        ``mu_{-i}(x)``: the model without row i's fold, at each new point.
    scores : ndarray of shape (N, v)
        ``|R_i|``, the out-of-fold absolute residuals.
    coverage : float
    symmetric_centre : ndarray of shape (t, v), optional
        For the plain jackknife: the interval is ``centre +- q`` with ``q``
        the ``ceil(coverage (N + 1))``-th smallest score (``centres`` is
        then ignored).

    Returns
    -------
    ndarray of shape (t, 2, v)
    """
    N = scores.shape[0]
    k_lo, k_hi = conformal_ranks(coverage, N)
    if symmetric_centre is not None:
        q = kth_smallest(scores, k_hi, axis=0)  # (v,)
        return np.stack([symmetric_centre - q, symmetric_centre + q], axis=1)
    lo = kth_smallest(centres - scores[None], k_lo, axis=1)
    hi = kth_smallest(centres + scores[None], k_hi, axis=1)
    return np.stack([lo, hi], axis=1)
