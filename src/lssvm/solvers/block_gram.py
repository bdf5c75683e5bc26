"""The fit's whitened Gram matrix accumulated over K contiguous row blocks,
each block's share kept, so that CV+ reads its fold models' Grams from them.

:func:`~lssvm.solvers.sparse_rls.factorize_sparse_rls` forms ``G = Phi^T
Phi`` (m r^2 flops, one SYRK) from the whitened centred kernel rows ``Phi``
(m x r).  Summing the same SYRK over the K row blocks that an unshuffled
K-fold splits the rows into (scikit-learn's ``KFold``: the first ``m % K``
blocks one row longer) costs the same flops and gives each block's Gram
``G_k = Phi_k^T Phi_k`` on the way.  A CV+ call on exactly those folds (an
int ``cv`` or ``KFold(K)``, :mod:`lssvm.cv.fold_models`) then forms each
fold's training Gram as ``G - G_k`` (r^2 flops) instead of a SYRK over the
fold's rows (h r^2 flops per fold, and a pass over M).

Memory: ``K (r^2 + r + r v)`` floats, kept only when ``K r <= m`` (so at
most the size of ``M`` itself, m r floats).  Nothing else changes: ``G``
is the same matrix up to rounding (eps ``||G||``), the lower triangle as
LAPACK's ``eigh`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas

__all__ = ["DEFAULT_BLOCKS", "BlockGrams", "block_offsets", "gram_by_blocks", "times_in_place"]

#: the blocks a regressor's fit keeps: those of ``predict_interval(method="cv+")``'s default ``cv=10``
DEFAULT_BLOCKS = 10


@dataclass(frozen=True)
class BlockGrams:
    """Each contiguous row block's share of the whitened Gram matrix.

    Attributes
    ----------
    offsets : ndarray of shape (K + 1,)
        Block boundaries (block k is rows ``offsets[k]:offsets[k + 1]``).
    grams : ndarray of shape (r, r, K), Fortran order
        ``Phi_k^T Phi_k``, lower triangle (the upper one is zero).
    total : ndarray of shape (r, r), Fortran order
        ``G``, their sum (lower triangle).
    sums : ndarray of shape (K, r)
        ``Phi_k^T 1``, column sums of each block.
    cross : ndarray of shape (K, r, v)
        ``Phi_k^T Yc_k`` (centred targets).
    """

    offsets: np.ndarray
    grams: np.ndarray
    total: np.ndarray
    sums: np.ndarray
    cross: np.ndarray


def block_offsets(m, k):
    """Boundaries (k + 1,) of the k contiguous folds of an unshuffled
    ``KFold(k)`` on m rows (the first ``m % k`` one row longer)."""
    q, extra = divmod(m, k)
    sizes = np.full(k, q, dtype=np.intp)
    sizes[:extra] += 1
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)


def gram_by_blocks(Phi, Yc, k):
    """``G = Phi^T Phi`` and, where it is cheap to keep, its block shares.

    Parameters
    ----------
    Phi : ndarray of shape (m, r)
        Whitened centred kernel rows (C order).
    Yc : ndarray of shape (m, v)
        Centred targets.
    k : int
        Number of blocks; 0 (or fewer than 2, or ``k r > m``) forms ``G``
        by one product and keeps nothing.

    Returns
    -------
    G : ndarray of shape (r, r)
        At least its lower triangle (all of it from the single product).
    blocks : BlockGrams or None

    Notes
    -----
    m r^2 flops either way (one SYRK per block), plus O(m r v) for the
    blocks' sums and cross products and O(K r^2) to add them up.
    """
    m, r = Phi.shape
    if k < 2 or k * r > m:
        return Phi.T @ Phi, None
    offsets = block_offsets(m, k)
    v = Yc.shape[1]
    grams = np.zeros((r, r, k), order="F")
    Y1 = np.empty((m, v + 1))  # [Yc, 1]: each block's cross products and column sums in one product
    Y1[:, :v], Y1[:, v] = Yc, 1.0
    both = np.empty((k, r, v + 1))
    for j in range(k):
        rows = Phi[offsets[j] : offsets[j + 1]]
        # Phi_j^T Phi_j into grams[:, :, j] in place (an F-contiguous slice; Phi_j^T is an F-order view)
        blas.dsyrk(1.0, rows.T, trans=0, lower=1, c=grams[:, :, j], overwrite_c=1)
        np.matmul(rows.T, Y1[offsets[j] : offsets[j + 1]], out=both[j])
    total = grams.sum(axis=2)
    return total, BlockGrams(offsets, grams, total, both[:, :, v], both[:, :, :v])


#: rows per block of :func:`times_in_place` (its temporary is this many rows)
_ROWS = 256


def times_in_place(A, V):
    """``A @ V`` for a square ``V``, written over ``A`` (C order) row block by
    row block; other layouts get a new array.

    Parameters
    ----------
    A : ndarray of shape (m, r)
    V : ndarray of shape (r, r)

    Returns
    -------
    ndarray of shape (m, r)
        ``A`` itself when C-contiguous (now holding ``A V``), else ``A @ V``.

    Notes
    -----
    2 m r^2 flops either way.  The fit's ``M = Phi V`` lands in the buffer of
    ``Phi`` (dead afterwards) instead of m r fresh floats: a fresh m x r
    array costs its pages' first-touch faults (~m r / 512 of them, about
    0.5 ms at m = 2,000, r = 100 on this project's VM, measured), more than
    what the block Grams add (``K r^2`` floats).  The temporary is
    ``_ROWS`` x r.
    """
    if not (A.flags.c_contiguous and A.dtype == np.float64 and V.shape == (A.shape[1],) * 2):
        return A @ V
    tmp = np.empty((min(_ROWS, A.shape[0]), A.shape[1]))
    for a in range(0, A.shape[0], _ROWS):
        b = min(a + _ROWS, A.shape[0])
        np.matmul(A[a:b], V, out=tmp[: b - a])
        A[a:b] = tmp[: b - a]
    return A
