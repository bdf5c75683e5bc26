"""Whitening kernel rows by the basis metric: ``Phi = K W`` (the documentation's Mathematics page, §2).

On the Cholesky path ``W = L^-T`` with ``K_BB = L L^T``, so ``Phi`` solves ``Phi L^T = K``: a
triangular solve of m n^2 flops, the slowest of the factorisation's m n^2 steps (OpenBLAS's TRSM ran
at about half the rate of its GEMM on one thread).  For rows stored by columns (Fortran
order) it is done in place by column blocks, right-looking: each block's solve is a small TRSM, and
the updates of the later columns, most of the flops, are GEMMs.  The same operations as LAPACK's
blocked algorithms, so the same backward error; hand-written because SciPy's wrappers copy any
sub-matrix that is not contiguous, which a blocked solve on the C-ordered transpose would need.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import blas

__all__ = ["whiten_rows", "solve_lower_transposed_right"]

#: Columns per block of :func:`solve_lower_transposed_right` (88 to 175 columns were equally fast at
#: n = 700, m = 12,680, one thread: 0.11 s against 0.15 s for one TRSM).
BLOCK = 128


def whiten_rows(K, whitener, method, *, overwrite=False):
    """``K W`` for kernel rows ``K`` (m, n): a triangular solve with ``L``
    (m n^2 flops, in place on ``K`` when ``overwrite``; by column blocks,
    mostly GEMM, when ``K`` is also Fortran-ordered) or a product with
    ``W`` (2 m n r).  Returns shape (m, r)."""
    if method != "cholesky":
        return K @ whitener
    if overwrite and K.flags.f_contiguous and K.ndim == 2 and K.shape[1] > BLOCK:
        return solve_lower_transposed_right(whitener, K)
    # (K W)^T = L^-1 K^T, solved on the Fortran view of K
    PhiT = linalg.solve_triangular(whitener, K.T, lower=True, overwrite_b=overwrite, check_finite=False)
    return PhiT.T


def solve_lower_transposed_right(L, B, block=BLOCK):
    """Solve ``X L^T = B`` in place on ``B``.

    Parameters
    ----------
    L : ndarray of shape (n, n)
        Lower triangular, non-singular.
    B : ndarray of shape (m, n), Fortran-ordered (overwritten with X)
    block : int
        Columns per block.

    Returns
    -------
    ndarray of shape (m, n)
        ``B``, now holding ``X = B L^-T``.

    Notes
    -----
    For each column block J in turn: ``B_J -= X_<J L_J,<J^T`` (GEMM), then
    ``X_J = B_J L_JJ^-T`` (TRSM on the block).  m n^2 flops in all, of which
    a fraction ``1 - 1/n_blocks`` in GEMM.
    """
    if not (B.flags.f_contiguous and B.dtype == np.float64):
        raise ValueError("B must be a Fortran-ordered float64 array (it is solved in place)")
    n = B.shape[1]
    for a in range(0, n, block):
        b = min(a + block, n)
        if a:
            blas.dgemm(-1.0, B[:, :a], L[a:b, :a], beta=1.0, c=B[:, a:b], trans_b=1, overwrite_c=1)
        blas.dtrsm(1.0, L[a:b, a:b], B[:, a:b], side=1, lower=1, trans_a=1, overwrite_b=1)
    return B
