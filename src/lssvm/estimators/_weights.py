"""Row weights for the Nyström and fixed-size families: their weighted fits as
the weighted sparse model (:mod:`lssvm.solvers.weighted_rls`), so that the
one weighted engine (:class:`lssvm.cv.WeightedSparseEngine`) gives every
family's exact weighted LOO, hold-out and k-fold values.

The weighted model of every family minimises

    sum_i w_i ||y_i - f(x_i)||^2 + alpha * penalty(f)

with the family's features and penalty (the documentation's Mathematics
page, §6): Nyström, ridge on the rank-k features ``k(x, X_S) U_k L_k^(-1/2)``;
fixed size, ridge on the prototypes' kernel with the penalty ``w^T K_ZZ w``.
A method that draws points (columns, prototypes) draws them among the rows of
positive weight, and ``gamma="scale"`` is the weighted variance's, so a zero
weight is a removed row and an integer weight a repeated row for the fit.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from ..basis import nystrom_columns, prototype_pool
from ..cv import WeightedSparseEngine, resolve_folds
from ..cv.fixed_size import fixed_size_cv_curves, scdp_seed
from ..kernels import make_kernel, resolve_gamma
from ..solvers import factorize_weighted_rls
from ..solvers.fixed_size import (
    FixedSizeSystem,
    augmented_rows,
    normal_solve_error,
    solve_guarded,
    weighted_gram_sums,
)
from ..solvers.nystrom import nystrom_projection

__all__ = ["WeightedRowsInMemory", "fit_weighted_fixed_size", "fit_weighted_nystrom", "weighted_kernel"]

def weighted_kernel(est, X, weights):
    """The kernel of ``est``'s validated parameters with ``gamma="scale"`` resolved on the rows
    repeated by their weights; sets ``gamma_``."""
    gamma = resolve_gamma(est.gamma, X, weights)
    est.gamma_ = gamma
    return make_kernel(est.kernel, gamma=gamma, degree=est.degree, coef0=est.coef0, normalize=est.normalize_kernel)


def check_weighted_classes(est, weights):
    """A classifier's rows of positive weight must hold two classes (a zero weight is a removed row)."""
    if is_classifier(est) and np.unique(est._codes[weights > 0]).size < 2:
        raise ValueError(f"{type(est).__name__}: the rows of positive sample_weight hold one class only; a "
                         "classifier needs at least two classes among the rows it is fitted on")


def fit_weighted_nystrom(est, X, Y, weights):
    """Fit a Nyström estimator with row weights: the weighted sparse model on its sampled columns
    with the rank-k map as the whitening.

    Parameters
    ----------
    est : NystromLSSVR or NystromLSSVC
        Parameters validated; ``classes_`` set for a classifier.
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, v)
    weights : ndarray of shape (n,)
        Validated row weights (finite, >= 0, positive sum).

    Returns
    -------
    est

    Notes
    -----
    Columns drawn by a method ("random", "kcenter", "fvs") come from the
    rows of positive weight; indices or points given are kept.  Cost as the
    unweighted fit: O(n c d + c^3 + n c k + n k^2).  The dual coefficients
    are ``a_i = w_i (y_i - f(x_i)) / alpha``.
    """
    if est.predictor == "exact":
        raise ValueError(
            "predictor='exact' is not available with sample_weight (its dual solve on the true kernel is "
            "unweighted); use predictor='low-rank' (the default)")
    check_weighted_classes(est, weights)
    kernel = weighted_kernel(est, X, weights)
    if isinstance(est.basis, str):
        positive = np.flatnonzero(weights > 0)
        S = positive[nystrom_columns(X[positive], kernel, est.basis, est.n_basis,
                                     check_random_state(est.random_state))]
        Z = X[S]
    else:
        Z, S = est._columns(X, kernel)
    k = est._rank_for(Z.shape[0])
    C = kernel(X, Z, block_size=est.block_size)
    W = C[S] if S is not None else kernel(Z, Z)
    proj = nystrom_projection(W, k, float(est.rcond))
    fac = factorize_weighted_rls(C, W, Y, weights, rcond=float(est.rcond), whitener=proj)
    alpha = float(est.alpha)
    beta, b = fac.coef(alpha)
    a = weights[:, None] * fac.residuals(alpha) / alpha
    est._set_fitted(kernel, Z, S, fac, X, Y, k, a, b, beta, WeightedSparseEngine)
    return est


