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

__all__ = ["ROBUST_STATISTICS", "WEIGHT_FUNCTIONS", "robust_reweight", "robust_scale", "robust_statistic",
           "robust_weights", "weighted_median"]

#: Robust statistics of absolute held-out residuals (:func:`robust_statistic`).
ROBUST_STATISTICS = ("median", "trimmed", "mae")

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


def robust_reweight(K_mn, K_BB, Y, prior, alpha, function="hampel", parameter=None, *, max_iter=50, tol=1e-4,
                    rcond=1e-10, fac=None, whitener=None):
    """Iteratively reweighted sparse LS-SVM at one alpha (LS-SVMlab's ``robustlssvm``).

    Step: residuals ``e`` of the current weighted fit, scale ``s = 1.483 MAD``
    (medians weighted by ``prior``: an integer prior weight is a repeated row),
    weights ``v = f(e / s)``, refit with row weights ``prior * v``; stop when
    no weight moves by more than ``tol``.

    Parameters
    ----------
    K_mn : ndarray of shape (m, n)
    K_BB : ndarray of shape (n, n)
    Y : ndarray of shape (m, 1)
    prior : ndarray of shape (m,)
        Prior row weights (``sample_weight``; ones without).
    alpha : float
    function, parameter
        As for :func:`robust_weights`.
    max_iter : int
        Weighted refits at most.
    tol : float
    rcond : float
    fac : WeightedRLSFactorization, optional
        The prior-weighted fit, if already factorised (shared by every alpha).
    whitener : ndarray, optional
        A given feature map (:func:`lssvm.solvers.factorize_weighted_rls`).

    Returns
    -------
    fac : WeightedRLSFactorization
        The final weighted fit.
    v : ndarray of shape (m,)
        The robust weights (fit weights ``prior * v``).
    scale : float
    n_iter : int
        Weighted refits made after the prior-weighted fit.
    converged : bool

    Notes
    -----
    One weighted factorisation per step, O(m n^2 + n^3).
    """
    from .weighted_rls import factorize_weighted_rls
    from .whitening import whiten_rows

    if fac is None:
        fac = factorize_weighted_rls(K_mn, K_BB, Y, prior, rcond=rcond, warn=False, whitener=whitener)
    whitened = None  # K_mn W, formed at the first refit and shared by the later ones
    v, used, n_iter, scale = np.ones(Y.shape[0]), prior > 0, 0, float("nan")
    for _ in range(max_iter + 1):
        e = fac.residuals(alpha)[:, 0]
        scale = robust_scale(e[used], prior[used])
        if not scale > 0:  # more than half the rows fitted exactly: nothing to reweight by
            return fac, v, scale, n_iter, True
        v_new = robust_weights(e / scale, function, parameter)
        if np.max(np.abs(v_new - v)) <= tol:
            return fac, v, scale, n_iter, True
        if n_iter == max_iter:
            break
        v = v_new
        if whitened is None:
            whitened = (whiten_rows(np.array(K_mn, dtype=float), fac.whitener, fac.method, overwrite=True),
                        fac.whitener, fac.method)
        fac = factorize_weighted_rls(K_mn, K_BB, Y, prior * v, rcond=rcond, warn=False, whitened=whitened)
        n_iter += 1
    return fac, v, scale, n_iter, False


def robust_statistic(r, weights=None, statistic="median", trim=0.1):
    """A robust location of absolute residuals ``r`` (m,): the weighted median,
    the weighted mean without the largest ``trim`` share of the weight
    ("trimmed"), or the weighted mean ("mae").  O(m log m).

    Raises
    ------
    ValueError
        For an unknown statistic or ``trim`` outside [0, 1).
    """
    if statistic not in ROBUST_STATISTICS:
        raise ValueError(f"statistic must be one of {ROBUST_STATISTICS}; got {statistic!r}")
    if not 0 <= trim < 1:
        raise ValueError(f"trim must lie in [0, 1); got {trim!r}")
    r = np.abs(np.asarray(r, dtype=float))
    w = np.ones(r.size) if weights is None else np.asarray(weights, dtype=float)
    if statistic == "median":
        return weighted_median(r, w)
    if statistic == "mae":
        return float(w @ r / w.sum())
    order = np.argsort(r, kind="stable")
    r, w = r[order], w[order]
    keep = np.cumsum(w) - w < (1.0 - trim) * w.sum()
    return float(w[keep] @ r[keep] / w[keep].sum())
