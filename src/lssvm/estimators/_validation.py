"""scikit-learn's ``validate_data`` with a clearer message for non-numeric inputs, and a regressor's
training data."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from .._targets import check_numeric_targets, warn_constant_targets

__all__ = ["validate_input", "validate_regression_data"]


def validate_input(estimator, X="no_validation", y="no_validation", **kwargs):
    """``sklearn.utils.validation.validate_data``, re-raising a failed
    conversion of ``X`` to numbers as a ValueError that names the
    non-numeric columns (for DataFrames) and says what to do."""
    try:
        return validate_data(estimator, X, y, **kwargs)
    except ValueError as exc:
        text = str(exc)
        if "could not convert" not in text and "Unable to convert" not in text:
            raise
        columns = getattr(X, "columns", None)
        if columns is not None and hasattr(X, "dtypes"):
            bad = [str(c) for c, t in zip(columns, X.dtypes, strict=True) if t.kind not in "biufc"]
            where = f"X has non-numeric column(s) {', '.join(bad)}" if bad else "X holds non-numeric values"
        else:
            where = "X holds non-numeric values"
        raise ValueError(
            f"{where} ({text}); {type(estimator).__name__} needs numbers: encode categorical columns "
            "(e.g. sklearn.preprocessing.OneHotEncoder) or drop them"
        ) from None


def validate_regression_data(estimator, X, y):
    """A regressor's training data: ``X`` (m, d) as float64 and numeric targets (at least two rows; a
    constant target warns), as ``(X, Y, y_1d)`` with ``Y`` of shape (m, v) and whether ``y`` was 1-D."""
    X, y = validate_input(estimator, X, y, dtype=np.float64, multi_output=True, ensure_min_samples=2, y_numeric=True)
    y = check_numeric_targets(y)
    warn_constant_targets(y)
    return X, y.reshape(y.shape[0], -1), y.ndim == 1
