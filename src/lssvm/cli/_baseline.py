"""The trivial baseline beside every score of ``lssvm select``: always the
majority class (error rate) or always the mean (MSE), scored the same way
as the model -- on the same LOO or k-fold partition, each held-out row
predicted from the other rows only, and on the same test rows from the
training rows.  A model that is not clearly better than it has learnt
little from the inputs, and the command says so."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CLEARLY_BETTER", "Baseline", "cv_baseline", "heldout_baseline"]

#: a model is "clearly better" when its error is at most this fraction of the baseline's
CLEARLY_BETTER = 0.9


class Baseline:
    """A baseline's score under one criterion, and the words for it.

    Attributes
    ----------
    value : float
        The baseline's error (error rate, or MSE).
    what : str
        What the baseline predicts, e.g. "always the majority class 'no'".
    """

    def __init__(self, value, what):
        self.value, self.what = float(value), what

    def verdict(self, score):
        """None when ``score`` (lower is better) is clearly below the
        baseline, else a sentence saying the model is not clearly better."""
        if not np.isfinite(score) or not np.isfinite(self.value) or self.value <= 0:
            return None
        if score <= CLEARLY_BETTER * self.value:
            return None
        return (f"the model is not clearly better than {self.what} ({score:.4g} against {self.value:.4g}: "
                f"less than {1 - CLEARLY_BETTER:.0%} lower); the inputs explain little of the target, or the "
                "search missed: try other kernels, widths (--gammas) or inputs")


def cv_baseline(y, folds, scoring, classes=None):
    """The baseline's CV error on the model's partition.

    Parameters
    ----------
    y : ndarray of shape (m,) or (m, v)
        The targets (class labels for a classifier).
    folds : list of ndarray or None
        Test indices of the folds (``search.cv_folds_``); None: leave one
        out, in closed form (the mean of the other m - 1 rows leaves the
        residual ``(y_i - ybar) m / (m - 1)``).  O(m) for LOO, O(k m) for
        k folds.  The error rate is that of the whole table's majority
        class on every row, whatever the partition: a majority re-counted
        without the held-out rows is wrong on every row of a balanced table
        (leave one out of 50/50 and the other class wins), which would make
        the baseline look worse than guessing.
    scoring : {"error_rate", "mse"}
        As the model's score; "mse" of a classifier is over its ±1 codes.
    classes : ndarray, optional
        The classifier's classes (None: regression).

    Returns
    -------
    Baseline or None
        None for another scoring (evidence, GCV: no baseline of that kind).
    """
    if scoring not in ("error_rate", "mse"):
        return None
    y = np.asarray(y)
    m = y.shape[0]
    if classes is not None:
        index = pd.Index(classes).get_indexer(y.ravel())
        if scoring == "error_rate":
            return _majority(index, len(classes), classes)
        Y = np.where(index[:, None] == np.arange(len(classes))[None, :], 1.0, -1.0)
        Y = Y[:, 1:] if len(classes) == 2 else Y  # binary: one ±1 column, as the model's codes
    else:
        Y = np.asarray(y, dtype=float).reshape(m, -1)
    if folds is None:
        mse = np.mean(np.square(Y - Y.mean(axis=0))) * (m / (m - 1)) ** 2
    else:
        sse = 0.0
        for test in folds:
            train = np.ones(m, bool)
            train[test] = False
            sse += np.sum(np.square(Y[test] - Y[train].mean(axis=0)))
        mse = sse / (sum(len(t) for t in folds) * Y.shape[1])
    return Baseline(mse, "always the mean of the training targets")


def _majority(index, k, classes):
    counts = np.bincount(index, minlength=k)
    top = int(np.argmax(counts))
    return Baseline(1 - counts[top] / index.size, f"always the majority class '{classes[top]}'")


def heldout_baseline(y_train, y_test, task):
    """The baseline's test metrics, named as :func:`lssvm.cli._inputs.evaluate`
    names the model's: the training mean (regression), or the training
    class shares as probabilities and the majority class as the prediction.

    Returns
    -------
    list of (str, float)
    """
    from sklearn.dummy import DummyClassifier, DummyRegressor

    from ._inputs import evaluate

    y_train = np.asarray(y_train)
    dummy = DummyRegressor() if task == "regression" else DummyClassifier(strategy="prior")
    dummy.fit(np.zeros((y_train.shape[0], 1)), y_train)
    return evaluate(dummy, np.zeros((np.asarray(y_test).shape[0], 1)), y_test, task)
