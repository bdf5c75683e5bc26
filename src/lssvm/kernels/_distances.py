"""Pairwise distances evaluated in row blocks.

Squared Euclidean distances are the expensive part of every RBF kernel
evaluation; computing them once and exponentiating for several widths is
how model selection over the RBF width stays cheap (paper 002, Remark 6).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from .._parallel import parallel_map

DEFAULT_BLOCK_SIZE = 2048


def iter_row_blocks(n_rows: int, block_size: int = DEFAULT_BLOCK_SIZE):
    """Yield ``slice`` objects covering ``range(n_rows)`` in blocks.

    Parameters
    ----------
    n_rows : int
        Number of rows to cover.
    block_size : int
        Maximum number of rows per block (at least 1).
    """
    block_size = max(int(block_size), 1)
    for start in range(0, n_rows, block_size):
        yield slice(start, min(start + block_size, n_rows))


#: Target size (bytes) of one kernel block: small enough to stay in cache.
_BLOCK_BYTES = 1 << 21


def map_row_blocks(func, n_rows: int, n_cols: int, block_size: int = DEFAULT_BLOCK_SIZE):
    """Call ``func(rows)`` for row-block slices covering ``range(n_rows)``,
    on all CPU cores.

    Blocks hold at most ``block_size`` rows and about 2 MiB of an
    ``n_rows x n_cols`` float64 result, so the element-wise work (``exp``,
    shifts) runs in cache.  NumPy releases the GIL in those loops, so a
    thread per core gives real parallelism; BLAS is limited to one thread
    meanwhile so the two do not oversubscribe the cores.  ``func`` must
    write disjoint outputs.
    """
    rows_per_block = max(1, min(int(block_size), _BLOCK_BYTES // (8 * max(n_cols, 1))))
    blocks = list(iter_row_blocks(n_rows, rows_per_block))
    if n_rows * n_cols < 1 << 16:
        for rows in blocks:
            func(rows)
        return
    parallel_map(func, blocks)


def squared_distances(X, Z, *, block_size: int = DEFAULT_BLOCK_SIZE, out=None):
    """Squared Euclidean distances between the rows of ``X`` and ``Z``.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Z : ndarray of shape (n, d)
    block_size : int, default=2048
        Rows of ``X`` processed at once; temporary memory is
        O(block_size * n).
    out : ndarray of shape (m, n), optional
        Where to write the result.

    Returns
    -------
    D : ndarray of shape (m, n)
        ``D[i, j] = ||X[i] - Z[j]||^2``, clamped at zero.

    Notes
    -----
    Uses ``||x||^2 + ||z||^2 - 2 x.z`` (one GEMM, O(m n d) flops) after
    shifting both sets by the mean of ``Z``: distances are translation
    invariant, and the shift removes most of the cancellation that the
    expansion suffers when the data sit far from the origin.
    """
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    m, n = X.shape[0], Z.shape[0]
    if out is None:
        out = np.empty((m, n))
    shift = Z.mean(axis=0) if n else np.zeros(Z.shape[1])
    Zc = Z - shift
    z_sq = np.einsum("ij,ij->i", Zc, Zc)
    for rows in iter_row_blocks(m, block_size):
        Xc = X[rows] - shift
        x_sq = np.einsum("ij,ij->i", Xc, Xc)
        block = out[rows]
        np.matmul(Xc, Zc.T, out=block)
        block *= -2.0
        block += x_sq[:, None]
        block += z_sq[None, :]
        np.maximum(block, 0.0, out=block)
    return out


def manhattan_distances(X, Z, *, block_size: int = DEFAULT_BLOCK_SIZE, out=None):
    """L1 distances between the rows of ``X`` and ``Z``, in row blocks.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Z : ndarray of shape (n, d)
    block_size : int, default=2048
    out : ndarray of shape (m, n), optional

    Returns
    -------
    D : ndarray of shape (m, n)
        ``D[i, j] = sum_k |X[i, k] - Z[j, k]|``; O(m n d) work done by
        SciPy's ``cdist``.
    """
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    if out is None:
        out = np.empty((X.shape[0], Z.shape[0]))
    for rows in iter_row_blocks(X.shape[0], block_size):
        out[rows] = cdist(X[rows], Z, metric="cityblock")
    return out
