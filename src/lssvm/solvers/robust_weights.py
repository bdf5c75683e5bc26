"""Weight functions and the robust scale of iteratively reweighted LS-SVMs
(Suykens, De Brabanter, Lukas and Vandewalle 2002, "Weighted least squares
support vector machines: robustness and sparse approximation"; LS-SVMlab's
``robustlssvm`` and its weighting scheme).

Each function maps standardised residuals ``r = e / s`` to weights in
(0, 1], with ``s = 1.483 MAD(e)`` the robust scale LS-SVMlab uses:

========== ===================================================================
huber      1 for ``|r| < c``, ``c / |r|`` beyond (``c`` default 1.345)
hampel     1 for ``|r| <= c1``, ``(c2 - |r|) / (c2 - c1)`` up to ``c2``, 1e-7
           beyond (``c1, c2 = 2.5, 3``, LS-SVMlab's defaults)
logistic   ``tanh(r) / r`` (1 at 0)
myriad     ``K^2 / (K^2 + r^2)`` (``K`` default half the interquartile range
           of ``r``, LS-SVMlab's rule)
========== ===================================================================
"""

from __future__ import annotations

import numpy as np

__all__ = ["WEIGHT_FUNCTIONS", "robust_scale", "robust_weights", "weighted_median"]

#: LS-SVMlab's constant: ``1.483 MAD`` estimates the standard deviation of Gaussian errors.
MAD_FACTOR = 1.483

#: Weight given beyond Hampel's outer threshold (LS-SVMlab's ``10e-8``): not zero, so every row stays in the fit.
HAMPEL_FLOOR = 1e-7


def weighted_median(x, weights=None):
    """Median of ``x`` (b,) with row weights: the median of the rows repeated
    by their weights when the weights are integers (the mean of the two
    middle values for an even total), O(b log b)."""
    x = np.asarray(x, dtype=float)
    if weights is None:
        return float(np.median(x))
    w = np.asarray(weights, dtype=float)
    keep = w > 0
    x, w = x[keep], w[keep]
    order = np.argsort(x, kind="stable")
    x, c = x[order], np.cumsum(w[order])
    half = c[-1] / 2.0
    lower = x[np.searchsorted(c, half, side="left")]  # first value whose cumulative weight reaches half
    upper = x[min(np.searchsorted(c, half, side="right"), x.size - 1)]  # first one passing it
    return 0.5 * (float(lower) + float(upper))


def robust_scale(e, weights=None):
    """``1.483 * median(|e - median(e)|)`` of residuals ``e`` (b,), medians weighted
    by ``weights`` (:func:`weighted_median`) if given; O(b log b)."""
    e = np.asarray(e, dtype=float)
    return MAD_FACTOR * weighted_median(np.abs(e - weighted_median(e, weights)), weights)


def _huber(r, c):
    c = 1.345 if c is None else float(c)
    a = np.abs(r)
    with np.errstate(divide="ignore"):
        return np.where(a < c, 1.0, c / np.maximum(a, np.finfo(float).tiny))


def _hampel(r, c):
    c1, c2 = (2.5, 3.0) if c is None else (float(c[0]), float(c[1]))
    a = np.abs(r)
    return np.where(a <= c1, 1.0, np.where(a <= c2, (c2 - a) / (c2 - c1), HAMPEL_FLOOR))


def _logistic(r, c):
    r = np.asarray(r, dtype=float)
    out = np.ones_like(r)
    nz = r != 0
    out[nz] = np.tanh(r[nz]) / r[nz]
    return out


def _myriad(r, c):
    if c is None:
        q75, q25 = np.percentile(r, [75, 25])
        c = 0.5 * (q75 - q25)
    K2 = max(float(c) ** 2, np.finfo(float).tiny)  # a zero interquartile range: weights 0 beyond r = 0
    return K2 / (K2 + np.asarray(r, dtype=float) ** 2)


#: Names (with LS-SVMlab's "w" prefix accepted) to weight functions ``f(r, parameter)``.
WEIGHT_FUNCTIONS = {"huber": _huber, "hampel": _hampel, "logistic": _logistic, "myriad": _myriad}


def robust_weights(r, function="huber", parameter=None):
    """Weights of standardised residuals ``r`` (b,) by a named weight function.

    Parameters
    ----------
    r : ndarray of shape (b,)
    function : {"huber", "hampel", "logistic", "myriad"} (or LS-SVMlab's "whuber", ...)
    parameter : float, pair of floats or None
        Huber's ``c``, Hampel's ``(c1, c2)``, the myriad's ``K``; None for the defaults (module notes).

    Returns
    -------
    ndarray of shape (b,), values in (0, 1]
    """
    name = function[1:] if isinstance(function, str) and function.startswith("w") else function
    if name not in WEIGHT_FUNCTIONS:
        raise ValueError(f"weight_function must be one of {sorted(WEIGHT_FUNCTIONS)}; got {function!r}")
    return WEIGHT_FUNCTIONS[name](np.asarray(r, dtype=float), parameter)
