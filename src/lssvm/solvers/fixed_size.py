"""The fixed-size LS-SVM linear system (Karsmakers et al. 2011, eqs. 29 and 34).

With prototypes Z (M points), ``K = k(X, Z)`` (N x M), ``K_ZZ = k(Z, Z)`` and
the augmented rows ``[K, 1]``, the system is

    A = [K 1]^T [K 1] + blockdiag(alpha K_ZZ, nu),     b = [K 1]^T y,

the normal equations of ``min ||y - K w - b0||^2 + alpha w^T K_ZZ w + nu b0^2``
(alpha = 1/gamma of the paper; nu = 1e-8 makes A positive definite,
Theorem 2).  Only the Gram part depends on the rows, so a fold's training
system is the full one minus the fold's own Gram terms (eqs. 36-37).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh

from ..exceptions import NumericalWarning

__all__ = ["FixedSizeSystem", "augmented_rows", "solve_spd"]


def augmented_rows(K):
    """``[K, 1]``: kernel rows with the intercept column, shape (n, M + 1)."""
    return np.hstack([K, np.ones((K.shape[0], 1))])


@dataclass(frozen=True)
class FixedSizeSystem:
    """Row-dependent parts of the fixed-size LS-SVM normal equations.

    Attributes
    ----------
    gram : ndarray of shape (M + 1, M + 1)
        ``[K 1]^T [K 1]``.
    rhs : ndarray of shape (M + 1, v)
        ``[K 1]^T Y``.
    prototype_kernel : ndarray of shape (M, M)
        ``K_ZZ``.
    n_samples : int
        Rows summed into ``gram``.
    """

    gram: np.ndarray
    rhs: np.ndarray
    prototype_kernel: np.ndarray
    n_samples: int

    @classmethod
    def from_kernel(cls, K, K_ZZ, Y):
        """Assemble from ``K`` (N, M), ``K_ZZ`` (M, M), ``Y`` (N, v).

        Cost: one SYRK-sized product, O(N M^2) flops, (M + 1)^2 memory.
        """
        Ka = augmented_rows(K)
        return cls(Ka.T @ Ka, Ka.T @ Y, K_ZZ, K.shape[0])

    @property
    def n_coef(self):
        """M + 1: prototypes plus the intercept."""
        return self.gram.shape[0]

    def without_rows(self, K_rows, Y_rows):
        """The system of the other rows (eqs. 36-37): subtract the Gram terms
        of ``K_rows`` (h, M) and ``Y_rows`` (h, v).  O(h M^2)."""
        Ka = augmented_rows(K_rows)
        return FixedSizeSystem(self.gram - Ka.T @ Ka, self.rhs - Ka.T @ Y_rows, self.prototype_kernel,
                               self.n_samples - K_rows.shape[0])

    def matrix(self, alpha, nu=1e-8):
        """The regularised matrix A of eq. (34), shape (M + 1, M + 1)."""
        A = self.gram.copy()
        M = A.shape[0] - 1
        A[:M, :M] += alpha * self.prototype_kernel
        A[M, M] += nu
        return A


def solve_spd(A, B):
    """Solve ``A X = B`` for a symmetric positive (semi)definite A.

    Cholesky when A is numerically positive definite; otherwise (A formed
    from ``K^T K`` squares the kernel's condition number) the minimum-norm
    solution through ``eigh`` dropping eigenvalues below ``D eps max|lambda|``,
    with a :class:`~lssvm.exceptions.NumericalWarning`.

    Parameters
    ----------
    A : ndarray of shape (D, D)
    B : ndarray of shape (D,) or (D, v)

    Returns
    -------
    ndarray shaped like B

    Notes
    -----
    O(D^3 / 3) (Cholesky) or about 9 D^3 (eigh).
    """
    try:
        return cho_solve(cho_factor(A, lower=True, check_finite=False), B, check_finite=False)
    except LinAlgError:
        pass
    lam, V = eigh(A, check_finite=False)
    cut = A.shape[0] * np.finfo(float).eps * max(abs(lam[-1]), abs(lam[0]))
    keep = lam > cut
    warnings.warn(
        f"the fixed-size system is numerically singular ({int((~keep).sum())} of {lam.size} "
        "eigenvalues below round-off); returning the minimum-norm solution. Fewer or "
        "better-spread prototypes, a larger alpha or a narrower kernel avoid this",
        NumericalWarning,
        stacklevel=2,
    )
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ B) / (lam[keep][:, None] if np.ndim(B) == 2 else lam[keep]))
