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

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh, lapack

from ..exceptions import warn_numerical

__all__ = ["FixedSizeSystem", "GramSums", "augmented_rows", "solve_spd", "solve_guarded", "solve_by_qr",
           "normal_solve_error", "FS_GUARD_RTOL"]

_EPS = np.finfo(float).eps

#: Estimated relative error (``eps cond(A)``, LAPACK ``dpocon``) above which
#: the normal equations are not trusted and the fixed-size problem is solved
#: by QR of the augmented least-squares matrix instead; and above which that
#: solve's own estimate (see :func:`solve_by_qr`) brings a ``NumericalWarning``.
FS_GUARD_RTOL = 1e-8


def augmented_rows(K):
    """``[K, 1]``: kernel rows with the intercept column, shape (n, M + 1)."""
    return np.hstack([K, np.ones((K.shape[0], 1))])


@dataclass(frozen=True)
class GramSums:
    """Sums over a set of rows of everything the fixed-size model needs from
    them: the row-block statistic of both the in-memory and the Dask route
    (``+`` merges disjoint row sets, ``-`` removes a subset).

    Attributes
    ----------
    gram, rhs : ndarray
        ``[K 1]^T [K 1]`` (M + 1, M + 1) and ``[K 1]^T Y`` (M + 1, v), as
        in :class:`FixedSizeSystem`.
    yy : ndarray of shape (v,)
        ``sum y^2`` per output (for validation errors from sums).
    n_samples : int
    """

    gram: np.ndarray
    rhs: np.ndarray
    yy: np.ndarray
    n_samples: int

    @classmethod
    def of_rows(cls, K, Y):
        """Sums of kernel rows ``K`` (b, M) and targets ``Y`` (b, v); O(b M^2)."""
        Ka = augmented_rows(K)
        return cls(Ka.T @ Ka, Ka.T @ Y, np.einsum("ij,ij->j", Y, Y), K.shape[0])

    def __add__(self, other):
        return GramSums(self.gram + other.gram, self.rhs + other.rhs, self.yy + other.yy,
                        self.n_samples + other.n_samples)

    def __sub__(self, other):
        return GramSums(self.gram - other.gram, self.rhs - other.rhs, self.yy - other.yy,
                        self.n_samples - other.n_samples)

    def sse(self, coef, sel, j):
        """Sum of squared errors of output ``j`` over these rows for the model
        with coefficients ``coef`` on coordinates ``sel``:
        ``y^T y - 2 w^T [K 1]^T y + w^T [K 1]^T [K 1] w``; O(k^2).

        Notes
        -----
        A difference of sums: its rounding error is about ``eps y^T y``, so
        relative to the SSE it is ``eps y^T y / SSE`` (1e-13 when the model
        explains 99.9 % of the targets' energy), far below the 1e-10 at
        which the Dask and in-memory CV curves are compared.
        """
        w = np.asarray(coef, dtype=float)
        return max(float(self.yy[j] - 2.0 * (w @ self.rhs[sel, j]) + w @ (self.gram[np.ix_(sel, sel)] @ w)), 0.0)


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
        return cls.from_sums(GramSums.of_rows(K, Y), K_ZZ)

    @classmethod
    def from_sums(cls, sums, K_ZZ):
        """Assemble from the :class:`GramSums` of the rows and ``K_ZZ``."""
        return cls(sums.gram, sums.rhs, K_ZZ, sums.n_samples)

    @property
    def n_coef(self):
        """M + 1: prototypes plus the intercept."""
        return self.gram.shape[0]

    def without_rows(self, K_rows, Y_rows):
        """The system of the other rows (eqs. 36-37): subtract the Gram terms
        of ``K_rows`` (h, M) and ``Y_rows`` (h, v).  O(h M^2)."""
        return self.without(GramSums.of_rows(K_rows, Y_rows))

    def without(self, sums):
        """The system of the other rows, given the :class:`GramSums` of the
        removed ones (eqs. 36-37 from sums; the Dask route's downdate)."""
        return FixedSizeSystem(self.gram - sums.gram, self.rhs - sums.rhs, self.prototype_kernel,
                               self.n_samples - sums.n_samples)

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
    warn_numerical(f"the fixed-size system is numerically singular ({int((~keep).sum())} of {lam.size} "
        "eigenvalues below round-off); returning the minimum-norm solution. Fewer or "
        "better-spread prototypes, a larger alpha or a narrower kernel avoid this", stacklevel=2)
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ B) / (lam[keep][:, None] if np.ndim(B) == 2 else lam[keep]))


