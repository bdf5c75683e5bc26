"""The K fold models of CV+: each fold's model as coefficients that evaluate
at any point, from the training factorisation, and their threads.

One concern in four routes, each falling back to the next:

* **Block Grams** (:func:`block_folds_fit`): the folds are the fit's
  contiguous blocks, whose Grams the fit kept; a fold costs an r x r
  subtraction and a Cholesky, no SYRK over its rows.
* **Equal folds** (:func:`equal_folds_fit`): every fold has h rows; the small
  steps run over all folds at once, the SYRK and Cholesky per fold.
* **Per-fold moments** (:func:`fold_fit`): any fold, with removed basis
  points, with its own error estimate.
* **Stable refit** (:func:`stable_fold_fit`): the fold's remaining whitened
  rows by an SVD, for folds the error guard sends here.

The models evaluate at new points through :class:`FoldValues`; a small
call's fold loop may take a second thread (:func:`fold_threads`,
:func:`run_split`).

Per-fold moments
----------------
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

(eliminating the intercept: :class:`lssvm.cv.holdout.BandPath` solves
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
:data:`~lssvm.cv.fold_solver.GUARD_RTOL` (or when the Cholesky fails) the
fold is refitted on the whitened factor by an SVD of its remaining rows
(:func:`stable_fold_fit`, O((m - h') r^2), the stable route of
:mod:`lssvm.cv.fold_solver`), and a :class:`~lssvm.exceptions.NumericalWarning`
is issued if even that route's estimate passes the threshold.

Equal folds
-----------
:func:`fold_fit` solves, per fold, the r x r system

    (Lambda + alpha I - N^T N - s s^T / m') beta = z - N^T Yc_H + s c / m',
    b0 = y_mean + (c + s^T beta) / m',      c = -1^T Yc_H

(``N = M_H`` the fold's rows in the training eigenbasis, ``s = N^T 1``,
``m' = m - h``).  At CV+'s usual sizes (ten folds of a few hundred rows, r ~
100) the BLAS of one fold is ~60 us (a SYRK and an r^3 / 3 Cholesky) and
the dozen small NumPy steps around it cost ~40 us more.  When every fold
has the same number of rows, leaves all of them out (``basis_in_holdout``
"keep", or "train" with no basis row in the folds) and removes no basis
point, the folds' rows form one (K, h, r) stack -- a view of ``M`` for the
contiguous folds of an unshuffled k-fold -- and the small steps (column
sums, right-hand sides, intercepts, out-of-fold predictions) are one NumPy
call each over the stack; only the SYRK, Cholesky and solve stay per fold
(:func:`run_split` may run them on two threads).
Same maths and flops as fold by fold.  (A stacked ``np.matmul`` for the
Grams and a batched ``np.linalg.cholesky`` were timed slower than the
per-fold LAPACK calls: they copy each matrix.)

**Guard.**  Only when the free error bound of
:func:`fold_fit`, ``eps (lambda_max + alpha) /
alpha``, is within :data:`~lssvm.cv.fold_solver.GUARD_RTOL` (no
condition estimate needed); a fold whose Cholesky still fails is refitted
by the caller's fold-by-fold route, with its condition estimate and
stable refit.

Block Grams
-----------
:func:`fold_fit` solves, per fold, in the training
eigenbasis (``N = M_H``, ``s = N^T 1``, ``m' = m - h``, ``c = -1^T Yc_H``)

    (Lambda + alpha I - N^T N - s s^T / m') beta = z - N^T Yc_H + s c / m',
    b0 = y_mean + (c + s^T beta) / m'.

``M = Phi V`` with ``V`` orthogonal (r x r), so with ``w = V beta`` the same
system in the whitened coordinates of the fit reads

    (G - G_H + alpha I - s_w s_w^T / m') w = (Phi^T Yc - Phi_H^T Yc_H) + s_w c / m',
    b0 = y_mean + (c + s_w^T w) / m',

``G = Phi^T Phi`` (= ``V Lambda V^T``), ``G_H = Phi_H^T Phi_H``, ``s_w =
Phi_H^T 1`` (``= V s``).  When the folds are the fit's contiguous blocks
(:mod:`lssvm.solvers.block_gram`: an int ``cv`` or an unshuffled ``KFold``
with the fit's K), every term is kept by the fit, so a fold costs an r x r
subtraction, a rank-one update, a Cholesky (r^3 / 3) and a solve: no SYRK
over the fold's rows (h r^2 flops, ~40 us at h = 200, r = 100) and no pass
over M for them.  M is read once, for the out-of-fold predictions ``M_H
beta + b0`` (``beta = V^T w``).

**Conditioning.**  The matrix is the same as the eigenbasis route's up to an
orthogonal change of coordinates; its rounding error is about ``eps ||G||
= eps lambda_max`` (``G - G_H`` is a difference, as ``Lambda - N^T N``),
so the same free bound ``eps (lambda_max + alpha) / alpha <= GUARD_RTOL``
decides; past it (or for a failed Cholesky) the caller's fold-by-fold route
with its condition estimate and stable refit takes over.

Threads
-------
A CV+ call at m = 2,000 with r = 100 spends about 1 ms in its ten fold
models (a SYRK and a Cholesky each, ~60 us of BLAS per fold; BLAS and LAPACK
release the GIL).  On one BLAS thread per Python thread, two halves of the
folds can run side by side, on one reused worker thread
(:func:`lssvm._threads.parallel_map` starts a pool per call, and lssvm's
thread rule, :func:`lssvm._threads.current_plan`, costs ~0.8 ms to decide
for ``n_jobs=None``: three reads of the run queue 0.2 ms apart).

* ``n_jobs=None`` (the default): serial.  On this project's 2-core machine
  two threads never beat one, even in moments when the run queue showed a
  free core (pinned to one core they cost 6 %, under partial load 5-15 %,
  and two-thread DGEMM ran at 66 against 82 GFlop/s on one thread), so a
  cheap load test was not enough to take them by default.
* ``n_jobs`` given (the estimator's): as lssvm's rule for it (``1``:
  serial; ``k > 1`` or ``-1``: two threads where two cores are usable).
* Inside another lssvm thread pool or a Dask task: serial.

The worker runs single-threaded BLAS (the caller's scope) and never spins.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from .._threads import current_plan, in_parallel_region
from ..exceptions import with_numerical_handler
from .fold_solver import EPS, GUARD_RTOL, stable_fold_predictions

__all__ = [
    "FoldValues",
    "block_cv_plus",
    "block_folds_fit",
    "equal_folds_fit",
    "fold_fit",
    "fold_threads",
    "hside_cost",
    "matches_blocks",
    "moments_cost",
    "rows_of",
    "run_split",
    "stable_fold_fit",
]


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
    once per entry pair, as in :func:`lssvm.cv.holdout.cheapest_path`)."""
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
        Estimated relative error of ``beta`` (module notes, Per-fold moments); ``inf``
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
        from :func:`lssvm.cv.fold_solver.stable_fold_predictions`.

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


