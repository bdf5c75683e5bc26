"""The fixed-size LS-SVM (Karsmakers et al. 2011) on Dask collections: what
the family adds to the sparse model's passes.

SCDP runs on the pool's sums; one pass sums
:class:`lssvm.solvers.fixed_size.GramSums` per fold, and the system, the
fold downdates, SCDP, the CV curves over model sizes and the guards are
those of the in-memory fit (:class:`lssvm.cv.fixed_size.SummedRows`).
With ``scoring="error_rate"`` every fold's SCDP path is run first and one
more pass counts its misclassified rows per size.  At the chosen support
the model is the sparse one on those prototypes (the documentation's
Mathematics page, §6): its engine is a
:class:`~lssvm.backends.dask.DaskSparseFit` on them, whose training pass
runs the first time it is used (:func:`support_engine`).

Rows are drawn as in memory for the same ``random_state``: "random"
prototypes by the smallest uniform keys (:func:`~lssvm.backends.dask.draw_basis`,
equal to :func:`lssvm.basis.random_basis` when the rows are distinct), and
"renyi" picks by maximal entropy among a candidate pool drawn by that rule
(``RENYI_POOL_FACTOR`` times the pool size).  Methods that need every row
in memory (k-center, FVS, "all") raise a clear error.  Folds: those of
:func:`lssvm.backends.dask.resolve_dask_cv`.

Also here: :class:`DaskFixedSizeCV`, the search criterion
(:class:`lssvm.selection.fixed_size.FixedSizeCV`) on Dask data, and
:func:`dask_whole_pool_cv`, the CV of the model on the whole pool.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np

from ..._params import count_or_fraction
from ..._sums import warn_if_overflow
from ..._targets import warn_constant_targets
from ..._threads import serial_region
from ...basis import default_n_basis, drop_near_duplicates, renyi_entropy_selection
from ...cv import ErrorSums, not_in_memory
from ...cv.fixed_size import SummedRows, block_fold_values, block_path_errors, scdp_seed
from ...kernels import gamma_scale
from ...selection.criteria import CVPath
from ...selection.fixed_size import chosen_sizes
from ...solvers.fixed_size import GramSums
from ...solvers.row_blocks import SUB_ROWS, check_block, code_targets, merge_moments, misclassified
from .families import _needs_memory, _row_indices
from .family_cv import _DaskRowsCV
from .passes import run_pass, shared, tree_reduce
from .rows import RowData, as_row_data, take_rows
from .sparse import DaskFolds, draw_basis, fit_sparse, resolve_dask_cv, target_range, total_moments

__all__ = ["DaskFixedSizeCV", "DaskTargetGroups", "RENYI_POOL_FACTOR", "dask_whole_pool_cv", "gram_pass",
           "path_errors_pass", "prototype_pool", "summed_rows", "support_engine"]

#: Rényi selection on Dask picks among ``RENYI_POOL_FACTOR * M`` rows drawn at random.
RENYI_POOL_FACTOR = 20


def _pool_size(n_prototypes, m):
    if n_prototypes is None:
        return min(m, default_n_basis(m))
    return count_or_fraction("n_basis", n_prototypes, None, m)


def prototype_pool(data, kernel, method, n_prototypes, rng, kernel_for=None):
    """The fixed-size prototype pool of Dask data (Z, indices or None), drawn
    as in memory (see the module notes; "pchol" on a row sample,
    :func:`lssvm.basis.sampled_pivoted_cholesky`, at ``kernel_for(sample)``
    if given, else at ``kernel``); near-duplicates are dropped."""
    m = data.n_samples
    if isinstance(method, str):
        if method not in ("pchol", "random", "renyi"):
            raise _needs_memory("basis", method, "basis='pchol', 'random' or 'renyi'")
        M = _pool_size(n_prototypes, m)
        if method == "pchol":
            Z, idx = draw_basis(data, "pchol", M, rng, kernel_for=kernel_for or (lambda sample: kernel))
        elif method == "random":
            Z, idx = draw_basis(data, "random", M, rng)
        else:
            Zp, pool = draw_basis(data, "random", min(m, RENYI_POOL_FACTOR * M), rng)
            sel = renyi_entropy_selection(Zp, M, kernel, random_state=rng).indices
            Z, idx = Zp[sel], pool[sel]
    elif np.ndim(method) == 1:
        idx = _row_indices(method, m, "basis")
        Z = take_rows(data.X, idx)
    else:
        Z, idx = draw_basis(data, method, None, None)
    return drop_near_duplicates(Z, kernel, idx, what="prototype", stacklevel=4)


class _Shape:
    def __init__(self, n_features):
        self.n_features = n_features


def block_gram_sums(X, y, folds, row0, Z, kernel, classes):
    """:class:`GramSums` of one row block, split by fold (dict fold -> sums).

    Notes
    -----
    Per row: the kernel row O(M d) and its share of the SYRK, (M + 1)^2.
    Memory O(SUB_ROWS M) beyond the block.
    """
    with serial_region():
        if np.shape(X)[0] == 0:
            return {}
        X = check_block(X, _Shape(Z.shape[1]), row0)
        Y = code_targets(y, classes, row0)
        f = np.zeros(X.shape[0], dtype=np.int64) if folds is None else np.asarray(folds, dtype=np.int64).ravel()
        out = {}
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            K = kernel(X[sl], Z)
            fs = f[sl]
            for fold in np.unique(fs):
                sel = fs == fold
                sums = GramSums.of_rows(K if sel.all() else K[sel], Y[sl][sel])
                out[int(fold)] = out[int(fold)] + sums if int(fold) in out else sums
        return out


def _task_gram(x, y, g, row0, Z, kernel, classes, spec):
    folds = None if spec is None else spec.block_folds(row0, x.shape[0], g)
    return block_gram_sums(x, y, folds, row0, Z, kernel, classes)


def gram_pass(data, Z, kernel, classes=None, folds=None, label="training pass"):
    """Per-fold :class:`GramSums` of all rows (dict fold -> sums): one pass
    (``folds``: :class:`~lssvm.backends.dask.DaskFolds`, or None).  For
    regression targets the same pass takes their column minima and maxima:
    a constant column gets the in-memory :class:`lssvm.ConstantTargetWarning`."""
    rows = data if folds is None else folds.data  # with the groups the assignment reads
    z, k, c, s = shared(Z), shared(kernel), shared(classes), shared(None if folds is None else folds.spec)
    parts = [dask.delayed(_task_gram, pure=True)(x, y, g, r0, z, k, c, s) for x, y, g, r0 in rows.blocks()]
    if classes is not None or data.y is None:
        return run_pass(label, tree_reduce(parts, merge_moments))
    sums, (lo, hi) = run_pass(label, (tree_reduce(parts, merge_moments), target_range(data)))
    warn_constant_targets(np.stack([lo, hi]), stacklevel=7)
    return sums


def _task_path_errors(x, y, g, row0, Z, kernel, classes, spec, paths, n_alphas, n_sizes):
    with serial_region():
        v = len(next(iter(paths.values()))) // n_alphas
        out = {"sse": np.zeros((n_alphas, v, len(paths), n_sizes))}
        out["wrong"] = out["sse"].copy()
        if np.shape(x)[0] == 0:
            return out
        X = check_block(x, _Shape(Z.shape[1]), row0)
        Y = code_targets(y, classes, row0)
        f = spec.block_folds(row0, X.shape[0], g)
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            part = block_path_errors(kernel(X[sl], Z), Y[sl], f[sl], paths, n_alphas, n_sizes)
            out["sse"] += part["sse"]
            out["wrong"] += part["wrong"]
        return out


def path_errors_pass(data, Z, kernel, classes, folds, paths, n_alphas, n_sizes, label="cross-validation pass 2/2"):
    """Summed :func:`lssvm.cv.fixed_size.block_path_errors` of all rows: one
    pass, each row predicted by its fold's SCDP path (every model size)."""
    z, k, c, s, p = shared(Z), shared(kernel), shared(classes), shared(folds.spec), shared(paths)
    parts = [dask.delayed(_task_path_errors, pure=True)(x, y, g, r0, z, k, c, s, p, n_alphas, n_sizes)
             for x, y, g, r0 in folds.data.blocks()]
    return run_pass(label, tree_reduce(parts, _add_errors))


