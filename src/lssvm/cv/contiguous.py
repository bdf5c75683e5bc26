"""Unshuffled k-fold splits without the splitter machinery.

An int ``cv`` of a regressor and an unshuffled ``KFold`` give contiguous
row ranges (:func:`lssvm.cv.resolve_folds`).  Going through scikit-learn's
``split`` and validating each fold (a sort for duplicates, a bincount for
the partition) costs about 0.3-0.5 ms for ten folds, which is a tenth of a
CV+ call at m = 2,000; the ranges themselves are known in closed form.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.model_selection import KFold

__all__ = ["contiguous_folds"]


def contiguous_folds(cv, n_samples, groups=None):
    """The test folds of ``cv`` when they are contiguous ranges, else None.

    Parameters
    ----------
    cv : object
        Recognised: an int k (not bool) without ``groups``, and an instance
        of exactly ``sklearn.model_selection.KFold`` with ``shuffle=False``
        (a subclass may split otherwise).  Anything else returns None.
    n_samples : int
    groups : array-like, optional
        With an int ``cv``, :func:`~lssvm.cv.resolve_folds` warns that it is
        ignored: that case is left to it (None here).

    Returns
    -------
    list of ndarray or None
        The same arrays as ``resolve_folds(cv, n_samples)`` would give
        (scikit-learn's ``KFold``: the first ``n_samples % k`` folds one row
        longer), or None where ``resolve_folds`` must decide (other
        splitters, and every case it refuses with an error, so the errors
        stay its own).

    Notes
    -----
    O(m) for the index arrays.
    """
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if groups is not None:
            return None
        k = int(cv)
    elif type(cv) is KFold and not cv.shuffle:
        k = cv.n_splits
    else:
        return None
    if not 2 <= k <= n_samples:
        return None
    rows = np.arange(n_samples, dtype=np.intp)
    q, extra = divmod(n_samples, k)
    return [rows[j * q + min(j, extra) : (j + 1) * q + min(j + 1, extra)] for j in range(k)]
