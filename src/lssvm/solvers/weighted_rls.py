"""Weighted sparse regularised least squares with an unpenalised intercept,
factorised once for a whole path of regularisation values.

The model is

    minimise over a (n), b (v):  sum_i w_i ||y_i - k_i^T a - b||^2 + alpha * tr(a^T K_BB a)

with ``k_i = k(Z, x_i)`` and row weights ``w_i >= 0``.  Centring the kernel
rows and the targets at their *weighted* means ``mu_w = sum_i w_i k_i / sum w``
separates the intercept exactly, since ``sum_i w_i (k_i - mu_w) = 0``; the
centred problem is ridge regression on the rows ``sqrt(w_i) (k_i - mu_w) W``
(``W`` a whitening of ``K_BB``), diagonalised once by one eigendecomposition,
after which every alpha costs O(m n) as in the unweighted case
(:mod:`lssvm.solvers.sparse_rls`; the documentation's Mathematics page, §2).

Leave-one-out.  With ``D = (Lambda + alpha)^-1`` and ``M = (K - mu_w) W V``
(the *unscaled* rows in the eigenbasis), the hat matrix of the scaled
problem has diagonal ``w_i h_i`` with ``h_i = 1 / sum w + sum_j M_ij^2 D_j``,
and its residuals are ``sqrt(w_i) e_i``; the LOO residual of the scaled
problem is ``sqrt(w_i) e_i / (1 - w_i h_i)``, so

    y_i - f_{-i}(x_i) = e_i / (1 - w_i h_i),      e = y - f.

A row of weight 0 has LOO residual ``e_i``: the model does not depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .._threads import eigh_threads
from .sparse_rls import (
    LEVERAGE_TOL,
    PathSolution,
    _all_finite,
    basis_whitener,
    check_alphas,
    warn_tiny_leverage,
)
from .whitening import whiten_rows

__all__ = ["WeightedRLSFactorization", "factorize_weighted_rls", "check_row_weights"]


def check_row_weights(weights, n_samples):
    """Validate row weights: 1-D, length ``n_samples``, finite, >= 0, positive sum.

    Returns
    -------
    ndarray of shape (m,), float64

    Raises
    ------
    ValueError
        Saying what is wrong.
    """
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},), one weight per row; got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity; weights must be finite numbers >= 0")
    if np.any(w < 0):
        raise ValueError("sample_weight contains negative weights; weights must be >= 0")
    if not w.sum() > 0:
        raise ValueError("sample_weight sums to zero: at least one row needs a positive weight")
    return w


@dataclass(frozen=True)
class WeightedRLSFactorization(PathSolution):
    """The weighted problem's factorisation: solves, predicts on the training
    set and gives exact weighted LOO residuals for any alpha in O(m r).

    ``y_mean`` and ``kernel_mean`` are the *weighted* means, so the inherited
    :meth:`coef` gives the weighted model; ``n_samples`` is the number of
    rows m (zero-weight rows included).

    Attributes
    ----------
    M : ndarray of shape (m, r)
        ``(K - mu_w) W V``: the unscaled centred kernel rows in the eigenbasis.
    y_centered : ndarray of shape (m, v)
        ``Y - y_mean``.
    weights : ndarray of shape (m,)
    weight_sum : float
    """

    M: np.ndarray = None
    y_centered: np.ndarray = None
    weights: np.ndarray = None
    weight_sum: float = 1.0

    def residuals(self, alpha):
        """Training residuals ``y - f(x)``, shape (m, v) or (A, m, v); O(m r v) per alpha."""
        alphas, scalar = check_alphas(alpha)
        C = self._eigen_coef(alphas)
        r, A, v = C.shape
        F = (self.M @ C.reshape(r, A * v)).reshape(self.n_samples, A, v).transpose(1, 0, 2)
        E = self.y_centered[None] - F
        return E[0] if scalar else E

    def hat_diag(self, alpha):
        """Weighted leverages ``w_i h_i`` (the hat diagonal of the scaled problem), (m,) or (A, m)."""
        alphas, scalar = check_alphas(alpha)
        H = self.weights[None, :] * self._h(self.M, alphas).T
        return H[0] if scalar else H

    def _h(self, M, alphas):
        """``h_i = 1/sum w + sum_j M_ij^2 D_j`` for rows ``M`` (b, r): (b, A)."""
        return 1.0 / self.weight_sum + (M * M) @ self._inv_shift(alphas)

    def loo_rows(self, rows, alphas, one_unit=False):
        """Weighted leave-one-out residuals of training ``rows``.

        With ``one_unit``, each row loses ``min(w_i, 1)`` of its weight instead of all of it:
        ``e_i / (1 - min(w_i, 1) h_i)`` (a rank-one downdate of the weighted normal matrix), which
        for an integer weight is leaving out one copy of a row repeated ``w_i`` times, and for a
        zero weight the training residual.

        Returns
        -------
        R : ndarray of shape (A, b, v)
        tiny_rows : ndarray of int
            Positions (into ``rows``) whose ``1 - w_i h_i`` is at most
            ``LEVERAGE_TOL`` for some alpha: their residuals are unreliable.
        """
        M = self.M[rows]
        C = self._eigen_coef(alphas)
        r, A, v = C.shape
        E = self.y_centered[rows][:, None, :] - (M @ C.reshape(r, A * v)).reshape(-1, A, v)
        removed = np.minimum(self.weights[rows], 1.0) if one_unit else self.weights[rows]
        denom = 1.0 - removed[:, None] * self._h(M, alphas)  # (b, A)
        with np.errstate(divide="ignore", invalid="ignore"):
            R = E / denom[:, :, None]
        tiny = np.flatnonzero((denom <= LEVERAGE_TOL).any(axis=1))
        return R.transpose(1, 0, 2), tiny

    def loo_residuals(self, alpha):
        """Exact weighted leave-one-out residuals ``y_i - f_{-i}(x_i)``,
        ``e_i / (1 - w_i h_i)`` (module notes); (m, v) or (A, m, v), O(m r v) per alpha."""
        alphas, scalar = check_alphas(alpha)
        R, tiny = self.loo_rows(np.arange(self.n_samples), alphas)
        warn_tiny_leverage(tiny)
        return R[0] if scalar else R

    def loo_residuals_one_unit(self, alpha):
        """Residuals ``y_i - f(x_i)`` of the model that lost one unit of row i's weight,
        ``e_i / (1 - min(w_i, 1) h_i)`` (:meth:`loo_rows` with ``one_unit``): integer weights give the
        leave-one-out residuals of the rows repeated, zero weights the training residuals.
        (m, v) or (A, m, v), O(m r v) per alpha."""
        alphas, scalar = check_alphas(alpha)
        R, tiny = self.loo_rows(np.arange(self.n_samples), alphas, one_unit=True)
        warn_tiny_leverage(tiny)
        return R[0] if scalar else R


def factorize_weighted_rls(K_mn, K_BB, Y, weights, *, rcond: float = 1e-10, warn: bool = True, whitener=None,
                           whitened=None):
    """Factorise the weighted sparse RLS problem once for all alphas.

    Parameters
    ----------
    K_mn : ndarray of shape (m, n)
    K_BB : ndarray of shape (n, n)
    Y : ndarray of shape (m, v)
    weights : ndarray of shape (m,)
        Row weights, finite and >= 0 with a positive sum (:func:`check_row_weights`).
    rcond : float, default=1e-10
        As for :func:`lssvm.solvers.factorize_sparse_rls`.
    warn : bool, default=True
    whitener : ndarray of shape (n, k), optional
        A given feature map in place of the whitening of ``K_BB``, as for
        :func:`lssvm.solvers.factorize_sparse_rls`: with the rank-k Nyström
        map (:func:`lssvm.solvers.nystrom.nystrom_projection`) the weighted
        model is the weighted rank-k Nyström model.
    whitened : tuple (Psi, W, method), optional
        ``K_mn W`` (uncentred, m x r) with its whitener and method, from an
        earlier factorisation of the same ``K_mn`` and ``K_BB`` (a reweighting
        loop): the weighted centring is then the rank-one correction
        ``Psi - 1 (w^T Psi / sum w)``, sparing the O(m n^2) whitening.

    Returns
    -------
    WeightedRLSFactorization

    Notes
    -----
    Weighted centring O(m n); whitening m n^2; the Gram matrix of the scaled
    rows m n^2; eigh about 4 n^3; ``M`` 2 m n^2.  Peak memory three m x n arrays.
    """
    K_mn = np.asarray(K_mn, dtype=float)
    K_BB = np.asarray(K_BB, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if K_mn.ndim != 2 or Y.ndim != 2 or Y.shape[0] != K_mn.shape[0] or K_BB.shape != (K_mn.shape[1],) * 2:
        raise ValueError(
            "expected K_mn (m, n), K_BB (n, n) and 2-D Y (m, v); got shapes "
            f"{K_mn.shape}, {K_BB.shape} and {Y.shape}"
        )
    w = check_row_weights(weights, K_mn.shape[0])
    for name, A in (("K_mn", K_mn), ("K_BB", K_BB), ("Y", Y)):
        if not _all_finite(A):
            raise ValueError(f"{name} contains NaN or infinity")
    total = float(w.sum())
    mu = w @ K_mn / total
    y_mean = w @ Y / total
    Yc = Y - y_mean
    if whitened is not None:
        Psi_raw, W, method = whitened
        Psi = Psi_raw - (w @ Psi_raw) / total  # (K - 1 mu) W = K W - 1 (mu W)
    elif whitener is None:
        W, method = basis_whitener(K_BB, rcond, warn, stacklevel=3)
    else:
        W, method = np.asarray(whitener, dtype=float), "eigh"
        if W.ndim != 2 or W.shape[0] != K_BB.shape[0] or W.shape[1] < 1:
            raise ValueError(f"expected a whitener of shape (n, k) with n = {K_BB.shape[0]}, k >= 1; got {W.shape}")
    if whitened is None:
        Psi = whiten_rows(K_mn - mu, W, method, overwrite=True)  # unscaled whitened rows (m, r)
    s = np.sqrt(w)
    Phi = Psi * s[:, None]
    G = Phi.T @ Phi
    with eigh_threads(G.shape[0]):
        lam, V = linalg.eigh(G, driver="evd", check_finite=False)
    M = Psi @ V
    z = M.T @ (w[:, None] * Yc)
    return WeightedRLSFactorization(
        V=V, whitener=W, eigenvalues=np.maximum(lam, 0.0), z=z, y_mean=y_mean, kernel_mean=mu, method=method,
        n_samples=K_mn.shape[0], M=M, y_centered=Yc, weights=w, weight_sum=total,
    )

