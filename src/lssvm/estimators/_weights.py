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
The fixed-size weighted fit is in :mod:`lssvm.estimators.fixed_size`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from ..basis import nystrom_columns
from ..cv import WeightedSparseEngine
from ..kernels import make_kernel, resolve_gamma
from ..solvers import factorize_weighted_rls
from ..solvers.nystrom import nystrom_projection

__all__ = ["fit_weighted_nystrom", "weighted_kernel"]

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
