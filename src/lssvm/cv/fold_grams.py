"""CV+'s fold models from the fit's block Grams: no SYRK per fold.

:func:`lssvm.cv.fold_moments.fold_fit` solves, per fold, in the training
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
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack

from .fold_values import FoldValues
from .holdout_guard import EPS, GUARD_RTOL

__all__ = ["block_cv_plus", "block_folds_fit", "matches_blocks"]


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
    fit's block Grams (module docstring).

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
    m, v = fac.y_centered.shape
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
    :func:`lssvm.cv.contiguous.contiguous_folds` (a partition; only the fit's
    blocks are accepted here anyway).  Skips the hold-out engine, the
    partition check and the per-fold plans: on a cold call each small step
    costs tens of microseconds (``docs/notes.md``).
    """
    got = block_folds_fit(fac, folds, alpha)
    if got is None or got[3]:
        return None
    beta, b0, oof, _ = got
    return oof, FoldValues(fac, beta, b0)
