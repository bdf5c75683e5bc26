"""Full (transductive) conformal prediction sets of a ridge model, in closed form.

The ridge regression confidence machine (Nouretdinov, Melluish & Vovk
2001; Burnaev & Nazarov 2016, arXiv 1609.05959) for absolute residual
scores, i.e. Lei, G'Sell, Rinaldo, Tibshirani & Wasserman 2018 (JASA 113),
Algorithm 1, without a grid of labels.

**The augmented fit.**  Any of lssvm's regressors at a fixed basis is a
ridge model with an unpenalised intercept on fixed features: rows ``z_i``
(features and 1), normal matrix ``P = sum_i z_i z_i^T + blockdiag(Pen, 0)``,
``theta = P^-1 sum_i y_i z_i`` and ``f(x) = z_x^T theta``.  Appending the
test point ``x`` with a candidate label ``y`` changes ``P`` by ``z_x
z_x^T`` and the right-hand side by ``y z_x``; Sherman-Morrison gives, with
``t = y - f(x)``, ``h = z_x^T P^-1 z_x`` and ``u_i = z_i^T P^-1 z_x``,

    theta(y) = theta + P^-1 z_x t / (1 + h),
    r_i(y) = e_i - u_i t / (1 + h)        (training row i, e_i = y_i - f(x_i)),
    r_x(y) = t / (1 + h)                  (the test point).

Every residual is affine in the candidate label.

**The set.**  ``y`` is in the set when ``#{i <= m : |r_i(y)| <= |r_x(y)|}
<= k - 1`` with ``k = ceil(coverage (m + 1))`` (Lei et al., Algorithm 1),
i.e. when at least ``m - k + 1`` training rows have ``|r_i(y)| > |r_x(y)|``.
Row i's indicator is the sign of

    g_i(t) = (e_i - (1 + u_i) t b)(e_i + (1 - u_i) t b),   b = 1 / (1 + h),

a product of two affine factors: it changes at ``t1 = e_i (1 + h) / (1 +
u_i)`` (where the indicator moves by ``-sign(e_i)``) and ``t2 = -e_i (1 + h)
/ (1 - u_i)`` (by ``+sign(e_i)``), and at ``t -> -inf`` it is on exactly when
``|u_i| > 1``.  Sorting the 2m breakpoints and summing the moves gives the
count on every segment of the line: O(m log m) per test point and output,
after the O(m p) products ``u_i``.  The set is the union of the segments
where the count reaches ``m - k + 1``; it always holds ``y = f(x)``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ...exceptions import warn_numerical
from ...kernels import iter_row_blocks
from .jackknife import product_rows, weighted_norms, whitened_rows
from .ranks import conformal_ranks
from .screened import MonotoneValues, screened_kth

__all__ = ["full_conformal_bounds", "ridge_full_conformal", "screened_full_conformal", "sparse_full_conformal"]

#: estimated relative error of the leverages (eps cond(A), LAPACK dpocon) past which a NumericalWarning is given
_LEVERAGE_RTOL = 1e-8

#: test rows per block are chosen so a block's kernel and feature rows stay near this many floats (the screened
#: order statistics hold no (t, m) array; the direct route's rows are few)
_BLOCK_FLOATS = 1 << 22


def sparse_full_conformal(fac, kernel, basis_vectors, X, coverage, alpha, block_size=None):
    """Full conformal sets (their convex hulls) of the sparse LS-SVM at a fixed basis.

    Parameters
    ----------
    fac, kernel, basis_vectors, X, coverage, alpha, block_size
        As :func:`lssvm.cv.conformal.jackknife.sparse_jackknife_plus`: the
        factorisation, the fitted kernel, the basis (n, d), the test rows
        (t, d), the coverage, the fitted alpha and the most test rows per block.

    Returns
    -------
    ndarray of shape (t, 2, v)

    Notes
    -----
    In the eigenbasis ``P^-1 = blockdiag(Q D Q^T, 1/m)`` (:mod:`lssvm.cv.conformal.jackknife`),
    so ``u_i(x) = 1/m + a_x . a_i`` and ``h(x) = 1/m + ||a_x||^2`` with
    ``a = D^1/2 m``: O(n r) per test point for ``a_x``, then the screened
    order statistics of :func:`screened_full_conformal` (a few per cent of
    the m rows get their ``u_i``).
    """
    m = fac.n_samples
    a = float(alpha)
    E = fac.residuals(a)
    d, norms = whitened_rows(fac, a)
    coef = d[:, None] * fac.z
    out = np.empty((X.shape[0], 2, E.shape[1]))
    step = max(1, _BLOCK_FLOATS // max(basis_vectors.shape[0], d.size, 1))
    if block_size is not None:
        step = min(step, int(block_size))
    for rows in iter_row_blocks(X.shape[0], step):
        Mx = product_rows(fac, kernel(X[rows], basis_vectors))
        out[rows] = screened_full_conformal(E, fac.M, norms, Mx * d, 1.0 / m, fac.y_mean + Mx @ coef, coverage,
                                            x_norms=weighted_norms(Mx, d))
    return out


def screened_full_conformal(E, A, row_norms, Ax, offset, centre, coverage, x_norms=None):
    """:func:`full_conformal_bounds` with the cross-leverages ``u_i = offset +
    a_x . a_i`` of rows ``a``, computed only where the order statistics
    need them.

    Parameters
    ----------
    E : ndarray of shape (m, v)
        Training residuals.
    A : ndarray of shape (m, r)
        Training rows ``a_i``; ``row_norms`` (m,) their norms.
    Ax : ndarray of shape (t, r)
        Test rows ``a_x``: ``h(x) = offset + ||a_x||^2``.
    offset : float
        ``1/m`` for the sparse model (its intercept), 0 for a ridge model
        whose rows carry the intercept.
    centre : ndarray of shape (t, v)
    coverage : float
    x_norms : ndarray of shape (t,), optional
        Norms with ``|a_x . a_i| <= x_norms[x] row_norms[i]`` (a weighted
        Cauchy-Schwarz: for ``a_x = D m_x`` and ``a_i = m_i``, the norms
        ``||D^1/2 m||``), and then ``h(x) = offset + x_norms^2``; default
        ``||a_x||``.

    Returns
    -------
    ndarray of shape (t, 2, v)

    Notes
    -----
    Where every ``|u_i| < 1`` (certified by ``offset + ||a_x|| ||a_i|| <
    1``) the ends are ``f(x) +- (1 + h)`` times the k-th smallest of
    ``|e_i| / (1 +- s_i u_i)``, ``s_i = sign(e_i)``: monotone in ``a_x .
    a_i``, screened (:mod:`lssvm.cv.conformal.screened`).  Other test
    points, and non-finite inputs, take :func:`full_conformal_bounds` on
    their explicit ``u_i``.  The same sets as there up to rounding.
    """
    m, v = E.shape
    k = conformal_ranks(coverage, m)[1]
    if x_norms is None:
        x_norms = np.sqrt(np.einsum("ij,ij->i", Ax, Ax))
    h = offset + x_norms * x_norms
    out = np.empty((Ax.shape[0], 2, v))
    done = np.zeros(Ax.shape[0], dtype=bool)
    # finite row norms (sums of squares) certify finite rows without a pass over the m x r rows per block
    if np.all(np.isfinite(E)) and np.all(np.isfinite(row_norms)) and np.all(np.isfinite(Ax)):
        selections = []
        for j in range(v):
            s = np.sign(E[:, j])
            ae = np.abs(E[:, j])
            selections.append((MonotoneValues(1.0 - s * offset, -s, ae), k))  # |e_i| / (1 - s_i u_i): -lo_i / (1 + h)
            selections.append((MonotoneValues(1.0 + s * offset, s, ae), k))  # |e_i| / (1 + s_i u_i): hi_i / (1 + h)
        got, done = screened_kth(Ax, A, row_norms, selections, max_reach=1.0 - abs(offset), x_norms=x_norms)
        one_h = (1.0 + h)[:, None, None]
        out[:] = centre[:, None, :] + np.array([-1.0, 1.0])[None, :, None] * one_h * got.reshape(-1, v, 2).transpose(0, 2, 1)
    rest = np.flatnonzero(~done)
    for part in iter_row_blocks(rest.size, max(1, _BLOCK_FLOATS // m)):  # the direct route: (t, m) in blocks
        sub = rest[part]
        out[sub] = full_conformal_bounds(E, Ax[sub] @ A.T + offset, h[sub], centre[sub], coverage)
    return out


def full_conformal_bounds(E, U, h, centre, coverage, with_gaps=False):
    """Convex hulls of the full conformal sets of a ridge model (module docstring).

    Parameters
    ----------
    E : ndarray of shape (m, v)
        Training residuals of the model fitted on the m training rows.
    U : ndarray of shape (t, m)
        Cross-leverages ``u_i(x) = z_i^T P^-1 z_x`` of the test points.
    h : ndarray of shape (t,)
        Self-leverages ``h(x) = z_x^T P^-1 z_x`` (>= 0).
    centre : ndarray of shape (t, v)
        The model's predictions ``f(x)``.
    coverage : float in (0, 1)
        Needs ``ceil(coverage (m + 1)) <= m`` (checked by the caller).
    with_gaps : bool, default=False
        Also return whether each set has a gap, i.e. is not an interval.

    Returns
    -------
    bounds : ndarray of shape (t, 2, v)
        Lower and upper ends of each set's convex hull (``-inf`` / ``inf``
        where the set is unbounded, which needs a training row with ``|u_i|
        > 1``).
    gaps : ndarray of bool, shape (t, v)
        Only with ``with_gaps``.

    Notes
    -----
    A test point whose cross-leverages all have ``|u_i| < 1`` (the usual
    case: ``|u_i| <= sqrt(h_ii h)``) has an interval for its set: row i
    then beats the test point exactly on ``(lo_i, hi_i)``, ``hi_i = |e_i| (1
    + h) / (1 + sign(e_i) u_i)`` and ``lo_i = -|e_i| (1 + h) / (1 - sign(e_i)
    u_i)``, so the ends are ``f(x)`` plus the k-th smallest ``hi_i`` and
    minus the k-th smallest ``-lo_i``: two selections, O(m) per point and
    output, as cheap as jackknife+.  Other points take the sort of all 2m
    breakpoints, O(m log m).  Memory O(t m): the caller passes blocks of
    test rows.
    """
    m, v = E.shape
    k = conformal_ranks(coverage, m)[1]
    simple = np.all(np.abs(U) < 1.0, axis=1)
    if np.all(simple):
        return _selected_bounds(E, U, h, centre, k, with_gaps)
    h = np.asarray(h, dtype=float)
    bounds = np.empty((U.shape[0], 2, v))
    gaps = np.zeros((U.shape[0], v), dtype=bool)
    for rows, route in ((simple, _selected_bounds), (~simple, _sorted_bounds)):  # the sort only where needed
        if np.any(rows):
            got = route(E, U[rows], h[rows], centre[rows], k, True)
            bounds[rows], gaps[rows] = got
    return (bounds, gaps) if with_gaps else bounds


def _selected_bounds(E, U, h, centre, k, with_gaps):
    """The set's ends where every ``|u_i| < 1``: order statistics of the
    rows' crossing points (:func:`full_conformal_bounds` notes)."""
    v = E.shape[1]
    one_h = 1.0 + np.asarray(h, dtype=float)[:, None]
    bounds = np.empty((U.shape[0], 2, v))
    for j in range(v):
        w = np.abs(E[:, j]) * one_h  # (t, m): |e_i| (1 + h)
        su = U * np.sign(E[:, j])
        den = 1.0 + su
        np.divide(w, den, out=den)  # hi_i, in place: three (t, m) arrays in all
        den.partition(k - 1, axis=1)
        bounds[:, 1, j] = centre[:, j] + den[:, k - 1]
        np.subtract(1.0, su, out=su)
        np.divide(w, su, out=su)  # -lo_i
        su.partition(k - 1, axis=1)
        bounds[:, 0, j] = centre[:, j] - su[:, k - 1]
    return (bounds, np.zeros((U.shape[0], v), dtype=bool)) if with_gaps else bounds


