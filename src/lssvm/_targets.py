"""Checks on regression targets shared by the estimators."""

from __future__ import annotations

import warnings

import numpy as np

from .exceptions import ConstantTargetWarning

__all__ = ["check_numeric_targets", "warn_constant_targets"]


def warn_constant_targets(Y, stacklevel=3):
    """Warn if a column of the targets ``Y`` (m, v) is constant.

    A constant target is fitted exactly by the intercept: every model
    predicts it, every cross-validation error is 0 and a search has nothing
    to choose from, which is legal but almost always a wrong column.
    """
    Y = np.asarray(Y, dtype=float).reshape(Y.shape[0], -1)
    const = np.flatnonzero(np.ptp(Y, axis=0) == 0)
    if const.size == 0:
        return
    what = "y is" if Y.shape[1] == 1 else f"output column(s) {', '.join(map(str, const))} of y are"
    warnings.warn(
        f"{what} constant (every value is {Y[0, const[0]]:g}): the model predicts that constant and every "
        "cross-validation error is 0, so there is nothing to select; check the target column",
        ConstantTargetWarning,
        stacklevel=stacklevel,
    )


def check_numeric_targets(y):
    """``y`` as float, or a ValueError if it holds non-numbers (scikit-learn's
    ``y_numeric`` converts only object arrays, not strings)."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        try:
            y = y.astype(float)
        except (TypeError, ValueError):
            raise ValueError(
                f"y must be numeric for regression; got values of dtype {y.dtype} such as {y.flat[0]!r}. "
                "For class labels use a classifier (an *LSSVC estimator, such as SparseLSSVC)"
            ) from None
    return np.asarray(y, dtype=float)
