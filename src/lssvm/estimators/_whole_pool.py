"""The fixed-size model on its whole prototype pool: the last size of SCDP's curve, scored
directly where SCDP's runs stop before it (:class:`lssvm.FixedSizeLSSVR`)."""

from __future__ import annotations

import numpy as np

from ..cv.fixed_size import select_model_size
from ..solvers.row_blocks import code_targets, misclassified

__all__ = ["WHOLE_POOL_RCOND", "complete_curve_sizes", "dask_whole_pool_cv", "whole_pool_fold_scores", "whole_pool_outputs"]


def whole_pool_outputs(est, rows, system, mean, std, name, whole_pool_cv=None):
    """The size rule on SCDP's curve completed by the whole pool, per output.

    SCDP's curve ends before the whole pool when its runs stop (rule (38)) or when the next
    coordinates are numerically dependent on the chosen ones (small alpha, wide kernel: the normal
    equations square the kernel's conditioning).  The whole pool is the curve's last size; it is
    scored on the same folds, and the size rule (Karsmakers et al. 2011, §4.5) is applied to the
    complete curve: the smallest size whose CV score is within ``size_rule`` standard deviations of
    the best size's, the whole pool included.  Where the whole pool scores best, the threshold is its
    score plus ``size_rule`` times the spread of its own fold scores; the whole pool is kept where no
    SCDP size is within it, else the smallest SCDP size that is.  Where an SCDP size scores best, the
    rule on SCDP's curve stands.

    Decided by: friedman1 (m = 2,000, alpha 1e-6), SCDP stopped at 107 of 449 coefficients with CV
    MSE 2.77; the whole pool scored 1.32.  Elevators (8,752 rows, pool 500, gamma 0.0074, alpha 0.01):
    SCDP's best size (217) scored 5.448e-6, the whole pool 5.171e-6 (fold spread 2.72e-6); comparing
    the whole pool against SCDP's best minus a margin, then applying the rule to SCDP's curve alone,
    kept 106 prototypes scoring 5.74e-6 (test MSE 1.13x the whole pool's); the rule on the complete
    curve keeps the whole pool (threshold 5.443e-6).

    Rows in memory and one output: the fold scores by the sparse family's exact hold-out formulas and
    the coefficients from the same factorisation (``whole_pool_cv``, :func:`whole_pool_fold_scores`:
    the sparse model on the prototypes, equal to the direct solves to 1e-7 and ten times cheaper than
    their QR; a search's refit passes the factorisation it scored).  Otherwise one direct (guarded,
    QR when ill-conditioned) solve per fold, and the spread of SCDP's best size stands in for the
    whole pool's (its fold scores are not kept).

    Parameters
    ----------
    est : FixedSizeLSSVR or FixedSizeLSSVC
        Gives ``alpha``, ``nu``, ``size_rule`` and the scoring.
    rows, system
        The fit's rows and normal equations (:class:`lssvm.cv.fixed_size.RowsInMemory` or the
        Dask sums).
    mean, std : ndarray of shape (v, K)
        SCDP's CV curve and the spread of its fold scores, cut where its runs stopped.
    name : str
        The estimator's name, for messages.
    whole_pool_cv : callable, optional
        ``alpha -> (scores (v,), W (M + 1, v)[, spread (v,)])``.

    Returns
    -------
    None (the rule on SCDP's curve stands for every output), or (chosen, W, scores, sizes): a bool
    per output (the whole pool kept), the whole pool's coefficients (M + 1, v), its CV scores (v,)
    and the 1-based SCDP size per output (that of outputs not kept).

    Notes
    -----
    O(v K) beyond the whole pool's CV.
    """
    alpha, nu = float(est.alpha), float(est.nu)
    error_rate = est._scoring == "error_rate"
    W = spread = None
    if whole_pool_cv is not None:
        result = whole_pool_cv(alpha)
        scores, W = np.atleast_1d(result[0]), result[1]
        if len(result) > 2:
            spread = np.atleast_1d(result[2])
    else:
        sse, wrong = rows.direct_cv(system, alpha, nu, f"{name} whole-pool CV", count_wrong=error_rate)
        scores = (wrong if error_rate else sse) / rows.n_samples
    v = mean.shape[0]
    best = np.argmin(mean, axis=1)
    if spread is None:
        spread = std[np.arange(v), best]
    chosen, sizes = complete_curve_sizes(mean, std, scores, spread, est.size_rule)
    if not (scores < mean.min(axis=1)).any():
        return None
    if chosen.any() and W is None:
        W = rows.solve(system, alpha, nu, call=f"{name} on the whole pool")
    return chosen, W, scores, sizes


def complete_curve_sizes(mean, std, whole_scores, whole_spread, size_rule):
    """The size rule on SCDP's curves with the whole pool appended as their last size.

    Parameters
    ----------
    mean, std : ndarray of shape (v, K)
        SCDP's CV curve per output and the spread (standard deviation over folds) of its fold scores.
    whole_scores, whole_spread : ndarray of shape (v,)
        The whole pool's CV score and the spread of its fold scores.
    size_rule : float
        Fraction of a standard deviation (the ``size_rule`` parameter).

    Returns
    -------
    chosen : ndarray of bool, shape (v,)
        The whole pool is the pick.
    sizes : ndarray of int, shape (v,)
        The 1-based SCDP size picked (K where the whole pool is).

    Notes
    -----
    O(v K).
    """
    v, K = mean.shape
    chosen = np.zeros(v, dtype=bool)
    sizes = np.empty(v, dtype=np.intp)
    for j in range(v):
        if whole_scores[j] < mean[j].min():
            within = np.flatnonzero(mean[j] <= whole_scores[j] + size_rule * whole_spread[j])
            chosen[j] = within.size == 0
            sizes[j] = K if chosen[j] else within[0] + 1
        else:
            sizes[j] = select_model_size(mean[j], std[j], size_rule)
    return chosen, sizes


