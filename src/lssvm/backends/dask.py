"""Sparse LS-SVM training, exact LOO / k-fold CV and model selection on Dask
collections, block by block.

Nothing here is imported unless Dask input is given.  The arithmetic of a
pass lives in :mod:`lssvm.solvers.row_blocks` and
:mod:`lssvm.cv.row_blocks` (NumPy, one row block at a time); this module
only builds the task graph: one task per row chunk of the Dask array, a
tree reduction of the per-chunk moments, and ``dask.compute``.  It runs on
whatever scheduler is active: the threaded one by default, a
``dask.distributed`` cluster when a ``Client`` exists.  A task holds its
chunk plus O(``SUB_ROWS`` n + n^2) floats, so memory is bounded by the
chunk size, not by the number of rows.

Passes over the data:

* ``fit``: one (moments of the whitened kernel rows, split by fold when CV
  follows);
* exact LOO: one more (per-row residuals, or just their sums);
* k-fold / grouped CV: the moments pass split by fold, then one pass of
  out-of-fold predictions.

Folds on Dask data (:class:`FoldSpec`), computed block by block: an int
``k`` or ``KFold(k)`` is scikit-learn's unshuffled ``KFold(k)``, contiguous
row ranges, also for classifiers (in memory an int stratifies classifiers'
CV methods, and the searches draw one shuffled partition; shuffle the rows
when writing the data if they are ordered);
``GroupKFold(k)`` with ``groups`` assigns whole groups as scikit-learn does
(largest first, each to the lightest fold) and ``LeaveOneGroupOut()``
gives a fold per group.  Any other splitter (shuffled, stratified, ...)
or explicit (train, test) pairs is materialised as one fold label per row
(O(m) memory, the labels or groups it needs are loaded).
"""

from __future__ import annotations

import warnings
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from numbers import Integral

import dask
import dask.array as da
import numpy as np
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut
from sklearn.utils import check_random_state

from .._arrays import unique_row_indices
from .._parallel import serial_region, single_threaded_blas
from ..basis import drop_near_duplicates, near_duplicate_free
from ..cv import BASIS_IN_HOLDOUT
from ..cv.row_blocks import block_fold_outputs, block_refit_moments, fold_models, refit_contexts, refit_models
from ..selection.criteria import CVPath
from ..solvers import check_alphas
from ..solvers.row_blocks import (
    BlockContext,
    block_loo,
    block_moments,
    code_targets,
    merge_moments,
    merge_sums,
    solution_from_moments,
)
from ..solvers.sparse_rls import warn_tiny_leverage
from . import is_dask_collection

__all__ = ["is_dask_collection", "RowData", "as_row_data", "as_input_array", "decision_blocks", "frame_to_arrays", "FoldSpec", "DaskSparseFit", "fit_sparse",
           "DaskSparseCV", "report_passes", "draw_basis", "basis_context", "count_classes", "moments_pass"]

#: Default basis size of ``basis="random"`` (as in memory).
DEFAULT_N_BASIS = 200
_FAN_IN = 8


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
    lengths = _compute("counting rows", [dask.delayed(len)(p) for p in parts])
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


# ------------------------------------------------------------ passes
_pass_hooks = []


@contextmanager
def report_passes(factory):
    """Call ``factory(label)`` around every pass over the data; it returns a
    context manager (e.g. a progress bar) entered while the pass runs."""
    _pass_hooks.append(factory)
    try:
        yield
    finally:
        _pass_hooks.remove(factory)


def _compute(label, obj):
    # tasks of the local threaded scheduler share this process: one BLAS
    # thread each (distributed workers start with one BLAS thread already)
    with ExitStack() as stack:
        stack.enter_context(single_threaded_blas())
        for factory in list(_pass_hooks):
            stack.enter_context(factory(label))
        (out,) = dask.compute(obj)
    return out


def _tree(parts, merge):
    parts = list(parts)
    while len(parts) > 1:
        parts = [dask.delayed(merge, pure=True)(*parts[i : i + _FAN_IN]) for i in range(0, len(parts), _FAN_IN)]
    return parts[0]


