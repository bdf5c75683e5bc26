"""Dropping duplicate and near-duplicate basis points.

Two basis points z, w are near-duplicates when their kernel functions are
numerically the same function: their squared distance in feature space,
``k(z,z) + k(w,w) - 2 k(z,w)``, is at most ``rtol * max(|k(z,z)|, |k(w,w)|)``.
Such a pair puts an eigenvalue of about that size into ``K_BB`` (the 2 x 2
block ``[[k, k - d/2], [k - d/2, k]]`` has eigenvalue ``d/2``), which the
solvers' eigenvalue floor (``rcond``, 1e-10 by default) would discard anyway;
keeping the first point of each group and dropping the others gives the
same expansion without a singular ``K_BB``.  The default ``rtol`` equals that
floor.  Exact duplicates (distance 0) and repeated row indices are the
extreme case.  Rounding in the three kernel values is ~4 eps k, far below
the threshold.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import warn_numerical
from ..kernels import Kernel

__all__ = ["NEAR_DUPLICATE_RTOL", "near_duplicate_free", "drop_near_duplicates", "warn_dropped"]

#: Relative feature-space squared distance below which two basis points count as one.
NEAR_DUPLICATE_RTOL = 1e-10
_BLOCK = 1024


def near_duplicate_free(Z, kernel: Kernel, rtol: float = NEAR_DUPLICATE_RTOL) -> np.ndarray:
    """Positions of the points to keep: the first of each near-duplicate group.

    Parameters
    ----------
    Z : ndarray or CSR matrix of shape (n, d)
    kernel : Kernel
    rtol : float

    Returns
    -------
    ndarray of shape (k,), int
        Increasing positions into ``Z``; ``k = n`` when nothing repeats.

    Notes
    -----
    O(n^2 d) for ``k(Z, Z)`` and O(n^2) for the comparison, in row blocks
    (memory: ``K`` plus O(1024 n)); a point is dropped if an earlier kept
    point is near it (greedy, so a chain z ~ w ~ u with z !~ u keeps z and u).
    """
    n = Z.shape[0]
    if n < 2:
        return np.arange(n)
    K = kernel(Z, Z)
    K = K.toarray() if sp.issparse(K) else np.asarray(K)
    diag = np.abs(np.diag(K)).copy()
    first, later = [], []
    for lo in range(0, n, _BLOCK):  # row blocks: O(_BLOCK n) temporaries besides K
        hi = min(lo + _BLOCK, n)
        d2 = diag[lo:hi, None] + diag[None, :] - 2.0 * K[lo:hi]
        near = d2 <= rtol * np.maximum(diag[lo:hi, None], diag[None, :])
        i, j = np.nonzero(near)
        i += lo
        upper = j > i
        first.append(i[upper])
        later.append(j[upper])
    i, j = np.concatenate(first), np.concatenate(later)
    if i.size == 0:
        return np.arange(n)
    keep = np.ones(n, dtype=bool)
    order = np.argsort(i, kind="stable")
    i, j = i[order], j[order]
    bounds = np.flatnonzero(np.diff(i)) + 1
    for a, b in zip(np.r_[0, bounds], np.r_[bounds, i.size], strict=True):  # greedy, in point order
        if keep[i[a]]:
            keep[j[a:b]] = False
    return np.flatnonzero(keep)


def drop_near_duplicates(Z, kernel: Kernel, indices=None, *, what="basis", stacklevel=3):
    """``Z`` (and its training-row ``indices``) without near-duplicates,
    with a :class:`NumericalWarning` saying how many were dropped.

    Parameters
    ----------
    Z : ndarray or CSR matrix of shape (n, d)
    kernel : Kernel
    indices : ndarray of shape (n,) or None
    what : str
        Name used in the warning ("basis", "prototype").
    stacklevel : int

    Returns
    -------
    Z : (k, d), indices : (k,) or None
    """
    keep = near_duplicate_free(Z, kernel)
    n = Z.shape[0]
    if keep.size == n:
        return Z, indices
    warn_dropped(n, keep.size, what, stacklevel + 1)
    return Z[keep], None if indices is None else np.asarray(indices)[keep]


def warn_dropped(n, kept, what="basis", stacklevel=3):
    """The :class:`NumericalWarning` for ``n - kept`` dropped near-duplicates."""
    warn_numerical(f"dropped {n - kept} of {n} {what} points that duplicate or nearly duplicate "
        f"another in the kernel's feature space (squared distance <= {NEAR_DUPLICATE_RTOL:g} x k(z, z)); "
        f"{kept} remain. A repeated point adds nothing to the model and makes K_BB singular.", stacklevel=stacklevel)
