"""``gamma="scale"``: the kernel width from the spread of the inputs.

The rule is scikit-learn's ``SVC(gamma="scale")``: ``1 / (n_features *
X.var())``, the variance taken over all entries of ``X``.  For
standardised inputs it is ``1 / n_features``, which puts the typical
squared distance between two points, ``2 * n_features * X.var()``, at an
RBF exponent of about -2: the kernel neither collapses to 0 nor to 1.
Constant inputs (variance 0) get ``gamma = 1.0``, as scikit-learn does.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

__all__ = ["GAMMA_SCALE", "gamma_scale", "resolve_gamma"]

#: The value of ``gamma`` that asks for the rule.
GAMMA_SCALE = "scale"


def gamma_scale(X, weights=None) -> float:
    """``1 / (n_features * X.var())``, or 1.0 when ``X`` is constant.

    Parameters
    ----------
    X : array-like, scipy sparse matrix, or Dask array / DataFrame of shape (m, d)
        Sparse matrices use the variance over all entries, zeros included
        (as scikit-learn); Dask collections are reduced in one pass.
    weights : ndarray of shape (m,), optional
        Row weights (NumPy or sparse ``X``): the variance of the rows
        repeated by their weights, so that an integer weight is a repeated
        row and a zero weight a removed one.

    Returns
    -------
    float

    Notes
    -----
    O(m d) time, O(1) extra memory for sparse and Dask input.
    """
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        d = X.shape[1]
        total = w.sum() * d
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            mean = float(w @ np.asarray(X.sum(axis=1)).ravel()) / total
            var = float(w @ np.asarray(X.multiply(X).sum(axis=1)).ravel()) / total - mean**2
        else:
            X = np.asarray(X, dtype=float)
            mean = float(w @ X.sum(axis=1)) / total
            var = float(w @ ((X - mean) ** 2).sum(axis=1)) / total
    elif sp.issparse(X):
        X = sp.csr_matrix(X)
        mean = X.mean()
        var = X.multiply(X).mean() - mean**2
    elif hasattr(X, "dask") and hasattr(X, "compute"):  # Dask array or DataFrame, reduced lazily
        import dask

        arr = X.to_dask_array() if hasattr(X, "to_dask_array") else X
        arr = arr.astype(float)
        mean, sq = dask.compute(arr.mean(), (arr**2).mean())
        var = sq - mean**2
        if not np.isfinite(var):  # the training pass reports the offending rows
            return 1.0
    else:
        X = np.asarray(X, dtype=float)
        var = X.var()
    d = X.shape[1] if getattr(X, "ndim", 2) == 2 else 1
    var = float(var)
    if not np.isfinite(var):
        raise ValueError("gamma='scale' needs finite inputs: the variance of X is not finite")
    if var > 0:
        with np.errstate(over="ignore"):
            gamma = 1.0 / (d * var)
        if np.isfinite(gamma):
            return float(gamma)
    elif not _varies(X if weights is None else X[np.asarray(weights) > 0]):
        return 1.0
    # inputs that vary, but with a variance that rounds to 0 or below float64's range for 1 / (d var)
    raise ValueError(f"gamma='scale': the inputs vary, but their variance ({var:.3g}) is too small for a finite "
                     "kernel width 1 / (n_features x variance) in float64; rescale the inputs (e.g. "
                     "StandardScaler) or give gamma as a number")


def _varies(X):
    """Whether an in-memory ``X`` holds two different values (Dask input: assumed so, not computed)."""
    if sp.issparse(X):
        data = X.data
        if data.size == 0:
            return False
        if data.size < X.shape[0] * X.shape[1]:  # implicit zeros besides the stored values
            return bool(np.any(data != 0))
        return bool(np.ptp(data) > 0)
    if hasattr(X, "dask"):
        return True
    X = np.asarray(X)
    return bool(X.size) and bool(np.ptp(X) > 0)


def resolve_gamma(gamma, X=None, weights=None) -> float | object:
    """The kernel width to use: ``gamma`` itself, or the scale of ``X``.

    Parameters
    ----------
    gamma : float > 0 or "scale"
    X : array-like of shape (m, d), optional
        The training inputs; needed for "scale" (without it, 1.0 is
        returned, for validating the other parameters before the data is
        seen).
    weights : ndarray of shape (m,), optional
        Row weights for "scale" (:func:`gamma_scale`).

    Returns
    -------
    float, or ``gamma`` unchanged when it is neither "scale" nor a number
    (the kernel's constructor then rejects it with its own message).

    Raises
    ------
    ValueError
        For a string other than "scale".
    """
    if isinstance(gamma, str):
        if gamma != GAMMA_SCALE:
            raise ValueError(f"gamma must be a number > 0 or 'scale'; got {gamma!r}")
        return 1.0 if X is None else gamma_scale(X, weights)
    if isinstance(gamma, Real) and not isinstance(gamma, bool):
        return float(gamma)
    return gamma
