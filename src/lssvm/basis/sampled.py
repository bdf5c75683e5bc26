"""Pivoted-Cholesky basis from a row sample: the "pchol" basis of rows that
are not in memory (Dask input, streamed tables).

A uniform sample of ``SAMPLE_FACTOR * n`` distinct rows is fetched (one
pass reading those rows only), and the pivoted Cholesky factorisation
(:func:`lssvm.basis.pivoted_cholesky`) picks the n points of the sample
that its kernel matrix reconstructs worst.  The sample is large enough
that its points cover the input density as the whole table's do, so the
basis has the quality of the in-memory one at the same size (measured:
``benchmarks/tabular.py``), at a cost that does not grow with the rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .pchol import pivoted_cholesky
from .random import draw_basis_rows

__all__ = ["SAMPLE_FACTOR", "sampled_pivoted_cholesky"]

#: Sample rows per basis point.  At 20, friedman1 (m = 20,000, n = 500) and diamonds reached the
#: in-memory basis's test error within 1 %; the selection costs O(20 n^2 (d + n)), about a second at
#: n = 500 on one core, whatever the number of rows.
SAMPLE_FACTOR = 20


def sampled_pivoted_cholesky(n_rows, n_features, take_rows, kernel_for, n_basis, random_state=None, *,
                             pivot_tol=1e-6, rcond=1e-10, sample_factor=SAMPLE_FACTOR):
    """Pivoted-Cholesky basis points chosen among a uniform row sample.

    Parameters
    ----------
    n_rows, n_features : int
        Shape of the training inputs (m, d).
    take_rows : callable
        ``take_rows(indices)`` returns those rows (k, d) in the given order
        (for Dask data: one pass fetching k rows).
    kernel_for : callable
        ``kernel_for(sample) -> Kernel``: the kernel at which to select,
        given the sample (k, d) (e.g. the "scale" width of the sample when
        the width is searched).
    n_basis : int
        Most points to select, 1 <= n_basis <= m.
    random_state : int, RandomState or None
        Seeds the sample (the same rows as :func:`lssvm.basis.random_basis`
        draws for the same seed and size; every row when the sample would
        hold all of them or more than the distinct ones) and the first pivot.
    pivot_tol, rcond : float
        As for :func:`lssvm.basis.pivoted_cholesky`.
    sample_factor : int, default=SAMPLE_FACTOR
        Sample rows per basis point (capped at m).

    Returns
    -------
    Z : ndarray of shape (n, d)
        The points, in pivot order (n < n_basis when the factorisation stops
        early on a numerically singular sample kernel).
    indices : ndarray of shape (n,)
        Their training rows.

    Notes
    -----
    Cost: fetching ``min(m, sample_factor n)`` rows, then
    O(s n (d + n)) for the factorisation of the s sample rows; memory O(s n).
    """
    rng = check_random_state(random_state)
    n = int(n_basis)
    s = int(min(n_rows, max(n, sample_factor * n)))
    if s < n_rows:
        try:
            Zs, rows = draw_basis_rows(n_rows, n_features, take_rows, "random", s, rng)
        except ValueError:  # fewer distinct rows than the sample size: all rows (pchol skips repeats)
            s = n_rows
    if s >= n_rows:
        rows = np.arange(n_rows)
        Zs = np.asarray(take_rows(rows), dtype=float)
    sel = pivoted_cholesky(Zs, kernel_for(Zs), min(n, Zs.shape[0]), pivot_tol=pivot_tol, rcond=rcond,
                           random_state=rng).indices
    return np.ascontiguousarray(Zs[sel]), np.asarray(rows[sel], dtype=np.intp)
