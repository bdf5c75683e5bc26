"""Small array helpers shared by all layers (dense or scipy sparse CSR)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["as_float_matrix", "all_finite", "unique_row_indices"]


def as_float_matrix(X):
    """``X`` as a float64 ndarray, or a CSR matrix if it is sparse."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=float)
    return np.asarray(X, dtype=float)


def all_finite(X) -> bool:
    """Whether every stored value of ``X`` is finite."""
    data = X.data if sp.issparse(X) else X
    return bool(np.all(np.isfinite(data)))


def unique_row_indices(X) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct row of ``X``.

    O(m d log m) for dense input; O(nnz) hashing of canonical CSR rows for
    sparse input.
    """
    if not sp.issparse(X):
        _, first = np.unique(np.asarray(X), axis=0, return_index=True)
        return np.sort(first)
    X = sp.csr_matrix(X, dtype=float)
    X.sum_duplicates()
    X.sort_indices()
    seen, first = set(), []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        nz = X.data[lo:hi] != 0
        key = (X.indices[lo:hi][nz].tobytes(), X.data[lo:hi][nz].tobytes())
        if key not in seen:
            seen.add(key)
            first.append(i)
    return np.asarray(first, dtype=np.intp)
