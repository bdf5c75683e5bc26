"""The fixed-size model on its whole prototype pool: the last size of SCDP's curve, scored
directly where SCDP's runs stop before it (:class:`lssvm.FixedSizeLSSVR`)."""

from __future__ import annotations

import numpy as np

__all__ = ["WHOLE_POOL_RCOND", "dask_whole_pool_cv", "whole_pool_fold_scores", "whole_pool_outputs"]


def whole_pool_outputs(est, rows, system, mean, std, name, whole_pool_cv=None):
    """The outputs whose model on the whole pool beats every size SCDP reached.

    SCDP's curve ends before the whole pool when its runs stop (rule (38)) or when the next
    coordinates are numerically dependent on the chosen ones (small alpha, wide kernel: the normal
    equations square the kernel's conditioning).  The whole pool is the curve's last size; it is
    scored by one direct (guarded, QR when ill-conditioned) solve per fold, and chosen where its
    CV score is lower than the best SCDP size's by more than ``size_rule`` standard deviations:
    the size rule on the complete curve.  On friedman1 (m = 2,000, alpha 1e-6) SCDP stopped at 107
    of 449 coefficients with CV MSE 2.77; the whole pool scored 1.32.  Rows in memory and one
    output: the fold scores by the sparse family's exact hold-out formulas and the coefficients
    from the same factorisation (``whole_pool_cv``, :func:`whole_pool_fold_scores`: the sparse
    model on the prototypes, equal to the direct solves to 1e-7 and ten times cheaper than their
    QR; a search's refit passes the factorisation it scored).

    Returns
    -------
    None, or (chosen, W, scores): a bool per output, the whole pool's coefficients (D, v) and
    its CV scores (v,).
    """
    alpha, nu = float(est.alpha), float(est.nu)
    error_rate = est._scoring == "error_rate"
    W = None
    if whole_pool_cv is not None:
        scores, W = whole_pool_cv(alpha)
        scores = np.atleast_1d(scores)
    else:
        sse, wrong = rows.direct_cv(system, alpha, nu, f"{name} whole-pool CV", count_wrong=error_rate)
        scores = (wrong if error_rate else sse) / rows.n_samples
    best = np.argmin(mean, axis=1)
    v = mean.shape[0]
    margin = mean[np.arange(v), best] - est.size_rule * std[np.arange(v), best]
    chosen = scores < margin
    if not chosen.any():
        return None
    if W is None:
        W = rows.solve(system, alpha, nu, call=f"{name} on the whole pool")
    return chosen, W, scores


#: Cut-off of the whole-pool sparse factorisation (:func:`lssvm.solvers.factorize_sparse_rls`'s
#: default, the one the sparse criterion of the search factorises with).
WHOLE_POOL_RCOND = 1e-10


def whole_pool_fold_scores(X, Y, K, zidx, folds, kernel, alpha, scoring, fac=None, n_jobs=None):
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

    Returns
    -------
    scores : ndarray of shape (1,)
    W : ndarray of shape (M + 1, 1)
        Weights on the prototypes, then the intercept.

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
    sums = engine.cv_sums(list(folds), np.array([float(alpha)]), "keep")
    score = sums.wrong[0] / sums.count if error_rate else sums.sse[0, 0] / sums.count
    a, b = fac.coef(float(alpha))
    return np.array([score]), np.vstack([a, np.reshape(b, (1, -1))])


def dask_whole_pool_cv(data, Z, zidx, kernel, folds, classes, scoring):
    """``alpha -> (scores (v,), W (M + 1, v))`` of the model on the whole pool of Dask rows: the sparse
    LS-SVM on the prototypes (:func:`lssvm.backends.dask.fit_sparse`, one pass; whitened by ``K_ZZ``, so
    not squaring the kernel's conditioning as the fixed-size sums' normal equations do) and its exact
    hold-outs on ``folds`` with the prototypes kept (two passes)."""
    from ..backends import dask as dask_backend

    def score(alpha):
        fit = dask_backend.fit_sparse(data, kernel, None, None, None, 1e-10, classes, basis_rows=(Z, zidx))
        if fit.ctx.basis.shape[0] != Z.shape[0]:
            return np.full(1, np.inf), None
        sums = fit.cv_sums(folds, [alpha], "keep")
        a, b = fit.solution.coef(float(alpha))
        m = data.n_samples
        scores = np.full(a.shape[1], sums.wrong[0] / m) if scoring == "error_rate" else sums.sse[0] / m
        return scores, np.vstack([a, np.reshape(b, (1, -1))])

    return score
