"""Sparse regularised least squares with an unpenalised intercept, factorised
once for a whole path of regularisation values (math.md §2).

The model is

    minimise over a (n), b (v):  ||Y - K_mn a - 1 b^T||^2 + alpha * tr(a^T K_BB a)

with ``K_mn = k(X, Z)`` (m x n) and ``K_BB = k(Z, Z)``.  Centring the kernel
columns separates the intercept exactly; the centred problem is diagonalised
by the generalised eigenproblem ``Kc^T Kc Q = K_BB Q Lambda`` with
``Q^T K_BB Q = I``, after which every alpha costs O(m n).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..exceptions import NumericalWarning

__all__ = ["SparseRLSFactorization", "factorize_sparse_rls", "check_alphas"]


def check_alphas(alpha):
    """Validate regularisation values.

    Parameters
    ----------
    alpha : float or array-like of shape (A,)

    Returns
    -------
    alphas : ndarray of shape (A,)
    scalar : bool
        Whether ``alpha`` was a scalar (callers squeeze the alpha axis).

    Raises
    ------
    ValueError
        If any value is not a finite number > 0, or the array is empty or
        not 1-D.
    """
    scalar = np.ndim(alpha) == 0
    try:
        alphas = np.atleast_1d(np.asarray(alpha, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number > 0 or a 1-D array of them; got {alpha!r}") from None
    if alphas.ndim != 1 or alphas.size == 0:
        raise ValueError(f"alpha must be a number or a non-empty 1-D array; got shape {alphas.shape}")
    if not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError(
            f"alpha must be finite and > 0 (it is the ridge penalty; use a small value "
            f"such as 1e-8 for almost no regularisation); got {alpha!r}"
        )
    return alphas, scalar


@dataclass(frozen=True)
class SparseRLSFactorization:
    """Everything needed to solve, predict on the training set and
    cross-validate for any alpha in O(m r) per alpha.

    Attributes
    ----------
    Q : ndarray of shape (n, r)
        Generalised eigenvectors, ``Q^T K_BB Q = I`` (r = numerical rank).
    eigenvalues : ndarray of shape (r,)
        ``Lambda``, non-negative.
    M : ndarray of shape (m, r)
        ``Kc Q``: the training kernel rows in the eigenbasis.
    z : ndarray of shape (r, v)
        ``M^T Yc``.
    y_mean : ndarray of shape (v,)
    y_centered : ndarray of shape (m, v)
    kernel_mean : ndarray of shape (n,)
        Column means ``mu`` of ``K_mn``.
    method : str
        ``"cholesky"`` or ``"eigh"`` (range of K_BB, used when K_BB is
        numerically singular).
    """

    Q: np.ndarray
    eigenvalues: np.ndarray
    M: np.ndarray
    z: np.ndarray
    y_mean: np.ndarray
    y_centered: np.ndarray
    kernel_mean: np.ndarray
    method: str

    @property
    def n_samples(self) -> int:
        return self.M.shape[0]

    @property
    def rank(self) -> int:
        return self.Q.shape[1]

    def _inv_shift(self, alphas):
        return 1.0 / (self.eigenvalues[:, None] + alphas[None, :])  # (r, A)

    def coef(self, alpha):
        """Dual coefficients and intercept.

        Parameters
        ----------
        alpha : float or array-like of shape (A,)

        Returns
        -------
        a : ndarray of shape (n, v) or (A, n, v)
        b : ndarray of shape (v,) or (A, v)

        Notes
        -----
        ``a = Q (Lambda + alpha)^-1 z``, ``b = mean(y) - mu^T a``; O(n r v)
        per alpha.
        """
        alphas, scalar = check_alphas(alpha)
        D = self._inv_shift(alphas)  # (r, A)
        a = np.einsum("nr,ra,rv->anv", self.Q, D, self.z, optimize=True)
        b = self.y_mean[None, :] - np.einsum("n,anv->av", self.kernel_mean, a)
        return (a[0], b[0]) if scalar else (a, b)

    def residuals(self, alpha):
        """Training residuals ``y - f(x)``, shape (m, v) or (A, m, v); O(m r v) per alpha."""
        alphas, scalar = check_alphas(alpha)
        E = self._residuals(alphas)
        return E[0] if scalar else E

    def _residuals(self, alphas):
        D = self._inv_shift(alphas)
        r, v = self.z.shape
        W = (D[:, :, None] * self.z[:, None, :]).reshape(r, -1)  # (r, A*v)
        F = (self.M @ W).reshape(self.n_samples, alphas.size, v)
        return self.y_centered[None, :, :] - F.transpose(1, 0, 2)

    def hat_diag(self, alpha):
        """Diagonal of the hat matrix, shape (m,) or (A, m).

        Notes
        -----
        ``h_ii = 1/m + sum_j M_ij^2 / (lambda_j + alpha)`` (the 1/m is the
        intercept); O(m r) per alpha, the m x m hat matrix is never formed.
        """
        alphas, scalar = check_alphas(alpha)
        H = self._hat_diag(alphas)
        return H[0] if scalar else H

    def _hat_diag(self, alphas):
        return (1.0 / self.n_samples + (self.M * self.M) @ self._inv_shift(alphas)).T

    def loo_residuals(self, alpha):
        """Exact leave-one-out residuals ``y_i - f_{-i}(x_i)``.

        Parameters
        ----------
        alpha : float or array-like of shape (A,)

        Returns
        -------
        ndarray of shape (m, v) or (A, m, v)

        Notes
        -----
        ``e_i / (1 - h_ii)`` (paper 000 §2.6 and App. A.4, paper 001 §4):
        O(m r v) per alpha after the factorisation.  The basis stays fixed:
        a left-out point that is a basis point remains a basis function.
        """
        alphas, scalar = check_alphas(alpha)
        E = self._residuals(alphas)
        denom = 1.0 - self._hat_diag(alphas)
        tiny = denom <= 1e-12
        if np.any(tiny):
            warnings.warn(
                f"{int(tiny.sum())} hat-matrix diagonal value(s) are within 1e-12 of 1: "
                "the corresponding leave-one-out residuals are unreliable (the point "
                "is fitted almost exactly); increase alpha",
                NumericalWarning,
                stacklevel=2,
            )
        R = E / denom[:, :, None]
        return R[0] if scalar else R


def factorize_sparse_rls(K_mn, K_BB, Y, *, rcond: float = 1e-10, overwrite_k: bool = False):
    """Factorise the sparse RLS problem once for all alphas.

    Parameters
    ----------
    K_mn : ndarray of shape (m, n)
        Kernel between the training points and the basis.
    K_BB : ndarray of shape (n, n)
        Kernel between basis points.
    Y : ndarray of shape (m, v)
        Targets (2-D).
    rcond : float, default=1e-10
        If the reciprocal condition number of ``K_BB`` (LAPACK estimate) is
        below ``rcond``, the problem is solved on the range of ``K_BB``:
        eigen-directions with eigenvalue <= rcond * max are dropped and a
        :class:`~lssvm.exceptions.NumericalWarning` says how many.
    overwrite_k : bool, default=False
        Centre ``K_mn`` in place (saves one m x n copy).

    Returns
    -------
    SparseRLSFactorization

    Notes
    -----
    Flops (float64, v outputs): centring O(m n); ``Kc^T Kc`` m n^2;
    Cholesky n^3/3, reduction to standard form (``dsygst``) n^3,
    divide-and-conquer eigensolver with eigenvectors about 4 n^3 (half of it
    memory-bound tridiagonalisation), back-substitution n^3; ``M = Kc Q``
    2 m n^2.  Memory: two m x n
    arrays (``Kc`` and ``M``) at the peak, ``M`` afterwards.
    """
    K_mn = np.asarray(K_mn, dtype=float)
    Y = np.asarray(Y, dtype=float)
    m, n = K_mn.shape
    mu = K_mn.mean(axis=0)
    Kc = K_mn if overwrite_k else K_mn.copy()
    Kc -= mu
    y_mean = Y.mean(axis=0)
    Yc = Y - y_mean
    G = Kc.T @ Kc  # n x n Gram matrix of centred kernel columns
    Q, lam, method = _generalized_eigh(G, np.asarray(K_BB, dtype=float), rcond)
    M = Kc @ Q
    del Kc
    z = M.T @ Yc
    return SparseRLSFactorization(
        Q=Q,
        eigenvalues=lam,
        M=M,
        z=z,
        y_mean=y_mean,
        y_centered=Yc,
        kernel_mean=mu,
        method=method,
    )


def _generalized_eigh(G, K_BB, rcond):
    """Solve ``G Q = K_BB Q diag(lam)``, ``Q^T K_BB Q = I`` robustly.

    Cholesky reduction when K_BB is well conditioned; otherwise the range of
    K_BB from its eigendecomposition (the Nystrom pseudo-inverse of paper 003).
    """
    n = K_BB.shape[0]
    try:
        L = linalg.cholesky(K_BB, lower=True, check_finite=False)
        anorm = np.abs(K_BB).sum(axis=0).max()
        est, info = lapack.dpocon(L, anorm, uplo="L")
        ok = info == 0 and est > rcond
    except linalg.LinAlgError:
        ok = False
    if ok:
        # C = L^-1 G L^-T by LAPACK's symmetric reduction (n^3 flops, half of
        # two triangular solves), then divide-and-conquer eigh
        C, info = lapack.dsygst(G, L, itype=1, lower=1)
        if info != 0:  # pragma: no cover - dsygst only fails on bad arguments
            raise linalg.LinAlgError(f"dsygst failed with info={info}")
        lam, V = linalg.eigh(C, lower=True, driver="evd", check_finite=False)
        Q = linalg.solve_triangular(L, V, lower=True, trans="T", check_finite=False)
        return np.ascontiguousarray(Q), np.maximum(lam, 0.0), "cholesky"
    s, U = linalg.eigh(K_BB, check_finite=False)
    keep = s > rcond * s.max()
    if keep.sum() < n:
        warnings.warn(
            f"the basis kernel matrix K_BB is numerically singular (rank {int(keep.sum())} "
            f"of {n} at rcond={rcond:g}); the model is fitted on its range, which drops "
            f"{n - int(keep.sum())} redundant direction(s). Fewer or more distinct basis "
            "points, or a narrower kernel, avoid this.",
            NumericalWarning,
            stacklevel=3,
        )
    R = U[:, keep] / np.sqrt(s[keep])
    C = R.T @ G @ R
    C = (C + C.T) * 0.5
    lam, V = linalg.eigh(C, driver="evd", check_finite=False)
    return np.ascontiguousarray(R @ V), np.maximum(lam, 0.0), "eigh"