def solve_guarded(A, B, K_rows, K_ZZ, Y_rows, alpha, nu, call="FixedSizeLSSVR", gram=None, weights=None):
    """Solve the fixed-size normal equations ``A W = B`` unless they are too
    ill-conditioned, then the least-squares problem they come from by QR.

    Parameters
    ----------
    A : ndarray of shape (M + 1, M + 1)
        ``[K 1]^T [K 1] + blockdiag(alpha K_ZZ, nu)`` of the rows ``K_rows``.
    B : ndarray of shape (M + 1, v)
        ``[K 1]^T Y``.
    K_rows : ndarray of shape (N, M)
    K_ZZ : ndarray of shape (M, M)
    Y_rows : ndarray of shape (N, v)
    alpha, nu : float
    call : str
        Named in the warning.
    gram : ndarray of shape (M + 1, M + 1), optional
        ``[K 1]^T [K 1]`` of the rows, when the rows themselves are not in
        memory (Dask input: ``K_rows`` and ``Y_rows`` are None).  The error
        estimate is then formed from it, and past the threshold the normal
        equations' solution is kept with a ``NumericalWarning``: the QR
        re-solve needs the rows.
    weights : ndarray of shape (N,), optional
        Row weights of ``K_rows`` (A and B are then the weighted sums): the
        guard and the QR re-solve use the rows scaled by ``sqrt(w)``.

    Returns
    -------
    ndarray of shape (M + 1, v)

    Notes
    -----
    The normal equations square the condition number of the least-squares
    matrix, and their Cholesky factorisation can succeed while the solution
    has lost every digit (30 % above the minimum objective was seen at
    ``cond(A) ~ 1e17``).  A condition estimate of the Cholesky factor (LAPACK
    ``dpocon``, O(M^2)) decides: past ``eps cond(A) > FS_GUARD_RTOL``, times
    the cancellation ``||[K 1]|| ||w|| / ||[K 1] w||`` of the fitted values, the
    problem is re-solved by :func:`solve_by_qr` (O(N M^2), about twice the
    cost of forming A), whose error grows with ``cond(A)^1/2`` only.
    """
    if gram is not None:
        W = solve_spd(A, B)
        err = normal_solve_error(A, None, W, gram=gram)
        if not err <= FS_GUARD_RTOL:
            warn_numerical(f"{call}: the fixed-size normal equations have an estimated relative error of {err:.1e} "
                f"(alpha={alpha:g}), and on Dask input the rows are not in memory for the QR re-solve; "
                "increase alpha, use fewer or better-spread prototypes, or a narrower kernel", stacklevel=3)
        return W
    try:
        c = cho_factor(A, lower=True, check_finite=False)
        W = cho_solve(c, B, check_finite=False)
        Ka = augmented_rows(K_rows) if weights is None else np.sqrt(weights)[:, None] * augmented_rows(K_rows)
        if normal_solve_error(A, Ka, W, c[0]) <= FS_GUARD_RTOL:
            return W
    except LinAlgError:
        pass
    W, err = solve_by_qr(K_rows, K_ZZ, Y_rows, alpha, nu, call=call, weights=weights)
    if not err <= FS_GUARD_RTOL:
        warn_numerical(f"{call}: the fixed-size system is so ill-conditioned that even its QR solve has an estimated "
            f"relative error of {err:.1e} (alpha={alpha:g}); increase alpha, use fewer or better-spread "
            "prototypes, or a narrower kernel", stacklevel=3)
    return W


def normal_solve_error(A, Ka, W, chol=None, gram=None):
    """Estimated relative error of fitted values ``Ka W`` whose coefficients
    solve the normal equations ``A W = B`` (``A ~ Ka^T Ka + penalty``):
    ``eps cond(A) ||Ka|| ||w|| / ||Ka w||`` (the coefficients' error, LAPACK
    ``dpocon`` estimate, amplified by the cancellation in the fitted values).
    ``chol``: the lower Cholesky factor of A if known.  ``gram``:
    ``Ka^T Ka`` instead of ``Ka`` (rows not in memory; the norms are then
    ``sqrt(tr G)`` and ``sqrt(w^T G w)``).  O(D^2 + N D v), or O(D^2 v).
    """
    if chol is None:
        try:
            chol = cho_factor(A, lower=True, check_finite=False)[0]
        except LinAlgError:
            return np.inf
    rcond, info = lapack.dpocon(chol, np.abs(A).sum(axis=0).max(), uplo="L")
    if info != 0 or not rcond > 0:
        return np.inf
    W = W.reshape(W.shape[0], -1)
    if gram is None:
        ka_norm, fit = np.linalg.norm(Ka), np.linalg.norm(Ka @ W, axis=0)
    else:
        ka_norm = np.sqrt(max(float(np.trace(gram)), 0.0))
        fit = np.sqrt(np.maximum(np.einsum("iv,iv->v", W, gram @ W), 0.0))
    fit = np.maximum(fit, np.finfo(float).tiny)
    return float(np.max(_EPS / rcond * ka_norm * np.linalg.norm(W, axis=0) / fit))


