"""The execution engine of a fitted sparse LS-SVM: one protocol, two
implementations.

An estimator (and the sparse CV criterion) holds one engine and calls only
its methods, whatever holds the rows:

* :class:`MemorySparseEngine` (here): the rows in memory; it wraps the
  training factorisation (:class:`lssvm.solvers.SparseRLSFactorization`),
  the exact hold-out engine (:class:`lssvm.cv.HoldoutEngine`) and
  :func:`lssvm.cv.cross_val_predictions`, run on lssvm's threads (NumPy
  row blocks and folds side by side) with the estimator's ``n_jobs``;
* :class:`lssvm.backends.dask.DaskSparseFit`: the rows in Dask row blocks,
  every method one or two passes over them.

Both return the same values: NumPy (or, on Dask, lazy Dask) arrays for
per-row results, :class:`ErrorSums` for reductions.  The protocol
(:class:`SparseEngine`):

========================================  =======================================
``resolve_cv(cv, groups, classifier)``    the engine's folds of a ``cv``
``loo_residuals(alphas)``                 exact LOO residuals (A, m, v)
``loo_sums(alphas)``                      their :class:`ErrorSums`
``cv_outputs(folds, alphas, mode)``       out-of-fold outputs (A, m, v)
``cv_sums(folds, alphas, mode)``          their :class:`ErrorSums`
``holdout_outputs(test, alphas, mode)``   outputs (A, h, v) of held-out rows
``targets()``                             training targets (coded) (m, v)
``in_memory(what)``                       the in-memory engine, or a clear error
``n_samples``, ``n_basis``, ``rows_in_memory``  sizes; whether the rows are in memory
========================================  =======================================

Folds of an integer ``cv`` follow one rule everywhere (scikit-learn's
``check_cv``: unshuffled ``KFold(k)`` for regressors, unshuffled
``StratifiedKFold(k)`` for classifiers; :func:`lssvm.cv.resolve_folds`).
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .._labels import LabelCoder
from .._sums import sum_squares, warn_if_overflow
from .._threads import current_plan, parallel_map, thread_scope
from ..basis import basis_holders
from ..solvers.loo_block import loo_sums_by_targets, restrict_targets, targets_batch_size
from ..solvers.row_blocks import misclassified
from ..solvers.sparse_rls import warn_tiny_leverage
from .folds import _check_partition as check_partition
from .folds import cross_val_predictions, resolve_folds
from .holdout import BASIS_IN_HOLDOUT, HoldoutEngine, check_indices

__all__ = ["ErrorSums", "MappedHoldoutEngine", "MemorySparseEngine", "SparseEngine", "TargetGroupsEngine",
           "not_in_memory"]


@dataclass(frozen=True)
class ErrorSums:
    """Out-of-sample errors reduced over the rows, per alpha.

    Attributes
    ----------
    sse : ndarray of shape (A, v)
        Sums of squared residuals (of the coded targets for classifiers).
    wrong : ndarray of shape (A,) or None
        Misclassified rows (classifiers only).
    count : int
        Rows summed over.
    """

    sse: np.ndarray
    wrong: np.ndarray | None
    count: int

    @classmethod
    def from_pass(cls, sums, classification):
        """From the dict of a reduced row-block pass (:func:`lssvm.solvers.row_blocks.merge_sums`)."""
        return cls(np.asarray(sums["sse"]), np.asarray(sums["wrong"]) if classification else None,
                   int(sums["count"]))


class SparseEngine(Protocol):
    """What an estimator and the sparse criterion call on a fitted model (see the module notes)."""

    rows_in_memory: bool
    n_samples: int
    n_basis: int

    def resolve_cv(self, cv, groups=None, classifier=False): ...

    def loo_residuals(self, alphas): ...

    def loo_sums(self, alphas) -> ErrorSums: ...

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"): ...

    def cv_sums(self, folds, alphas, basis_in_holdout="remove") -> ErrorSums: ...

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"): ...

    def targets(self): ...

    def in_memory(self, what, hint=""): ...


def not_in_memory(what, hint=""):
    """The error of a feature that needs the rows in memory (Dask fits)."""
    return ValueError(f"{what} is not available for a model fitted on Dask collections; fit on a NumPy sample"
                      + (f", {hint}" if hint else ""))


class MemorySparseEngine:
    """The sparse model's engine on rows in memory.

    Parameters
    ----------
    fac : lssvm.solvers.SparseRLSFactorization
        The training factorisation.
    X : ndarray or sparse matrix of shape (m, d)
        Training inputs (hold-outs that remove basis points re-evaluate
        ``k(x_H, z_E)``).
    basis_vectors : ndarray of shape (n, d)
    basis_indices : ndarray of shape (n,) or None
    kernel : lssvm.kernels.Kernel
    rcond : float
    classes : ndarray of shape (c,), optional
        Class labels of a classifier (its targets are the +1/-1 codes).
    n_jobs : int or None
        Threads of the engine's work (lssvm's thread rule, :mod:`lssvm._threads`).
    n_targets_batch : "auto" or int, default="auto"
        Targets per batch of the regressor's LOO and CV error sums
        (:func:`lssvm.solvers.loo_block.targets_batch_size`).
    fold_whitener : callable ``K_LL -> W``, optional
        The feature map of a basis reduced to its kept points ``L`` (their
        kernel block ``K_LL``), for a model whose map is not the whitening
        of its basis, so that removing basis points is not a deletion of
        columns: a map truncated to rank k.
        A hold-out that removes basis points then refits the fold on the
        kept points with this map (O(m |L| k + |L|^3) per such fold), which
        is exactly the model fitted on the fold's training rows at that
        basis.  None: the sparse model's whitening (deletion of columns).
    """

    rows_in_memory = True

    def __init__(self, fac, X, basis_vectors, basis_indices, kernel, rcond=1e-10, classes=None, n_jobs=None,
                 n_targets_batch="auto", fold_whitener=None):
        self.fac = fac
        self.fold_whitener = fold_whitener
        self.n_targets_batch = n_targets_batch
        self.X = X
        self.basis_vectors = basis_vectors
        self.basis_indices = basis_indices
        self.kernel = kernel
        self.rcond = rcond
        self.classes = classes
        self.n_jobs = n_jobs
        self._holders = None

    @property
    def solution(self):
        return self.fac

    @property
    def n_samples(self):
        return self.fac.n_samples

    @property
    def n_basis(self):
        return self.basis_vectors.shape[0]

    def in_memory(self, what, hint=""):
        return self

    def targets(self):
        """Training targets (coded for classifiers), (m, v): a fresh array."""
        Y = self.fac.y_centered
        Y += self.fac.y_mean  # in place: one m x v array (the values of Yc + y_mean, as the paths use)
        return Y

    def split_labels(self):
        """What splitters stratify on: class codes, or the first output."""
        if self.classes is None:  # the first output only: no copy of all m x v targets
            return _centred_column(self.fac, 0) + self.fac.y_mean[0]
        return LabelCoder.index_of(self.targets())

    # ----------------------------------------------------------------- folds
    def resolve_cv(self, cv, groups=None, classifier=False):
        """Test-index arrays of ``cv`` (:func:`lssvm.cv.resolve_folds`); a
        classifier warns about folds whose training rows lack a class."""
        folds = resolve_folds(cv, self.n_samples, y=self.split_labels(), groups=groups, classifier=classifier)
        if self.classes is not None:
            self._check_fold_classes(folds)
        return folds

    def _check_fold_classes(self, folds):
        codes = self.split_labels()
        n = self.classes.size
        for i, test in enumerate(folds):
            train = np.ones(codes.size, dtype=bool)
            train[test] = False
            missing = np.setdiff1d(np.arange(n), np.unique(codes[train]))
            if missing.size:
                warnings.warn(
                    f"fold {i}: its training rows hold no example of class(es) "
                    f"{', '.join(map(str, self.classes[missing]))}, so its model never predicts them and "
                    "every such held-out row counts as an error; use stratified folds (an int cv) or "
                    "groups that mix the classes",
                    UserWarning,
                    stacklevel=5,
                )
                return

    # ------------------------------------------------------------------- LOO
    def loo_residuals(self, alphas):
        """Exact LOO residuals (A, m, v), O(m r) per alpha."""
        with thread_scope(self.n_jobs):
            return self.fac.loo_residuals(alphas)

    def loo_sums(self, alphas):
        """:class:`ErrorSums` of the exact LOO residuals, never held for all
        rows: for a regressor by GEMMs over batches of targets
        (:func:`lssvm.solvers.loo_block.loo_sums_by_targets`, ``n_targets_batch``),
        for a classifier reduced per row block of about 1 MiB; an overflowing
        sum gives a NumericalWarning."""
        fac = self.fac
        m, v = fac.n_samples, fac.z.shape[1]
        if self.classes is None:
            with thread_scope(self.n_jobs):
                sse, tiny, bad = loo_sums_by_targets(fac, alphas, self.n_targets_batch, per_alpha=True)
            warn_tiny_leverage(tiny, stacklevel=5, alphas=alphas[bad])
            warn_if_overflow(sse, "leave-one-out sums of squares", stacklevel=5)
            return ErrorSums(sse, None, m)
        sse = np.zeros((alphas.size, v))
        wrong = np.zeros(alphas.size, dtype=np.int64)
        Y = self.targets()
        tiny, bad = [], np.zeros(alphas.size, dtype=bool)
        # rows per block: the block's (b, A, v) residuals near 1 MiB, and at least 16 rows so that the
        # products stay matrix-matrix (one row per block runs them as vector products)
        step = max(16, (1 << 20) // (8 * alphas.size * v + 8 * fac.rank))
        with thread_scope(self.n_jobs):
            for lo in range(0, m, step):
                rows = slice(lo, min(lo + step, m))
                R, t, b = fac.loo_rows(fac.M[rows], _centred_rows(fac, rows), alphas, per_alpha=True)
                tiny.append(lo + t)
                bad |= b
                sse += sum_squares(R, axis=1)
                if wrong is not None:
                    wrong += misclassified(Y[None, rows] - R, Y[rows])
        warn_tiny_leverage(np.concatenate(tiny), stacklevel=5, alphas=alphas[bad])
        warn_if_overflow(sse, "leave-one-out sums of squares", stacklevel=5)
        return ErrorSums(sse, wrong, m)

    # ------------------------------------------------------ hold-out and CV
    def holdout_engine(self, holders=True):
        """The exact hold-out engine (:class:`lssvm.cv.HoldoutEngine`).  With
        ``holders=False`` it skips finding the rows that hold each basis point
        (O(m d) hashing, once per fit) and knows none: only for
        ``basis_in_holdout="keep"``, which never removes a basis point."""
        if holders and self._holders is None:  # O(m d) row hashing, once per fit
            self._holders = basis_holders(self.X, self.basis_vectors, self.basis_indices)
        if self.fold_whitener is not None:
            return MappedHoldoutEngine.from_kernel(self.fac, self.X, self.basis_vectors, self.kernel, self._holders,
                                                   self.rcond, fold_whitener=self.fold_whitener)
        return HoldoutEngine.from_kernel(self.fac, self.X, self.basis_vectors, self.kernel, self._holders,
                                         self.rcond)

    def mapped_cv_plus(self, folds, alpha):
        """CV+'s out-of-fold outputs (m, v) and fold models of a model with a given map
        (``fold_whitener``) under ``basis_in_holdout="remove"``: each fold refitted on its training rows
        at its kept basis points with the map of their kernel block, O(m n k + n^3) per fold; the models
        evaluate kernel rows ``k(x, basis_vectors)`` (t, n) to (t, K, v)."""
        from ..solvers import factorize_sparse_rls

        holdout = self.holdout_engine()
        fac, Z, n = self.fac, self.basis_vectors, self.n_basis
        m = fac.n_samples
        Y = fac.y_centered + fac.y_mean
        oof = np.empty(Y.shape)
        parts = []
        for test in folds:
            H = check_indices(test, m)
            keep = np.setdiff1d(np.arange(n), holdout.removed_points(H))
            if keep.size == 0:
                raise ValueError(f"a fold holds every basis vector ({n}): with basis_in_holdout='remove' its model "
                                 "would have no basis; use basis_in_holdout='keep', more basis vectors or smaller folds")
            train = np.setdiff1d(np.arange(m), H)
            K_LL = self.kernel(Z[keep], Z[keep])
            with thread_scope(self.n_jobs):
                refit = factorize_sparse_rls(self.kernel(self.X[train], Z[keep]), K_LL, Y[train],
                                             whitener=self.fold_whitener(K_LL), warn=False)
            A, b = refit.coef(float(alpha))
            oof[H] = self.kernel(self.X[H], Z[keep]) @ A + b
            parts.append((keep, A, b))

        def models(K_x):
            return np.stack([K_x[:, keep] @ A + b for keep, A, b in parts], axis=1)

        return oof, models

    def removes_basis_points(self, folds):
        """Whether some fold of ``folds`` removes a basis point under ``basis_in_holdout="remove"``."""
        holdout = self.holdout_engine()
        return any(holdout.removed_points(check_indices(f, self.n_samples)).size for f in folds)

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        """Outputs (A, h, v) for training rows ``test_indices`` from the model trained without them."""
        with thread_scope(self.n_jobs):
            return self.holdout_engine().predict(test_indices, alphas, basis_in_holdout)

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        """Out-of-fold outputs (A, m, v) for folds from :meth:`resolve_cv`."""
        with thread_scope(self.n_jobs):
            return cross_val_predictions(self.holdout_engine(), folds, alphas, basis_in_holdout)

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        """:class:`ErrorSums` of the out-of-fold outputs, reduced per fold:
        never all A x m x v outputs at once."""
        classify = self.classes is not None
        v = self.fac.z.shape[1]
        if not classify and isinstance(folds, (list, tuple)) and all(np.size(f) > 1 for f in folds):
            return self._regression_cv_sums(folds, alphas, basis_in_holdout)
        sse = np.zeros((alphas.size, v))
        wrong = np.zeros(alphas.size, dtype=np.int64) if classify else None
        # a regressor's targets go in batches: a fold's outputs (A, h, |T|) stay within the batch budget.
        # Each batch repeats the folds' r x r work (their normal matrices), so batches are as large as
        # the budget allows (one buffer per target: the residuals are formed and squared in place)
        h_max = max((np.size(f) for f in folds), default=1)
        batch = v if classify else targets_batch_size(self.n_targets_batch, alphas.size * h_max, v,
                                                      buffers_per_target=1)
        for lo in range(0, v, batch):
            cols = slice(lo, min(lo + batch, v))
            holdout = (self if batch == v else self.restricted(cols)).holdout_engine()
            Yb = holdout.Y  # the batch's targets (coded for classifiers), (m, |T|): no second copy
            parts = []  # folds finish in any order on threads; summed in row order below, so bit-reproducible

            def sink(rows, F, Yb=Yb, parts=parts):
                bad = misclassified(F, Yb[rows]) if classify else None
                F -= Yb[None, rows]  # a fresh array per fold: residuals, then their squares, in place
                with np.errstate(over="ignore", invalid="ignore"):  # said by warn_if_overflow
                    np.multiply(F, F, out=F)
                parts.append((np.asarray(rows).tobytes(), F.sum(axis=1), bad))

            with thread_scope(self.n_jobs):
                cross_val_predictions(holdout, folds, alphas, basis_in_holdout, sink=sink)
            for _, part, bad in sorted(parts, key=lambda p: p[0]):
                sse[:, cols] += part
                if classify:
                    wrong += bad
        warn_if_overflow(sse, "cross-validation sums of squares", stacklevel=5)
        return ErrorSums(sse, wrong, self.n_samples)

    def _regression_cv_sums(self, folds, alphas, basis_in_holdout):
        """:meth:`cv_sums` of a regressor whose folds all hold several rows: each
        fold's squared residuals summed by :meth:`lssvm.cv.HoldoutEngine.sums`
        (no A x h x v predictions on its many-target path), folds side by
        side; summed in fold order, so bit-reproducible.

        The targets go in batches (``n_targets_batch``; "auto": the batch's centred
        targets and the h x |T| and r x |T| buffers of each fold in flight (one per thread)
        within ``BATCH_BYTES_CAP`` of :mod:`lssvm.solvers.loo_block`), so the
        workspace is bounded in v.  The folds' target-independent work (each
        fold's normal matrix or kernel and its eigendecomposition, O(h r^2 +
        r^3)) is done by the first batch and kept for the others (a
        ``fold_cache`` per fold, :meth:`lssvm.cv.HoldoutEngine.sums`): each
        later batch pays only for its targets, O((h + r) r |T| + A r^2 |T|)
        per fold."""
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
        m, v, r = self.n_samples, self.fac.z.shape[1], self.fac.rank
        folds = check_partition([check_indices(f, m, name=f"fold {i} test indices") for i, f in enumerate(folds)], m)
        h_max = max(np.size(f) for f in folds)
        holders = basis_in_holdout != "keep"
        sse = np.zeros((alphas.size, v))
        with thread_scope(self.n_jobs):  # one plan for the batch size and the folds side by side
            in_flight = min(len(folds), max(1, current_plan().threads))  # folds at once: one per thread
            # floats per target: its centred targets (m), and per fold in flight its rows (h) and about
            # three r-vectors (right-hand side, its eigenbasis copy, the residual block)
            per_target = m + r + in_flight * (h_max + 3 * r)
            batch = targets_batch_size(self.n_targets_batch, per_target, v, buffers_per_target=1)
            fold_caches = [{} if batch < v else None for _ in folds]  # each fold's kernel side, for later batches
            for lo in range(0, v, batch):
                cols = slice(lo, min(lo + batch, v))
                holdout = (self if batch == v else self.restricted(cols)).holdout_engine(holders=holders)
                parts = [None] * len(folds)

                def work(i, holdout=holdout, parts=parts):
                    parts[i] = holdout.sums(folds[i], alphas, basis_in_holdout, fold_cache=fold_caches[i])

                parallel_map(work, range(len(folds)))
                for part in parts:
                    sse[:, cols] += part
                del holdout, parts
        warn_if_overflow(sse, "cross-validation sums of squares", stacklevel=6)
        return ErrorSums(sse, None, m)

    def restricted(self, targets):
        """The engine of the same fit for some targets only (:func:`lssvm.solvers.loo_block.restrict_targets`);
        the rows holding basis points are shared, not found again."""
        engine = copy.copy(self)
        engine.fac = restrict_targets(self.fac, targets)
        if self._holders is None:  # O(m d) row hashing, once per fit, shared by every batch
            self._holders = basis_holders(self.X, self.basis_vectors, self.basis_indices)
        engine._holders = self._holders
        return engine


def _centred_rows(fac, rows):
    """Rows of the centred targets, (|rows|, v), without all m x v of them."""
    if getattr(fac, "y", None) is not None:
        return fac.centred_rows(rows)
    return fac.y_centered[rows]


def _centred_column(fac, j):
    """Column ``j`` of the centred targets, (m,), without all m x v of them."""
    if getattr(fac, "y", None) is not None:
        return fac.y[:, j] - fac.y_mean[j]
    return fac.y_centered[:, j]


class MappedHoldoutEngine(HoldoutEngine):
    """The hold-out engine of a model whose feature map is given (``fold_whitener``):
    with no basis point removed, the sparse model's closed forms (the map
    stays, only rows leave); with some removed, the fold refitted on the
    kept points with the map of their kernel block, exactly the model
    trained on the fold's rows at the reduced basis (O(m |L| k + |L|^3))."""

    @classmethod
    def from_kernel(cls, fac, X, Z, kernel, basis_rows=None, rcond=1e-10, *, fold_whitener):
        engine = super().from_kernel(fac, X, Z, kernel, basis_rows, rcond)
        engine.fold_whitener = fold_whitener
        return engine

    def predict(self, test_indices, alpha, basis_in_holdout="remove", _side=None):
        if basis_in_holdout == "remove":
            H = check_indices(test_indices, self.fac.n_samples)
            E = self.removed_points(H)
            if E.size:
                return self._refit_mapped(H, E, alpha)
        return super().predict(test_indices, alpha, basis_in_holdout, _side)

    def _refit_mapped(self, H, E, alpha):
        from ..solvers import check_alphas, factorize_sparse_rls

        alphas, scalar = check_alphas(alpha)
        fac = self.fac
        m, n = fac.n_samples, fac.kernel_mean.size
        if E.size == n:
            raise ValueError(
                f"the hold-out set holds every basis vector ({E.size}): with basis_in_holdout='remove' "
                "its model would have no basis; use basis_in_holdout='keep', more basis vectors or "
                "smaller folds"
            )
        train = np.setdiff1d(np.arange(m), H)
        keep = np.setdiff1d(np.arange(n), E)
        K_LL = self._basis_kernel(keep)
        refit = factorize_sparse_rls(self._kernel_block(train, keep), K_LL, self.Y[train],
                                     whitener=self.fold_whitener(K_LL), warn=False)
        A, b = refit.coef(alphas)
        out = np.einsum("hn,anv->ahv", self._kernel_block(H, keep), A) + b[:, None, :]
        return out[0] if scalar else out


