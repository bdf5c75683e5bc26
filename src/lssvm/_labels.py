"""Class labels to LS-SVM regression targets and back: the one label coder
of the package, shared by every layer that meets labels (the row-block
solvers, the CV criteria, the estimators, the model files and the CLI).

An LS-SVM classifier regresses on coded labels: +1 / -1 in one column for
two classes (``classes[1]`` is +1), one-vs-rest +1 / -1 columns for more.
Decoding takes the sign of the one column (a tie, 0, goes to
``classes[0]``) or the largest column (ties to the first).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["LabelCoder", "encode_classes"]


class LabelCoder:
    """Code labels against sorted ``classes`` and decode outputs to labels.

    Parameters
    ----------
    classes : array-like of shape (k,)
        Sorted distinct labels, k >= 2 (``np.unique`` of the training labels).

    Notes
    -----
    Every method is O(m v) for m rows and v = 1 (two classes) or k outputs.
    :meth:`index_of`, :meth:`decode` and :meth:`misclassified` take NumPy or
    Dask arrays.
    """

    def __init__(self, classes):
        self.classes = np.asarray(classes)

    @classmethod
    def fit(cls, y, estimator_name):
        """The coder of labels ``y`` and their codes (indices into ``classes``).

        Raises ``ValueError`` (naming ``estimator_name``) for fewer than two
        classes, missing labels, or labels of mixed types.

        Returns
        -------
        coder : LabelCoder
        codes : ndarray of shape (m,)
        """
        _check_label_types(y)
        try:
            check_classification_targets(y)
            classes, codes = np.unique(y, return_inverse=True)
        except TypeError:
            raise ValueError(
                "class labels must be mutually comparable and not missing (None / NaN); got a mix of types"
            ) from None
        if classes.size < 2:
            raise ValueError(f"{estimator_name} needs samples of at least 2 classes; got 1 class ({np.asarray(classes[0]).tolist()!r})")
        return cls(classes), np.ravel(codes)

    @property
    def n_outputs(self):
        """Columns of the coded targets: 1 for two classes, else the number of classes."""
        return 1 if self.classes.size == 2 else self.classes.size

    def codes(self, y, what="y"):
        """Indices of labels ``y`` (m,) into ``classes``; ``ValueError`` for a
        label outside them (``what`` names the labels in the message)."""
        y = np.asarray(y).ravel()
        unknown = ~np.isin(y, self.classes)
        if unknown.any():
            raise ValueError(
                f"{what} holds an unknown label {np.asarray(y[unknown][0]).item()!r}; the classes are "
                f"{self.classes.tolist()}"
            )
        return np.searchsorted(self.classes, y)

    def targets(self, codes):
        """+1 / -1 targets of class indices ``codes`` (m,), shape (m, n_outputs)."""
        codes = np.asarray(codes)
        if self.classes.size == 2:
            return np.where(codes == 1, 1.0, -1.0)[:, None]
        Y = -np.ones((codes.size, self.classes.size))
        Y[np.arange(codes.size), codes] = 1.0
        return Y

    def encode(self, y, what="y"):
        """+1 / -1 targets of labels ``y`` (m,), shape (m, n_outputs)."""
        return self.targets(self.codes(y, what))

    @staticmethod
    def index_of(F):
        """Class indices of outputs ``F`` (..., v): the sign of the one column
        (v = 1) or the largest column; shape (...)."""
        return (F[..., 0] > 0).astype(int) if F.shape[-1] == 1 else F.argmax(axis=-1)

    def decode(self, F):
        """Labels of outputs ``F`` (..., v), shape (...)."""
        idx = self.index_of(F)
        if hasattr(idx, "map_blocks"):  # a Dask array: decode block by block
            return idx.map_blocks(self.classes.take, dtype=self.classes.dtype)
        return self.classes[idx]

    @classmethod
    def misclassified(cls, F, codes):
        """Misclassified rows per leading index: outputs ``F`` (..., b, v) against
        class indices ``codes`` (b,); shape (...)."""
        return (cls.index_of(F) != np.asarray(codes)).sum(axis=-1)


def encode_classes(y, estimator_name):
    """Code labels as +1/-1 targets: one column for two classes (``classes[1]``
    is +1), one-vs-rest columns for more (:class:`LabelCoder`).

    Returns
    -------
    classes : ndarray of shape (n_classes,)
    codes : ndarray of shape (m,)
        Index of each label in ``classes``.
    Y : ndarray of shape (m, 1) or (m, n_classes)
    """
    coder, codes = LabelCoder.fit(y, estimator_name)
    return coder.classes, codes, coder.targets(codes)


def _check_label_types(y):
    """Refuse labels mixing strings with numbers (or other types), which
    scikit-learn reports only as "Unknown label type"; O(m) for object arrays."""
    y = np.asarray(y)
    if y.dtype != object:
        return
    types = {type(v) for v in y.ravel()}
    missing = [i for i, v in enumerate(y.ravel()) if v is None or (isinstance(v, float) and v != v)]
    if missing:
        raise ValueError(
            f"class labels are missing (None / NaN) in {len(missing)} row(s), the first at row {missing[0]}; "
            "drop those rows or give them a label"
        )
    strings = {t for t in types if issubclass(t, str)}
    if strings and types - strings:
        names = ", ".join(sorted(t.__name__ for t in types))
        raise ValueError(
            f"class labels mix strings with other types ({names}), e.g. 1 and '1' would be different "
            "classes; convert them to one type first, e.g. y.astype(str)"
        )
