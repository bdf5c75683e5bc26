"""Uniform random basis selection."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._arrays import unique_row_indices
from ._checks import check_count, check_input

__all__ = ["random_basis", "draw_basis_rows", "DEFAULT_N_BASIS"]

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
        Sorted row indices into ``X``.  No two drawn rows are equal, so the
        basis kernel matrix has no duplicate rows.

    Notes
    -----
    O(m d log m) for the duplicate check, then O(m) for the draw
    (:func:`draw_basis_rows`, shared with Dask input).  The draw keeps the
    rows with the ``n_basis`` smallest of m uniform keys (skipping
    repeats), not
    ``rng.choice(m, n, replace=False)``: that is the first n entries of
    ``rng.permutation(m)``, which is exactly the first test fold of
    ``KFold(shuffle=True)`` with the same seed, so a user passing such a
    splitter seeded like the estimator would hold out the whole basis in
    that fold.  (An int ``cv`` is unshuffled ``KFold`` / ``StratifiedKFold``
    everywhere, so only user-made shuffled splitters pair
    with the draw.)

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty finite 2-D array, or ``n_basis`` is not
        None or an integer in [1, number of distinct rows].
    """
    X = check_input(X)
    n_basis = check_count("n_basis", n_basis, allow_none=True)
    n_distinct = unique_row_indices(X).size
    if n_basis is None:
        n_basis = min(DEFAULT_N_BASIS, n_distinct)
    if n_basis > n_distinct:
        raise ValueError(
            f"n_basis={n_basis} exceeds the {n_distinct} distinct rows of X; "
            "lower n_basis"
        )
    # the one random draw, shared with rows not in memory (Dask): the same rows for the same seed
    return draw_basis_rows(X.shape[0], X.shape[1], lambda rows: X[rows], "random", n_basis, random_state)[1]


def draw_basis_rows(n_rows, n_features, take_rows, basis, n_basis, random_state):
    """Basis points of rows that need not be in memory: "random" rows, row
    indices or the points themselves.

    Parameters
    ----------
    n_rows, n_features : int
        Shape of the training inputs.
    take_rows : callable
        ``take_rows(indices)`` returns those rows (k, d) in the given order
        (for Dask data: one pass fetching k rows).
    basis : "random", 1-D int array of row indices, or array (n, d) of points
    n_basis : int, optional
        Size of a random basis, default ``min(200, n_rows)``.
    random_state : int, RandomState or None

    Returns
    -------
    Z : ndarray of shape (n, d)
    indices : ndarray of shape (n,) or None
        Sorted row indices (None for given points).

    Notes
    -----
    A random basis takes the rows in the order of ``n_rows`` uniform keys,
    skipping rows that repeat an earlier one, until it has ``n_basis`` (see
    :func:`random_basis` for why not ``rng.choice``).  About
    ``1.25 n_basis`` rows are fetched (more only when many repeat), so the
    draw reads O(n_basis) rows, not all of them.  The in-memory
    :func:`random_basis` is this draw: the same seed gives the same rows in
    memory and on Dask.
    """
    m = n_rows
    if isinstance(basis, str):
        if basis != "random":
            raise ValueError(
                f"basis={basis!r} needs all rows in memory; on Dask input use basis='random', training-row "
                "indices or basis points (for instance selected on a sample: "
                "SparseLSSVR(basis='fvs').fit(X_sample, y_sample).basis_vectors_)"
            )
        n = min(DEFAULT_N_BASIS, m) if n_basis is None else n_basis
        if not isinstance(n, Integral) or isinstance(n, bool) or not 1 <= n <= m:
            raise ValueError(f"n_basis must be an integer in [1, {m}] (the number of rows); got {n_basis!r}")
        rng = check_random_state(random_state)
        keys = rng.random_sample(m)
        k = min(m, n + n // 4 + 8)
        while True:  # the rows in key order, skipping repeats; more rows fetched only if too many repeat
            cand = np.argpartition(keys, k - 1)[:k] if k < m else np.arange(m)
            cand = cand[np.argsort(keys[cand], kind="stable")]
            Zc = take_rows(cand)
            first = unique_row_indices(Zc)
            if first.size >= n or k == m:
                break
            k = min(m, 2 * k)
        if first.size < n:
            raise ValueError(f"found only {first.size} distinct rows among {cand.size}; lower n_basis")
        keep = np.sort(first)[:n]
        idx = cand[keep]
        order = np.argsort(idx)
        return Zc[keep][order], idx[order]
    arr = np.asarray(basis)
    if arr.ndim == 1 and arr.dtype.kind in "iu":
        idx = arr.astype(np.int64)
        if idx.size == 0:
            raise ValueError("basis row indices are empty; pass at least one row index")
        if idx.min() < 0 or idx.max() >= m:
            raise ValueError(f"basis row indices must be in [0, {m}); got {idx.min()}..{idx.max()}")
        return take_rows(idx), idx  # repeats are dropped per kernel by the fit
    Z = np.asarray(basis, dtype=float)
    if Z.ndim != 2 or Z.shape[1] != n_features or Z.shape[0] < 1:
        raise ValueError(
            f"basis must be 'random', 1-D row indices or points of shape (n, {n_features}); got {Z.shape}"
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("basis points contain NaN or infinity")
    return Z, None