def _task_fold_values(x, y, g, row0, Z, kernel, classes, spec, models):
    paths, sizes = models
    with serial_region():
        if np.shape(x)[0] == 0:
            return np.zeros((0, len(sizes))), np.zeros(0, dtype=np.intp)
        X = check_block(x, _Shape(Z.shape[1]), row0)
        Y = code_targets(y, classes, row0)
        f = np.asarray(spec.block_folds(row0, X.shape[0], g), dtype=np.intp).ravel()
        F = np.empty((X.shape[0], len(sizes)))
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            F[sl] = block_fold_values(kernel(X[sl], Z), f[sl], paths, sizes)
        return F, (Y[:, 0] > 0).astype(np.intp) if Y.shape[1] == 1 else Y.argmax(axis=1)


def fold_values_pass(data, Z, kernel, classes, folds, paths, sizes, label="calibration pass"):
    """The out-of-fold values (N, v) of a fixed-size classifier's size selection at the chosen
    ``sizes`` (:func:`lssvm.cv.fixed_size.block_fold_values`, ``paths`` of its fold models) and the
    class index (N,) of every row, in row order: one pass, held on the client (O(N v))."""
    z, k, c, s, p = shared(Z), shared(kernel), shared(classes), shared(folds.spec), shared((paths, sizes))
    parts = [dask.delayed(_task_fold_values, pure=True)(x, y, g, r0, z, k, c, s, p)
             for x, y, g, r0 in folds.data.blocks()]
    blocks = run_pass(label, parts)
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def _add_errors(*parts):
    return {key: sum(p[key] for p in parts) for key in parts[0]}


