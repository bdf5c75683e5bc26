"""The sparse LS-SVM on Dask rows: the training pass, exact LOO and k-fold
/ grouped CV by passes (:class:`DaskSparseFit`, :func:`fit_sparse`).

The arithmetic of a pass lives in :mod:`lssvm.solvers.row_blocks` and
:mod:`lssvm.cv.row_blocks` (NumPy, one row block at a time); this module
builds the task graphs: one task per row chunk, a tree reduction of the
per-chunk moments or sums, computed by :func:`.passes.run_pass`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from numbers import Integral

import dask
import dask.array as da
import numpy as np

from ..._sums import warn_if_overflow
from ..._targets import warn_constant_targets
from ...basis import (
    basis_holders,
    default_basis_size,
    default_n_basis,
    draw_basis_rows,
    drop_near_duplicates,
    sampled_pivoted_cholesky,
)
from ...cv import BASIS_IN_HOLDOUT, ErrorSums, FoldSpec, not_in_memory
from ...cv.row_blocks import (
    block_fold_outputs,
    block_refit_moments,
    fold_models,
    refit_contexts,
    refit_models,
)
from ...exceptions import ConstantTargetWarning, numerical_warnings_ignore
from ...solvers import check_alphas
from ...solvers.row_blocks import (
    BlockContext,
    block_loo,
    block_moments,
    code_targets,
    merge_moments,
    merge_sums,
    solution_from_moments,
)
from ...solvers.sparse_rls import warn_tiny_leverage
from .folds import fold_spec, labels_as_groups
from .passes import run_pass, shared, tree_reduce
from .rows import RowData, as_row_data, take_rows

__all__ = ["DaskSparseFit", "fit_sparse", "draw_basis", "basis_context", "moments_pass", "total_moments",
           "check_mode", "DaskFolds", "resolve_dask_cv", "training_moments",
           "target_range"]


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


def _task_holders(x, row0, Z):
    rows, points = basis_holders(x, Z)
    return rows + row0, points


def _merge_holders(*parts):
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(2))


def _task_refit(x, y, g, row0, spec, ctxs):
    return block_refit_moments(x, y, spec.block_folds(row0, x.shape[0], g), row0, ctxs)


def _task_fold_outputs(x, y, g, row0, ctx, spec, models, n_alphas, reduce):
    folds = spec.block_folds(row0, x.shape[0], g)
    return block_fold_outputs(x, y, folds, row0, ctx, models, n_alphas, reduce=reduce)


def moments_pass(data, ctx, spec=None, train_only=None, label="training pass", also=None):
    """Per-fold moments of all rows (dict fold -> RowMoments); with ``also``
    (Dask collections over the same rows), the pair (moments, ``also``
    computed in the same pass: its chunks are read once)."""
    c, s, t = shared(ctx), shared(spec), shared(train_only)
    parts = [dask.delayed(_task_moments, pure=True)(x, y, g, r0, c, s, t) for x, y, g, r0 in data.blocks()]
    if also is None:
        return run_pass(label, tree_reduce(parts, merge_moments))
    return run_pass(label, (tree_reduce(parts, merge_moments), also))


def training_moments(data, ctx, classes, stacklevel=7):
    """:func:`moments_pass` of a fit; for regression targets also their
    column minima and maxima in the same pass, so that a constant column
    gets the in-memory :class:`lssvm.ConstantTargetWarning`."""
    y = data.y
    if classes is not None or y is None:
        return moments_pass(data, ctx)
    moments, (lo, hi) = moments_pass(data, ctx, also=target_range(data))
    warn_constant_targets(np.stack([lo, hi]), stacklevel=stacklevel)
    return moments


def _block_range(y):
    Y = np.asarray(y, dtype=float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if Y.shape[0] == 0:
        return np.full(Y.shape[1], np.inf), np.full(Y.shape[1], -np.inf)
    return Y.min(axis=0), Y.max(axis=0)


def _merge_range(*parts):
    return np.min([p[0] for p in parts], axis=0), np.max([p[1] for p in parts], axis=0)


def target_range(data):
    """Delayed column minima and maxima ``(lo, hi)`` of ``data.y`` (empty
    chunks allowed), to compute in the pass that reads the targets anyway."""
    parts = [dask.delayed(_block_range, pure=True)(y) for _, y, _, _ in data.blocks()]
    return tree_reduce(parts, _merge_range)


def total_moments(moments):
    """Merge of the per-fold moments of :func:`moments_pass`."""
    total = None
    for mom in moments.values():
        total = mom if total is None else total + mom
    return total


# ---------------------------------------------------------------- basis
def draw_basis(data, basis, n_basis, random_state, kernel_for=None, classification=False):
    """Basis points of Dask data: "random" rows, row indices or the points
    (:func:`lssvm.basis.draw_basis_rows`), or "pchol": pivoted Cholesky on a
    uniform row sample (:func:`lssvm.basis.sampled_pivoted_cholesky`).

    Parameters
    ----------
    data : RowData
    basis : "random", "pchol", 1-D int array or array (n, d)
    n_basis : int or None
        For "pchol" the default is the in-memory one
        (:func:`lssvm.basis.default_basis_size`).
    random_state : int, RandomState or None
    kernel_for : callable, optional
        ``kernel_for(sample) -> Kernel``, the kernel "pchol" selects at.
    classification : bool
        Whether the default "pchol" size is a classifier's.

    Returns
    -------
    Z : ndarray of shape (n, d)
    indices : ndarray of shape (n,) or None
    """
    m = data.n_samples
    take = lambda rows: take_rows(data.X, rows)  # noqa: E731
    if isinstance(basis, str) and basis == "pchol":
        if kernel_for is None:
            raise ValueError("basis='pchol' on Dask input needs the kernel it selects at")
        n = default_basis_size("pchol", n_basis, m, classification)
        n = default_n_basis(m) if n is None else n
        if not isinstance(n, Integral) or isinstance(n, bool) or not 1 <= n <= m:
            raise ValueError(f"n_basis must be an integer in [1, {m}] (the number of rows); got {n_basis!r}")
        return sampled_pivoted_cholesky(m, data.n_features, take, kernel_for, n, random_state)
    return draw_basis_rows(m, data.n_features, take, basis, n_basis, random_state)


def basis_context(Z, kernel, rcond, classes, n_features, whitener=None):
    """The :class:`BlockContext` of a basis: whitening of ``K_BB`` (O(n^3)),
    or the given feature map ``whitener`` (n, k)."""
    return BlockContext.of_basis(Z, kernel, rcond, classes, n_features, stacklevel=4, whitener=whitener)


# ------------------------------------------------------------ the fit
@dataclass(frozen=True)
class DaskFolds:
    """Folds on Dask rows: the assignment and the rows (with the groups it reads)."""

    spec: FoldSpec
    data: RowData


def resolve_dask_cv(cv, data, classifier=False):
    """:class:`DaskFolds` of ``cv`` on ``data`` (:func:`fold_spec`)."""
    y1 = None if data.y is None else (data.y if data.y.ndim == 1 else data.y[:, 0])
    spec = fold_spec(cv, data, None if y1 is None else y1.compute, classifier=classifier)
    return DaskFolds(spec, labels_as_groups(spec, data))


@dataclass
class DaskSparseFit:
    """A sparse model trained on Dask data: the Dask implementation of the
    engine protocol (:class:`lssvm.cv.SparseEngine`).

    Its training pass runs when :attr:`solution` is first needed (at once in
    :func:`fit_sparse`, unless ``deferred``), so that a fit whose engine may
    never be used (a model on the support its solver chose, built at the
    fit in case a CV method is called) costs no pass.

    Attributes
    ----------
    data : RowData
    ctx : BlockContext
    basis_indices : ndarray or None
    rcond : float
    fold_whitener : callable or None
        ``K_LL -> W``: the feature map of the basis reduced to its kept
        points (their kernel block) for a model with a given map (truncated
        to rank k, say): a fold that removes basis points is refitted on the
        kept points with that map, the model fitted on the fold's rows at the
        reduced basis.  None: the whitening of the kept points.
    """

    data: RowData
    ctx: BlockContext
    basis_indices: np.ndarray | None
    rcond: float = 1e-10
    fold_whitener: object = None
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    rows_in_memory = False

    @property
    def basis_vectors(self):
        """The basis points (n, d) of this engine's model: where a solver chose a support, that support."""
        return self.ctx.basis

    def _trained(self, warn_targets=False):
        if "training" not in self.cache:  # one pass
            with warnings.catch_warnings():
                if not warn_targets:  # deferred: the fit that made this engine said what its targets hold
                    warnings.simplefilter("ignore", ConstantTargetWarning)
                total = total_moments(training_moments(self.data, self.ctx, self.ctx.classes, stacklevel=8))
            self.cache["training"] = (solution_from_moments(total, self.ctx), total.psi_mean)
        return self.cache["training"]

    @property
    def solution(self):
        """The path solution (:class:`lssvm.solvers.PathSolution`) of the training rows."""
        return self._trained()[0]

    @property
    def psi_mean(self):
        """Mean whitened kernel row of the training rows, (r,)."""
        return self._trained()[1]

    def loo_residuals(self, alphas):
        """Exact LOO residuals, a Dask array of shape (A, m, v) (lazy)."""
        alphas, _ = check_alphas(alphas)
        c, s, p = shared(self.ctx), shared(self.solution), shared(self.psi_mean)
        v = self.solution.z.shape[1]
        parts = []
        for i, (x, y, _, r0) in enumerate(self.data.blocks()):
            b = int(self.data.offsets[i + 1] - r0)
            task = dask.delayed(_task_loo, pure=True)(x, y, r0, c, s, p, alphas, False)
            parts.append(da.from_delayed(task, shape=(alphas.size, b, v), dtype=float))
        return da.concatenate(parts, axis=1)

    def loo_sums(self, alphas, label="leave-one-out pass"):
        """:class:`lssvm.cv.ErrorSums` of the exact LOO residuals (one pass)."""
        alphas, _ = check_alphas(alphas)
        c, s, p = shared(self.ctx), shared(self.solution), shared(self.psi_mean)
        parts = [dask.delayed(_task_loo, pure=True)(x, y, r0, c, s, p, alphas, True)
                 for x, y, _, r0 in self.data.blocks()]
        out = run_pass(label, tree_reduce(parts, merge_sums))
        warn_tiny_leverage(out["tiny_rows"], out["tiny"], stacklevel=5)
        warn_if_overflow(out["sse"], "leave-one-out sums of squares", stacklevel=5)
        return ErrorSums.from_pass(out, self.ctx.classes is not None)

    def targets(self):
        """Training targets as used in the fit (coded for classifiers), a
        Dask array (m, v)."""
        y = self.data.y
        v = self.solution.z.shape[1]
        y2 = y if y.ndim == 2 else y[:, None]
        return y2.map_blocks(code_targets, self.ctx.classes, dtype=float, chunks=(y2.chunks[0], (v,)))

    @property
    def n_samples(self):
        return self.data.n_samples

    @property
    def n_basis(self):
        return self.ctx.basis.shape[0]

    def in_memory(self, what, hint=""):
        """Features that need the rows in memory raise a clear ValueError."""
        raise not_in_memory(what, hint)

    def resolve_cv(self, cv, groups=None, classifier=False):
        """The :class:`DaskFolds` of ``cv`` (:func:`fold_spec`), ``groups``
        aligned to the rows."""
        data = self.data if groups is None else as_row_data(self.data.X, self.data.y, groups,
                                                             numeric_y=self.ctx.classes is None)
        return resolve_dask_cv(cv, data, classifier)

    def _on(self, folds):
        # the same rows (with the groups the folds read): the training and the basis holders are shared
        return self if folds.data is self.data else replace(self, data=folds.data, cache=self.cache)

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        """Out-of-fold outputs, a Dask array (A, m, v); the fold models are
        solved now (one pass), the outputs computed lazily."""
        alphas, _ = check_alphas(alphas)
        return self._on(folds)._cv_outputs(folds.spec, alphas, basis_in_holdout)

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        """:class:`lssvm.cv.ErrorSums` of the out-of-fold outputs (two passes)."""
        alphas, _ = check_alphas(alphas)
        out = self._on(folds)._cv_sums(folds.spec, alphas, basis_in_holdout)
        warn_if_overflow(out["sse"], "cross-validation sums of squares", stacklevel=5)
        return ErrorSums.from_pass(out, self.ctx.classes is not None)

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        """Outputs (A, h, v) for training rows ``test_indices`` from the model
        trained without them (Dask array; the model is solved now)."""
        check_mode(basis_in_holdout)
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
        alphas, _ = check_alphas(alphas)
        F = self._cv_outputs(FoldSpec("labels", 1, values=labels), alphas, basis_in_holdout)
        return F[:, test]

    def _fold_models(self, spec, alphas, basis_in_holdout, label):
        check_mode(basis_in_holdout)
        train_only = None
        removed = {}
        rows, points = self.basis_holders() if basis_in_holdout != "keep" else (np.empty(0, np.intp),) * 2
        if rows.size and basis_in_holdout == "train":
            train_only = np.unique(rows)
        elif rows.size:
            g = self.data.groups
            bf = spec.folds_of(rows, lambda r: take_rows(g, r), lambda lo, hi: g[lo:hi].compute())
            # a point leaves fold f's model when every row holding it is in fold f (as in memory)
            n = self.ctx.basis.shape[0]
            first, last = np.full(n, np.iinfo(np.int64).max), np.full(n, -2)
            np.minimum.at(first, points, bf)
            np.maximum.at(last, points, bf)
            out = np.flatnonzero((first == last) & (first >= 0))
            removed = {int(f): out[first[out] == f] for f in np.unique(first[out])}
        refit = {}
        if removed and self.ctx.method == "eigh":
            # singular K_BB or a given map: folds that remove basis points are refitted on their own basis
            refit, removed = removed, {}
        moments = moments_pass(self.data, self.ctx, spec, train_only, label=label)
        models = fold_models(moments, removed, self.ctx, alphas, n_folds=spec.n_folds)
        if refit:
            ctxs = refit_contexts(self.ctx, refit, self.rcond) if self.fold_whitener is None else \
                self._mapped_contexts(refit)
            s, c = shared(spec), shared(ctxs)
            parts = [dask.delayed(_task_refit, pure=True)(x, y, g, r0, s, c) for x, y, g, r0 in self.data.blocks()]
            mom = run_pass(label + " (refitting folds on their remaining basis)", tree_reduce(parts, merge_moments))
            models.update(refit_models(mom, ctxs, alphas))
        return models

    def _mapped_contexts(self, refit):
        """Contexts of the folds' kept basis points with ``fold_whitener``'s map (O(n^3) per fold)."""
        ctx, out = self.ctx, {}
        for f, E in refit.items():
            keep = np.setdiff1d(np.arange(ctx.basis.shape[0]), E)
            if keep.size == 0:
                raise ValueError(
                    f"fold {f} holds every basis vector: with basis_in_holdout='remove' its model would have "
                    "no basis; use basis_in_holdout='keep', more basis vectors or smaller folds")
            Z = ctx.basis[keep]
            with numerical_warnings_ignore():  # the fit said what the map's eigendecomposition has to say
                W = self.fold_whitener(ctx.kernel(Z, Z))
                out[f] = BlockContext.of_basis(Z, ctx.kernel, self.rcond, ctx.classes, ctx.n_features, whitener=W)
        return out

    def basis_holders(self):
        """Pairs ``(row, point)``: training row ``row`` holds basis point
        ``point`` (it is the point's row index, or equals it value for value:
        :func:`lssvm.basis.basis_holders`, block by block).  One pass, the
        first time; kept with the fit."""
        if "holders" not in self.cache:
            Z = shared(self.ctx.basis)
            parts = [dask.delayed(_task_holders, pure=True)(x, r0, Z) for x, _, _, r0 in self.data.blocks()]
            rows, points = run_pass("matching basis points to rows", tree_reduce(parts, _merge_holders))
            if self.basis_indices is not None:
                rows = np.concatenate([rows, self.basis_indices]).astype(np.intp)
                points = np.concatenate([points, np.arange(self.basis_indices.size)]).astype(np.intp)
            pairs = np.unique(np.stack([rows, points], axis=1), axis=0)
            self.cache["holders"] = (pairs[:, 0], pairs[:, 1])
        return self.cache["holders"]

    def _cv_outputs(self, spec, alphas, basis_in_holdout="remove"):
        models = self._fold_models(spec, alphas, basis_in_holdout, "cross-validation pass")
        c, s, mo = shared(self.ctx), shared(spec), shared(models)
        v = self.solution.z.shape[1]
        parts = []
        blocks = self.data.blocks()
        for i, (x, _, g, r0) in enumerate(blocks):
            b = int(self.data.offsets[i + 1] - r0)
            task = dask.delayed(_task_fold_outputs, pure=True)(x, None, g, r0, c, s, mo, alphas.size, False)
            parts.append(da.from_delayed(task, shape=(alphas.size, b, v), dtype=float))
        return da.concatenate(parts, axis=1)

    def _cv_sums(self, spec, alphas, basis_in_holdout="remove"):
        models = self._fold_models(spec, alphas, basis_in_holdout, "cross-validation pass 1/2")
        c, s, mo = shared(self.ctx), shared(spec), shared(models)
        parts = [dask.delayed(_task_fold_outputs, pure=True)(x, y, g, r0, c, s, mo, alphas.size, True)
                 for x, y, g, r0 in self.data.blocks()]
        return run_pass("cross-validation pass 2/2", tree_reduce(parts, merge_sums))


