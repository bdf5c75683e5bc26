"""Generalised cross-validation and the Bayesian evidence of the sparse
LS-SVM along a path of alphas, in O(r) per alpha from the training
eigendecomposition; the noise level and posterior variance that go with
them (MacKay 1992; Van Gestel, Suykens et al. 2002).

Notation (the documentation's Mathematics page, §2): centred targets ``Yc`` (m x v), the whitened
centred kernel ``Phi = Kc W`` with ``Phi^T Phi = V Lambda V^T``, ``M = Phi
V`` (``M^T M = Lambda``), ``z = M^T Yc`` and ``r`` the rank.

**GCV.**  The hat matrix is ``H = 11^T/m + M D M^T``, ``D = (Lambda +
alpha)^-1``, so ``tr H = 1 + sum_j lambda_j / (lambda_j + alpha)``.  The
fitted centred values are ``M D z`` and, since ``M^T M = Lambda``,

    ||e||^2 = ||Yc||^2 - 2 sum_j z_j^2 / (lambda_j + alpha)
              + sum_j lambda_j z_j^2 / (lambda_j + alpha)^2,

    GCV(alpha) = (||e||^2 / m) / (1 - tr H / m)^2      (per output).

**Evidence.**  The Bayesian reading of the model: weights ``a ~ N(0, (mu
K_BB)^-1)``, noise precision ``zeta``, a flat prior on the intercept ``b``
(``alpha = mu / zeta``), i.e. a Gaussian process with the
subset-of-regressors kernel ``k_B(x)^T K_BB^-1 k_B(x') / mu`` plus noise
``1 / zeta``.  With ``C`` the m x m covariance and ``N`` an orthonormal basis
of the complement of ``1``, integrating ``b`` out gives the restricted
likelihood

    log p(y) = -1/2 [(m - 1) log 2 pi + log m + log det(N^T C N)
                     + y^T N (N^T C N)^-1 N^T y].

``N^T C N = N^T Phi Phi^T N / mu + I / zeta`` has eigenvalues ``lambda_j /
mu + 1 / zeta`` (j <= r) and ``1 / zeta`` (m - 1 - r times), because
``Phi`` has zero column sums.  Expanding the inverse on the same
eigenvectors (``U = N^T M Lambda^-1/2``, ``U^T N^T y = Lambda^-1/2 z``) the
quadratic form collapses to ``zeta S(alpha)`` with

    S(alpha) = ||Yc||^2 - sum_j z_j^2 / (lambda_j + alpha)
             = min_a ||Yc - Kc a||^2 + alpha a^T K_BB a,

the ridge objective at its minimum.  So, per output,

    log p(y) = -1/2 [(m - 1) log 2 pi + log m + sum_j log(lambda_j + alpha)
                     - r log alpha - (m - 1) log zeta + zeta S(alpha)],

and maximising over the noise precision at fixed alpha gives ``zeta =
(m - 1) / S(alpha)``: the noise level "estimated from the evidence" that
:func:`noise_precision` returns and the profile that ``scoring="evidence"``
scores.  Both criteria cost O(r) per alpha and output.
"""

from __future__ import annotations

import numpy as np

from ..solvers import check_alphas

__all__ = ["gcv_path", "log_evidence_path", "noise_precision", "ridge_objective"]


def _parts(fac, alphas, sum_squares=None):
    lam = fac.eigenvalues[:, None]  # (r, 1)
    shift = lam + alphas[None, :]  # (r, A)
    z2 = fac.z**2  # (r, v)
    if sum_squares is not None:  # given by a caller that reads them once for several paths
        return lam, shift, z2, sum_squares
    # by batches of targets where the factorisation holds the targets uncentred: no m x v temporary
    yy = fac.centred_sum_squares() if hasattr(fac, "centred_sum_squares") else (fac.y_centered**2).sum(axis=0)
    return lam, shift, z2, yy


def ridge_objective(fac, alpha, sum_squares=None):
    """``S(alpha) = ||Yc||^2 - sum_j z_j^2 / (lambda_j + alpha)``, shape (A, v); O(r v) per alpha
    (``sum_squares``: ``||Yc||^2`` (v,) where known, else O(m v) to form it)."""
    alphas, _ = check_alphas(alpha)
    _, shift, z2, yy = _parts(fac, alphas, sum_squares)
    return np.maximum(yy[None, :] - (1.0 / shift).T @ z2, 0.0)


def gcv_path(fac, alpha, sum_squares=None):
    """Generalised cross-validation score for every alpha (module docstring).

    Parameters
    ----------
    fac : SparseRLSFactorization
    alpha : float or array-like of shape (A,)
    sum_squares : ndarray of shape (v,), optional
        The centred targets' sums of squares ``||Yc||^2`` where the caller
        holds them (else formed here, O(m v)).

    Returns
    -------
    ndarray of shape (A, v)
    """
    alphas, _ = check_alphas(alpha)
    lam, shift, z2, yy = _parts(fac, alphas, sum_squares)
    m = fac.n_samples
    sse = yy[None, :] - 2.0 * (1.0 / shift).T @ z2 + (lam / shift**2).T @ z2
    sse = np.maximum(sse, 0.0)
    tr = 1.0 + (lam / shift).sum(axis=0)  # (A,)
    return (sse / m) / ((1.0 - tr / m) ** 2)[:, None]


def noise_precision(fac, alpha):
    """The evidence's noise precision at ``alpha``, ``zeta = (m - 1) / S(alpha)``, shape (A, v)."""
    with np.errstate(over="ignore"):  # S = 0 (a constant output): zeta = inf, an error bar of 0
        return (fac.n_samples - 1.0) / np.maximum(ridge_objective(fac, alpha), np.finfo(float).tiny)


def log_evidence_path(fac, alpha, zeta=None, sum_squares=None):
    """Log marginal likelihood (intercept integrated out) for every alpha.

    Parameters
    ----------
    fac : SparseRLSFactorization
    alpha : float or array-like of shape (A,)
    zeta : float or ndarray broadcastable to (A, v), optional
        Noise precision; default the maximiser :func:`noise_precision`
        (the profile likelihood).
    sum_squares : ndarray of shape (v,), optional
        As for :func:`gcv_path`.

    Returns
    -------
    ndarray of shape (A, v)
    """
    alphas, _ = check_alphas(alpha)
    if sum_squares is None:  # read once for S below
        sum_squares = _parts(fac, alphas)[3]
    lam, shift, z2, _ = _parts(fac, alphas, sum_squares)
    m, r = fac.n_samples, lam.shape[0]
    S = ridge_objective(fac, alphas, sum_squares)
    if zeta is None:  # the maximiser (m - 1) / S in logs: finite where S = 0 (a constant output), not inf * 0 = NaN
        S_floor = np.maximum(S, np.finfo(float).tiny)
        log_zeta, zeta_S = np.log(m - 1.0) - np.log(S_floor), (m - 1.0) * (S / S_floor)
    else:
        zeta = np.broadcast_to(np.asarray(zeta, float), S.shape)
        log_zeta, zeta_S = np.log(zeta), zeta * S
    logdet = np.log(shift).sum(axis=0) - r * np.log(alphas)  # (A,)
    return -0.5 * ((m - 1) * np.log(2 * np.pi) + np.log(m) + logdet[:, None] - (m - 1) * log_zeta + zeta_S)
