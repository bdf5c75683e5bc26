"""One fold solver for every k-fold route: a fold's ridge problem for a whole
path of alphas, with its own error estimate.

Both k-fold routes end in the same problem.  In coordinates where the
penalty is ``||beta||^2`` (the training eigenbasis in memory, the whitened
kernel rows on Dask), the model trained on a fold's remaining rows solves

    (C + alpha I) beta = rhs,

``C`` the centred scatter matrix of the remaining rows (restricted to the
subspace that keeps removed basis points at zero).  In memory ``C`` is a
downdate, ``Lambda - N^T N - s s^T / (m - h)`` (:mod:`lssvm.cv.holdout_paths`);
on Dask it is a merge of the other folds' row-block moments
(:mod:`lssvm.cv.row_blocks`).  :func:`solve_fold_path` solves it for every
alpha from one orthogonal reduction to band form
(:class:`lssvm.solvers.shifted_band.ShiftedBandSolver`, about 4/3 r^3 flops,
then O(r w^2) per alpha), and estimates the relative error of each alpha's
solution.

Error model: ``C`` carries an absolute error of about ``eps * scale``, with
``scale`` its largest eigenvalue (or, for a downdate, that of the matrix it
was subtracted from), amplified by ``||(C + alpha I)^-1||``:

    est(alpha) = eps * (scale + alpha) * ||(C + alpha I)^-1||_2.

``C`` is positive semi-definite (a scatter matrix), so ``||(C + alpha
I)^-1|| <= 1 / alpha`` up to rounding: the *free* bound ``eps (scale +
alpha) / alpha`` decides most alphas without any work.  Only the alphas
where it passes :data:`~lssvm.cv.holdout_guard.GUARD_RTOL` get the real
estimate, two steps of inverse iteration on the banded Cholesky factor the
solve already has (O(r w) each).  Since the free bound is never below the
real estimate, the guard decides exactly as if every alpha were estimated.
"""

from __future__ import annotations

import numpy as np

from ..solvers.shifted_band import DEFAULT_BANDWIDTH, ShiftedBandSolver
from .holdout_guard import EPS, GUARD_RTOL

__all__ = ["solve_fold_path", "free_error_bound"]


def free_error_bound(scale, alphas):
    """``eps (scale + alpha) / alpha`` per alpha: the estimated relative error
    of a fold's solution when ``C`` is positive semi-definite, so that
    ``||(C + alpha I)^-1|| <= 1 / alpha``.  O(A)."""
    alphas = np.asarray(alphas, dtype=float)
    with np.errstate(divide="ignore"):
        return EPS * (scale + alphas) / alphas


def solve_fold_path(C, rhs, alphas, scale, bandwidth=DEFAULT_BANDWIDTH):
    """Solutions of ``(C + alpha I) x = rhs`` for every alpha, with their
    estimated relative errors.

    Parameters
    ----------
    C : ndarray of shape (r, r)
        The fold's symmetric positive semi-definite normal matrix (only its
        lower triangle is read), r >= 1.
    rhs : ndarray of shape (r, v)
    alphas : ndarray of shape (A,)
        Positive.
    scale : float
        The size of ``C``'s rounding error divided by eps: its largest
        eigenvalue, or that of the matrix ``C`` was downdated from.
    bandwidth : int, default=64
        Half-bandwidth of the reduction (see ``ShiftedBandSolver``).

    Returns
    -------
    X : ndarray of shape (r, A * v)
        Columns ``[i v : (i + 1) v]`` solve the system at ``alphas[i]``.
    est : ndarray of shape (A,)
        Estimated relative error of each alpha's solution (see the module
        docstring); inf where ``C + alpha I`` is not numerically positive
        definite.

    Notes
    -----
    Cost: about 4/3 r^3 flops for the reduction, O(r w^2 + r w v) per alpha,
    and O(r w) per alpha whose free bound passes ``GUARD_RTOL``.
    """
    alphas = np.asarray(alphas, dtype=float)
    est = free_error_bound(scale, alphas)
    trip = ~(est <= GUARD_RTOL)
    X, inv_norm = ShiftedBandSolver(C, bandwidth).solve(alphas, rhs, inverse_norms=trip)
    est[trip] = EPS * (scale + alphas[trip]) * inv_norm[trip]
    est[np.isinf(inv_norm)] = np.inf  # not numerically positive definite: solved by banded LU
    return X, est