def summed_rows(data, Z, kernel, classes=None, folds=None, label="training pass"):
    """The rows of a fixed-size fit as sums (:class:`SummedRows`): one pass,
    split by ``folds`` if given."""
    sums = gram_pass(data, Z, kernel, classes, folds, label)
    total = total_moments(sums)
    fold_sums = None
    if folds is not None:
        empty = GramSums(np.zeros_like(total.gram), np.zeros_like(total.rhs), np.zeros_like(total.yy), 0)
        fold_sums = [sums.get(f, empty) for f in range(folds.spec.n_folds)]
    def path_errors(paths, n_alphas, n_sizes):
        return path_errors_pass(data, Z, kernel, classes, folds, paths, n_alphas, n_sizes)

    return SummedRows(total, kernel(Z, Z), fold_sums, None if folds is None else path_errors)


def support_engine(data, kernel, Z, indices, coef, support, classes=None, targets=None):
    """The engine of a fixed-size model fitted on Dask rows: the sparse model
    on the prototypes that carry a weight, at the same alpha (the
    documentation's Mathematics page, §4, §6), a
    :class:`~lssvm.backends.dask.DaskSparseFit` whose training pass runs at
    its first use (fitting costs no pass more).

    The pool's Gram sums restricted to the support hold the same moments in
    exact arithmetic, but whitening them afterwards multiplies their rounding
    by cond(K_SS): coefficients off by 5e-6 at cond 1e8, against 3e-12 from
    the pass that whitens each row (``benchmarks/dask_support_moments.py``).

    Parameters
    ----------
    data : RowData
    kernel : lssvm.kernels.Kernel
    Z : ndarray of shape (M, d)
        The prototype pool.
    indices : ndarray of shape (M,) or None
        Their training-row indices.
    coef : ndarray of shape (M + 1, v)
        The fitted coefficients (prototypes, then the intercept).
    support : ndarray of shape (s,)
        The prototypes with a weight, in the model's order.
    classes : ndarray or None
    targets : array of int, optional
        A regressor's outputs that ``coef`` holds (a group of outputs on one support): the model of
        those columns of the targets.

    Returns
    -------
    DaskSparseFit or str
        The engine, or why no one sparse model is the fitted one.
    """
    if targets is not None:
        data = RowData(data.X, data.y[:, targets], data.groups, data.offsets)
    M = Z.shape[0]
    chosen = coef[:M] != 0
    if not np.all(chosen == chosen[:, :1]):
        if classes is None:  # a regressor runs its methods output group by output group
            return (f"the {coef.shape[1]} outputs of this fixed-size model use different prototypes (each output's "
                    "SCDP run chooses its own), so no one sparse model is the fitted one; its methods run output "
                    "group by output group")
        return DaskTargetGroups.of_supports(data, kernel, Z, indices, coef, classes)
    if np.any(coef[M] == 0):
        return ("SCDP left the intercept out of this model (its coefficient is 0), while the exact CV engine's model "
                "has an unpenalised intercept; use a larger max_size or solver='direct'")
    support = np.asarray(support, dtype=np.intp)
    if support.size == 0:
        return ("this model uses no prototype (SCDP stopped at the intercept alone), so it has no basis to "
                "cross-validate; use a larger max_size, size_rule=0 or solver='direct'")
    rows = None if indices is None else indices[support]
    return fit_sparse(data, kernel, None, None, None, 1e-10, classes, basis_rows=(Z[support], rows), deferred=True)



