"""Per-fold moments: a k-fold model from the training Gram minus the fold's
rows, as coefficients that evaluate at any point (CV+).

In the eigenbasis of the training factorisation (the documentation's
Mathematics page, §2-3; notation of :mod:`lssvm.cv.holdout`), the training
rows are ``M`` (m x r, centred: ``1^T M = 0``), ``M^T M = Lambda`` and ``z =
M^T Yc``; a model is ``f(x) = m_x^T beta + b0`` with penalty ``alpha
||beta||^2``.  Training without the rows ``H'`` (h' of them, ``N = M_H'``,
``s = N^T 1``, ``m' = m - h'``) and with the removed basis points ``E`` held
at zero (``beta = Z x``, ``Z`` an orthonormal basis of the null space of
``Q_E``, so the penalty stays ``||x||^2``) solves

    (Z^T (Lambda - N^T N - s s^T / m') Z + alpha I) x = Z^T (z - N^T Yc_H' + s c / m'),
    b0 = y_mean + (c + s^T beta) / m',      c = -1^T Yc_H'

(eliminating the intercept: :class:`lssvm.cv.holdout_paths.BandPath` solves
the same system by a band reduction, for many alphas at once).  For one
alpha a dense Cholesky is cheapest: O(h' r^2) for the fold's Gram (one SYRK),
r^3 / 3 for the factor, plus O(r^2 |E|) for removed basis points, against
O(h h' r + h'^3) for the h x h route of the hold-out engine.  The fold model
then evaluates at t new points by one product, O(t r v): this is what makes
CV+ cheap when the folds are large and r is small.

**Conditioning.**  ``Lambda - N^T N`` is a difference: its rounding error is
about ``eps lambda_max``, amplified by ``||(C + alpha I)^-1||`` (the error
model of :mod:`lssvm.cv.fold_solver`).  The free bound ``eps (lambda_max +
alpha) / alpha`` decides most folds; otherwise LAPACK's ``dpocon`` on the
Cholesky factor in hand (O(r^2)) estimates it.  Past
:data:`~lssvm.cv.holdout_guard.GUARD_RTOL` (or when the Cholesky fails) the
fold is refitted on the whitened factor by an SVD of its remaining rows
(:func:`stable_fold_fit`, O((m - h') r^2), the stable route of
:mod:`lssvm.cv.holdout_guard`), and a :class:`~lssvm.exceptions.NumericalWarning`
is issued if even that route's estimate passes the threshold.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from .holdout_guard import EPS, GUARD_RTOL, stable_fold_predictions

__all__ = ["moments_cost", "hside_cost", "fold_fit", "rows_of", "stable_fold_fit"]


def rows_of(A, rows):
    """``A[rows]``: a view when ``rows`` is an ascending run of consecutive
    indices (the folds of an unshuffled k-fold), else a copy.  The view
    saves a copy of the fold's rows (h r floats) per fold."""
    if rows.size and rows[-1] - rows[0] == rows.size - 1 and (rows[1:] > rows[:-1]).all():
        return A[rows[0] : rows[-1] + 1]
    return A[rows]


def moments_cost(h, h_out, r, e):
    """Flops of :func:`fold_fit` for a fold of ``h`` query rows, ``h_out`` of
    them left out, rank ``r`` and ``e`` removed basis points (SYRK counted
    once per entry pair, as in :func:`lssvm.cv.holdout_paths.cheapest_path`)."""
    rr = r - e
    restrict = 2 * r * r * e + r * rr * rr + 2 * h_out * r * rr if e else 0
    return h_out * rr * rr + rr**3 / 3 + restrict + 2 * h * r


def hside_cost(h, h_out, r, e):
    """Flops of the h' x h' route for the same fold (the hold-out system
    ``I - U`` of :func:`lssvm.cv.conformal.fold_models`), counted alike."""
    return h_out * h_out * r + h_out**3 / 3 + 2 * e * h_out * r + 2 * r * e * e + 2 * h * r


def _null_basis(Q_E):
    """Orthonormal basis (r, r - e) of the null space of ``Q_E`` (e, r), from
    the full QR of ``Q_E^T`` (its rows are independent: ``Q`` is invertible
    on the Cholesky path); O(r^2 e)."""
    e = Q_E.shape[0]
    Qf, _ = linalg.qr(Q_E.T, mode="full", check_finite=False)
    return Qf[:, e:]