def _sorted_bounds(E, U, h, centre, k, with_gaps):
    """The set's hull from all 2m sorted breakpoints (any cross-leverages)."""
    m, v = E.shape
    need = m - k + 1
    one_h = 1.0 + np.asarray(h, dtype=float)[:, None]  # (t, 1)
    start = np.count_nonzero(np.abs(U) > 1.0, axis=1)  # (t,) rows on at t -> -inf
    with np.errstate(divide="ignore", invalid="ignore"):
        inv1 = one_h / (1.0 + U)  # (t, m); inf where u_i = -1: that factor never changes sign
        inv2 = -one_h / (1.0 - U)
    bounds = np.empty((U.shape[0], 2, v))
    gaps = np.zeros((U.shape[0], v), dtype=bool)
    for j in range(v):
        e = E[:, j]
        s = np.sign(e)
        T = np.concatenate([e * inv1, e * inv2], axis=1)  # (t, 2m) breakpoints in t = y - f(x)
        T[~np.isfinite(T)] = np.inf  # a factor of constant sign: no breakpoint on the line
        moves = np.concatenate([np.broadcast_to(-s, U.shape), np.broadcast_to(s, U.shape)], axis=1)
        order = np.argsort(T, axis=1, kind="stable")
        Ts = np.take_along_axis(T, order, axis=1)
        counts = start[:, None] + np.cumsum(np.take_along_axis(moves, order, axis=1), axis=1)  # after each point
        counts = np.concatenate([start[:, None], counts], axis=1)  # (t, 2m + 1) segments
        inside = counts >= need
        # a segment of zero length (tied breakpoints) holds no label: it neither widens nor splits the set
        left = np.concatenate([np.full((Ts.shape[0], 1), -np.inf), Ts], axis=1)
        right = np.concatenate([Ts, np.full((Ts.shape[0], 1), np.inf)], axis=1)
        inside &= right > left
        first = np.argmax(inside, axis=1)
        last = inside.shape[1] - 1 - np.argmax(inside[:, ::-1], axis=1)
        rows = np.arange(Ts.shape[0])
        bounds[:, 0, j] = centre[:, j] + left[rows, first]
        bounds[:, 1, j] = centre[:, j] + right[rows, last]
        if with_gaps:
            span = np.arange(inside.shape[1])
            within = (span >= first[:, None]) & (span <= last[:, None])
            gaps[:, j] = np.any(within & ~inside & (right > left), axis=1)
    return (bounds, gaps) if with_gaps else bounds