class DaskTargetGroups:
    """The engine of a classifier fitted on Dask rows whose one-vs-rest outputs sit on different
    supports (each grown by its own SCDP run): one :class:`~lssvm.backends.dask.DaskSparseFit` per
    group of outputs with the same support, each the sparse model on its prototypes fitted to its
    outputs' +1/-1 codes, assembled along the output axis (the Dask counterpart of
    :class:`lssvm.cv.TargetGroupsEngine`).  Folds are resolved once on the class labels and run by
    every group; error sums are reduced from the assembled outputs in one pass, so that a row's
    misclassification sees every output.

    Parameters
    ----------
    data : RowData
        The training rows, labels as ``y``.
    engines : list of DaskSparseFit
        One per group, fitted on ``data`` with the group's coded outputs as numeric targets.
    groups : list of ndarray
        The outputs of each engine: a partition of ``range(v)``.
    classes : ndarray
    """

    rows_in_memory = False

    def __init__(self, data, engines, groups, classes):
        self.data, self.engines, self.groups, self.classes = data, list(engines), list(groups), classes
        self._order = np.argsort(np.concatenate(self.groups))

    @classmethod
    def of_supports(cls, data, kernel, Z, indices, coef, classes):
        """The groups of ``coef``'s outputs by support, each a deferred sparse fit (its training pass
        runs at first use); or the reason, a str, where one group has no engine."""
        M = Z.shape[0]
        chosen = coef[:M] != 0
        keys = {}
        for j in range(coef.shape[1]):
            keys.setdefault(chosen[:, j].tobytes(), []).append(j)
        groups = [np.array(cols) for cols in keys.values()]
        coded = _coded_targets(data, classes)
        engines = []
        for cols in groups:
            rows = RowData(data.X, coded[:, cols], data.groups, data.offsets)
            engine = support_engine(rows, kernel, Z, indices, coef[:, cols], np.flatnonzero(chosen[:, cols[0]]))
            if isinstance(engine, str):
                return engine
            engines.append(engine)
        return cls(data, engines, groups, classes)

    @property
    def n_samples(self):
        return self.data.n_samples

    @property
    def n_basis(self):
        return max(e.n_basis for e in self.engines)

    def in_memory(self, what, hint=""):
        raise not_in_memory(what, hint)

    def targets(self):
        """The +1/-1 codes of every output, a Dask array (m, v)."""
        return _coded_targets(self.data, self.classes)

    def resolve_cv(self, cv, groups=None, classifier=False):
        """The :class:`DaskFolds` of ``cv`` on the class labels (stratified folds read them)."""
        data = self.data if groups is None else as_row_data(self.data.X, self.data.y, groups, numeric_y=False)
        return resolve_dask_cv(cv, data, classifier)

    def _assemble(self, call):
        return da.concatenate([call(e, cols) for e, cols in zip(self.engines, self.groups, strict=True)],
                              axis=-1)[..., self._order]

    def _group_folds(self, folds, cols):
        rows = folds.data
        return DaskFolds(folds.spec, RowData(rows.X, _coded_targets(self.data, self.classes)[:, cols], rows.groups,
                                             rows.offsets))

    def _sums(self, F, label):
        """:class:`lssvm.cv.ErrorSums` of assembled outputs F (A, m, v), one pass."""
        Y = self.targets()
        F = F.rechunk({0: -1, 1: Y.chunks[0], 2: -1})
        sse = ((F - Y[None]) ** 2).sum(axis=1)
        wrong = da.map_blocks(lambda f, y: misclassified(f, y[0]).reshape(-1, 1, 1), F, Y[None], dtype=np.int64,
                              chunks=(F.chunks[0], (1,) * len(F.chunks[1]), (1,)))
        sse, wrong = run_pass(label, (sse, wrong.sum(axis=(1, 2))))
        warn_if_overflow(sse, "cross-validation sums of squares", stacklevel=5)
        return ErrorSums(np.asarray(sse), np.asarray(wrong), self.n_samples)

    def loo_residuals(self, alphas):
        return self._assemble(lambda e, cols: e.loo_residuals(alphas))

    def loo_sums(self, alphas):
        return self._sums(self.targets()[None] - self.loo_residuals(alphas), "leave-one-out pass")

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        return self._assemble(lambda e, cols: e.cv_outputs(self._group_folds(folds, cols), alphas, basis_in_holdout))

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        return self._sums(self.cv_outputs(folds, alphas, basis_in_holdout), "cross-validation pass")

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        return self._assemble(lambda e, cols: e.holdout_outputs(test_indices, alphas, basis_in_holdout))