#: largest M (entries) gathered whole for a shuffled partition (32 MiB); beyond, fold by fold
_MAX_GATHER = 1 << 22


def equal_folds_fit(fac, folds, alpha, threads=1):
    """The models of K equal folds by their moments, and their out-of-fold
    predictions.

    Parameters
    ----------
    fac : SparseRLSFactorization
    folds : list of ndarray of int
        K test folds, a partition of the rows, all of h rows; each fold's
        rows are left out of its training set and no basis point is removed.
    alpha : float
    threads : int, default=1
        2: the per-fold SYRK and Cholesky on two threads.

    Returns
    -------
    beta : ndarray of shape (r, K, v)
        Coefficients in the eigenbasis (column k is fold k's).
    b0 : ndarray of shape (K, v)
    oof : ndarray of shape (m, v)
        Each row's prediction by the model of its fold.
    failed : list of int
        Folds whose Cholesky failed (their entries are not set: refit them).

    Or None when the free error bound passes ``GUARD_RTOL``, or the folds
    are a shuffled partition of an M larger than ``_MAX_GATHER`` entries
    (the caller then goes fold by fold).

    Notes
    -----
    O(m r^2 + K r^3 / 3); memory O(m r) for a shuffled partition's gathered
    rows (none for contiguous folds) and O(r^2) per fold for its Gram.
    """
    lam = fac.eigenvalues
    if not EPS * (float(lam.max(initial=0.0)) + alpha) / alpha <= GUARD_RTOL:
        return None
    m, v = fac.n_samples, fac.z.shape[1]  # not y_centered.shape: that property forms the m x v centred targets
    r = lam.size
    K, h = len(folds), folds[0].size
    order = np.concatenate(folds)
    if order[0] == 0 and order[-1] == m - 1 and (order[1:] > order[:-1]).all():  # unshuffled: views of M
        N, Y = fac.M.reshape(K, h, r), fac.y_centered.reshape(K, h, v)
    elif fac.M.size <= _MAX_GATHER:
        N, Y = fac.M[order].reshape(K, h, r), fac.y_centered[order].reshape(K, h, v)
    else:  # a shuffled partition of a large M: fold by fold, one fold's rows at a time
        return None
    mr = float(m - h)
    s = np.ones(h) @ N  # (K, r) column sums
    c = -Y.sum(axis=1)  # (K, v)
    rhs = fac.z - np.matmul(N.transpose(0, 2, 1), Y)  # (K, r, v)
    rhs += s[:, :, None] * (c / mr)[:, None, :]
    diag = np.asfortranarray(np.diag(lam + alpha))
    x = np.empty((K, r, v))
    failed = []

    def solve(k):
        C = blas.dsyrk(-1.0, N[k].T, beta=1.0, c=diag.copy(order="F"), trans=0, lower=1, overwrite_c=1)
        C = blas.dsyr(-1.0 / mr, s[k], a=C, lower=1, overwrite_a=1)
        L, info = lapack.dpotrf(C, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            failed.append(k)
            return
        x[k] = lapack.dpotrs(L, rhs[k], lower=1)[0]

    run_split(solve, K, threads)
    b0 = fac.y_mean + (c + np.einsum("kr,krv->kv", s, x)) / mr
    oof = np.empty((m, v))
    oof[order] = (np.matmul(N, x) + b0[:, None, :]).reshape(m, v)
    return x.transpose(1, 0, 2), b0, oof, failed


def matches_blocks(fac, folds):
    """The fit's :class:`~lssvm.solvers.block_gram.BlockGrams` when ``folds``
    are exactly its contiguous blocks, in order (else None)."""
    blocks = getattr(fac, "block_grams", None)
    if blocks is None or len(folds) != blocks.offsets.size - 1:
        return None
    off = blocks.offsets
    for j, f in enumerate(folds):
        if f.size != off[j + 1] - off[j] or f[0] != off[j] or f[-1] != off[j + 1] - 1:
            return None
    # right sizes and ends; strictly ascending too, so the m rows in order are 0 .. m - 1: exactly the blocks
    # (no partition check needed)
    order = np.concatenate(folds)
    return blocks if np.logical_and.reduce(order[1:] > order[:-1]) else None


def block_folds_fit(fac, folds, alpha):
    """The K fold models of CV+ and their out-of-fold predictions, from the
    fit's block Grams (module notes, Block Grams).

    Parameters
    ----------
    fac : SparseRLSFactorization
        With ``block_grams`` (fitted with ``fold_blocks``).
    folds : list of ndarray of int
        The test folds, a partition of the rows; each fold's rows are all
        left out of its training set and no basis point is removed.
    alpha : float

    Returns
    -------
    beta : ndarray of shape (r, K, v)
        Coefficients in the eigenbasis (column k is fold k's).
    b0 : ndarray of shape (K, v)
    oof : ndarray of shape (m, v)
        Each row's prediction by the model of its fold.
    failed : list of int
        Folds whose Cholesky failed (their entries are not set: refit them).

    Or None when the folds are not the fit's blocks or the free error bound
    passes ``GUARD_RTOL`` (the caller then takes its other routes).

    Notes
    -----
    O(K r^3 / 3 + K r^2 v) for the folds and O(m r v) for the out-of-fold
    predictions; memory O(K r^2) for the K training Grams.
    """
    blocks = matches_blocks(fac, folds)
    lam = fac.eigenvalues
    if blocks is None or not EPS * (float(np.maximum.reduce(lam, initial=0.0)) + alpha) / alpha <= GUARD_RTOL:
        return None
    m, v = fac.n_samples, fac.z.shape[1]  # not y_centered.shape: that property forms the m x v centred targets
    r = lam.size
    K = len(folds)
    off = blocks.offsets
    sizes = off[1:] - off[:-1]
    mr = (m - sizes).astype(float)
    c = -np.add.reduceat(fac.y_centered, off[:-1], axis=0)  # (K, v)
    # right-hand sides: the training rows' cross products plus the intercept's share
    rhs = blocks.cross.sum(axis=0) - blocks.cross
    rhs += blocks.sums[:, :, None] * (c / mr[:, None])[:, None, :]
    shifted = blocks.total.copy(order="F")
    shifted.flat[:: r + 1] += alpha  # G + alpha I
    A = np.empty((r, r), order="F")  # one fold's matrix at a time: it stays in cache (K of them would not)
    w = np.zeros((K, r, v))
    failed = []
    for k in range(K):
        np.subtract(shifted, blocks.grams[:, :, k], out=A)
        C = blas.dsyr(-1.0 / mr[k], blocks.sums[k], a=A, lower=1, overwrite_a=1)
        _, x, info = lapack.dposv(C, rhs[k], lower=1, overwrite_a=1)  # Cholesky and solve in one call
        if info != 0:  # not numerically positive definite
            failed.append(k)
            continue
        w[k] = x
    b0 = fac.y_mean + (c + np.matmul(blocks.sums[:, None, :], w)[:, 0, :]) / mr[:, None]
    beta = (fac.V.T @ w.transpose(1, 0, 2).reshape(r, K * v)).reshape(r, K, v)
    oof = np.empty((m, v))
    longer = int((sizes > sizes[-1]).sum())  # an unshuffled KFold's first m % K folds are one row longer
    for ks in (np.arange(longer), np.arange(longer, K)):  # one stacked product per fold size
        if not ks.size:
            continue
        size = sizes[ks[0]]
        lo, hi = off[ks[0]], off[ks[-1] + 1]  # equal folds are adjacent
        N = fac.M[lo:hi].reshape(ks.size, size, r)
        oof[lo:hi] = (np.matmul(N, beta[:, ks].transpose(1, 0, 2)) + b0[ks, None, :]).reshape(-1, v)
    return beta, b0, oof, failed


def block_cv_plus(fac, folds, alpha):
    """:func:`lssvm.cv.conformal.cv_plus_folds` for ``basis_in_holdout="keep"``
    when every fold takes the block route: ``(oof, models)``, or None (then
    ask ``cv_plus_folds``, which also refits folds whose Cholesky failed).

    ``folds`` must come from :func:`lssvm.cv.resolve_folds` or
    :func:`lssvm.cv.folds.contiguous_folds` (a partition; only the fit's
    blocks are accepted here anyway).  Skips the hold-out engine, the
    partition check and the per-fold plans: on a cold call each small step
    costs tens of microseconds (``docs/notes.md``).
    """
    got = block_folds_fit(fac, folds, alpha)
    if got is None or got[3]:
        return None
    beta, b0, oof, _ = got
    return oof, FoldValues(fac, beta, b0)


class FoldValues:
    """The K fold models of CV+ at new points, from their raw kernel rows:
    one product with the folds' dual coefficients (a refitted fold, on a
    reduced basis, evaluates itself).

    Parameters
    ----------
    fac : PathSolution
        The training factorisation (``V``, whitener, ``kernel_mean``).
    B : ndarray of shape (r, K, v)
        Eigenbasis coefficients of each fold (zero for refitted folds).
    b0 : ndarray of shape (K, v)
    refits : dict of int to callable
        Folds refitted on a reduced basis, evaluated on raw kernel rows.

    Notes
    -----
    The dual coefficients ``a_k = W V beta_k`` and intercepts ``b0_k - mu^T
    a_k`` are formed once, O(n r K v), as :meth:`PathSolution.coef` forms a
    model's; then O(t n K v) per call, with no eigenbasis rows of the points.
    """

    def __init__(self, fac, B, b0, refits=None):
        r, K, v = B.shape
        self.shape = (K, v)
        self.A = _whiten_back(fac, fac.V @ B.reshape(r, K * v))  # (n, K v)
        self.c0 = b0.reshape(K * v) - fac.kernel_mean @ self.A
        self.refits = refits or {}

    def __call__(self, K_x):
        """Fold values (t, K, v) at points with kernel rows ``K_x`` (t, n)."""
        out = (K_x @ self.A + self.c0).reshape(-1, *self.shape)
        for k, model in self.refits.items():
            out[:, k] = model(None, K_x)
        return out


def _whiten_back(fac, B):
    """``fac.whiten_back(B)`` (``W B``); on the Cholesky path by LAPACK's
    ``dtrtrs`` directly (``solve_triangular``'s checks cost ~0.1 ms, more
    than the solve for CV+'s few columns)."""
    if fac.method == "cholesky":
        X, info = lapack.dtrtrs(fac.whitener, B, lower=1, trans=1)
        if info == 0:
            return X
    return fac.whiten_back(B)


def fold_threads(n_jobs=None):
    """Threads (1 or 2) for a small CV+ call's fold models (module notes, Threads).

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``; None (the default) is serial.

    Returns
    -------
    int
    """
    if n_jobs is None or in_parallel_region():
        return 1
    return min(2, current_plan(n_jobs).threads)


@functools.lru_cache(maxsize=1)
def _worker():
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="lssvm-cvplus")


if hasattr(os, "register_at_fork"):  # a forked child has no worker thread: it must start its own, not wait
    os.register_at_fork(after_in_child=_worker.cache_clear)


def _run_range(func, start, stop):
    for k in range(start, stop):
        func(k)


def run_split(func, n, threads):
    """``func(k)`` for k = 0 .. n - 1: the second half on the worker thread
    and the first on the caller's when ``threads >= 2``, else in order.
    ``func`` must write disjoint outputs; an exception of either half is
    raised after both halves have stopped."""
    if threads < 2 or n < 2:
        _run_range(func, 0, n)
        return
    half = (n + 1) // 2
    future = _worker().submit(with_numerical_handler(_run_range), func, half, n)
    try:
        _run_range(func, 0, half)
    finally:
        wait([future])
    future.result()
