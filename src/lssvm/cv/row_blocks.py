"""Exact k-fold / grouped CV of the sparse model from row-block moments.

Each fold's training set is the union of the other folds, so its moments
are a merge of theirs (:class:`lssvm.solvers.row_blocks.RowMoments`, no
subtraction); its model is solved in the whitened coordinates of the full
basis.  Removing the fold's basis points E from the basis (paper 001
§6.4, ``basis_in_holdout="remove"``) is the linear constraint
``a_E = (W beta)_E = 0`` on the whitened coefficients ``beta``: the fold is
solved on the null space of ``W_E``, where the penalty ``beta^T beta`` is
exactly the smaller basis' ``a^T K a``.  Out-of-fold predictions then need
one more pass over the rows.  The result equals paper 001's hold-out
formulas (:mod:`lssvm.cv.holdout`), which need all kernel rows in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .._parallel import serial_region
from ..solvers.row_blocks import SUB_ROWS, _check_block, _misclassified, _whitened, code_targets

__all__ = ["FoldModel", "fold_models", "block_fold_outputs"]


@dataclass(frozen=True)
class FoldModel:
    """One fold's model on whitened rows: ``f = (psi - psi_mean) B + y_mean``.

    Attributes
    ----------
    psi_mean : ndarray of shape (r,)
    y_mean : ndarray of shape (v,)
    B : ndarray of shape (r, A * v)
        Whitened coefficients for every alpha.
    """

    psi_mean: np.ndarray
    y_mean: np.ndarray
    B: np.ndarray


def _removal_null_space(ctx, removed):
    """Orthonormal basis (r, r') of ``{beta : (W beta)_E = 0}``."""
    return linalg.null_space(ctx.W[removed])


def fold_models(moments, removed, ctx, alphas):
    """Solve every fold's training problem for every alpha.

    Parameters
    ----------
    moments : dict of int -> RowMoments
        Per-fold moments; fold -1 holds rows that are never held out.
    removed : dict of int -> ndarray of int
        Basis positions removed from each fold's model (empty: none).
    ctx : lssvm.solvers.row_blocks.BlockContext
    alphas : ndarray of shape (A,)

    Returns
    -------
    dict of int -> FoldModel

    Raises
    ------
    ValueError
        If a fold leaves fewer than 2 training rows, or removes every basis
        vector.

    Notes
    -----
    Per fold: O(k r^2) merges, the null space of ``W_E`` (SVD, O(r^2 |E|)),
    one ``eigh`` of the fold's r' x r' Gram matrix (about 4 r'^3), and
    O(r^2 A v) for the coefficients.
    """
    folds = sorted(f for f in moments if f >= 0)
    parts = [moments[f] for f in folds]
    base = moments.get(-1)
    prefix = [None]
    for p in parts[:-1]:
        prefix.append(p if prefix[-1] is None else prefix[-1] + p)
    suffix = [None]
    for p in reversed(parts[1:]):
        suffix.append(p if suffix[-1] is None else p + suffix[-1])
    suffix.reverse()
    models = {}
    for i, f in enumerate(folds):
        pieces = [x for x in (base, prefix[i], suffix[i]) if x is not None]
        if not pieces or sum(p.count for p in pieces) < 2:
            raise ValueError(f"fold {f} leaves fewer than 2 training rows; use fewer folds")
        train = pieces[0]
        for p in pieces[1:]:
            train = train + p
        E = np.asarray(removed.get(f, ()), dtype=np.int64)
        N = _removal_null_space(ctx, E) if E.size else None
        if N is not None and N.shape[1] == 0:
            raise ValueError(
                f"fold {f} holds every basis vector: with basis_in_holdout='remove' its model would have "
                "no basis; use basis_in_holdout='keep', more basis vectors or smaller folds"
            )
        G = train.psi_cov if N is None else N.T @ train.psi_cov @ N
        g = train.psi_y if N is None else N.T @ train.psi_y
        lam, U = linalg.eigh(G, driver="evd", check_finite=False)
        lam = np.maximum(lam, 0.0)
        z = U.T @ g  # (r', v)
        Cz = z[:, None, :] / (lam[:, None, None] + alphas[None, :, None])  # (r', A, v)
        B = U @ Cz.reshape(U.shape[1], -1)
        if N is not None:
            B = N @ B
        models[f] = FoldModel(train.psi_mean, train.y_mean, B)
    return models


def block_fold_outputs(X, y, folds, row0, ctx, models, n_alphas, reduce=False):
    """Out-of-fold outputs of one row block.

    Parameters
    ----------
    X : ndarray of shape (b, d)
    y : ndarray of shape (b,) or (b, v), or None
        Targets; needed with ``reduce``.
    folds : ndarray of shape (b,) of int
        The fold whose model predicts each row (rows of a fold without a
        model get NaN and count nothing in the sums).
    row0 : int
    ctx : lssvm.solvers.row_blocks.BlockContext
    models : dict of int -> FoldModel
    n_alphas : int
    reduce : bool, default=False

    Returns
    -------
    ndarray of shape (A, b, v)
        Out-of-fold outputs; with ``reduce`` a dict of ``"sse"`` (A, v) and
        ``"wrong"`` (A,).

    Notes
    -----
    Per row O(n d + n^2 + r A v): kernel, whitening, the fold's coefficients.
    """
    with serial_region():
        X = _check_block(X, ctx, row0)
        f = np.asarray(folds, dtype=np.int64).ravel()
        v = next(iter(models.values())).y_mean.size
        F = np.full((n_alphas, X.shape[0], v), np.nan)  # rows of no fold (never held out) stay NaN
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            _, psi = _whitened(X[sl], ctx)
            fs = f[sl]
            for fold in np.unique(fs):
                if int(fold) not in models:
                    continue
                sel = np.flatnonzero(fs == fold)
                mod = models[int(fold)]
                out = (psi[sel] - mod.psi_mean) @ mod.B  # (h, A v)
                F[:, lo + sel] = out.reshape(-1, n_alphas, v).transpose(1, 0, 2) + mod.y_mean
        if not reduce:
            return F
        Y = code_targets(y, ctx.classes)
        E = np.nan_to_num(Y[None] - F)
        wrong = _misclassified(F, Y) if ctx.classes is not None else np.zeros(n_alphas, dtype=np.int64)
        return {"sse": (E * E).sum(axis=1), "wrong": wrong, "tiny": 0, "count": X.shape[0]}
