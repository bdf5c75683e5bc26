"""Pairwise distances evaluated in row blocks.

Squared Euclidean distances are the expensive part of every RBF kernel
evaluation; computing them once and exponentiating for several widths is
how model selection over the RBF width stays cheap (Karsmakers et al. 2011, Remark 6).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from .._threads import parallel_map

DEFAULT_BLOCK_SIZE = 2048


#: Largest squared norm (after centring) for which ``||x||^2 + ||z||^2 - 2 x.z``
#: and every partial sum in it stay below the float64 maximum (about 1.8e308).
_SQ_NORM_LIMIT = 1e307


def all_finite(A) -> bool:
    """Whether every value of the dense float array ``A`` is finite (O(size),
    no floating-point warnings)."""
    return bool(np.isfinite(A).all())


def raise_nonfinite(X, Z, what):
    """Raise the ``ValueError`` for NaN or infinity in computed ``what``:
    naming ``X`` or ``Z`` if they hold NaN or infinity, else saying the
    inputs are too large (float64 overflow)."""
    for name, A in (("X", X), ("Z", Z)):
        if not all_finite(A.data if sp.issparse(A) else A):
            raise ValueError(f"{name} contains NaN or infinity; remove or impute those values")
    raise ValueError(
        f"{what} overflow float64 (inf or NaN): the inputs are too large; "
        "scale the inputs (e.g. sklearn.preprocessing.StandardScaler)"
    )


def check_finite_result(block, X, Z, what):
    """Raise ``ValueError`` (see :func:`raise_nonfinite`) if a computed block
    of distances or kernel values holds NaN or infinity; O(size of block)."""
    if not all_finite(block):
        raise_nonfinite(X, Z, what)


def _check_sq_norms(sq, X, Z):
    """Squared norms finite and small enough that the distances cannot
    overflow (NaN inputs make them NaN, which fails too); O(len(sq))."""
    if sq.size and not sq.max() <= _SQ_NORM_LIMIT:
        raise_nonfinite(X, Z, "squared distances")


def _check_dense_pair(X, Z):
    """Both arguments as float arrays, 2-D with the same number of columns."""
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    if X.ndim != 2 or Z.ndim != 2 or X.shape[1] != Z.shape[1]:
        raise ValueError(
            "X and Z must be 2-D arrays (n_samples, n_features) with the same number of columns; "
            f"got shapes {X.shape} and {Z.shape} (reshape a single point with x.reshape(1, -1))"
        )
    return X, Z


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
        ``D[i, j] = ||X[i] - Z[j]||^2``, never negative; exactly 0 where
        ``X[i]`` equals ``Z[j]`` (so the RBF kernel gives ``k(x, x) = 1``
        at any width).

    Raises
    ------
    ValueError
        If ``X`` or ``Z`` is not 2-D, their numbers of columns differ, they
        hold NaN or infinity, or the distances overflow (inputs too large:
        scale them).

    Notes
    -----
    Uses ``||x||^2 + ||z||^2 - 2 x.z`` (one GEMM of the rows extended by
    their squared norms, O(m n d) flops) after
    shifting both sets by the mean of ``Z``: distances are translation
    invariant, and the shift removes most of the cancellation that the
    expansion suffers when the data sit far from the origin.  Entries at
    the round-off level of the expansion (identical and near-identical
    pairs) are then recomputed directly as ``sum((x - z)**2)``.
    """
    X, Z = _check_dense_pair(X, Z)
    m, n = X.shape[0], Z.shape[0]
    if out is None:
        out = np.empty((m, n))
    # Non-finite or huge inputs show in the squared norms (O(m + n) checks);
    # once those are below _SQ_NORM_LIMIT no distance can overflow.
    with np.errstate(over="ignore", invalid="ignore"):  # raised as ValueError instead
        shift = Z.mean(axis=0) if n else np.zeros(Z.shape[1])
        Zc = Z - shift
        z_sq = np.einsum("ij,ij->i", Zc, Zc)
        _check_sq_norms(z_sq, X, Z)
        # One GEMM gives ||x||^2 + ||z||^2 - 2 x.z: [x, ||x||^2, 1] . [-2 z, 1, ||z||^2].
        d = Z.shape[1]
        Za = np.empty((n, d + 2))
        np.multiply(Zc, -2.0, out=Za[:, :d])
        Za[:, d] = 1.0
        Za[:, d + 1] = z_sq
        for rows in iter_row_blocks(m, block_size):
            Xc = X[rows] - shift
            x_sq = np.einsum("ij,ij->i", Xc, Xc)
            _check_sq_norms(x_sq, X, Z)
            Xa = np.empty((Xc.shape[0], d + 2))
            Xa[:, :d] = Xc
            Xa[:, d] = x_sq
            Xa[:, d + 1] = 1.0
            block = out[rows]
            np.matmul(Xa, Za.T, out=block)
            _refine_small(block, Xc, Zc, x_sq, z_sq)
    return out


def _refine_small(block, Xc, Zc, x_sq, z_sq):
    """Recompute exactly, as ``sum((x - z)**2)``, the entries of ``block``
    that the expansion cannot resolve (at most a round-off bound
    ``2 (d + 4) eps (max ||x||^2 + max ||z||^2)``), in place.

    Identical rows then get an exact 0 (so ``k(x, x) = 1`` for the RBF
    kernel at any width) and close pairs their true small distance, never a
    negative value.  Cost: one O(size) comparison of the block plus O(d)
    per refined entry (near-duplicate pairs, usually few).
    """
    if block.size == 0:
        return
    tau = 2 * (Xc.shape[1] + 4) * np.finfo(float).eps * (x_sq.max() + z_sq.max())
    idx = np.flatnonzero(block <= tau)  # flat indices: much faster than 2-D np.nonzero
    for start in range(0, idx.size, 4096):  # bounded temporaries: 4096 x d
        ii, jj = np.divmod(idx[start : start + 4096], block.shape[1])
        diff = Xc[ii] - Zc[jj]
        block[ii, jj] = np.einsum("ij,ij->i", diff, diff)


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

    Raises
    ------
    ValueError
        As :func:`squared_distances`.
    """
    X, Z = _check_dense_pair(X, Z)
    if out is None:
        out = np.empty((X.shape[0], Z.shape[0]))
    for rows in iter_row_blocks(X.shape[0], block_size):
        out[rows] = cdist(X[rows], Z, metric="cityblock")
        check_finite_result(out[rows], X, Z, "L1 distances")
    return out
