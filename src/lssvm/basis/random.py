"""Uniform random basis selection."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .._arrays import unique_row_indices
from ._checks import check_count, check_input

__all__ = ["random_basis", "DEFAULT_N_BASIS"]

#: Basis size drawn when none is given.
DEFAULT_N_BASIS = 200


def random_basis(X, n_basis: int | None = None, random_state=None) -> np.ndarray:
    """Draw ``n_basis`` distinct points of ``X`` uniformly without replacement.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (m, d)
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
    O(m d log m) for the duplicate check, then O(m) for the draw.  The draw
    keeps the rows with the ``n_basis`` smallest of m uniform keys, not
    ``rng.choice(m, n, replace=False)``: that is the first n entries of
    ``rng.permutation(m)``, which is exactly the first test fold of
    ``KFold(shuffle=True)`` with the same seed, so a user seeding both alike
    would hold out the whole basis in that fold.

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty finite 2-D array, or ``n_basis`` is not
        None or an integer in [1, number of distinct rows].
    """
    X = check_input(X)
    n_basis = check_count("n_basis", n_basis, allow_none=True)
    first = unique_row_indices(X)
    if n_basis is None:
        n_basis = min(DEFAULT_N_BASIS, first.size)
    if n_basis > first.size:
        raise ValueError(
            f"n_basis={n_basis} exceeds the {first.size} distinct rows of X; "
            "lower n_basis"
        )
    rng = check_random_state(random_state)
    keys = rng.random_sample(first.size)
    if n_basis == first.size:
        return first
    return np.sort(first[np.argpartition(keys, n_basis - 1)[:n_basis]])