def _coded_targets(data, classes):
    """The +1/-1 codes of labels ``data.y`` against ``classes``, a Dask array (m, v)."""
    v = 1 if classes.size == 2 else classes.size
    y = data.y if data.y.ndim == 1 else data.y[:, 0]
    return y.map_blocks(code_targets, classes, dtype=float, chunks=(y.chunks[0], (v,)), new_axis=1)


class DaskFixedSizeCV(_DaskRowsCV):
    """:class:`lssvm.selection.fixed_size.FixedSizeCV` on Dask data: each alpha scored at
    the model size the size rule picks on the fast v-fold curves.

    The search checks the model parameters first (the estimator's own
    checks); this criterion checks only what Dask input adds.

    Attributes
    ----------
    refit_random_state : int
        As for :class:`lssvm.selection.fixed_size.FixedSizeCV`.
    """

    def __init__(self, X, y, *, cv=10, basis="pchol", n_basis=None, solver="scdp", max_size=None,
                 n_candidates=59, nu=1e-8, stop_window=10, stop_tol=1e-4, size_rule=0.1, size_scoring="mse", **kw):
        if isinstance(cv, str):
            raise ValueError(f"fixed-size models are cross-validated on folds: cv must be an int, a splitter or "
                             f"(train, test) pairs; got cv={cv!r}")
        # the model's parameters (solver, nu, max_size, ...) are checked by the search beforehand,
        # with the checks of the estimator it refits
        super().__init__(X, y, cv=cv, **kw)
        self.solver, self.max_size, self.nu = solver, max_size, float(nu)
        self.n_candidates = n_candidates if solver == "scdpp" else None
        self.stop = (stop_window, stop_tol)
        self.size_rule, self.size_scoring = size_rule, size_scoring
        if size_scoring == "error_rate" and (not self.classification or self.classes.size != 2):
            raise ValueError("size_scoring='error_rate' is for two-class problems; use 'mse'")
        self.refit_random_state = int(self.random_state.randint(2**31 - 1))
        self.scdp_seed = scdp_seed(np.random.RandomState(self.refit_random_state))
        self._method, self._n = basis, n_basis
        self._renyi = isinstance(basis, str) and basis == "renyi"
        if self._renyi:  # kernel-dependent: redrawn per candidate from one seed
            self._seed = self.random_state.randint(2**31 - 1)
            self._drawn = {}
        else:
            # "pchol": at the fixed width, or at the sample's "scale" width when the width is searched
            self._Z, self._idx = prototype_pool(
                self.data, self._kernel({}), basis, n_basis, self.random_state,
                kernel_for=lambda sample: self._kernel({} if "gamma" in self.kernel_params
                                                       else {"gamma": gamma_scale(sample)}))
            if self._idx is None:
                raise ValueError("the prototypes must come from the training rows: a method name or row indices "
                                 "(a search scores every candidate on its own rows)")

    def _rows(self, kern):
        if not self._renyi:
            return super()._rows(kern)
        key = repr(kern)
        if key not in self._drawn:
            self._drawn[key] = prototype_pool(self.data, kern, "renyi", self._n, np.random.RandomState(self._seed))
        return self._drawn[key]

    def __call__(self, **params):
        kern = self._kernel(params)
        Z, _ = self._rows(kern)
        rows = summed_rows(self.data, Z, kern, self.classes, self.spec, label="cross-validation pass")
        system = rows.system()
        D = system.n_coef
        if self.max_size is not None and self.max_size > D:
            raise ValueError(f"max_size={self.max_size} exceeds the {D} coefficients (M={D - 1} prototypes + "
                             "intercept)")
        A, v = self.alphas.size, system.rhs.shape[1]
        count = self.size_scoring == "error_rate"
        if self.solver == "direct":
            out = [rows.direct_cv(system, float(a), self.nu, "fixed-size direct CV", count_wrong=count)
                   for a in self.alphas]
            wrong = np.array([w[0] for _, w in out]) if count else None
            return self._finish(np.array([s for s, _ in out]), wrong, {"model_size": D})
        curves = rows.curves(system, self.alphas, nu=self.nu, max_size=self.max_size, n_candidates=self.n_candidates,
                             seed=self.scdp_seed, stop_window=self.stop[0], stop_tol=self.stop[1],
                             stop_scoring=self.size_scoring)
        sizes = chosen_sizes(curves, self.size_scoring, self.size_rule)
        pick = (np.arange(A)[:, None], np.arange(v)[None], sizes - 1)
        mse = curves.curve("mse")[0][pick]  # (A, v)
        err = curves.curve("error_rate")[0][pick][:, 0] if count else None
        self.n_evaluations += 1
        return CVPath(self.alphas, mse.mean(axis=1), err, {"model_size": sizes.mean(axis=1)})


