"""Label handling of the classifiers that regress +1/-1 codes (the coder
itself is :class:`lssvm._labels.LabelCoder`, shared by every layer)."""

from __future__ import annotations

from .._labels import LabelCoder, encode_classes

__all__ = ["CodedClassifierMixin", "LabelCoder", "encode_classes"]


class CodedClassifierMixin:
    """``decision_function`` and ``predict`` for estimators that regress +1/-1
    codes and provide ``_decision_2d`` (m, v) and ``classes_``: one output for two classes, else one per class."""

    @property
    def _single_output(self):
        return self.classes_.size == 2

    def decision_function(self, X):
        """Outputs of the LS-SVM, shape (m,) for two classes (positive means
        ``classes_[1]``) or (m, n_classes)."""
        F = self._decision_2d(X)
        return F[:, 0] if self._single_output else F

    def predict(self, X):
        """Predicted labels, shape (m,)."""
        return self._decode(self._decision_2d(X))

    def _decode(self, F):
        """Labels of outputs ``F`` (..., v) (NumPy or Dask), shape (...)."""
        return LabelCoder(self.classes_).decode(F)
