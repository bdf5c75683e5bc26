"""Fold assignment on Dask data: the :class:`lssvm.cv.FoldSpec` of a ``cv``,
computed by passes (counts of groups) without holding the rows."""

from __future__ import annotations

import warnings
from numbers import Integral

import dask
import dask.array as da
import numpy as np
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut, StratifiedKFold

from ...cv import FoldSpec, check_indices, check_train_complement, stratifiable
from .passes import run_pass
from .rows import RowData

__all__ = ["fold_spec", "stratified_spec", "labels_as_groups"]


def fold_spec(cv, data, y_labels=None, classifier=False):
    """Fold assignment for ``cv`` on ``data`` (see :mod:`lssvm.backends.dask`).

    Parameters
    ----------
    cv : int, scikit-learn splitter or iterable of (train, test)
    data : RowData
    y_labels : callable, optional
        Returns the targets in memory, for splitters that need them.
    classifier : bool, default=False
        An int ``cv`` stratifies on the class labels ``data.y``.

    Notes
    -----
    The rule of an int ``cv`` is the in-memory one
    (:func:`lssvm.cv.resolve_folds`, scikit-learn's ``check_cv``):
    unshuffled ``KFold(k)``, contiguous row ranges of scikit-learn's sizes;
    for a classifier unshuffled ``StratifiedKFold(k)``, computed from
    per-block class counts (one pass) with
    :meth:`lssvm.cv.FoldSpec.stratified_kfold`.  Use the returned spec
    with the class labels as the rows' groups (:func:`labels_as_groups`).

    Returns
    -------
    lssvm.cv.FoldSpec
    """
    m = data.n_samples
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if not 2 <= cv <= m:
            raise ValueError(f"cv={cv} folds needs 2 <= cv <= n_samples={m}")
        if data.groups is not None:
            warnings.warn("groups is ignored by an integer cv (KFold); pass GroupKFold or LeaveOneGroupOut "
                          "to use it", UserWarning, stacklevel=4)
        if classifier:
            return stratified_spec(data, int(cv), fall_back=True)
        return FoldSpec.kfold(m, cv)
    if isinstance(cv, KFold) and not cv.shuffle:
        return FoldSpec.kfold(m, cv.n_splits)
    if classifier and type(cv) is StratifiedKFold and not cv.shuffle:
        return stratified_spec(data, cv.n_splits, fall_back=False)
    if isinstance(cv, (GroupKFold, LeaveOneGroupOut)) and data.groups is None:
        raise ValueError(f"{type(cv).__name__} needs groups")
    if isinstance(cv, GroupKFold) and not getattr(cv, "shuffle", False):
        keys, counts = run_pass("counting groups", da.unique(data.groups, return_counts=True))
        return FoldSpec.group_kfold(keys, counts, cv.n_splits)
    if isinstance(cv, LeaveOneGroupOut):
        return FoldSpec.leave_one_group_out(np.unique(run_pass("counting groups", da.unique(data.groups))))
    # anything else: one label per row, in memory
    if hasattr(cv, "split"):
        y = None if y_labels is None else y_labels()
        g = None if data.groups is None else data.groups.compute()
        pairs = cv.split(np.zeros((m, 0)), y, g)
    else:
        try:
            pairs = iter(cv)
        except TypeError:  # the in-memory message (lssvm.cv.resolve_folds)
            raise ValueError(
                f"cv must be an int, a scikit-learn splitter or an iterable of (train, test) pairs; got {cv!r}"
            ) from None
    return FoldSpec.from_test_sets(_checked_tests(pairs, m), m)


def _checked_tests(pairs, m):
    """The test rows of (train, test) pairs, each pair's train rows checked to
    be the complement (:func:`lssvm.cv.check_train_complement`, as in memory)."""
    for i, pair in enumerate(pairs):
        try:
            train, test = pair
        except (TypeError, ValueError):
            raise ValueError(f"fold {i} is not a (train, test) pair") from None
        test = check_indices(test, m, name=f"fold {i} test indices")
        check_train_complement(train, test, m, i)
        yield test


def _class_counts(labels, row0):
    keys, first, counts = np.unique(np.asarray(labels).ravel(), return_index=True, return_counts=True)
    return keys, first + row0, counts


def stratified_spec(data, k, fall_back):
    """Unshuffled ``StratifiedKFold(k)`` of the class labels ``data.y`` (one
    pass of per-block class counts).  With ``fall_back``, labels that
    cannot be stratified (no class has k rows) give ``KFold(k)`` with a
    warning, as in memory."""
    y = data.y if data.y.ndim == 1 else data.y[:, 0]
    starts = data.offsets[:-1]
    parts = [dask.delayed(_class_counts, pure=True)(b, int(r0))
             for b, r0 in zip(y.to_delayed(optimize_graph=False).ravel(), starts.tolist(), strict=True)]
    per_block = run_pass("counting classes per block", parts)
    keys = np.unique(np.concatenate([p[0] for p in per_block]))
    counts = np.zeros((len(per_block), keys.size), dtype=np.int64)
    first = np.full(keys.size, data.n_samples, dtype=np.int64)
    for b, (kb, fb, cb) in enumerate(per_block):
        j = np.searchsorted(keys, kb)
        counts[b, j] = cb
        first[j] = np.minimum(first[j], fb)
    total = counts.sum(axis=0)
    if fall_back and not stratifiable(np.repeat(np.arange(keys.size), total), k):
        return FoldSpec.kfold(data.n_samples, k)
    if np.all(k > total):
        raise ValueError(f"n_splits={k} cannot be greater than the number of members in each class.")
    if k > total.min():
        warnings.warn(f"The least populated class in y has only {total.min()} members, which is less than "
                      f"n_splits={k}.", UserWarning, stacklevel=4)
    return FoldSpec.stratified_kfold(keys, first, counts, starts, k)


def labels_as_groups(spec, data):
    """The rows a fold assignment reads: with the class labels as groups for
    a "stratified" spec, else ``data`` itself."""
    if spec.kind != "stratified":
        return data
    y = data.y if data.y.ndim == 1 else data.y[:, 0]
    return RowData(data.X, data.y, y, data.offsets)
