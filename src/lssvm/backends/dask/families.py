"""What the sampled-column families add to the sparse model's passes on Dask collections.

The three families are one model (the documentation's Mathematics page, §6),
so their exact CV on Dask is the sparse engine's
(:class:`~lssvm.backends.dask.DaskSparseFit`).  This module holds what the
families share there: the draw of sampled columns (:func:`sampled_columns`,
the Nyström family's columns, fitted with the rank-k map ``U_k L_k^(-1/2)``
as the sparse fit's whitening) and the class labels of a Dask target.  The
fixed-size family's pool draws, Gram-sum passes and support engine are in
:mod:`lssvm.backends.dask.fixed_size`.

Rows are drawn as in memory for the same ``random_state``: random columns
by the same ``choice`` call.  Methods that need every row in memory
(k-center, FVS, "all") raise a clear error.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
from sklearn.utils import check_random_state

from ..._params import count_or_fraction
from ...basis import default_n_basis, drop_near_duplicates
from .passes import run_pass
from .rows import take_rows

__all__ = ["class_labels", "sampled_columns"]


def _row_indices(rows, m, name):
    idx = np.asarray(rows)
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or idx.size == 0:
        raise ValueError(f"{name} must be a method name or a non-empty 1-D array of training-row indices")
    if idx.min() < 0 or idx.max() >= m:
        raise ValueError(f"{name} row indices must be in [0, {m}); got {idx.min()}..{idx.max()}")
    return idx.astype(np.intp)


def _needs_memory(name, value, allowed):
    return ValueError(
        f"{name}={value!r} needs all rows in memory; on Dask input use {allowed}, training-row indices"
        + (" or points" if "renyi" in allowed else "")
        + " (for instance selected on a sample that fits in memory)"
    )


# -------------------------------------------------------------- Nyström
def sampled_columns(data, kernel, sampling, n_components, random_state):
    """Sampled columns of Dask data: the rows and their indices, as
    :func:`lssvm.basis.sampled_columns` draws them in memory ("random":
    the same ``choice`` call; or given row indices)."""
    m = data.n_samples
    rng = check_random_state(random_state)
    if isinstance(sampling, str):
        if sampling != "random":
            raise _needs_memory("basis", sampling, "basis='random'")
        c = default_n_basis(m) if n_components is None else count_or_fraction("n_basis", n_components, 0.1, m)
        idx = np.sort(rng.choice(m, c, replace=False))
    else:
        idx = _row_indices(sampling, m, "basis")
    Z, idx = drop_near_duplicates(take_rows(data.X, idx), kernel, idx, what="sampled column", stacklevel=4)
    return Z, idx


def class_labels(y):
    """Sorted distinct labels of a Dask array or Series (one pass)."""
    arr = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
    return np.unique(run_pass("counting classes", da.unique(arr.ravel())))
