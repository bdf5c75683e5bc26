"""A fold's model from a downdate of the training fit, and the guard on its
accuracy: the error model, the threshold, the fold solver of the k-fold
routes and the stable refit past the threshold.

The fast hold-out formulas (:mod:`lssvm.cv.holdout`) obtain the model
trained without some rows from the training factorisation by a *downdate*:
they subtract the held-out rows' contribution from the training normal
matrix (or solve the equivalent ``I - U`` system).  Subtraction cancels
digits: once the remaining rows determine the model much worse than all
rows did, the downdated system is ill-conditioned and the result can lose
every digit while an explicit refit keeps almost all of them.

Each fast path therefore estimates its own relative error from a condition
estimate of the system it solved (cheap: LAPACK ``dpocon`` on a Cholesky
factor it already has, or a few steps of inverse iteration on a banded
one); past :data:`GUARD_RTOL` the fold is recomputed by the stable route,
:func:`stable_fold_predictions`: a refit of the fold on the *whitened
factor* (the training rows in the eigenbasis, ``M``) by an SVD of the
remaining rows, which never forms a difference of normal matrices.  If even
that route's own error estimate passes the threshold, a
:class:`~lssvm.exceptions.NumericalWarning` says so.

Error model (eps = 2.2e-16, float64):

* ``I - U`` path (h x h, Cholesky): ``U`` is a hat-matrix block, formed to
  about eps; the solve amplifies that by ``cond(I - U)``.
* normal-matrix paths (r x r, banded or dense): ``C = Lambda - N^T N`` is
  formed with an absolute error of about eps ``lambda_max``, amplified by
  ``||(C + alpha I)^-1||``.
* stable route: a backward-stable SVD of the fold's whitened rows; the
  first-order effect of a backward error ``eps ||M_R||`` on the predictions
  is bounded from the fold's residual and solution (see
  :func:`stable_fold_predictions`), relative to the larger of the largest
  prediction and the RMS of the fold's centred targets.

The fold solver
---------------
Both k-fold routes end in the same problem.  In coordinates where the
penalty is ``||beta||^2`` (the training eigenbasis in memory, the whitened
kernel rows on Dask), the model trained on a fold's remaining rows solves

    (C + alpha I) beta = rhs,

``C`` the centred scatter matrix of the remaining rows (restricted to the
subspace that keeps removed basis points at zero).  In memory ``C`` is a
downdate, ``Lambda - N^T N - s s^T / (m - h)`` (:mod:`lssvm.cv.holdout`);
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
where it passes :data:`GUARD_RTOL` get the real
estimate, two steps of inverse iteration on the banded Cholesky factor the
solve already has (O(r w) each).  Since the free bound is never below the
real estimate, the guard decides exactly as if every alpha were estimated.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..exceptions import warn_numerical
from ..solvers.shifted_band import DEFAULT_BANDWIDTH, ShiftedBandSolver

__all__ = ["GUARD_RTOL", "EPS", "free_error_bound", "solve_fold_path", "stable_fold_predictions", "warn_inaccurate"]

EPS = np.finfo(float).eps

#: Estimated relative error of a fast hold-out result above which the fold
#: is recomputed by the stable route (and, if that route's own estimate is
#: still above it, a ``NumericalWarning`` is issued): 1e-8, i.e. about 8
#: correct digits guaranteed by the estimate.
GUARD_RTOL = 1e-8


def stable_fold_predictions(fac, Y, H, p, E, alphas):
    """Hold-out predictions of one fold by an SVD of the fold's whitened rows.

    Parameters
    ----------
    fac : SparseRLSFactorization
        The training factorisation (uses ``M``, ``Q``).
    Y : ndarray of shape (m, v)
        Training targets.
    H : ndarray of shape (h,)
        Query rows.
    p : ndarray
        Positions (into ``H``) of the rows left out of training.
    E : ndarray
        Basis positions removed from the fold's model (may be empty).
    alphas : ndarray of shape (A,)

    Returns
    -------
    out : ndarray of shape (A, h, v)
    rel_err : ndarray of shape (A,)
        Estimated relative error of each alpha's predictions.

    Notes
    -----
    With ``R`` the remaining rows, ``Mc = M_R - mean(M_R)`` restricted to
    the null space of ``Q_E`` (the removed basis points' coefficients are
    zero, and the penalty stays ``||beta||^2`` there), the fold's ridge
    solution is ``beta = V diag(s / (s^2 + alpha)) U^T (y_R - mean(y_R))``
    from the thin SVD ``Mc = U S V^T``.  Cost O((m - h) r^2) once, then
    O(r (h + r) v) per alpha: an explicit refit without the kernel
    evaluations.  The difference of normal matrices that makes the fast
    downdates cancel is never formed.
    """
    m = fac.n_samples
    train = np.ones(m, dtype=bool)
    train[H[p]] = False
    Mr = fac.M[train]
    Yr = Y[train]
    mean_m = Mr.mean(axis=0)
    y_bar = Yr.mean(axis=0)
    Mc = Mr - mean_m
    Nz = None
    if E.size:
        Nz = linalg.null_space(fac.Q[E])  # (r, r - |E|), orthonormal
        Mc = Mc @ Nz
    out = np.empty((alphas.size, H.size, Y.shape[1]))
    if Mc.shape[1] == 0 or Mc.shape[0] == 0:
        out[:] = y_bar
        return out, np.zeros(alphas.size)
    try:
        U, s, Vt = linalg.svd(Mc, full_matrices=False, check_finite=False)
    except linalg.LinAlgError:  # pragma: no cover - gesdd failed to converge
        U, s, Vt = linalg.svd(Mc, full_matrices=False, check_finite=False, lapack_driver="gesvd")
    Yc = Yr - y_bar
    g = U.T @ Yc  # (k, v)
    out_of_range = max(float(np.sum(Yc * Yc) - np.sum(g * g)), 0.0)  # ||(I - U U^T) y_c||^2
    MH = fac.M[H] - mean_m
    if Nz is not None:
        MH = MH @ Nz
    MHV = MH @ Vt.T  # (h, k)
    s_max = s[0]
    y_scale = np.sqrt(np.sum(Yc * Yc) / max(Yc.shape[0], 1))
    rel_err = np.empty(alphas.size)
    for i, a in enumerate(alphas):
        shrink = s / (s * s + a)
        coef = shrink[:, None] * g  # V^T beta
        out[i] = MHV @ coef + y_bar
        # first-order effect of a backward error eps ||Mc|| on the ridge
        # solution: (Mc^T Mc + a)^-1 (dMc^T r - Mc^T dMc beta), so
        # |df| <= eps s_max (||M_H V (S^2 + a)^-1|| ||r|| + ||M_H V S (S^2 + a)^-1|| ||beta||)
        r_norm = np.sqrt(out_of_range + np.sum(((a / (s * s + a))[:, None] * g) ** 2))
        t1 = np.linalg.norm(MHV / (s * s + a)) * r_norm
        t2 = np.linalg.norm(MHV * shrink) * np.linalg.norm(coef)
        scale = max(np.abs(out[i]).max(), y_scale, np.finfo(float).tiny)
        rel_err[i] = 4 * EPS * (1.0 + s_max * (t1 + t2) / scale)
    return out, rel_err


def warn_inaccurate(call, rel_err, alpha, stacklevel=3):
    """The ``NumericalWarning`` of a result whose estimated relative error
    ``rel_err`` passes :data:`GUARD_RTOL` even on the stable route."""
    warn_numerical(f"{call}: the estimated relative error of the result is {rel_err:.1e} at alpha={alpha:g} "
        f"(above {GUARD_RTOL:g}) even after refitting the fold on the whitened factor: the "
        "remaining rows determine the model too poorly at this alpha (lambda_max / alpha is too "
        "large). Increase alpha, scale the features (poly kernels with large values), hold out "
        "fewer rows, or use more basis points", stacklevel=stacklevel)


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
        notes, The fold solver); inf where ``C + alpha I`` is not numerically positive
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