def solve_by_qr(K_rows, K_ZZ, Y_rows, alpha, nu, call="FixedSizeLSSVR", weights=None):
    """Minimise ``||Y - K w - 1 b||^2 + alpha w^T K_ZZ w + nu b^2`` (with
    ``weights``, ``sum_i w_i ||y_i - k_i w - b||^2 + ...``: the rows scaled by ``sqrt(w_i)``) by a
    column-pivoted Householder QR of the augmented matrix (columns scaled to
    unit norm)

        [K                1          ]
        [sqrt(alpha) R^T  0          ],   K_ZZ = R R^T,
        [0                sqrt(nu)   ]

    which never forms ``K^T K``.  ``R`` is the Cholesky factor of K_ZZ, or
    ``U sqrt(max(s, 0))`` from its eigendecomposition if K_ZZ is not
    numerically positive definite.  O(N M^2 + M^3).

    Returns
    -------
    W : ndarray of shape (M + 1, v)
    rel_err : float
        Estimated relative error of the fitted values, ``4 eps sqrt(M + 1)
        ||w|| / ||G w||`` in the scaled problem (large only when the
        coefficients cancel).

    Notes
    -----
    A prototype whose column is a combination of the others to rounding
    (``|R_kk| <= (N + M + 1) eps |R_11|`` in the pivoted factor, or a column
    of norm below ``(N + M + 1) eps`` times the largest: e.g. a point with
    ``k(z, z) = 0`` for the linear or polynomial kernel, whose column is
    zero) carries no information the others lack: it gets weight 0 (the
    basic solution) with a ``NumericalWarning``, instead of the triangular
    solve failing on a zero pivot.
    """
    N, M = K_rows.shape
    Y_rows = np.asarray(Y_rows, dtype=float).reshape(N, -1)
    try:
        R = linalg.cholesky(K_ZZ, lower=True, check_finite=False)
    except LinAlgError:
        s, U = eigh(K_ZZ, check_finite=False)
        # eigenvalues at rounding level are zero: their square roots (~1e-8) would be taken for data
        s = np.where(s > M * _EPS * max(float(s[-1]), 0.0), s, 0.0)
        R = U * np.sqrt(s)
    G = np.zeros((N + M + 1, M + 1))
    G[:N, :M] = K_rows
    G[:N, M] = 1.0
    root_w = None if weights is None else np.sqrt(np.asarray(weights, dtype=float))
    if root_w is not None:
        G[:N] *= root_w[:, None]
    G[N : N + M, :M] = np.sqrt(alpha) * R.T
    G[N + M, M] = np.sqrt(nu)
    scale = np.linalg.norm(G, axis=0)
    # a column at rounding level against the largest (e.g. k(z, z) = 0, whose penalty row is K_ZZ's
    # eigenvector noise) is numerically zero: scaling it to unit norm would turn that noise into data
    negligible = ~(scale > G.shape[0] * _EPS * scale.max())
    G[:, negligible] = 0.0
    scale[negligible] = 1.0
    G /= scale
    Q, Rq, piv = linalg.qr(G, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(Rq))
    rank = int(np.sum(diag > G.shape[0] * _EPS * diag[0])) if diag.size and diag[0] > 0 else 0
    if rank < M + 1:
        warn_numerical(
            f"{call}: {M + 1 - rank} of the {M + 1} coefficients (prototypes and intercept) are numerically "
            "dependent on the others in the least-squares problem (duplicated or near-duplicated prototypes, or "
            "points with k(z, z) = 0 for the linear or polynomial kernel); they get weight 0 and the model is "
            "the minimiser over the others. Drop those prototypes, or use a larger alpha",
            stacklevel=3,
        )
    rhs = np.zeros((N + M + 1, Y_rows.shape[1]))
    rhs[:N] = Y_rows if root_w is None else root_w[:, None] * Y_rows
    Ws = np.zeros((M + 1, Y_rows.shape[1]))
    if rank:
        Ws[piv[:rank]] = linalg.solve_triangular(Rq[:rank, :rank], (Q.T @ rhs)[:rank], check_finite=False)
    # QR is backward stable: the fitted values G Ws carry an error of about
    # eps ||G|| ||Ws|| (||G||_2 <= sqrt(M + 1) with unit columns), large
    # relative to them only when the coefficients cancel
    fit = np.linalg.norm(G @ Ws, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.linalg.norm(Ws, axis=0) / fit
    ratio = np.where(fit > 0, ratio, 1.0)
    err = 4 * _EPS * np.sqrt(M + 1) * float(np.max(ratio)) if np.all(np.isfinite(Ws)) else np.inf
    return Ws / scale[:, None], err
