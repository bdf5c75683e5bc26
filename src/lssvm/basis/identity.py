"""Which training rows hold each basis point.

Hold-out with ``basis_in_holdout="remove"`` takes a basis point out of the
model when the held-out rows are the only training rows that hold it, so
that the result equals retraining without those rows.  A training row
holds basis point z when it IS z: listed as z's row index, or equal to z
value for value.  So a basis given as an array of points is linked to the
rows equal to them, and duplicate rows (say rows 0 and 7, equal) both hold
their one basis point, which leaves the model only when both are held out.

Rows are matched by hashing their float64 bit patterns (``-0.0`` counted as
``0.0``) column by column in vectorised uint64 arithmetic, O(m d), then
checking candidate pairs for exact equality, O(d) each; NumPy has no
row-hash primitive (``np.unique(axis=0)`` sorts, O(m d log m)), so this is
written here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["basis_holders"]

_MULT = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: a standard multiplicative hash constant


def _row_hashes(A):
    """uint64 hash of each row of the dense float array ``A`` (k, d); equal
    rows (by value) get equal hashes.  O(k d)."""
    A = np.asarray(A, dtype=np.float64) + 0.0  # -0.0 -> 0.0, a copy we own
    bits = np.ascontiguousarray(A).view(np.uint64)
    h = np.full(A.shape[0], np.uint64(A.shape[1]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):
            h ^= bits[:, j]
            h *= _MULT
            h ^= h >> np.uint64(29)
    return h


def basis_holders(X, Z, indices=None):
    """Pairs ``(row, point)``: training row ``row`` of ``X`` holds basis
    point ``point`` of ``Z``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (m, d)
        Training inputs.
    Z : ndarray or CSR matrix of shape (n, d)
        Basis points, pairwise distinct.
    indices : ndarray of shape (n,) or None
        Training row of each basis point, when the basis came from rows.

    Returns
    -------
    rows, points : ndarray of int, shape (k,)
        Every row listed in ``indices`` with its point, and (dense inputs)
        every row equal to a basis point, each pair once, sorted by row.
        Sparse inputs are matched through ``indices`` only.

    Notes
    -----
    O(m d) hashing plus O(d) per candidate row; memory O(m).
    """
    m = X.shape[0]
    rows = [] if indices is None else [np.asarray(indices, dtype=np.intp)]
    points = [] if indices is None else [np.arange(len(indices), dtype=np.intp)]
    if not sp.issparse(X) and not sp.issparse(Z) and m and Z.shape[0]:
        X = np.asarray(X, dtype=float)
        Z = np.asarray(Z, dtype=float)
        hz = _row_hashes(Z)
        order = np.argsort(hz, kind="stable")
        hz_sorted = hz[order]
        hx = _row_hashes(X)
        lo = np.searchsorted(hz_sorted, hx, side="left")
        hi = np.searchsorted(hz_sorted, hx, side="right")
        cand = np.flatnonzero(hi > lo)
        single = cand[hi[cand] - lo[cand] == 1]
        j = order[lo[single]]
        same = np.all(X[single] == Z[j], axis=1)
        rows.append(single[same])
        points.append(j[same])
        for i in cand[hi[cand] - lo[cand] > 1]:  # hash collisions among basis points: vanishingly rare
            for j in order[lo[i]:hi[i]]:
                if np.array_equal(X[i], Z[j]):
                    rows.append(np.array([i], dtype=np.intp))
                    points.append(np.array([j], dtype=np.intp))
    if not rows:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    rows, points = np.concatenate(rows).astype(np.intp), np.concatenate(points).astype(np.intp)
    pairs = np.unique(np.stack([rows, points], axis=1), axis=0)  # each pair once, sorted by row
    return pairs[:, 0], pairs[:, 1]
