"""Label handling of the classifiers that regress +1/-1 codes."""

from __future__ import annotations

import numpy as np

from .._labels import encode_classes

__all__ = ["CodedClassifierMixin", "encode_classes"]


class CodedClassifierMixin:
    """``decision_function`` and ``predict`` for estimators that regress +1/-1
    codes and provide ``_decision_2d`` (m, v), ``classes_`` and ``_single_output``."""

    def decision_function(self, X):
        """Outputs, shape (m,) for two classes (positive means ``classes_[1]``)
        or (m, n_classes)."""
        F = self._decision_2d(X)
        return F[:, 0] if self._single_output else F

    def predict(self, X):
        """Predicted labels, shape (m,)."""
        F = self._decision_2d(X)
        idx = (F[:, 0] > 0).astype(int) if F.shape[1] == 1 else np.argmax(F, axis=1)
        if callable(getattr(idx, "__dask_graph__", None)):  # Dask input: decoded lazily, block by block
            return idx.map_blocks(self.classes_.take, dtype=self.classes_.dtype)
        return self.classes_[idx]
