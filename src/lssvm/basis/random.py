"""Uniform random basis selection."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .._arrays import unique_row_indices

__all__ = ["random_basis", "DEFAULT_N_BASIS"]

#: Basis size drawn when none is given.
DEFAULT_N_BASIS = 200


def random_basis(X, n_basis: int | None = None, random_state=None) -> np.ndarray:
    """Draw ``n_basis`` distinct points of ``X`` uniformly without replacement.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    n_basis : int, optional
        Number of points, 1 <= n_basis <= number of distinct rows of ``X``;
        default ``min(200, number of distinct rows)``.
    random_state : int, RandomState or None

    Returns
    -------
    indices : ndarray of shape (n_basis,)
        Sorted row indices into ``X``.  Rows that repeat an earlier row are
        never drawn, so the basis kernel matrix has no duplicate rows.

    Notes
    -----
    O(m d log m) for the duplicate check, then O(m) for the draw.
    """
    first = unique_row_indices(X)
    if n_basis is None:
        n_basis = min(DEFAULT_N_BASIS, first.size)
    if n_basis > first.size:
        raise ValueError(
            f"n_basis={n_basis} exceeds the {first.size} distinct rows of X; "
            "lower n_basis"
        )
    rng = check_random_state(random_state)
    return np.sort(rng.choice(first, size=n_basis, replace=False))