def ridge_full_conformal(Z, penalty, test_rows, X, E, centre, coverage, block_size=None):
    """Full conformal sets (their convex hulls) of a general ridge model on fixed rows.

    The model minimises ``||y - Z theta||^2 + theta^T penalty theta`` over
    augmented rows ``Z`` (features and, where the model has one, a column of
    ones for the intercept): the Nystrom and fixed-size LS-SVMs at their
    fitted basis.

    Parameters
    ----------
    Z : ndarray of shape (m, p)
        The training rows.
    penalty : ndarray of shape (p, p)
        Symmetric positive semi-definite, with ``Z^T Z + penalty`` positive definite.
    test_rows : callable
        ``test_rows(X_block) -> (t_block, p)``.
    X : ndarray of shape (t, d)
    E : ndarray of shape (m, v)
        Training residuals of the fitted model.
    centre : ndarray of shape (t, v)
        Its predictions at ``X``.
    coverage : float
    block_size : int, optional

    Returns
    -------
    ndarray of shape (t, 2, v)

    Notes
    -----
    One Cholesky factorisation ``A = Z^T Z + penalty = C^T C``, O(m p^2 +
    p^3), and the rows ``a_i = C^-T z_i``, O(m p^2); then per test point
    ``a_x = C^-T z_x``, O(p^2), ``u_i = a_x . a_i`` and ``h = ||a_x||^2``,
    with the screened order statistics of :func:`screened_full_conformal`
    (the few rows near the k-th smallest get their ``u_i``).  A ``NumericalWarning`` says when
    ``eps cond(A)`` passes 1e-8 (the leverages, and so the bounds, lose digits).
    """
    m, p = Z.shape
    if p == 0:  # no coordinate at all (a model fixed at 0): every leverage is 0
        return full_conformal_bounds(E, np.zeros((X.shape[0], m)), np.zeros(X.shape[0]), centre, coverage)
    A = Z.T @ Z + penalty
    anorm = np.abs(A).sum(axis=0).max()
    c, info = lapack.dpotrf(A, lower=0, clean=1)
    if info != 0:
        raise ValueError(
            "the model's normal matrix is not positive definite, so its full conformal sets are undefined; "
            "increase alpha"
        )
    rcond, _ = lapack.dpocon(c, anorm, uplo="U")
    est = np.inf if rcond <= 0 else np.finfo(float).eps / rcond
    if est > _LEVERAGE_RTOL:
        warn_numerical(f"the full conformal bounds may carry a relative error of about {est:.1e}: the model's normal "
            "matrix is ill-conditioned (Z^T Z squares the features' conditioning); increase alpha", stacklevel=4)
    W = linalg.solve_triangular(c, Z.T, trans="T", check_finite=False).T  # rows a_i = c^-T z_i: u_i = a_x . a_i
    norms = np.sqrt(np.einsum("ij,ij->i", W, W))
    out = np.empty((X.shape[0], 2, E.shape[1]))
    step = max(1, _BLOCK_FLOATS // max(p, 1))
    if block_size is not None:
        step = min(step, int(block_size))
    for rows in iter_row_blocks(X.shape[0], step):
        Wx = linalg.solve_triangular(c, test_rows(X[rows]).T, trans="T", check_finite=False).T
        out[rows] = screened_full_conformal(E, W, norms, Wx, 0.0, centre[rows], coverage)
    return out
