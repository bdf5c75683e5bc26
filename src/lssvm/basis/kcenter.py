"""k-center (farthest-point) prototype selection (Gonzalez 1985; Karsmakers et al. 2011, §4.2)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import squared_distances
from ._checks import check_count, check_input

__all__ = ["kcenter"]


def kcenter(X, n, random_state=None):
    """Gonzalez's farthest-point clustering: ``n`` prototypes that cover ``X``.

    Start from a random point, then repeatedly add the point farthest (in
    Euclidean distance) from all chosen ones; the result is within a factor 2
    of the optimal k-center covering radius.

    Parameters
    ----------
    X : ndarray of shape (N, d)
    n : int
        Number of prototypes, 1 <= n <= number of distinct rows.
    random_state : int, RandomState or None
        Picks the first point.

    Returns
    -------
    indices : ndarray of shape (n,)
        Rows of ``X``, in selection order.

    Raises
    ------
    ValueError
        If ``X`` is not a dense, non-empty, finite 2-D array, or ``n`` is
        not an integer in [1, number of distinct rows].

    Notes
    -----
    O(N n d) time (one distance column per prototype) and O(N) memory.
    """
    X = check_input(X, sparse_ok=False)
    N = X.shape[0]
    n = check_count("n", n)
    if n > N:
        raise ValueError(f"n must be an integer in [1, {N}]; got {n!r}")
    rng = check_random_state(random_state)
    chosen = np.empty(int(n), dtype=np.intp)
    chosen[0] = rng.randint(N)
    dist = squared_distances(X, X[chosen[:1]])[:, 0]
    for k in range(1, int(n)):
        j = int(np.argmax(dist))
        if dist[j] <= 0.0:
            raise ValueError(f"X has only {k} distinct rows; cannot choose n={n} distinct prototypes")
        chosen[k] = j
        np.minimum(dist, squared_distances(X, X[j : j + 1])[:, 0], out=dist)
    return chosen