def _task_moments(x, y, g, row0, ctx, spec, train_only):
    folds = None if spec is None else spec.block_folds(row0, x.shape[0], g)
    return block_moments(x, y, folds, row0, ctx, train_only)


def _task_loo(x, y, row0, ctx, sol, psi_mean, alphas, reduce):
    out = block_loo(x, y, row0, ctx, sol, psi_mean, alphas, reduce=reduce)
    if reduce:
        return out
    R, tiny = out
    warn_tiny_leverage(tiny)
    return R


def _task_refit(x, y, g, row0, spec, ctxs):
    return block_refit_moments(x, y, spec.block_folds(row0, x.shape[0], g), row0, ctxs)


def _task_fold_outputs(x, y, g, row0, ctx, spec, models, n_alphas, reduce):
    folds = spec.block_folds(row0, x.shape[0], g)
    return block_fold_outputs(x, y, folds, row0, ctx, models, n_alphas, reduce=reduce)


def _shared(obj):
    """One graph node for a value every task reads (sent once per worker)."""
    return dask.delayed(obj, traverse=False)


def moments_pass(data, ctx, spec=None, train_only=None, label="training pass"):
    """Per-fold moments of all rows (dict fold -> RowMoments)."""
    c, s, t = _shared(ctx), _shared(spec), _shared(train_only)
    parts = [dask.delayed(_task_moments, pure=True)(x, y, g, r0, c, s, t) for x, y, g, r0 in data.blocks()]
    return _compute(label, _tree(parts, merge_moments))


def _total(moments):
    total = None
    for mom in moments.values():
        total = mom if total is None else total + mom
    return total


# ---------------------------------------------------------------- folds
@dataclass(frozen=True)
class FoldSpec:
    """Fold of every row, computable block by block.

    Attributes
    ----------
    kind : {"kfold", "groups", "labels"}
        "kfold": contiguous ranges with boundaries ``bounds``; "groups":
        group value ``keys[i]`` goes to fold ``values[i]``; "labels": one
        fold label per row in ``values``.
    n_folds : int
    bounds, keys, values : ndarray or None
    """

    kind: str
    n_folds: int
    bounds: np.ndarray | None = None
    keys: np.ndarray | None = None
    values: np.ndarray | None = None

    def block_folds(self, row0, n_rows, groups=None):
        """Fold of rows ``row0 .. row0 + n_rows - 1`` (their ``groups`` for "groups")."""
        if self.kind == "kfold":
            rows = np.arange(row0, row0 + n_rows)
            return np.searchsorted(self.bounds, rows, side="right") - 1
        if self.kind == "labels":
            return self.values[row0 : row0 + n_rows]
        g = np.asarray(groups).ravel()
        idx = np.minimum(np.searchsorted(self.keys, g), self.keys.size - 1)
        return self.values[idx]

    def folds_of(self, rows, data):
        """Fold of the given global rows (fetching their groups if needed)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.kind == "kfold":
            return np.searchsorted(self.bounds, rows, side="right") - 1
        if self.kind == "labels":
            return self.values[rows]
        return self.block_folds(0, rows.size, _take_rows(data.groups, rows))

    @classmethod
    def from_cv(cls, cv, data, y_labels=None):
        """Fold assignment for ``cv`` on ``data`` (see the module notes).

        Parameters
        ----------
        cv : int, scikit-learn splitter or iterable of (train, test)
        data : RowData
        y_labels : callable, optional
            Returns the targets in memory, for splitters that need them.
        """
        m = data.n_samples
        if isinstance(cv, Integral) and not isinstance(cv, bool):
            k = int(cv)
            if not 2 <= k <= m:
                raise ValueError(f"cv={k} folds needs 2 <= k <= {m} (the number of rows)")
            if data.groups is not None:
                warnings.warn("groups is ignored by an integer cv (KFold); pass GroupKFold or LeaveOneGroupOut "
                              "to use it", UserWarning, stacklevel=4)
            sizes = np.full(k, m // k, dtype=np.int64)
            sizes[: m % k] += 1
            return cls("kfold", k, bounds=np.concatenate([[0], np.cumsum(sizes)]))
        if isinstance(cv, KFold) and not cv.shuffle:
            return cls.from_cv(cv.n_splits, RowData(data.X, data.y, None, data.offsets))
        if isinstance(cv, (GroupKFold, LeaveOneGroupOut)) and data.groups is None:
            raise ValueError(f"{type(cv).__name__} needs groups")
        if isinstance(cv, GroupKFold) and not getattr(cv, "shuffle", False):
            return cls._group_kfold(cv.n_splits, data)
        if isinstance(cv, LeaveOneGroupOut):
            keys = np.unique(_compute("counting groups", da.unique(data.groups)))
            return cls("groups", keys.size, keys=keys, values=np.arange(keys.size))
        # anything else: one label per row, in memory
        if hasattr(cv, "split"):
            y = None if y_labels is None else y_labels()
            g = None if data.groups is None else data.groups.compute()
            pairs = cv.split(np.zeros((m, 0)), y, g)
        else:
            pairs = cv
        labels = np.full(m, -1, dtype=np.int64)
        n = 0
        for n, (_, test) in enumerate(pairs, 1):
            test = np.asarray(test)
            test = np.flatnonzero(test) if test.dtype == bool else test.astype(np.int64)
            if np.any(labels[test] >= 0):
                raise ValueError("the test sets of cv overlap: each row must be held out exactly once")
            labels[test] = n - 1
        if n < 2 or np.any(labels < 0):
            raise ValueError("the test sets of cv must cover every row, in at least 2 folds")
        return cls("labels", n, values=labels)

    @classmethod
    def _group_kfold(cls, k, data):
        keys, counts = _compute("counting groups", da.unique(data.groups, return_counts=True))
        if k > keys.size:
            raise ValueError(f"cv={k} folds needs at least {k} groups; got {keys.size}")
        # scikit-learn's GroupKFold (no shuffle): largest groups first, each to the lightest fold
        order = np.argsort(counts, kind="stable")[::-1]
        load = np.zeros(k)
        fold = np.zeros(keys.size, dtype=np.int64)
        for i in order:
            j = int(np.argmin(load))
            load[j] += counts[i]
            fold[i] = j
        return cls("groups", k, keys=keys, values=fold)


def _take_rows(a, rows):
    """Rows of a Dask array in the given order (in memory)."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    out = a[rows[order]].compute()
    res = np.empty_like(out)
    res[order] = out
    return res


