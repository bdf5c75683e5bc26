"""Brute-force references: dense direct solves of the sparse LS-SVM objective.

    minimise ||Y - K_mn a - 1 b^T||^2 + alpha a^T K_BB a

Its normal equations, with the intercept as an extra unknown, are

    [K_mn^T K_mn + alpha K_BB   K_mn^T 1] [a]   [K_mn^T Y]
    [1^T K_mn                   m       ] [b] = [1^T Y   ]
"""

import numpy as np


def dense_solve(K_mn, K_BB, Y, alpha):
    """(a, b) from the normal equations by a dense LU solve, (n, v) and (v,)."""
    m, n = K_mn.shape
    Y = Y.reshape(m, -1)
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = K_mn.T @ K_mn + alpha * K_BB
    A[:n, n] = A[n, :n] = K_mn.sum(axis=0)
    A[n, n] = m
    rhs = np.vstack([K_mn.T @ Y, Y.sum(axis=0, keepdims=True)])
    sol = np.linalg.solve(A, rhs)
    return sol[:n], sol[n]


def dense_hat_matrix(K_mn, K_BB, alpha):
    """Hat matrix H (m x m) with Yhat = H Y, formed explicitly."""
    m, n = K_mn.shape
    Phi = np.hstack([K_mn, np.ones((m, 1))])
    P = np.zeros((n + 1, n + 1))
    P[:n, :n] = alpha * K_BB
    return Phi @ np.linalg.solve(Phi.T @ Phi + P, Phi.T)


def retrain_loo(K_mn, K_BB, Y, alpha):
    """LOO residuals by m dense re-solves, shape (m, v)."""
    m = K_mn.shape[0]
    Y = Y.reshape(m, -1)
    out = np.empty_like(Y, dtype=float)
    keep = np.ones(m, dtype=bool)
    for i in range(m):
        keep[i] = False
        a, b = dense_solve(K_mn[keep], K_BB, Y[keep], alpha)
        keep[i] = True
        out[i] = Y[i] - (K_mn[i] @ a + b)
    return out


def lstsq_solve(K_mn, K_BB, Y, alpha, nu=0.0):
    """(a, b) by a Householder QR solve of the augmented system, columns
    scaled to unit norm first,

        [K_mn        1] [a]   [Y]
        [sqrt(alpha) R^T 0] [b] = [0],   K_BB = R R^T,

    which never forms the normal equations (so it does not square their
    conditioning) nor truncates small singular values (as ``lstsq`` does):
    the stable float64 reference of the conditioning guards.  ``R`` is the
    Cholesky factor of K_BB, or ``U sqrt(max(s, 0))`` from its
    eigendecomposition when K_BB is not numerically positive definite.
    """
    from scipy import linalg

    m, n = K_mn.shape
    Y = Y.reshape(m, -1)
    try:
        R = linalg.cholesky(K_BB, lower=True)
    except linalg.LinAlgError:
        s, U = linalg.eigh(K_BB)
        R = U * np.sqrt(np.maximum(s, 0.0))
    A = np.block([[K_mn, np.ones((m, 1))], [np.sqrt(alpha) * R.T, np.zeros((n, 1))]])
    if nu:  # the fixed-size LS-SVM's penalty nu b^2 on the intercept
        A = np.vstack([A, np.r_[np.zeros(n), np.sqrt(nu)]])
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0
    Qf, Rf = linalg.qr(A / scale, mode="economic")
    rhs = np.vstack([Y, np.zeros((A.shape[0] - m, Y.shape[1]))])
    sol = linalg.solve_triangular(Rf, Qf.T @ rhs) / scale[:, None]
    return sol[:n], sol[n]