#: Cut-off of the whole-pool sparse factorisation (:func:`lssvm.solvers.factorize_sparse_rls`'s
#: default, the one the sparse criterion of the search factorises with).
WHOLE_POOL_RCOND = 1e-10


def whole_pool_fold_scores(X, Y, K, zidx, folds, kernel, alpha, scoring, fac=None, n_jobs=None, fold_spread=False):
    """CV score and coefficients of the model on the whole pool (one output) on ``folds``.

    The model is the sparse LS-SVM on the prototypes (math.md §6), and its fold scores are that
    model's exact hold-outs with the prototypes kept in the training rows
    (``basis_in_holdout="keep"``, as :class:`lssvm.selection.SparseLSSVMCV` scores them); its
    coefficients come from the same factorisation, so the score describes the fitted model.

    Parameters
    ----------
    X : ndarray of shape (N, d)
    Y : ndarray of shape (N, 1)
        Targets (codes +1/-1 for a classifier).
    K : ndarray of shape (N, M)
        ``k(X, X[zidx])``; not modified.
    zidx : ndarray of shape (M,)
        The prototypes' training rows.
    folds : list of ndarray
        Test indices of each fold.
    kernel : lssvm.kernels.Kernel
    alpha : float
    scoring : {"mse", "error_rate"}
    fac : lssvm.solvers.SparseRLSFactorization, optional
        The factorisation of this model (a search's, kept for its refit); default: factorised here.
    n_jobs : int or None
    fold_spread : bool, default=False
        Also return the spread of the fold scores (for the size rule on the complete curve).

    Returns
    -------
    scores : ndarray of shape (1,)
    W : ndarray of shape (M + 1, 1)
        Weights on the prototypes, then the intercept.
    spread : ndarray of shape (1,)
        With ``fold_spread``: the standard deviation (ddof=1) over folds of the per-fold scores
        (squared error or misclassification rate over the fold's rows), as
        :meth:`lssvm.cv.fixed_size.SizeCurves.curve` gives it for SCDP's sizes.

    Notes
    -----
    O(N M^2) for the factorisation (none with ``fac``), then O(h M^2) per fold of h rows.
    """
    from ..cv import MemorySparseEngine
    from ..solvers import factorize_sparse_rls

    if fac is None:
        fac = factorize_sparse_rls(K, K[zidx], Y, rcond=WHOLE_POOL_RCOND)
    error_rate = scoring == "error_rate"
    classes = np.array([-1.0, 1.0]) if error_rate else None
    engine = MemorySparseEngine(fac, X, X[zidx], zidx, kernel, WHOLE_POOL_RCOND, classes, n_jobs)
    folds = list(folds)
    a, b = fac.coef(float(alpha))
    W = np.vstack([a, np.reshape(b, (1, -1))])
    if not fold_spread:
        sums = engine.cv_sums(folds, np.array([float(alpha)]), "keep")
        score = sums.wrong[0] / sums.count if error_rate else sums.sse[0, 0] / sums.count
        return np.array([score]), W
    F = engine.cv_outputs(folds, np.array([float(alpha)]), "keep")  # (1, N, 1)
    Y = np.asarray(Y, dtype=float)
    if error_rate:  # as cv_sums counts them
        per_fold_errors = np.array([float(misclassified(F[:, test], Y[test])[0]) for test in folds])
    else:
        per_fold_errors = np.array([float(((F[0, test] - Y[test]) ** 2).sum()) for test in folds])
    sizes = np.array([np.size(test) for test in folds], dtype=float)
    per_fold = per_fold_errors / sizes
    spread = per_fold.std(ddof=1) if len(folds) > 1 else 0.0
    return np.array([per_fold_errors.sum() / sizes.sum()]), W, np.array([spread])


def dask_whole_pool_cv(data, Z, zidx, kernel, folds, classes, scoring):
    """``alpha -> (scores (v,), W (M + 1, v), spread (v,))`` of the model on the whole pool of Dask rows:
    the sparse LS-SVM on the prototypes (:func:`lssvm.backends.dask.fit_sparse`, one pass; whitened by
    ``K_ZZ``, so not squaring the kernel's conditioning as the fixed-size sums' normal equations do), its
    exact hold-outs on ``folds`` with the prototypes kept (two passes: the fold models, then each fold's
    errors, :func:`_per_fold_errors`) and the spread of its fold scores, as in memory."""
    from ..backends import dask as dask_backend

    def score(alpha):
        fit = dask_backend.fit_sparse(data, kernel, None, None, None, 1e-10, classes, basis_rows=(Z, zidx))
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

    from ..backends import dask as dask_backend

    spec = dask_backend.shared(folds.spec)
    blocks = list(folds.data.blocks())
    out_blocks = outputs.to_delayed(optimize_graph=False).ravel()
    parts = [dask.delayed(_block_fold_errors, pure=True)(F, y, g, r0, spec, classes)
             for F, (_, y, g, r0) in zip(out_blocks, blocks, strict=True)]
    merged = dask_backend.run_pass("whole-pool fold errors", dask_backend.tree_reduce(parts, _merge_fold_errors))
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
