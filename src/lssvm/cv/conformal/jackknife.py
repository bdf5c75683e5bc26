"""Leave-one-out models evaluated at new points: the jackknife and jackknife+
intervals of the sparse LS-SVM, from its training factorisation.

Notation as in :mod:`lssvm.cv.holdout` and the documentation's Mathematics page, §2-3: augmented rows
``z_i = [Kc_i, 1]`` (centred kernel row, intercept), ``P = sum_i z_i z_i^T +
alpha blockdiag(K_BB, 0)`` with ``P^-1 = blockdiag(Q D Q^T, 1/m)``, ``D =
(Lambda + alpha)^-1``, ``c = sum_i y_i z_i`` and ``theta = P^-1 c`` the
full model: ``f(x) = z_x^T theta = y_mean + m_x^T D z`` with ``m_x = (k_x -
mu)^T Q`` the new point's row in the eigenbasis.

**Leave-one-out model at a new point.**  Dropping row i changes ``P`` by
``-z_i z_i^T`` and ``c`` by ``-y_i z_i``.  Sherman-Morrison gives

    theta_{-i} = theta - P^-1 z_i (y_i - z_i^T theta) / (1 - h_ii),
    h_ii = z_i^T P^-1 z_i = 1/m + m_i^T D m_i,

so with ``R_i = e_i / (1 - h_ii)`` the exact LOO residual,

    f_{-i}(x) = f(x) - u_i(x) R_i,   u_i(x) = z_x^T P^-1 z_i = 1/m + m_x^T D m_i.

The basis (and the centring ``mu``, absorbed by the unpenalised intercept)
stays fixed, as in :meth:`lssvm.solvers.SparseRLSFactorization.loo_residuals`.
Cost: O(n^2) per new point for ``m_x`` (one triangular solve and one
product with V), then O(m r) per point and output for all m LOO values;
nothing is refitted.
"""

from __future__ import annotations

import numpy as np

from ...solvers.sparse_rls import whiten_rows

__all__ = ["eigen_rows", "loo_values"]


def eigen_rows(fac, K_x):
    """New points' centred kernel rows in the eigenbasis, ``(k_x - mu) W V``.

    Parameters
    ----------
    fac : PathSolution
    K_x : ndarray of shape (t, n)
        ``k(x, Z)`` for the new points.

    Returns
    -------
    ndarray of shape (t, r); O(t n^2).
    """
    return whiten_rows(np.asarray(K_x, dtype=float) - fac.kernel_mean, fac.whitener, fac.method) @ fac.V


def loo_values(fac, Mx, alpha, R):
    """The m leave-one-out models at new points, ``f_{-i}(x) = f(x) - u_i(x) R_i``.

    Parameters
    ----------
    fac : SparseRLSFactorization
    Mx : ndarray of shape (t, r)
        New points in the eigenbasis (:func:`eigen_rows`).
    alpha : float
    R : ndarray of shape (m, v)
        Exact LOO residuals at ``alpha``.

    Returns
    -------
    full : ndarray of shape (t, v)
        The full model ``f(x)``.
    values : ndarray of shape (t, m, v)
        ``f_{-i}(x)``.  O(t m r + t m v).
    """
    d = 1.0 / (fac.eigenvalues + float(alpha))
    full = fac.y_mean + Mx @ (d[:, None] * fac.z)
    U = (Mx * d) @ fac.M.T + 1.0 / fac.n_samples  # (t, m)
    return full, full[:, None, :] - U[:, :, None] * R[None, :, :]