def check_mode(mode):
    """Raise ValueError for an unknown ``basis_in_holdout``."""
    if mode not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {BASIS_IN_HOLDOUT}; got {mode!r}")


def fit_sparse(data, kernel, basis, n_basis, random_state, rcond, classes=None, basis_rows=None, whitener=None,
               fold_whitener=None, deferred=False):
    """Train the sparse model on Dask data: one pass (now, or with
    ``deferred`` when the fit's solution is first needed).

    Parameters
    ----------
    data : RowData
    kernel : lssvm.kernels.Kernel
    basis, n_basis, random_state, rcond
        As for :class:`lssvm.SparseLSSVR` (basis "pchol", on a row sample, "random", row indices or points).
    classes : ndarray, optional
        Class labels (classifiers).
    basis_rows : tuple (Z, indices), optional
        An already drawn basis.
    whitener : ndarray of shape (n, k), optional
        A given feature map of the basis ``basis_rows`` in place of the
        whitening of ``K_BB``, as in :func:`lssvm.solvers.factorize_sparse_rls`:
        with a rank-k map of ``K_BB`` the fit is the model truncated to k
        features (the documentation's Mathematics page, §6).  The basis is then
        taken as given (no near-duplicate is dropped: the map is of these
        points).
    fold_whitener : callable, optional
        ``K_LL -> W``, the map of a fold's kept basis points where
        ``basis_in_holdout="remove"`` removes some (:class:`DaskSparseFit`).
    deferred : bool, default=False
        Run the training pass when the fit's solution is first needed.

    Returns
    -------
    DaskSparseFit
    """
    if basis_rows is None:
        if whitener is not None:
            raise ValueError("a given whitener is a feature map of given basis points: pass basis_rows")
        Z, idx = draw_basis(data, basis, n_basis, random_state, kernel_for=lambda sample: kernel,
                            classification=classes is not None)
    else:
        Z, idx = basis_rows
    if whitener is None:
        Z, idx = drop_near_duplicates(Z, kernel, idx, stacklevel=4)
    ctx = basis_context(Z, kernel, rcond, classes, data.n_features, whitener)
    fit = DaskSparseFit(data, ctx, idx, rcond, fold_whitener)
    if not deferred:
        fit._trained(warn_targets=True)
    return fit

