"""Exact k-fold / grouped CV of the sparse model from row-block moments.

Each fold's training set is the union of the other folds, so its moments
are a merge of theirs (:class:`lssvm.solvers.row_blocks.RowMoments`, no
subtraction); its model is solved in the whitened coordinates of the full
basis.  Removing the fold's basis points E from the basis (Pahikkala et al. 2012,
§6.4, ``basis_in_holdout="remove"``) is the linear constraint
``a_E = (W beta)_E = 0`` on the whitened coefficients ``beta``: the fold is
solved on the null space of ``W_E``, where the penalty ``beta^T beta`` is
exactly the smaller basis' ``a^T K a``.  Out-of-fold predictions then need
one more pass over the rows.  The result equals the hold-out formulas of
Pahikkala et al. 2012 (:mod:`lssvm.cv.holdout`), which need all kernel rows in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .._threads import serial_region
from ..exceptions import numerical_warnings_ignore, warn_numerical
from ..solvers.row_blocks import SUB_ROWS, RowMoments, check_block, code_targets, misclassified, whitened_rows
from .fold_solver import GUARD_RTOL, solve_fold_path

__all__ = ["FoldModel", "fold_models", "block_fold_outputs", "refit_contexts", "block_refit_moments", "refit_models"]


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
    ctx: object = None


def _path_coefficients(G, g, alphas, N=None):
    """Whitened coefficients (r, A v) of the ridge problem with centred Gram
    ``G`` and right-hand side ``g`` for every alpha, on the basis ``N`` of a
    subspace if given, and their estimated relative errors (A,).

    The same fold solver as the in-memory hold-out engine
    (:func:`lssvm.cv.fold_solver.solve_fold_path`: one reduction to band
    form, about 4/3 r^3, then O(r w^2) per alpha), with the same error
    estimate, scaled by ``||G||_inf`` (at least its largest eigenvalue: the
    merged moments carry a rounding error of about eps times it).
    """
    G_r = G if N is None else N.T @ G @ N
    g_r = g if N is None else N.T @ g
    v = g.shape[1]
    if G_r.shape[0] == 0:
        return np.zeros((G.shape[0], alphas.size * v)), np.zeros(alphas.size)
    scale = float(np.abs(G).sum(axis=0).max())
    B, est = solve_fold_path(G_r, g_r, alphas, scale)
    return (B if N is None else N @ B), est


def _warn_folds(est, alphas):
    """``NumericalWarning`` when a fold's estimated relative error passes
    ``GUARD_RTOL``: the row-block route has no stable refit (it would need
    the fold's rows in memory), so it says so instead."""
    bad = ~(est <= GUARD_RTOL)
    if bad.any():
        worst = int(np.argmax(np.where(bad, np.nan_to_num(est, nan=np.inf), -np.inf)))
        warn_numerical(f"k-fold CV on row blocks (Dask): the estimated relative error of fold models is "
            f"{est[worst]:.1e} at alpha={alphas[worst]:g} (above {GUARD_RTOL:g}), "
            f"at {int(bad.sum())} of {alphas.size} alphas: the remaining rows determine the model "
            "too poorly there (lambda_max / alpha is too large). Increase alpha, scale the features, "
            "or run the CV in memory, where such folds are refitted by a stable route", stacklevel=4)


def _removal_null_space(ctx, removed):
    """Orthonormal basis (r, r') of ``{beta : (W beta)_E = 0}``."""
    return linalg.null_space(ctx.W[removed])


def fold_models(moments, removed, ctx, alphas, n_folds=None):
    """Solve every fold's training problem for every alpha.

    Parameters
    ----------
    moments : dict of int -> RowMoments
        Per-fold moments; fold -1 holds rows that are never held out.
    removed : dict of int -> ndarray of int
        Basis positions removed from each fold's model (empty: none).
    ctx : lssvm.solvers.row_blocks.BlockContext
    alphas : ndarray of shape (A,)
    n_folds : int, optional
        Folds 0 .. n_folds - 1 without moments (every row of them is never
        held out, as basis rows with ``basis_in_holdout="train"``) get the
        model of all rows.

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
    one reduction of the fold's r' x r' Gram matrix to band form (about
    4/3 r'^3, the fold solver of the in-memory engine), and O(r^2 A v) for
    the coefficients.  Each fold's solution carries an error estimate
    (:mod:`lssvm.cv.fold_solver`); past ``GUARD_RTOL`` a
    :class:`~lssvm.exceptions.NumericalWarning` says so (there is no stable
    refit on row blocks).
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
    est = np.zeros(alphas.size)
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
        B, e = _path_coefficients(train.psi_cov, train.psi_y, alphas, N)
        est = np.fmax(est, e)
        models[f] = FoldModel(train.psi_mean, train.y_mean, B)
    missing = [] if n_folds is None else [f for f in range(n_folds) if f not in models]
    if missing:
        total = None
        for mom in moments.values():
            total = mom if total is None else total + mom
        B, e = _path_coefficients(total.psi_cov, total.psi_y, alphas)
        est = np.fmax(est, e)
        model = FoldModel(total.psi_mean, total.y_mean, B)
        models.update({f: model for f in missing})
    _warn_folds(est, alphas)
    return models


def refit_contexts(ctx, removed, rcond):
    """Contexts of the smaller bases (``basis`` minus ``E``) of the folds that remove
    basis points, each whitened on its own (O(n^3) per fold).

    With a numerically singular ``K_BB`` the full basis lives on its range,
    and "without the points E" is another truncation (the constraint
    ``(W beta)_E = 0`` may leave nothing even when points remain): those
    folds are refitted on their own basis, as the in-memory hold-out engine
    does.  A fold that removes every basis point is an error, as in memory.
    """
    from ..solvers.row_blocks import BlockContext

    out = {}
    n = ctx.basis.shape[0]
    for f, E in removed.items():
        keep = np.setdiff1d(np.arange(n), E)
        if keep.size == 0:
            raise ValueError(
                f"fold {f} holds every basis vector: with basis_in_holdout='remove' its model would have "
                "no basis; use basis_in_holdout='keep', more basis vectors or smaller folds"
            )
        with numerical_warnings_ignore():
            out[f] = BlockContext.of_basis(ctx.basis[keep], ctx.kernel, rcond, ctx.classes, ctx.n_features)
    return out


def block_refit_moments(X, y, folds, row0, ctxs):
    """Per refitted fold f, the moments of the block's rows outside f under
    f's own basis context (``ctxs[f]``, None: targets only).

    Notes
    -----
    Per row and refitted fold: kernel row, whitening, SYRK share, as in
    training: a refit of every such fold, O(m n^2) each.
    """
    with serial_region():
        if X.shape[0] == 0:
            return {}
        any_ctx = next((c for c in ctxs.values() if c is not None), None)
        Y = code_targets(y, any_ctx.classes if any_ctx is not None else None)
        f = np.asarray(folds, dtype=np.int64).ravel()
        out = {}
        for fold, c in ctxs.items():
            sel = f != fold
            if not sel.any():
                continue
            if c is None:
                k = np.zeros((1, 0))
                psi = np.zeros((int(sel.sum()), 0))
                mom = RowMoments.of_rows(psi, k.mean(axis=0), Y[sel])
            else:
                X = check_block(X, c, row0)
                k_mean, psi = whitened_rows(X[sel], c)
                mom = RowMoments.of_rows(psi, k_mean, Y[sel])
            out[fold] = mom
        return out


def refit_models(moments, ctxs, alphas):
    """Fold models of :func:`block_refit_moments`' merged moments (with the
    error estimate and warning of :func:`fold_models`)."""
    models, est = {}, np.zeros(alphas.size)
    for f, mom in moments.items():
        B, e = _path_coefficients(mom.psi_cov, mom.psi_y, alphas)
        est = np.fmax(est, e)
        models[f] = FoldModel(mom.psi_mean, mom.y_mean, B, ctxs[f])
    _warn_folds(est, alphas)
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
    Per row O(n d + 2 n r + r A v): kernel, whitening (GEMM), the fold's
    coefficients.
    """
    with serial_region():
        X = check_block(X, ctx, row0)
        f = np.asarray(folds, dtype=np.int64).ravel()
        v = next(iter(models.values())).y_mean.size
        F = np.full((n_alphas, X.shape[0], v), np.nan)  # rows of no fold (never held out) stay NaN
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            _, psi = whitened_rows(X[sl], ctx)
            fs = f[sl]
            for fold in np.unique(fs):
                if int(fold) not in models:
                    continue
                sel = np.flatnonzero(fs == fold)
                mod = models[int(fold)]
                if mod.B.shape[0] == 0:  # a refitted fold without basis: the training mean
                    p = np.zeros((sel.size, 0))
                elif mod.ctx is None:
                    p = psi[sel]
                else:
                    p = whitened_rows(X[sl][sel], mod.ctx)[1]
                out = (p - mod.psi_mean) @ mod.B  # (h, A v)
                F[:, lo + sel] = out.reshape(-1, n_alphas, v).transpose(1, 0, 2) + mod.y_mean
        if not reduce:
            return F
        Y = code_targets(y, ctx.classes)
        E = np.nan_to_num(Y[None] - F)
        wrong = misclassified(F, Y) if ctx.classes is not None else np.zeros(n_alphas, dtype=np.int64)
        return {"sse": (E * E).sum(axis=1), "wrong": wrong, "tiny": 0, "tiny_rows": np.zeros(0, dtype=np.int64),
                "count": X.shape[0]}
