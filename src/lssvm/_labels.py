"""Class labels to LS-SVM regression targets (shared by the selection and
estimator layers)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["encode_classes"]


def encode_classes(y, estimator_name):
    """Code labels as +1/-1 targets: one column for two classes (``classes[1]``
    is +1), one-vs-rest columns for more.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
    codes : ndarray of shape (m,)
        Index of each label in ``classes``.
    Y : ndarray of shape (m, 1) or (m, n_classes)
    """
    _check_label_types(y)
    try:
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        raise ValueError(
            "class labels must be mutually comparable and not missing (None / NaN); got a mix of types"
        ) from None
    k = classes.size
    if k < 2:
        raise ValueError(f"{estimator_name} needs samples of at least 2 classes; got 1 class ({classes[0]!r})")
    if k == 2:
        Y = np.where(codes == 1, 1.0, -1.0)[:, None]
    else:
        Y = -np.ones((codes.size, k))
        Y[np.arange(codes.size), codes] = 1.0
    return classes, codes, Y


def _check_label_types(y):
    """Refuse labels mixing strings with numbers (or other types), which
    scikit-learn reports only as "Unknown label type"; O(m) for object arrays."""
    y = np.asarray(y)
    if y.dtype != object:
        return
    types = {type(v) for v in y.ravel()}
    if type(None) in types or any(isinstance(v, float) and v != v for v in y.ravel()):
        return  # missing labels: reported below
    strings = {t for t in types if issubclass(t, str)}
    if strings and types - strings:
        names = ", ".join(sorted(t.__name__ for t in types))
        raise ValueError(
            f"class labels mix strings with other types ({names}), e.g. 1 and '1' would be different "
            "classes; convert them to one type first, e.g. y.astype(str)"
        )