def dask_whole_pool_cv(data, Z, zidx, kernel, folds, classes, scoring):
    """``alpha -> (scores (v,), W (M + 1, v), spread (v,))`` of the model on the whole pool of Dask rows:
    the sparse LS-SVM on the prototypes (:func:`lssvm.backends.dask.fit_sparse`, one pass; whitened by
    ``K_ZZ``, so not squaring the kernel's conditioning as the fixed-size sums' normal equations do), its
    exact hold-outs on ``folds`` with the prototypes kept (two passes: the fold models, then each fold's
    errors, :func:`_per_fold_errors`) and the spread of its fold scores, as in memory."""
    def score(alpha):
        fit = fit_sparse(data, kernel, None, None, None, 1e-10, classes, basis_rows=(Z, zidx))
        if fit.ctx.basis.shape[0] != Z.shape[0]:
            return np.full(1, np.inf), None
        outputs = fit.cv_outputs(folds, [alpha], "keep")  # (1, m, v), lazy: the fold models are solved now
        sse, wrong, count = _per_fold_errors(outputs, folds, classes)
        a, b = fit.solution.coef(float(alpha))
        keep = count > 0
        per_fold = (np.repeat(wrong[:, None], sse.shape[1], axis=1) if scoring == "error_rate" else sse)[keep]
        per_fold = per_fold / count[keep, None]
        total = wrong.sum() if scoring == "error_rate" else sse.sum(axis=0)
        scores = np.broadcast_to(total / count.sum(), (a.shape[1],)).copy()
        spread = per_fold.std(axis=0, ddof=1) if keep.sum() > 1 else np.zeros(a.shape[1])
        return scores, np.vstack([a, np.reshape(b, (1, -1))]), np.broadcast_to(spread, (a.shape[1],)).copy()

    return score


def _per_fold_errors(outputs, folds, classes):
    """Per fold: the squared errors (n_folds, v), misclassified rows (n_folds,) and rows (n_folds,) of
    the out-of-fold ``outputs`` (a Dask array (1, m, v) chunked as the rows): one pass."""
    import dask

    spec = shared(folds.spec)
    blocks = list(folds.data.blocks())
    out_blocks = outputs.to_delayed(optimize_graph=False).ravel()
    parts = [dask.delayed(_block_fold_errors, pure=True)(F, y, g, r0, spec, classes)
             for F, (_, y, g, r0) in zip(out_blocks, blocks, strict=True)]
    merged = run_pass("whole-pool fold errors", tree_reduce(parts, _merge_fold_errors))
    n_folds = 1 + max(merged)
    v = next(iter(merged.values()))[0].size
    sse, wrong, count = np.zeros((n_folds, v)), np.zeros(n_folds), np.zeros(n_folds)
    for f, (e, w, c) in merged.items():
        sse[f], wrong[f], count[f] = e, w, c
    return sse, wrong, count


def _block_fold_errors(F, y, g, row0, spec, classes):
    """One row block's per-fold errors: {fold: (squared errors (v,), misclassified, rows)}."""
    F = np.asarray(F)
    fold_of = np.asarray(spec.block_folds(row0, F.shape[1], g), dtype=np.int64).ravel()
    Y = code_targets(y, classes, row0)
    out = {}
    for f in np.unique(fold_of):
        rows = np.flatnonzero(fold_of == f)
        Ff = F[:, rows]
        if not np.all(np.isfinite(Ff)):  # rows of no fold model
            continue
        E = Y[rows] - Ff[0]
        wrong = float(misclassified(Ff, Y[rows])[0]) if classes is not None else 0.0
        out[int(f)] = ((E * E).sum(axis=0), wrong, float(rows.size))
    return out


def _merge_fold_errors(*parts):
    """Sum per-fold errors of several blocks (a tree reduction's merge)."""
    out = {}
    for part in parts:
        for f, (e, w, c) in part.items():
            if f in out:
                e0, w0, c0 = out[f]
                out[f] = (e0 + e, w0 + w, c0 + c)
            else:
                out[f] = (e, w, c)
    return out
