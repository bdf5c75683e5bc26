"""The robust CV criterion of the robust sparse LS-SVM (Debruyne, Hubert and
Suykens 2008; LS-SVMlab's ``rcrossvalidatelssvm``): for every alpha of the
path, the robust model reweighted at that alpha (:func:`lssvm.solvers.robust_weights.robust_reweight`),
then its exact held-out residuals with those weights held fixed
(:class:`lssvm.cv.WeightedSparseEngine`: the weighted model refitted
without the held-out rows), reduced by a robust statistic of their absolute
values (median, trimmed mean or mean; :func:`lssvm.solvers.robust_weights.robust_statistic`).
Gross outliers then neither pull the fits nor dominate the score.
"""

from __future__ import annotations

import numpy as np

from .._threads import uses_threads
from ..cv import WeightedSparseEngine
from ..solvers import factorize_weighted_rls
from ..solvers.robust_weights import robust_reweight, robust_statistic, robust_weights
from .criteria import CVPath
from .sparse_cv import SparseLSSVMCV

__all__ = ["RobustSparseCV"]


class RobustSparseCV(SparseLSSVMCV):
    """Robust CV of the reweighted sparse LS-SVM over an alpha path (module notes).

    Parameters
    ----------
    X, y
        Rows in memory; one target column (regression).
    weight_function, weight_parameter, max_iter, tol
        As for :class:`lssvm.RobustLSSVR`.
    statistic : {"median", "trimmed", "mae"}, default="median"
        Robust location of the absolute held-out residuals, weighted by any
        ``sample_weight`` (the prior weights).
    trim : float in [0, 1), default=0.1
        Share of the weight trimmed from the top by "trimmed".
    sample_weight : array-like of shape (m,), optional
        Prior row weights, multiplied into the robust ones.
    **kw
        As for :class:`lssvm.selection.SparseLSSVMCV` (basis, folds, alphas, kernel, ...).

    Notes
    -----
    The returned :class:`lssvm.selection.CVPath` holds the robust statistic in
    its ``mse`` field (the score the searches minimise), so a search ranks
    by it.  Per candidate: the kernel columns and one prior-weighted
    factorisation, O(m n d + m n^2 + n^3); per alpha the reweighting steps
    (one weighted factorisation each) and one exact LOO (O(m n)) or k-fold
    pass.
    """

    def __init__(self, X, y, *, weight_function="hampel", weight_parameter=None, max_iter=50, tol=1e-4,
                 statistic="median", trim=0.1, sample_weight=None, **kw):
        if kw.get("classification"):
            raise ValueError("the robust criterion is for regression (one target column)")
        robust_statistic(np.zeros(1), None, statistic, trim)  # clear errors for a bad statistic or trim
        robust_weights(np.zeros(1), weight_function, weight_parameter)  # and for a bad weight function
        super().__init__(X, y, sample_weight=sample_weight, **kw)
        if self.source is not None:
            raise ValueError("the robust criterion needs the rows in memory; fit on a NumPy sample")
        if self.Y.shape[1] != 1:
            raise ValueError(f"the robust criterion takes one target column; got {self.Y.shape[1]}")
        self.robust = dict(function=weight_function, parameter=weight_parameter, max_iter=max_iter, tol=tol,
                           rcond=self.rcond)
        self.statistic, self.trim = statistic, trim
        self.prior = np.ones(self.X.shape[0]) if self.sample_weight is None else self.sample_weight
        self.keep_best = None

    @uses_threads
    def __call__(self, **params):
        kern = self._kernel(params)
        rows, K_mn = self._rows_and_columns(kern, params)
        K_mn = np.array(K_mn)  # the criterion's column buffer is reused by the next candidate
        K_BB = K_mn[rows]
        Z, prior, used = self.X[rows], self.prior, self.prior > 0
        first = factorize_weighted_rls(K_mn, K_BB, self.Y, prior, rcond=self.rcond, warn=False)
        scores, n_iter = np.empty(self.alphas.size), np.empty(self.alphas.size)
        for i, alpha in enumerate(self.alphas):
            fac, _, _, n_iter[i], _ = robust_reweight(K_mn, K_BB, self.Y, prior, float(alpha), fac=first,
                                                      **self.robust)
            engine = WeightedSparseEngine(fac, self.X, Z, rows, kern, self.rcond, None, self.n_jobs)
            at = np.array([alpha])
            if self.loo:
                R = engine.loo_residuals(at)[0, :, 0]
            else:
                R = self.Y[:, 0] - engine.cv_outputs(self._cv_folds, at, self.basis_in_holdout)[0, :, 0]
            scores[i] = robust_statistic(R[used], prior[used], self.statistic, self.trim)
        self.n_evaluations += 1
        return CVPath(self.alphas, scores, None, {"n_basis": rows.size, "n_iter": n_iter})