def fit_weighted_fixed_size(est, X, Y, weights, groups=None, split_labels=None):
    """Fit a fixed-size estimator with row weights: SCDP on the weighted normal equations, the size by
    weighted v-fold CV.

    Parameters
    ----------
    est : FixedSizeLSSVR or FixedSizeLSSVC
        Parameters validated; ``classes_`` set for a classifier.
    X : ndarray of shape (N, d)
    Y : ndarray of shape (N, v)
    weights : ndarray of shape (N,)
        Validated row weights.
    groups, split_labels : ndarray of shape (N,), optional
        For the size-selection folds, as the unweighted fit.

    Returns
    -------
    est

    Notes
    -----
    The prototype pool (pivoted Cholesky, k-center, random, Rényi, all) is
    drawn among the rows of positive weight and is not weighted otherwise:
    it depends on the inputs only.  SCDP's choice of prototypes is weighted:
    each step is greedy on the weighted least-squares objective, and the
    size is the weighted v-fold CV curve's (``sum w e^2 / sum w``, or the
    weighted error rate ``sum w [wrong] / sum w``, per fold; the downdate
    subtracts the fold's weighted Gram sums).
    So a zero weight is a removed row and an integer weight a repeated row.
    Cost as the unweighted fit, O(N M (d + M)) plus the SCDP runs.
    """
    check_weighted_classes(est, weights)
    est.__dict__.pop("_kept_factorization", None)  # an unweighted search's factorisation does not apply
    est._X_fit, est._Y_fit, est._engine = X, Y, None  # the engine at the support: built on first use
    kernel = weighted_kernel(est, X, weights)
    rng = check_random_state(est.random_state)
    if isinstance(est.basis, str):  # a method draws among the positive-weight rows
        positive = np.flatnonzero(weights > 0)
        Z, zidx = prototype_pool(X[positive], kernel, est.basis, est.n_basis, rng)
        zidx = None if zidx is None else positive[zidx]
    else:
        Z, zidx = prototype_pool(X, kernel, est.basis, est.n_basis, rng)
    est._check_max_size(Z.shape[0])
    seed = scdp_seed(rng)
    K = kernel(X, Z)
    K_ZZ = K[zidx] if zidx is not None else kernel(Z, Z)
    folds = None
    if est.cv is not None:
        folds = resolve_folds(est.cv, X.shape[0], y=split_labels, groups=groups, classifier=split_labels is not None)
    rows = WeightedRowsInMemory(K, K_ZZ, Y, weights, folds)
    est._fit_rows(kernel, Z, zidx, rows, seed, None)
    est._alpha_groups = est._support_groups()
    return est


class WeightedRowsInMemory:
    """The rows of a weighted fixed-size fit, in memory: the protocol of
    :class:`lssvm.cv.fixed_size.RowsInMemory` (``system``, ``n_samples``,
    ``curves``, ``solve``, ``fit_error``, ``direct_cv``) on the weighted
    sums (:func:`lssvm.solvers.weighted_rls.weighted_gram_sums`).

    ``n_samples`` is ``sum w``; the curves' fold sizes are the folds' weight
    sums, so every score is a weighted mean (``sum w e^2 / sum w``).  The
    guarded solves re-solve by QR on the rows scaled by ``sqrt(w)``.

    Parameters
    ----------
    K : ndarray of shape (N, M)
    K_ZZ : ndarray of shape (M, M)
    Y : ndarray of shape (N, v)
    weights : ndarray of shape (N,)
    folds : list of ndarray or None
        Test indices of the size-selection folds.
    """

    def __init__(self, K, K_ZZ, Y, weights, folds):
        self.K, self.K_ZZ, self.Y, self.weights, self.folds = K, K_ZZ, Y, weights, folds
        self.fold_sums = None
        if folds is not None:
            self.fold_sums = [weighted_gram_sums(K[test], Y[test], weights[test]) for test in folds]
            if any(not fs.n_samples > 0 for fs in self.fold_sums):
                raise ValueError("a size-selection fold holds only rows of weight 0, so its weighted error is "
                                 "undefined: use fewer folds (cv) or shuffled folds")

    def system(self):
        return FixedSizeSystem.from_sums(weighted_gram_sums(self.K, self.Y, self.weights), self.K_ZZ)

    @property
    def n_samples(self):
        return float(self.weights.sum())

    def curves(self, system, alphas, **kw):
        """Weighted validation curves: the MSE from the folds' weighted sums, the error rate from the rows."""
        if kw.get("stop_scoring", "mse") == "mse":
            return fixed_size_cv_curves(system, None, None, None, alphas, fold_sums=self.fold_sums, **kw)
        return fixed_size_cv_curves(system, self.K, self.Y, self.folds, alphas, weights=self.weights, **kw)

    def solve(self, system, alpha, nu, call):
        return solve_guarded(system.matrix(alpha, nu), system.rhs, self.K, self.K_ZZ, self.Y, alpha, nu, call=call,
                             weights=self.weights)

    def fit_error(self, A_sel, sel, coef):
        return normal_solve_error(A_sel, np.sqrt(self.weights)[:, None] * augmented_rows(self.K)[:, sel], coef)

    def direct_cv(self, system, alpha, nu, call, count_wrong=False):
        """Per output: the weighted SSE and weight of misclassified rows of the all-prototype model,
        one guarded solve per fold."""
        v = self.Y.shape[1]
        sse, wrong = np.zeros(v), np.zeros(v)
        for test, fs in zip(self.folds, self.fold_sums, strict=True):
            train = np.ones(self.K.shape[0], dtype=bool)
            train[test] = False
            sub = system.without(fs)
            W = solve_guarded(sub.matrix(alpha, nu), sub.rhs, self.K[train], self.K_ZZ, self.Y[train], alpha, nu,
                              call=call, weights=self.weights[train])
            pred = augmented_rows(self.K[test]) @ W
            w = self.weights[test]
            sse += w @ (self.Y[test] - pred) ** 2
            wrong += w @ ((pred > 0) != (self.Y[test] > 0))
        return sse, wrong
