"""Many shifted solves ``(C + alpha I) x = b`` from one orthogonal reduction
of a symmetric matrix to band form.

Hold-out predictions for a whole regularisation path (``lssvm.cv.holdout``)
need, per fold, the solution of ``(C + alpha I) x = b`` for some 20 values
of alpha, with ``C`` a dense symmetric r x r matrix.  Reducing ``C`` once to
a banded ``B = Q^T C Q`` by orthogonal similarity (so ``C + alpha I = Q (B +
alpha I) Q^T``: the shift survives) makes every alpha a banded solve,
O(r w^2) for half-bandwidth w, instead of an O(r^3) factorisation.

LAPACK reduces to *tridiagonal* form (``dsytrd``), but half of its work is
matrix-vector products, bound by memory bandwidth, and SciPy's wrapper holds
the GIL, so folds reduced on two threads run one after the other.  Reducing
only to a band of width w (LAPACK's ``dsytrd_sy2sb``, the first stage of its
two-stage reduction, which SciPy does not expose) needs matrix-matrix
products only: this module writes that stage by hand, with the panel QR
factorisations from LAPACK (``dgeqrt``, compact WY form ``I - V T V^T``) and
every O(r^2 w) update as BLAS ``dsymm`` and ``dsyr2k`` calls that run at
the matrix multiply rate, in place, without the GIL (``_nogil``).

Cost: about 4/3 r^3 flops for the reduction (``4 n^2 w`` per panel of width
w on the trailing n x n block: ``A V T`` and a symmetric rank-2w update),
plus r^2 w for the panel QRs; then O(r w^2 + r w k) per alpha for k
right-hand sides.  Orthogonal similarity is backward stable, as ``dsytrd``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ._nogil import geqrt_, pbsv_lower_, symm_lower, syr2k_lower_

__all__ = ["BlockReflector", "ShiftedBandSolver"]

#: half-bandwidth of the reduction: wide enough for matrix-multiply speed in
#: the updates, narrow enough that the per-alpha banded solves stay cheap
#: (measured at r = 1000-2500 on OpenBLAS; 32-96 are within a few percent).
DEFAULT_BANDWIDTH = 64


class BlockReflector:
    """The orthogonal factor ``H = I - V T V^T`` of a Householder QR
    factorisation ``A = H [R; 0]`` of a tall matrix, in compact WY form.

    Parameters
    ----------
    A : ndarray of shape (p, q), p >= 1, q >= 1
        Not modified.

    Attributes
    ----------
    V : ndarray of shape (p, k), k = min(p, q)
        Unit lower trapezoidal Householder vectors.
    T : ndarray of shape (k, k)
        Upper triangular block factor.
    R : ndarray of shape (k, q)
        Upper trapezoidal factor.
    """

    def __init__(self, A):
        qr = np.array(A, dtype=float, order="F")
        k = min(qr.shape)
        T = geqrt_(qr)  # LAPACK dgeqrt, without the GIL
        V = np.tril(qr[:, :k], -1)
        V[np.arange(k), np.arange(k)] = 1.0
        self.V, self.T, self.R = V, T, np.triu(qr[:k])

    def apply(self, X, transpose=False):
        """``H X`` (or ``H^T X``) for X of shape (p, s); O(p k s)."""
        T = self.T.T if transpose else self.T
        return X - self.V @ (T @ (self.V.T @ X))

    def congruence_(self, A):
        """Overwrite the lower triangle of the symmetric ``A`` (p, p) with that
        of ``H^T A H``; only the lower triangle of A is read, the strict upper
        triangle may be left stale.  4 p^2 k flops: ``X = A V T`` (BLAS
        ``dsymm``) and a symmetric rank-2k update (``dsyr2k``), in place on
        sub-blocks and without the GIL (see ``_nogil``), as LAPACK's
        band reduction ``dsytrd_sy2sb`` does.
        """
        V, T = self.V, self.T
        X = symm_lower(A, V @ T)  # A H = A - X V^T
        X -= 0.5 * (V @ (T.T @ (V.T @ X)))  # H^T A H = A - X V^T - V X^T
        syr2k_lower_(A, X, V, -1.0)


class ShiftedBandSolver:
    """Solve ``(C + alpha I) x = b`` for many alpha from one reduction
    ``C = Q B Q^T`` with B banded.

    Parameters
    ----------
    C : ndarray of shape (r, r)
        Symmetric; only its lower triangle is read.  Copied.
    bandwidth : int, default 64
        Half-bandwidth w of B.

    Notes
    -----
    Reduction: about 4/3 r^3 flops, in matrix products (see the module
    docstring).  Each alpha: a banded Cholesky factorisation (LAPACK
    ``dpbsv``, O(r w^2)) when ``B + alpha I`` is positive definite -- the
    usual case, a positive semi-definite normal matrix shifted by alpha > 0
    -- else a banded LU solve.  Applying ``Q`` and ``Q^T`` costs O(r^2 k)
    for k right-hand sides.
    """

    def __init__(self, C, bandwidth=DEFAULT_BANDWIDTH):
        A = np.array(C, dtype=float, order="F")
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"C must be a square matrix; got shape {A.shape}")
        r = A.shape[0]
        if r == 0:
            raise ValueError("C is empty (0 x 0): there is no system to solve")
        if not np.isfinite(np.tril(A)).all():
            raise ValueError("C contains NaN or inf")
        w = min(max(1, int(bandwidth)), r - 1)  # 0 for a 1 x 1 matrix
        self.size, self.bandwidth = r, w
        self._panels = []  # (first row, reflector), applied in this order by Q^T
        for c in range(0, r - 2, max(w, 1)):
            lo = c + w
            if r - lo <= 1:  # the rows below the band are already within it
                break
            H = BlockReflector(A[lo:, c:lo])
            k = H.R.shape[0]
            A[lo:, c:lo] = 0.0
            A[lo : lo + k, c:lo] = H.R
            H.congruence_(A[lo:, lo:])
            self._panels.append((lo, H))
        # lower band storage: band[i, j] = B[j + i, j]
        self._band = np.zeros((w + 1, r), order="F")
        for i in range(w + 1):
            self._band[i, : r - i] = np.diagonal(A, -i)

    def rotate(self, X, inverse=False):
        """``Q^T X`` (``Q X`` with ``inverse=True``) for X of shape (r, s)."""
        X = np.array(X, dtype=float)
        order = reversed(self._panels) if inverse else self._panels
        for lo, H in order:
            X[lo:] = H.apply(X[lo:], transpose=not inverse)
        return X

    def solve(self, alphas, b, inverse_norms=False):
        """Solutions for every alpha.

        Parameters
        ----------
        alphas : ndarray of shape (A,)
        b : ndarray of shape (r, s)
        inverse_norms : bool or ndarray of shape (A,) of bool, default=False
            Also return, per alpha (or per alpha where the mask is True), an
            estimate of ``||(C + alpha I)^-1||_2`` (two steps of inverse
            iteration on the banded Cholesky factor, O(r w) each; a lower
            bound, usually within a small factor).  The other alphas get
            NaN.  Every alpha where ``C + alpha I`` is not numerically
            positive definite gets inf.  The conditioning guard of
            ``lssvm.cv.fold_solver`` uses it.

        Returns
        -------
        x : ndarray of shape (r, A * s)
            Columns ``[i * s : (i + 1) * s]`` solve ``(C + alphas[i] I) x = b``.
        inv_norms : ndarray of shape (A,)
            Only when ``inverse_norms`` is True or a mask.
        """
        b = np.asarray(b, dtype=float).reshape(self.size, -1)
        s = b.shape[1]
        want = np.broadcast_to(np.asarray(inverse_norms, dtype=bool), (len(alphas),))
        rb = self.rotate(b)
        out = np.empty((self.size, len(alphas) * s))
        norms = np.empty(len(alphas))
        for i, a in enumerate(alphas):
            out[:, i * s : (i + 1) * s], norms[i] = self._band_solve(a, rb, want[i])
        x = self.rotate(out, inverse=True)
        return (x, norms) if np.ndim(inverse_norms) or inverse_norms else x

    def _band_solve(self, alpha, rhs, inverse_norm=False):
        ab = np.array(self._band, order="F")
        ab[0] += alpha
        if self.bandwidth == 0:  # diagonal: positive definite iff every entry is positive
            norm = np.inf if np.min(ab[0]) <= 0 else 1.0 / np.min(ab[0]) if inverse_norm else np.nan
            return rhs / ab[0][:, None], norm
        x = np.array(rhs, order="F")
        if pbsv_lower_(ab, x):  # banded Cholesky, LAPACK dpbsv without the GIL
            return x, (_inverse_norm(ab) if inverse_norm else np.nan)
        ab = self._band.copy()
        ab[0] += alpha
        # not positive definite (alpha below rounding of an indefinite C): banded LU
        w, r = self.bandwidth, self.size
        full = np.zeros((2 * w + 1, r))
        for i in range(w + 1):
            full[w + i, : r - i] = ab[i, : r - i]  # below the diagonal
            full[w - i, i:] = ab[i, : r - i]  # its mirror above
        return linalg.solve_banded((w, w), full, rhs, check_finite=False), np.inf


def _inverse_norm(chol_band, steps=2):
    """Estimate ``||A^-1||_2`` from the lower banded Cholesky factor of the
    symmetric positive definite A by inverse iteration (O(r w) a step),
    started from a fixed vector with entries of alternating sign and varying
    size (so that it is not orthogonal to the smallest eigenvector of a
    structured matrix by accident)."""
    r = chol_band.shape[1]
    x = np.cos(np.arange(1, r + 1) * 1.618)
    x /= np.linalg.norm(x)
    nrm = 0.0
    for _ in range(steps):
        x = linalg.cho_solve_banded((chol_band, True), x, check_finite=False)
        nrm = np.linalg.norm(x)
        if not np.isfinite(nrm) or nrm == 0:
            return np.inf
        x /= nrm
    return nrm
