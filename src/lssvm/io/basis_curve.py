"""What a model file keeps of the basis grown by exact CV (``n_basis="auto"``):
the CV error of every basis size, so that a loaded model still shows how
its size was chosen (``lssvm select`` draws it in its report).

The fitted estimator's ``basis_curve_`` (a ``*CV`` search's, or a base
estimator's fitted with ``n_basis="auto"``) is stored as four arrays of N
sizes,

* ``basis_curve_n_basis`` int64 (N,): the sizes 1..N grown, increasing,
* ``basis_curve_cv_error`` float64 (N,): the CV mean squared error per size
  (``+inf`` where every alpha failed to factorise; never NaN),
* ``basis_curve_cv_error_se`` float64 (N,): its standard error,
* ``basis_curve_alpha`` float64 (N,): the alpha that scored it,

and a ``basis_curve`` metadata object ``{"n_chosen": int or null,
"stop_reason": str, "replaced": bool or null, "cv": str or null}``
(``replaced``: whether a search kept the grown model; ``cv``: "LOO" or
"k-fold" for a search).  O(N) numbers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["basis_curve_arrays", "stored_basis_curve", "CURVE_ARRAYS"]

#: The curve's member names in the model file, by ``basis_curve_`` key.
CURVE_ARRAYS = {"n_basis": "basis_curve_n_basis", "cv_error": "basis_curve_cv_error",
                "cv_error_se": "basis_curve_cv_error_se", "alpha": "basis_curve_alpha"}


def basis_curve_arrays(fitted, stored=None):
    """``(metadata object, arrays)`` to store for ``fitted``'s ``basis_curve_``
    (else for ``stored``), or ``(None, {})`` when there is none (or no size
    was grown: a search whose budget was spent before the growth).

    Parameters
    ----------
    fitted : estimator
        The estimator that was fitted (a ``*CV`` search or a base estimator).
    stored : dict, optional
        A curve as :func:`stored_basis_curve` returns it (``SavedModel.basis_curve``
        of a loaded model, whose estimator has no ``basis_curve_``): saved again as it is.

    Raises
    ------
    ValueError
        If the curve is inconsistent (a file :func:`stored_basis_curve` would refuse is never written).
    """
    curve = getattr(fitted, "basis_curve_", None)
    if not isinstance(curve, dict) and isinstance(stored, dict):
        curve = stored
    if not isinstance(curve, dict) or np.size(curve.get("n_basis", ())) == 0:
        return None, {}
    arrays = {name: np.asarray(curve[key], dtype=np.int64 if key == "n_basis" else float)
              for key, name in CURVE_ARRAYS.items()}
    folds = getattr(fitted, "cv_folds_", False) if curve is not stored else False
    meta = {"n_chosen": None if curve.get("n_chosen") is None else int(curve["n_chosen"]),
            "stop_reason": str(curve.get("stop_reason", "")),
            "replaced": None if curve.get("replaced") is None else bool(curve["replaced"]),
            "cv": (curve.get("cv") if curve is stored else None if folds is False
                   else "LOO" if folds is None else f"{len(folds)}-fold")}
    why = _curve_fault(meta, arrays)
    if why:
        raise ValueError(f"cannot save the model's basis curve: {why}")
    return meta, arrays


def stored_basis_curve(meta, arrays, error):
    """The stored curve as a ``basis_curve_``-like dict (``n_basis``,
    ``cv_error``, ``cv_error_se``, ``alpha``, ``n_chosen``, ``stop_reason``,
    ``replaced``, ``cv``), or None for a file without one.

    ``meta`` is the file's ``basis_curve`` metadata object (or None),
    ``arrays`` its members; ``error`` is the exception class to raise for an
    inconsistent file.
    """
    present = [name for name in CURVE_ARRAYS.values() if name in arrays]
    if meta is None and not present:
        return None
    if not isinstance(meta, dict) or len(present) != len(CURVE_ARRAYS):
        raise error("the basis curve needs its metadata object 'basis_curve' and the arrays "
                    f"{', '.join(CURVE_ARRAYS.values())}")
    why = _curve_fault(meta, arrays)
    if why:
        raise error(f"invalid basis curve: {why}")
    out = {key: arrays[name].copy() for key, name in CURVE_ARRAYS.items()}
    out.update({k: meta.get(k) for k in ("n_chosen", "stop_reason", "replaced", "cv")})
    return out


def _curve_fault(meta, arrays):
    """Why the stored curve is inconsistent, or None.  O(N)."""
    sizes = arrays[CURVE_ARRAYS["n_basis"]]
    if sizes.dtype.kind not in "iu" or sizes.ndim != 1 or sizes.size == 0:
        return "basis_curve_n_basis must be a non-empty 1-D integer array"
    if sizes[0] < 1 or np.any(np.diff(sizes) <= 0):
        return "the basis sizes must be positive and increasing"
    for key in ("cv_error", "cv_error_se", "alpha"):
        a = arrays[CURVE_ARRAYS[key]]
        if a.dtype.kind != "f" or a.shape != sizes.shape:
            return f"{CURVE_ARRAYS[key]} must be a float array of {sizes.size} values, one per size"
        if np.any(np.isnan(a)) or np.any(a < 0) or (key == "alpha" and not np.all(np.isfinite(a))):
            return f"{CURVE_ARRAYS[key]} holds NaN, negative or (alpha) infinite values"
    n = meta.get("n_chosen")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or int(n) not in set(sizes.tolist())):
        return f"n_chosen {n!r} is not one of the sizes grown"
    if not isinstance(meta.get("stop_reason"), str):
        return "stop_reason must be a string"
    if not isinstance(meta.get("replaced"), (bool, type(None))) or not isinstance(meta.get("cv"), (str, type(None))):
        return "replaced must be true, false or null, and cv a string or null"
    return None