class TargetGroupsEngine:
    """One engine per group of targets, each on its own basis, as one engine of all targets: a model
    whose outputs were fitted on different bases (one-vs-rest outputs for each of which the solver chose
    its own support).  Per-row results are assembled along the target axis; error sums are
    reduced from them, so that a classifier's misclassified rows see every output's value (O(A m v)
    memory, as :meth:`cv_outputs`).

    Parameters
    ----------
    engines : list of MemorySparseEngine
        Fitted on the same rows, each on its targets' coded columns (built with ``classes=None``).
    groups : list of ndarray
        The targets (columns of ``Y``) of each engine: a partition of ``range(v)``.
    Y : ndarray of shape (m, v)
        All targets (coded for classifiers).
    classes : ndarray of shape (c,), optional
        Class labels of a classifier.
    weights : ndarray of shape (m,), optional
        Row weights of a weighted fit (each engine a
        :class:`lssvm.cv.WeightedSparseEngine`): the error sums are weighted.
    """

    rows_in_memory = True

    def __init__(self, engines, groups, Y, classes=None, weights=None):
        self.engines, self.groups, self.Y, self.classes = list(engines), [np.asarray(g) for g in groups], Y, classes
        self.weights = weights

    @property
    def n_samples(self):
        return self.Y.shape[0]

    @property
    def n_basis(self):
        return max(e.n_basis for e in self.engines)

    def in_memory(self, what, hint=""):
        if self.weights is not None:  # the weighted engines say what a weighted fit does not offer
            return self.engines[0].in_memory(what, hint)
        return self

    def targets(self):
        return self.Y

    split_labels = MemorySparseEngine.split_labels
    resolve_cv = MemorySparseEngine.resolve_cv
    _check_fold_classes = MemorySparseEngine._check_fold_classes

    def _assemble(self, call):
        out = None
        for engine, targets in zip(self.engines, self.groups, strict=True):
            part = call(engine)
            if out is None:
                out = np.empty(part.shape[:-1] + (self.Y.shape[1],))
            out[..., targets] = part
        return out

    def _sums(self, F):
        classify = self.classes is not None
        if self.weights is not None:
            w = self.weights
            with np.errstate(over="ignore", invalid="ignore"):  # said by warn_if_overflow
                sse = np.einsum("h,ahv->av", w, (F - self.Y[None]) ** 2)
            warn_if_overflow(sse, "weighted cross-validation sums of squares", stacklevel=5)
            wrong = (LabelCoder.index_of(F) != LabelCoder.index_of(self.Y)[None]).astype(float) @ w if classify else None
            return ErrorSums(sse, wrong, float(w.sum()))
        wrong = misclassified(F, self.Y) if classify else None
        with np.errstate(over="ignore", invalid="ignore"):  # said by warn_if_overflow
            sse = sum_squares(F - self.Y[None], axis=1)
        warn_if_overflow(sse, "cross-validation sums of squares", stacklevel=5)
        return ErrorSums(sse, wrong, self.n_samples)

    def loo_residuals(self, alphas):
        return self._assemble(lambda e: e.loo_residuals(alphas))

    def loo_sums(self, alphas):
        return self._sums(self.Y[None] - self.loo_residuals(alphas))

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        return self._assemble(lambda e: e.cv_outputs(folds, alphas, basis_in_holdout))

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        return self._sums(self.cv_outputs(folds, alphas, basis_in_holdout))

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        return self._assemble(lambda e: e.holdout_outputs(test_indices, alphas, basis_in_holdout))