# ---------------------------------------------------------------- basis
def draw_basis(data, basis, n_basis, random_state):
    """Basis points of Dask data: "random" rows, row indices or the points.

    Returns
    -------
    Z : ndarray of shape (n, d)
    indices : ndarray of shape (n,) or None
    """
    m = data.n_samples
    if isinstance(basis, str):
        if basis != "random":
            raise ValueError(
                f"basis={basis!r} needs all rows in memory; on Dask input use basis='random', training-row "
                "indices or basis points (for instance selected on a sample: "
                "SparseLSSVR(basis='fvs').fit(X_sample, y_sample).basis_vectors_)"
            )
        n = min(DEFAULT_N_BASIS, m) if n_basis is None else n_basis
        if not isinstance(n, Integral) or isinstance(n, bool) or not 1 <= n <= m:
            raise ValueError(f"n_basis must be an integer in [1, {m}] (the number of rows); got {n_basis!r}")
        rng = check_random_state(random_state)
        # draw a few spare rows so that repeated rows can be skipped; the rows with the smallest uniform
        # keys, not rng.choice (the first fold of a shuffled KFold with the same seed; basis.random_basis)
        k = min(m, n + n // 4 + 8)
        keys = rng.random_sample(m)
        cand = np.argpartition(keys, k - 1)[:k] if k < m else np.arange(m)
        cand = cand[np.argsort(keys[cand])]
        Zc = _take_rows(data.X, cand)
        first = unique_row_indices(Zc)
        if first.size < n:
            raise ValueError(f"found only {first.size} distinct rows among {cand.size} drawn; lower n_basis")
        keep = first[:n] if first.size == cand.size else np.sort(first)[:n]
        idx = cand[keep]
        order = np.argsort(idx)
        return Zc[keep][order], idx[order]
    arr = np.asarray(basis)
    if arr.ndim == 1 and arr.dtype.kind in "iu":
        idx = arr.astype(np.int64)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= m:
            raise ValueError(f"basis row indices must be in [0, {m}); got {idx.min()}..{idx.max()}")
        return _take_rows(data.X, idx), idx  # repeats are dropped per kernel by fit_sparse
    Z = np.asarray(basis, dtype=float)
    if Z.ndim != 2 or Z.shape[1] != data.n_features or Z.shape[0] < 1:
        raise ValueError(
            f"basis must be 'random', 1-D row indices or points of shape (n, {data.n_features}); got {Z.shape}"
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("basis points contain NaN or infinity")
    return Z, None


def basis_context(Z, kernel, rcond, classes, n_features):
    """The :class:`BlockContext` of a basis: whitening of ``K_BB`` (O(n^3))."""
    return BlockContext.of_basis(Z, kernel, rcond, classes, n_features, stacklevel=4)


def count_classes(data):
    """Sorted class labels of ``data.y`` (one pass)."""
    y = data.y
    if y.ndim != 1:
        raise ValueError(f"class labels must be 1-D; got shape {y.shape}")
    classes = np.unique(_compute("counting classes", da.unique(y)))
    if classes.size < 2:
        raise ValueError(f"a classifier needs samples of at least 2 classes; got 1 class ({classes[0]!r})")
    return classes


# ------------------------------------------------------------ the fit
@dataclass
class DaskSparseFit:
    """A sparse model trained on Dask data: what its CV methods need.

    Attributes
    ----------
    data : RowData
    ctx : BlockContext
    solution : lssvm.solvers.PathSolution
    psi_mean : ndarray of shape (r,)
    basis_indices : ndarray or None
    """

    data: RowData
    ctx: BlockContext
    solution: object
    psi_mean: np.ndarray
    basis_indices: np.ndarray | None
    rcond: float = 1e-10

    def loo_residuals(self, alphas):
        """Exact LOO residuals, a Dask array of shape (A, m, v) (lazy)."""
        alphas, _ = check_alphas(alphas)
        c, s, p = _shared(self.ctx), _shared(self.solution), _shared(self.psi_mean)
        v = self.solution.z.shape[1]
        parts = []
        for i, (x, y, _, r0) in enumerate(self.data.blocks()):
            b = int(self.data.offsets[i + 1] - r0)
            task = dask.delayed(_task_loo, pure=True)(x, y, r0, c, s, p, alphas, False)
            parts.append(da.from_delayed(task, shape=(alphas.size, b, v), dtype=float))
        return da.concatenate(parts, axis=1)

    def loo_sums(self, alphas, label="leave-one-out pass"):
        """Sums of squared LOO residuals (A, v) and misclassified rows (A,)."""
        c, s, p = _shared(self.ctx), _shared(self.solution), _shared(self.psi_mean)
        parts = [dask.delayed(_task_loo, pure=True)(x, y, r0, c, s, p, alphas, True)
                 for x, y, _, r0 in self.data.blocks()]
        out = _compute(label, _tree(parts, merge_sums))
        warn_tiny_leverage(out["tiny_rows"], out["tiny"], stacklevel=4)
        return out

    def targets(self):
        """Training targets as used in the fit (coded for classifiers), a
        Dask array (m, v)."""
        y = self.data.y
        v = self.solution.z.shape[1]
        y2 = y if y.ndim == 2 else y[:, None]
        return y2.map_blocks(code_targets, self.ctx.classes, dtype=float, chunks=(y2.chunks[0], (v,)))

    def with_groups(self, groups):
        """The data with ``groups`` aligned to its rows."""
        d = as_row_data(self.data.X, self.data.y, groups, numeric_y=self.ctx.classes is None)
        return DaskSparseFit(d, self.ctx, self.solution, self.psi_mean, self.basis_indices, self.rcond)

    def cross_validate(self, cv, alphas, groups=None, basis_in_holdout="remove", reduce=False):
        """Out-of-fold outputs (A, m, v) as a Dask array, or with ``reduce``
        the sums of :meth:`cv_sums` (``count`` included)."""
        _check_mode(basis_in_holdout)
        fit = self if groups is None else self.with_groups(groups)
        y1 = fit.data.y if fit.data.y.ndim == 1 else fit.data.y[:, 0]
        spec = FoldSpec.from_cv(cv, fit.data, lambda: y1.compute())
        if reduce:
            return fit.cv_sums(spec, alphas, basis_in_holdout)
        return fit.cv_outputs(spec, alphas, basis_in_holdout)

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        """Outputs (A, h, v) for training rows ``test_indices`` from the model
        trained without them (Dask array; the model is solved now)."""
        _check_mode(basis_in_holdout)
        m = self.data.n_samples
        test = np.asarray(test_indices)
        if test.dtype == bool:
            if test.shape != (m,):
                raise ValueError(f"a boolean test mask needs {m} entries; got shape {test.shape}")
            test = np.flatnonzero(test)
        if test.ndim != 1 or test.size == 0 or test.dtype.kind not in "iu":
            raise ValueError("test_indices must be a non-empty 1-D array of row indices or a boolean mask")
        if test.min() < 0 or test.max() >= m or np.unique(test).size != test.size:
            raise ValueError(f"test_indices must be distinct rows in [0, {m})")
        labels = np.full(m, -1, dtype=np.int64)
        labels[test] = 0
        F = self.cv_outputs(FoldSpec("labels", 1, values=labels), alphas, basis_in_holdout)
        return F[:, test]

    def _fold_models(self, spec, alphas, basis_in_holdout, label):
        _check_mode(basis_in_holdout)
        train_only = None
        removed = {}
        if self.basis_indices is not None and basis_in_holdout != "keep":
            bf = spec.folds_of(self.basis_indices, self.data)
            if basis_in_holdout == "train":
                train_only = np.sort(self.basis_indices)
            else:
                removed = {int(f): np.flatnonzero(bf == f) for f in np.unique(bf) if f >= 0}
        refit = {}
        if removed and self.ctx.method == "eigh":
            # singular K_BB: folds that remove basis points are refitted on their own basis
            refit, removed = removed, {}
        moments = moments_pass(self.data, self.ctx, spec, train_only, label=label)
        models = fold_models(moments, removed, self.ctx, alphas, n_folds=spec.n_folds)
        if refit:
            ctxs = refit_contexts(self.ctx, refit, self.rcond)
            s, c = _shared(spec), _shared(ctxs)
            parts = [dask.delayed(_task_refit, pure=True)(x, y, g, r0, s, c) for x, y, g, r0 in self.data.blocks()]
            mom = _compute(label + " (refitting folds on their remaining basis)", _tree(parts, merge_moments))
            models.update(refit_models(mom, ctxs, alphas))
        return models

    def cv_outputs(self, spec, alphas, basis_in_holdout="remove"):
        """Out-of-fold outputs, a Dask array (A, m, v); the fold models are
        solved now (one pass), the outputs computed lazily."""
        models = self._fold_models(spec, alphas, basis_in_holdout, "cross-validation pass")
        c, s, mo = _shared(self.ctx), _shared(spec), _shared(models)
        v = self.solution.z.shape[1]
        parts = []
        blocks = self.data.blocks()
        for i, (x, _, g, r0) in enumerate(blocks):
            b = int(self.data.offsets[i + 1] - r0)
            task = dask.delayed(_task_fold_outputs, pure=True)(x, None, g, r0, c, s, mo, alphas.size, False)
            parts.append(da.from_delayed(task, shape=(alphas.size, b, v), dtype=float))
        return da.concatenate(parts, axis=1)

    def cv_sums(self, spec, alphas, basis_in_holdout="remove"):
        """Sums of squared out-of-fold residuals (A, v) and misclassified rows (A,)."""
        models = self._fold_models(spec, alphas, basis_in_holdout, "cross-validation pass 1/2")
        c, s, mo = _shared(self.ctx), _shared(spec), _shared(models)
        parts = [dask.delayed(_task_fold_outputs, pure=True)(x, y, g, r0, c, s, mo, alphas.size, True)
                 for x, y, g, r0 in self.data.blocks()]
        return _compute("cross-validation pass 2/2", _tree(parts, merge_sums))


def _check_mode(mode):
    if mode not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {BASIS_IN_HOLDOUT}; got {mode!r}")


def fit_sparse(data, kernel, basis, n_basis, random_state, rcond, classes=None, basis_rows=None):
    """Train the sparse model on Dask data: one pass.

    Parameters
    ----------
    data : RowData
    kernel : lssvm.kernels.Kernel
    basis, n_basis, random_state, rcond
        As for :class:`lssvm.SparseLSSVR` (basis "random", row indices or points).
    classes : ndarray, optional
        Class labels (classifiers).
    basis_rows : tuple (Z, indices), optional
        An already drawn basis.

    Returns
    -------
    DaskSparseFit
    """
    Z, idx = draw_basis(data, basis, n_basis, random_state) if basis_rows is None else basis_rows
    Z, idx = drop_near_duplicates(Z, kernel, idx, stacklevel=4)
    ctx = basis_context(Z, kernel, rcond, classes, data.n_features)
    total = _total(moments_pass(data, ctx))
    return DaskSparseFit(data, ctx, solution_from_moments(total, ctx), total.psi_mean, idx, rcond)


# ------------------------------------------------------------ selection
class DaskSparseCV:
    """The sparse LS-SVM's exact CV criterion over an alpha path on Dask data
    (the interface of :class:`lssvm.selection.SparseLSSVMCV`).

    Parameters
    ----------
    X, y : Dask collections
    kernel : str
    cv : "loo", int, splitter or iterable of (train, test)
        See :class:`FoldSpec` for how folds are assigned.
    alphas : array-like
    classification : bool
    groups : array-like, optional
    random_state : int, RandomState or None
    kernel_params : dict, optional
    basis : "random", row indices or points
    n_basis : int, optional
    basis_in_holdout : {"remove", "keep", "train"}
    rcond : float

    Notes
    -----
    The basis is drawn once.  Per call: one training pass and one LOO (or
    two CV) passes over the data; the per-row results are reduced to sums
    in the tasks, so nothing of size m is held.
    """

    def __init__(self, X, y, *, kernel="rbf", cv="loo", alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None, basis="random", n_basis=None, basis_in_holdout="remove",
                 rcond=1e-10):
        from ..kernels import make_kernel

        self._make_kernel = make_kernel
        self.data = as_row_data(X, y, groups, numeric_y=not classification)
        self.classification = bool(classification)
        self.classes = count_classes(self.data) if self.classification else None
        self.alphas, _ = check_alphas(alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        _check_mode(basis_in_holdout)
        self.basis_in_holdout = basis_in_holdout
        self.rcond = rcond
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        self.spec = None if self.loo else FoldSpec.from_cv(cv, self.data, self._labels)
        self.folds = None
        self.draw_seed = None
        self._basis = draw_basis(self.data, basis, n_basis, random_state)
        self.n_evaluations = 0

    def _labels(self):
        return self.data.y.compute()

    def rows_for(self, **params):
        """Training rows of the basis at ``params`` (near-duplicates at that
        kernel dropped, as the refit does), or None for explicit points (see
        :meth:`basis_points`)."""
        Z, idx = self._basis
        if idx is None:
            return None
        kern = self._make_kernel(self.kernel, **{**self.kernel_params, **params})
        return idx[near_duplicate_free(Z, kern)]

    def basis_points(self):
        """The basis points (n, d) every candidate used."""
        return self._basis[0]

    def __call__(self, **params):
        kern = self._make_kernel(self.kernel, **{**self.kernel_params, **params})
        fit = fit_sparse(self.data, kern, None, None, None, self.rcond, self.classes, basis_rows=self._basis)
        if self.loo:
            sums = fit.loo_sums(self.alphas)
        else:
            sums = fit.cv_sums(self.spec, self.alphas, self.basis_in_holdout)
        m, v = self.data.n_samples, sums["sse"].shape[1]
        mse = sums["sse"].sum(axis=1) / (m * v)
        err = sums["wrong"] / m if self.classification else None
        self.n_evaluations += 1
        return CVPath(self.alphas, mse, err, {"n_basis": fit.ctx.basis.shape[0]})
