"""The sparse LS-SVM's exact CV criterion over an alpha path, on rows in
memory or on a row source (Dask), through one engine protocol
(:class:`lssvm.cv.SparseEngine`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._threads import check_n_jobs, uses_threads
from ..basis import default_basis_size, select_basis
from ..basis.duplicates import near_duplicate_free
from ..cv import BASIS_IN_HOLDOUT, MemorySparseEngine, WeightedSparseEngine
from ..kernels import gamma_scale
from ..solvers import check_alphas, factorize_sparse_rls, factorize_weighted_rls
from ..solvers.loo_block import restrict_targets
from ..solvers.sparse_rls import target_batches
from ..solvers.weighted_rls import check_row_weights
from .criteria import DEFAULT_ALPHAS, _RowsCV
from .evidence import gcv_path, log_evidence_path

__all__ = ["KeptFactorization", "SparseLSSVMCV"]


@dataclass(frozen=True)
class KeptFactorization:
    """The factorisation a search scored for one candidate, kept for the refit.

    Attributes
    ----------
    params : dict
        The candidate's kernel parameters.
    fac : lssvm.solvers.SparseRLSFactorization
    rows : ndarray of shape (n,)
        Its basis rows.
    kernel : lssvm.kernels.Kernel
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        The inputs and (coded) targets it was fitted on.
    rcond : float
        The cut-off it was factorised with.
    """

    params: dict
    fac: object
    rows: np.ndarray
    kernel: object
    X: np.ndarray
    Y: np.ndarray
    rcond: float

    def matches(self, X, Y, kernel, rows, rcond):
        """Whether a model fitted on ``X``, ``Y`` with ``kernel`` on basis ``rows`` at cut-off ``rcond`` has
        this factorisation (same data value for value, same kernel, rows and cut-off; O(m (d + v)))."""
        return (kernel == self.kernel and rcond == self.rcond and rows is not None
                and np.array_equal(rows, self.rows)
                and Y.shape == self.Y.shape and np.array_equal(Y, self.Y)
                and (X is self.X or (X.shape == self.X.shape and np.array_equal(X, self.X))))


def _gcv_and_evidence(fac, alphas):
    """The mean GCV score and the summed log evidence over the targets, (A,) each: by batches of
    targets when they are many (each r x |T| temporary at most ``TARGET_BATCH_BYTES``), so that no
    temporary of size r x v is formed beside ``z``; O(r A v) after one O(m v) pass for the targets'
    sums of squares."""
    batches = target_batches(4 * fac.rank, fac.z.shape[1])
    # the centred targets' sums of squares: one O(m v) pass, shared by both criteria
    yy = fac.centred_sum_squares() if hasattr(fac, "centred_sum_squares") else (fac.y_centered**2).sum(axis=0)
    if len(batches) == 1:
        return {"gcv": gcv_path(fac, alphas, yy).mean(axis=1),
                "evidence": log_evidence_path(fac, alphas, sum_squares=yy).sum(axis=1)}
    gcv, evidence = np.zeros(alphas.size), np.zeros(alphas.size)
    for cols in batches:
        part = restrict_targets(fac, cols)
        gcv += gcv_path(part, alphas, yy[cols]).sum(axis=1)
        evidence += log_evidence_path(part, alphas, sum_squares=yy[cols]).sum(axis=1)
    return {"gcv": gcv / fac.z.shape[1], "evidence": evidence}


class SparseLSSVMCV(_RowsCV):
    """Exact CV of the sparse LS-SVM on a basis (Cawley & Talbot 2004; Pahikkala et al. 2012).

    Parameters
    ----------
    X, y, kernel, cv, alphas, classification, groups, random_state, kernel_params
        As for :class:`DenseLSSVMCV`.  ``cv="loo"`` is the exact LOO of Cawley & Talbot 2004 (a
        left-out basis point stays a basis function); k-fold and group folds
        are the exact hold-outs of Pahikkala et al. 2012.
    basis : {"pchol", "fvs", "random", "greedy", "kcenter", "renyi"} or 1-D int array, default="pchol"
        As for :class:`lssvm.SparseLSSVR`.  "random", "kcenter" and row
        indices are drawn once; so is "pchol", at the fixed width or, when
        the width is searched, at ``gamma="scale"``
        (:func:`lssvm.kernels.gamma_scale`); "fvs", "renyi" and "greedy"
        are redrawn per candidate from a fixed seed.
    n_basis : int, optional
    basis_in_holdout : {"remove", "keep", "train"}, default="remove"
        Treatment of held-out basis points in k-fold CV (Pahikkala et al. 2012, §6.4).
    basis_alpha : float, default=1.0
        The alpha at which ``basis="greedy"`` ranks candidates.
    basis_tol, pivot_tol, n_candidates, rcond
        As for :class:`lssvm.SparseLSSVR`.
    n_targets_batch : "auto" or int, default="auto"
        Targets per batch of the error sums (:func:`lssvm.solvers.loo_block.targets_batch_size`).
    keep_best : {"mse", "error_rate", "gcv", "evidence", "mse_per_target"}, optional
        Keep the factorisation of the best candidate so far under this
        scoring (as the searches rank: best score along the path, ties to
        the lower MSE, then the earlier call) for :meth:`kept_factorization`:
        a refit at the chosen parameters then needs no factorisation of its
        own (rows in memory only; one more m x n array held).
    sample_weight : array-like of shape (m,), optional
        Row weights (rows in memory): every candidate is the weighted model
        (:mod:`lssvm.solvers.weighted_rls`) and its scores are the weighted
        means of its exact weighted out-of-fold errors
        (:class:`lssvm.cv.WeightedSparseEngine`); a basis method draws
        among the positive-weight rows.  No GCV or evidence columns then.

    Notes
    -----
    Per call: the basis selection, O(m n d) kernel values (from cached
    distances for a fixed basis and RBF), O(m n^2 + n^3) factorisation;
    per alpha O(m n) for LOO, or one exact hold-out per fold.
    """

    #: The kernel columns in Fortran order: the factorisation whitens them in place by column blocks,
    #: mostly GEMM (:mod:`lssvm.solvers.whitening`; a third off the triangular solve).
    _fortran_columns = _columns_consumed = True

    def __init__(self, X, y, *, basis="pchol", n_basis=None, basis_in_holdout="remove", basis_alpha=1.0,
                 basis_tol=1e-6, pivot_tol=1e-6, n_candidates=None, rcond=1e-10, keep_best=None, sample_weight=None,
                 n_targets_batch="auto", **kw):
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {BASIS_IN_HOLDOUT}; got {basis_in_holdout!r}")
        self.basis_in_holdout = basis_in_holdout
        self.rcond = rcond
        self.selections = {}
        self.source = None
        self.keep_best = keep_best
        self.n_targets_batch = n_targets_batch
        self._kept, self._kept_rank = None, None
        if getattr(X, "rows_in_memory", True) is False:  # a row source (lssvm.backends.dask.DaskRows)
            self._init_source(X, basis, n_basis, **kw)
            return
        super().__init__(X, y, **kw)
        self._cv_folds = self.folds
        self.sample_weight = None if sample_weight is None else check_row_weights(sample_weight, self.X.shape[0])
        if self.sample_weight is not None:
            self.keep_best = None  # the refit factorises its own weighted problem
        # a method draws among the positive-weight rows (a zero weight is a removed row)
        pool = (np.flatnonzero(self.sample_weight > 0) if self.sample_weight is not None and isinstance(basis, str)
                else np.arange(self.X.shape[0]))
        every_row = pool.size == self.X.shape[0]

        def draw(kern, rng):
            Xp = self.X if every_row else self.X[pool]
            Yp = self.Y if every_row else self.Y[pool]  # every row: no m x v copy of the targets
            if kern is None:  # drawn once: "pchol" at the scale width when the width is searched
                scale = gamma_scale(self.X, self.sample_weight)
                kern = self._kernel({} if "gamma" in self.kernel_params else {"gamma": scale})
            sel = select_basis(Xp, kern, basis, default_basis_size(basis, n_basis, pool.size, self.classification),
                               y=Yp, alpha=basis_alpha, tol=basis_tol, pivot_tol=pivot_tol, rcond=rcond,
                               n_candidates=n_candidates, random_state=rng)
            if sel.indices is None:
                raise ValueError("the basis must come from the training rows: a method name or row indices")
            return pool[sel.indices]

        independent = not isinstance(basis, str) or basis in ("random", "kcenter", "pchol")
        self._init_rows(independent, draw)

    def _init_source(self, source, basis, n_basis, *, kernel="rbf", cv="loo", alphas=None, classification=False,
                     groups=None, random_state=None, kernel_params=None, n_jobs=None):
        """Rows not in memory (Dask): the basis ("pchol" on a row sample,
        "random", row indices or points) is drawn once, the folds assigned by passes; every candidate
        then trains and scores by passes of the row source's engine."""
        if groups is not None:
            raise ValueError("pass the groups to the row source (DaskRows), not to the criterion")
        self.n_jobs = check_n_jobs(n_jobs)
        self.source = source
        self.data = getattr(source, "data", None)
        self.classification = bool(classification)
        self.classes = source.classes
        self.alphas, _ = check_alphas(DEFAULT_ALPHAS if alphas is None else alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        self._cv_folds = None if self.loo else source.resolve_cv(cv, self.classification)
        self.folds = None  # the rows are not in memory: no test-index arrays
        self._seed = None  # draw_seed: the basis is drawn once
        # "pchol" at the fixed width, or at the sample's "scale" width when the width is searched
        self._basis = source.draw_basis(basis, n_basis, random_state, kernel_for=lambda sample: self._kernel(
            {} if "gamma" in self.kernel_params else {"gamma": gamma_scale(sample)}))
        self.n_evaluations = 0

    def rows_for(self, **params):
        if self.source is None:
            return super().rows_for(**params)
        Z, idx = self._basis
        if idx is None:
            return None
        return idx[near_duplicate_free(Z, self._kernel(params))]

    def basis_points(self):
        """The basis points (n, d) every candidate used (a basis given as points, Dask rows)."""
        return self._basis[0]

    def _fit_engine(self, kern, params):
        """The engine (:class:`lssvm.cv.SparseEngine`) of the candidate's model."""
        if self.source is not None:
            return self.source.fit_engine(kern, self._basis, self.rcond)
        rows, K_mn = self._rows_and_columns(kern, params)
        if self.sample_weight is not None:
            fac = factorize_weighted_rls(K_mn, K_mn[rows], self.Y, self.sample_weight, rcond=self.rcond)
            return WeightedSparseEngine(fac, self.X, self.X[rows], rows, kern, self.rcond, self.classes, self.n_jobs)
        fac = factorize_sparse_rls(K_mn, K_mn[rows], self.Y, rcond=self.rcond, overwrite_k=True)
        return MemorySparseEngine(fac, self.X, self.X[rows], rows, kern, self.rcond, self.classes, self.n_jobs,
                                  self.n_targets_batch)

    @uses_threads
    def __call__(self, **params):
        engine = self._fit_engine(self._kernel(params), params)
        if self.loo:
            sums = engine.loo_sums(self.alphas)
        else:
            sums = engine.cv_sums(self._cv_folds, self.alphas, self.basis_in_holdout)
        info = {"n_basis": engine.n_basis}
        unweighted = getattr(self, "sample_weight", None) is None
        if not self.classification and engine.rows_in_memory and unweighted:  # O(r) per alpha, same factorisation
            info.update(_gcv_and_evidence(engine.fac, self.alphas))
        path = self._path_from_sums(sums, info)
        if self.keep_best is not None and engine.rows_in_memory:
            self._offer(params, engine, path)
        return path

    def _offer(self, params, engine, path):
        """Keep ``engine``'s factorisation if this candidate ranks first so far (the searches' order:
        best score along the path, ties to the lower MSE, then the earlier candidate)."""
        score = np.asarray(path.score(self.keep_best), dtype=float)
        score = np.where(np.isfinite(score), score, np.inf)
        mse = np.where(np.isfinite(path.mse), path.mse, np.inf)
        i = np.lexsort((mse, score))[0]
        rank = (float(score[i]), float(mse[i]))
        if self._kept_rank is None or rank < self._kept_rank:
            self._kept_rank = rank
            self._kept = KeptFactorization(dict(params), engine.fac, engine.basis_indices, engine.kernel,
                                           self.X, self.Y, self.rcond)

    def kept_factorization(self, **params):
        """The factorisation scored at these kernel parameters, if it was kept
        (``keep_best``: the best candidate), else None."""
        kept = self._kept
        if kept is None or self._key(kept.params) != self._key(params):
            return None
        return kept
