"""What a model file keeps for prediction intervals and class probabilities
(format version 3): the leave-one-out data of jackknife+ for regressors,
the calibration maps for classifiers.

Regressor (sparse, Nyström or fixed-size, in-memory fit): the LOO model at a new point is
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
from sklearn.base import ClassifierMixin

__all__ = ["uncertainty_arrays", "stored_uncertainty"]


def uncertainty_arrays(est):
    """Arrays to store for ``est``'s intervals or probabilities (may be empty)."""
    cals = getattr(est, "calibrators_", None)
    if cals:
        for cal in cals:  # never write a map that stored_uncertainty refuses
            why = _map_fault(cal.method, np.asarray(cal.params, dtype=float))
            if why:
                raise ValueError(f"cannot save the model's {cal.method} calibration: {why}")
        return {f"calibration_{k}": cal.params for k, cal in enumerate(cals)}
    if not hasattr(est, "predict_interval"):
        return {}
    fac = _loo_factorization(est)
    if fac is None:
        return {}
    if est.kernel_expansion().centres.shape[0] != fac.kernel_mean.size:  # predicts on other centres (an
        return {}  # exact-kernel predictor): the factorisation's LOO models are not the saved model's
    alphas = np.ravel(np.asarray(est.alpha, dtype=float))
    if np.unique(alphas).size != 1:  # one alpha per target: the LOO weights differ by target, none are kept
        return {}
    alpha = float(alphas[0])
    d = 1.0 / (fac.eigenvalues + alpha)
    R = fac.loo_residuals(alpha)
    if not np.all(np.isfinite(R)):  # leverage ~ 1 (warned about): no intervals from the file
        return {}
    return {"loo_weights": fac.Q @ (d[:, None] * fac.M.T), "loo_residuals": R, "kernel_mean": fac.kernel_mean}


def _loo_factorization(est):
    """The training factorisation whose LOO models are ``est``'s, or None.

    A sparse or Nyström fit keeps it as ``factorization_``; a fixed-size fit
    is the sparse model on its supported prototypes, whose factorisation is
    its exact-CV engine's (``_fitted_engine()``, the estimators' shared
    contract), so that its file serves the same jackknife+ intervals as the
    fitted estimator's ``predict_interval``.  None where no one sparse model
    in memory is the fitted one (Dask fits, outputs on different supports,
    a model without the intercept or without prototypes)."""
    fac = getattr(est, "factorization_", None)
    if fac is not None:
        return fac if getattr(fac, "M", None) is not None else None
    engine_of = getattr(est, "_fitted_engine", None)
    if engine_of is None:
        return None
    try:
        engine = engine_of()
    except (ValueError, AttributeError):  # NotFittedError is both: no engine, so no stored intervals
        return None
    fac = getattr(engine, "solution", None)
    basis = getattr(engine, "basis_vectors", None)
    if fac is None or getattr(fac, "M", None) is None or basis is None:
        return None
    centres = est.kernel_expansion().centres
    if basis.shape != centres.shape or not np.array_equal(np.asarray(basis), np.asarray(centres)):
        return None  # the engine's basis is not the saved expansion's: its LOO models are another model's
    return fac


def stored_uncertainty(cls, calibration, shape, arrays, error):
    """The keyword arguments of ``cls.from_kernel_expansion`` for the stored
    interval / calibration data: ``calibration_maps`` (classifiers with a
    ``calibration``) or ``loo_data`` (regressors saved with it), checked
    against the expansion's coefficient ``shape`` (n, v).

    ``error`` is the exception class to raise for an inconsistent file.
    """
    n, v = shape
    if issubclass(cls, ClassifierMixin):
        if calibration is None:
            return {}
        keys = sorted((k for k in arrays if k.startswith("calibration_")), key=lambda k: int(k.split("_")[1]))
        if len(keys) != v:
            raise error(f"calibration {calibration!r} needs {v} calibration array(s); found {len(keys)}")
        for k in keys:
            p = arrays[k]
            ok = p.dtype.kind == "f" and np.all(np.isfinite(p))
            ok = ok and (p.shape == (2,) if calibration == "sigmoid" else (p.ndim == 2 and p.shape[0] == 2 and p.shape[1] >= 1))
            if not ok:
                raise error(f"array {k!r} is not a valid {calibration} calibration map")
            why = _map_fault(calibration, p)
            if why:
                raise error(f"array {k!r}: {why}")
        return {"calibration_maps": [arrays[k] for k in keys]}
    if "loo_weights" not in arrays:
        return {}
    G, R, mu = arrays["loo_weights"], arrays.get("loo_residuals"), arrays.get("kernel_mean")
    if R is None or mu is None or G.ndim != 2 or G.shape[0] != n or R.shape != (G.shape[1], v) or mu.shape != (n,):
        raise error("the leave-one-out arrays (loo_weights, loo_residuals, kernel_mean) have inconsistent shapes")
    if not all(a.dtype.kind == "f" and np.all(np.isfinite(a)) for a in (G, R, mu)):
        raise error("the leave-one-out arrays must be finite float arrays")
    return {"loo_data": (G, R, mu)}


def _map_fault(calibration, p):
    """Why the stored map ``p`` cannot be a probability map increasing in
    the decision value, or None.  Platt's ``P = 1 / (1 + exp(A f + B))``
    rises with ``f`` only for ``A <= 0``; the isotonic thresholds (2, L) must
    be sorted in ``f`` and rise within [0, 1]."""
    if calibration == "sigmoid":
        if p[0] > 0:
            return (f"the sigmoid slope A = {p[0]:.3g} > 0 makes the probability fall as the decision value rises; "
                    "refit the model")
        return None
    f, prob = p
    if np.any(np.diff(f) < 0):
        return "the isotonic thresholds are not sorted"
    if np.any(prob < 0) or np.any(prob > 1):
        return f"the isotonic map leaves [0, 1] (from {prob.min():.3g} to {prob.max():.3g}): not probabilities"
    if np.any(np.diff(prob) < 0):
        return "the isotonic map falls somewhere: it must rise with the decision value"
    return None
