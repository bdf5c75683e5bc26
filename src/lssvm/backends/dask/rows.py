"""Reading input: Dask arrays and DataFrames as row blocks with aligned
targets and groups, the rows a pass works on."""

from __future__ import annotations

from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np

from ..._threads import serial_region
from .. import is_dask_collection
from .passes import run_pass

__all__ = ["RowData", "as_row_data", "as_input_array", "decision_blocks", "frame_to_arrays", "take_rows",
           "count_classes"]


# ------------------------------------------------------------------ data
@dataclass
class RowData:
    """Inputs, targets and groups as Dask arrays with the same row chunks.

    Attributes
    ----------
    X : dask.array.Array of shape (m, d)
        One chunk along the columns.
    y : dask.array.Array of shape (m,) or (m, v), or None
    groups : dask.array.Array of shape (m,), or None
    offsets : ndarray of shape (n_chunks + 1,)
        First global row of each chunk.
    """

    X: object
    y: object
    groups: object
    offsets: np.ndarray

    @property
    def n_samples(self):
        return int(self.offsets[-1])

    @property
    def n_features(self):
        return int(self.X.shape[1])

    def blocks(self):
        """Per chunk: (X chunk, y chunk or None, groups chunk or None, first row)."""
        xs = self.X.to_delayed(optimize_graph=False).ravel()
        ys = [None] * len(xs) if self.y is None else self.y.to_delayed(optimize_graph=False).ravel()
        gs = [None] * len(xs) if self.groups is None else self.groups.to_delayed(optimize_graph=False).ravel()
        return list(zip(xs, ys, gs, self.offsets[:-1].tolist(), strict=True))


def _columns(df, cols, dtype):
    return df[cols].to_numpy(dtype=dtype)


def frame_to_arrays(frame, column_sets, dtypes=None):
    """Dask arrays of column sets of a Dask DataFrame, read together.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    column_sets : list of (list of str or str)
        A list of names gives a 2-D array, one name a 1-D array.
    dtypes : list, optional
        NumPy dtype of each array (default: float).

    Returns
    -------
    list of dask.array.Array
        With the frame's partitions as row chunks; every pass over them
        reads each partition once.

    Notes
    -----
    One pass counts the rows of each partition.  Built from the
    partitions' delayed objects rather than ``to_dask_array``: two arrays
    converted from one frame that way, once rechunked, made graphs with a
    missing key when computed together (dask 2026.8).
    """
    cols = []
    for c in column_sets:
        for name in [c] if isinstance(c, str) else c:
            if name not in cols:
                cols.append(name)
    parts = frame[cols].to_delayed()
    lengths = run_pass("counting rows", [dask.delayed(len)(p) for p in parts])
    dtypes = [float] * len(column_sets) if dtypes is None else dtypes
    out = []
    for c, dt in zip(column_sets, dtypes, strict=True):
        width = () if isinstance(c, str) else (len(c),)
        blocks = [da.from_delayed(dask.delayed(_columns, pure=True)(p, c, dt), shape=(n, *width), dtype=np.dtype(dt))
                  for p, n in zip(parts, lengths, strict=True) if n]
        out.append(da.concatenate(blocks, axis=0))
    return out


def _as_dask_array(obj, name):
    if hasattr(obj, "to_dask_array"):  # Dask DataFrame / Series
        if getattr(obj, "ndim", 2) == 2:
            bad = [str(c) for c, t in obj.dtypes.items() if t.kind not in "biuf"]
            if bad:
                raise TypeError(
                    f"{name} has non-numeric column(s) {', '.join(bad)}; encode or drop them before fitting"
                )
            return frame_to_arrays(obj, [list(obj.columns)])[0]
        kind = getattr(obj.dtype, "kind", "O")
        return frame_to_arrays(obj.to_frame(name="_"), ["_"], [float if kind in "biuf" else object])[0]
    if is_dask_collection(obj):
        return obj
    arr = np.asarray(obj)
    if arr.dtype.kind not in "biuf":  # labels: object arrays rechunk without a size guess
        arr = arr.astype(object)
    return da.from_array(arr, chunks=arr.shape if arr.ndim else -1)


def as_input_array(X, n_features=None):
    """``X`` (Dask array or DataFrame) as a float Dask array (m, d) with one
    chunk along the columns; checks dimension, dtype and ``n_features``."""
    X = _as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (rows, features); got a Dask array with {X.ndim} dimension(s)")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric; got dtype {X.dtype}. Encode or drop non-numeric columns")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {n_features}")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    return X.astype(float).rechunk({1: -1})


def _decision_block(X, kernel, Z, A, b):
    if X.shape[0] == 0:
        return np.empty((0, A.shape[1]))
    with serial_region():
        return kernel(X, Z) @ A + b


def decision_blocks(X, kernel, Z, A, b):
    """Lazy outputs ``k(X, Z) A + b`` (m, v) of a kernel expansion on Dask
    rows; the tasks carry only the expansion."""
    X = as_input_array(X, Z.shape[1])
    return X.map_blocks(_decision_block, kernel, Z, A, b, dtype=float, chunks=(X.chunks[0], (A.shape[1],)))


def as_row_data(X, y=None, groups=None, *, numeric_y=True):
    """Check and align Dask (or NumPy) inputs for the row-block passes.

    Parameters
    ----------
    X : dask array or Dask DataFrame of shape (m, d)
    y : dask / NumPy array or Series of shape (m,) or (m, v), optional
    groups : array-like of shape (m,), optional
    numeric_y : bool, default=True
        Require numeric targets (False for class labels).

    Returns
    -------
    RowData

    Raises
    ------
    TypeError
        For non-numeric inputs.
    ValueError
        For wrong dimensions, mismatched lengths or fewer than 2 rows.
        NaN / inf are detected during the passes.
    """
    X = as_input_array(X)
    m = X.shape[0]
    if m < 2:
        raise ValueError(f"need at least 2 samples; got {m}")

    def align(a, name, numeric):
        if a is None:
            return None
        a = _as_dask_array(a, name)
        if any(np.isnan(c) for c in a.chunks[0]):
            a = a.compute_chunk_sizes()
        if a.ndim not in (1, 2) or a.shape[0] != m:
            raise ValueError(f"{name} must have {m} rows like X (1-D or 2-D); got shape {a.shape}")
        if numeric and a.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be numeric; got dtype {a.dtype}")
        a = a.rechunk({0: X.chunks[0]} if a.ndim == 1 else {0: X.chunks[0], 1: -1})
        return a.astype(float) if numeric else a

    y = align(y, "y", numeric_y)
    if groups is not None:
        groups = align(groups, "groups", False)
        if groups.ndim != 1:
            raise ValueError(f"groups must be 1-D; got shape {groups.shape}")
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    return RowData(X, y, groups, offsets)


def take_rows(a, rows):
    """Rows of a Dask array in the given order (in memory)."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    out = a[rows[order]].compute()
    res = np.empty_like(out)
    res[order] = out
    return res


def count_classes(data):
    """Sorted class labels of ``data.y`` (one pass)."""
    y = data.y
    if y.ndim != 1:
        raise ValueError(f"class labels must be 1-D; got shape {y.shape}")
    classes = np.unique(run_pass("counting classes", da.unique(y)))
    if classes.size < 2:
        raise ValueError(f"a classifier needs samples of at least 2 classes; got 1 class ({classes[0]!r})")
    return classes
