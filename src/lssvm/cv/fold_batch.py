"""CV+'s per-fold moments for equal folds, the small steps over all folds
at once.

:func:`lssvm.cv.fold_moments.fold_fit` solves, per fold, the r x r system

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
(:func:`lssvm.cv.fold_threads.run_split` may run them on two threads).
Same maths and flops as fold by fold.  (A stacked ``np.matmul`` for the
Grams and a batched ``np.linalg.cholesky`` were timed slower than the
per-fold LAPACK calls: they copy each matrix.)

**Guard.**  Only when the free error bound of
:func:`~lssvm.cv.fold_moments.fold_fit`, ``eps (lambda_max + alpha) /
alpha``, is within :data:`~lssvm.cv.holdout_guard.GUARD_RTOL` (no
condition estimate needed); a fold whose Cholesky still fails is refitted
by the caller's fold-by-fold route, with its condition estimate and
stable refit.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack

from .fold_threads import run_split
from .holdout_guard import EPS, GUARD_RTOL

__all__ = ["equal_folds_fit"]

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
    m, v = fac.y_centered.shape
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
