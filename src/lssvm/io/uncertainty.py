"""What a model file keeps for prediction intervals and class probabilities
(format version 3): the leave-one-out data of jackknife+ for regressors,
the calibration maps for classifiers.

Regressor (sparse, in-memory fit): the LOO model at a new point is
``f_{-i}(x) = f(x) - u_i(x) R_i`` with ``u_i(x) = 1/m + (k(x, Z) - mu)^T
G_i`` (see :mod:`lssvm.cv.conformal`), so the file keeps

* ``loo_weights`` ``G = Q D M^T`` (n, m) at the fitted alpha,
* ``loo_residuals`` ``R`` (m, v),
* ``kernel_mean`` ``mu`` (n,):

O(n m) numbers, which is what exact jackknife+ intervals need without
the training data.  Classifier with ``calibration``: ``calibration_<k>``
per one-vs-rest output, Platt's ``(A, B)`` or the isotonic thresholds
(2, L).
"""

from __future__ import annotations

import numpy as np

__all__ = ["uncertainty_arrays", "restore_uncertainty"]


def uncertainty_arrays(est):
    """Arrays to store for ``est``'s intervals or probabilities (may be empty)."""
    cals = getattr(est, "calibrators_", None)
    if cals:
        return {f"calibration_{k}": cal.params for k, cal in enumerate(cals)}
    fac = getattr(est, "factorization_", None)
    if fac is None or getattr(fac, "M", None) is None or not hasattr(est, "predict_interval"):
        return {}
    alpha = float(est.alpha)
    d = 1.0 / (fac.eigenvalues + alpha)
    R = fac.loo_residuals(alpha)
    if not np.all(np.isfinite(R)):  # leverage ~ 1 (warned about): no intervals from the file
        return {}
    return {"loo_weights": fac.Q @ (d[:, None] * fac.M.T), "loo_residuals": R, "kernel_mean": fac.kernel_mean}


def restore_uncertainty(est, arrays, error):
    """Attach stored interval / calibration data to a rebuilt estimator.

    ``error`` is the exception class to raise for an inconsistent file.
    """
    n, v = est._dual_coef_2d.shape
    if hasattr(est, "classes_"):
        keys = sorted((k for k in arrays if k.startswith("calibration_")), key=lambda k: int(k.split("_")[1]))
        method = getattr(est, "calibration", None)
        if method is None:
            est.calibrators_ = None
            return
        if len(keys) != v:
            raise error(f"calibration {method!r} needs {v} calibration array(s); found {len(keys)}")
        from ..estimators._calibration import _Calibrator

        cals = []
        for k in keys:
            p = arrays[k]
            ok = p.dtype.kind == "f" and np.all(np.isfinite(p))
            ok = ok and (p.shape == (2,) if method == "sigmoid" else (p.ndim == 2 and p.shape[0] == 2 and p.shape[1] >= 1))
            if not ok:
                raise error(f"array {k!r} is not a valid {method} calibration map")
            cals.append(_Calibrator(method, params=p))
        est.calibrators_ = cals
        return
    if "loo_weights" not in arrays:
        return
    G, R, mu = arrays["loo_weights"], arrays.get("loo_residuals"), arrays.get("kernel_mean")
    if R is None or mu is None or G.ndim != 2 or G.shape[0] != n or R.shape != (G.shape[1], v) or mu.shape != (n,):
        raise error("the leave-one-out arrays (loo_weights, loo_residuals, kernel_mean) have inconsistent shapes")
    if not all(a.dtype.kind == "f" and np.all(np.isfinite(a)) for a in (G, R, mu)):
        raise error("the leave-one-out arrays must be finite float arrays")
    est._saved_loo = (G, R, mu)