def fold_fit(fac, H_out, E, alpha):
    """One fold's model by its moments: ``f(x) = m_x^T beta + b0``.

    Parameters
    ----------
    fac : SparseRLSFactorization
        The training factorisation (Cholesky whitening when ``E`` is not
        empty).
    H_out : ndarray of shape (h',)
        Training rows left out of the fold's training set.
    E : ndarray of shape (e,)
        Basis positions removed from the fold's model (may be empty).
    alpha : float

    Returns
    -------
    beta : ndarray of shape (r, v)
        Coefficients in the eigenbasis.
    b0 : ndarray of shape (v,)
    est : float
        Estimated relative error of ``beta`` (module docstring); ``inf``
        where ``C + alpha I`` is not numerically positive definite.

    Notes
    -----
    O(h' r^2 + r^3 / 3), plus O(r^2 e + h' r (r - e)) with removed basis
    points.
    """
    m = fac.n_samples
    lam = fac.eigenvalues
    N = rows_of(fac.M, H_out)
    Yc = rows_of(fac.y_centered, H_out)
    mr = m - H_out.size
    s = np.ones(N.shape[0]) @ N  # column sums (a GEMV: half the time of N.sum(axis=0))
    c = -Yc.sum(axis=0)  # the training rows' centred targets sum to minus the left-out ones'
    rhs = fac.z - N.T @ Yc
    rhs += np.outer(s, c / mr)
    Z = None
    if E.size:
        Z = _null_basis(fac.Q[E])
        N = N @ Z
        s_r = s @ Z
        rhs = Z.T @ rhs
        C = np.asfortranarray((Z.T * lam) @ Z)
        C.flat[:: C.shape[0] + 1] += alpha
    else:
        s_r = s
        C = np.zeros((lam.size, lam.size), order="F")
        C.flat[:: lam.size + 1] = lam + alpha
    # C = G + alpha I - N^T N - s s^T / m', lower triangle only: one SYRK and one SYR, in place
    C = blas.dsyrk(-1.0, N.T, beta=1.0, c=C, trans=0, lower=1, overwrite_c=1)
    C = blas.dsyr(-1.0 / mr, s_r, a=C, lower=1, overwrite_a=1)
    scale = float(lam.max(initial=0.0))
    est = EPS * (scale + alpha) / alpha  # the free bound: ||(C + alpha I)^-1|| <= 1 / alpha (lssvm.cv.fold_solver)
    anorm = None
    if not est <= GUARD_RTOL:
        low = np.tril(C)
        anorm = np.abs(low + np.tril(low, -1).T).sum(axis=0).max()
    L, info = lapack.dpotrf(C, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        return None, None, np.inf
    if anorm is not None:  # the free bound trips: estimate ||(C + alpha I)^-1|| (1-norm >= 2-norm)
        rcond, info = lapack.dpocon(L, anorm, uplo="L")
        est = np.inf if info != 0 or rcond <= 0 else EPS * (scale + alpha) / (rcond * anorm)
    x, _ = lapack.dpotrs(L, rhs, lower=1)
    beta = x if Z is None else Z @ x
    return beta, fac.y_mean + (c + s @ beta) / mr, est


def stable_fold_fit(fac, H, p, E, alpha):
    """The fold's model by an SVD of its remaining whitened rows (no
    difference of normal matrices), and that route's error estimate.

    Parameters
    ----------
    fac : SparseRLSFactorization
    H : ndarray of shape (h,)
        The fold's rows; ``H[p]`` are left out of training.
    p : ndarray of int
    E : ndarray of shape (e,)
        Removed basis positions.
    alpha : float

    Returns
    -------
    beta : ndarray of shape (r, v)
    b0 : ndarray of shape (v,)
    est : float
        The estimated relative error of the fold's predictions on ``H``
        from :func:`lssvm.cv.holdout_guard.stable_fold_predictions`.

    Notes
    -----
    ``Mc = (M_R - mean(M_R)) Z = U S V^T``, ``beta = Z V diag(s / (s^2 +
    alpha)) U^T (y_R - mean(y_R))``, ``b0 = mean(y_R) - mean(M_R) beta``:
    O((m - h') r^2), the explicit refit without kernel evaluations.  The
    error estimate repeats the SVD inside ``stable_fold_predictions``
    (this route runs only for folds the guard sends here).
    """
    m = fac.n_samples
    train = np.ones(m, dtype=bool)
    train[H[p]] = False
    Y = fac.y_centered + fac.y_mean
    Mr = fac.M[train]
    mean_m = Mr.mean(axis=0)
    y_bar = Y[train].mean(axis=0)
    Mc = Mr - mean_m
    Z = _null_basis(fac.Q[E]) if E.size else None
    if Z is not None:
        Mc = Mc @ Z
    U, sv, Vt = linalg.svd(Mc, full_matrices=False, check_finite=False, lapack_driver="gesvd")
    x = Vt.T @ ((sv / (sv * sv + alpha))[:, None] * (U.T @ (Y[train] - y_bar)))
    beta = x if Z is None else Z @ x
    _, err = stable_fold_predictions(fac, Y, H, p, E, np.array([alpha]))
    return beta, y_bar - mean_m @ beta, float(err[0])
