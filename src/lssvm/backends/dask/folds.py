"""Fold assignment on Dask data: the :class:`lssvm.cv.FoldSpec` of a ``cv``,
computed by passes (counts of groups) without holding the rows."""

from __future__ import annotations

import warnings
from numbers import Integral

import dask.array as da
import numpy as np
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut

from ...cv import FoldSpec
from .passes import run_pass

__all__ = ["fold_spec"]


def fold_spec(cv, data, y_labels=None):
    """Fold assignment for ``cv`` on ``data`` (see :mod:`lssvm.backends.dask`).

    Parameters
    ----------
    cv : int, scikit-learn splitter or iterable of (train, test)
    data : RowData
    y_labels : callable, optional
        Returns the targets in memory, for splitters that need them.

    Returns
    -------
    lssvm.cv.FoldSpec
    """
    m = data.n_samples
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        spec = FoldSpec.kfold(m, cv)
        if data.groups is not None:
            warnings.warn("groups is ignored by an integer cv (KFold); pass GroupKFold or LeaveOneGroupOut "
                          "to use it", UserWarning, stacklevel=4)
        return spec
    if isinstance(cv, KFold) and not cv.shuffle:
        return FoldSpec.kfold(m, cv.n_splits)
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
        pairs = cv
    return FoldSpec.from_test_sets((test for _, test in pairs), m)
