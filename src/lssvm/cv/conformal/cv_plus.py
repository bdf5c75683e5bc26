"""CV+ (Barber, Candes, Ramdas & Tibshirani 2021): the K hold-out models of a
fold partition as coefficients in the eigenbasis, with their out-of-fold
predictions, from the training factorisation.

Notation as in :mod:`lssvm.cv.conformal.jackknife` and :mod:`lssvm.cv.holdout`.

**Hold-out model at a new point.**  Leaving out rows ``H'`` and removing
basis points ``E``, the hold-out model is ``theta_H = W (c - Z_H'^T w)``
with ``W`` the restricted inverse of :class:`lssvm.cv.holdout.HSidePath` and
``w = y_H' - (I - U_H'H')^-1 r`` its solution on the held-out rows (the
hold-out formula ``f_H = yL_H - U_HH' w`` read at any row).  In the
eigenbasis: ``beta = D^1/2 (I - P_E) D^1/2 (z - M_H'^T w)`` and intercept
``y_mean - 1^T w / m``; O(h^2 r + h^3) per fold.  For large folds on a small
rank the fold's own moments are cheaper, O(h r^2 + r^3) per fold
(:mod:`lssvm.cv.fold_models`); :func:`cv_plus_folds` picks per fold by flop
count and gives the out-of-fold predictions from the same coefficients.
The order statistics of the bounds are read from the folds' sorted scores
(:mod:`lssvm.cv.conformal.shifted_blocks`).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..._threads import parallel_map, single_threaded_blas
from ...solvers import check_alphas
from ..fold_models import (
    FoldValues,
    block_folds_fit,
    equal_folds_fit,
    fold_fit,
    hside_cost,
    moments_cost,
    rows_of,
    run_split,
    stable_fold_fit,
)
from ..fold_solver import EPS, GUARD_RTOL, warn_inaccurate
from ..folds import _check_partition
from ..holdout import BASIS_IN_HOLDOUT, HoldoutEngine, check_indices

__all__ = ["cv_plus_folds", "fold_models"]


def fold_models(engine: HoldoutEngine, folds, alpha, basis_in_holdout="remove"):
    """Each fold's hold-out model as coefficients in the eigenbasis.

    Parameters
    ----------
    engine : HoldoutEngine
    folds : list of ndarray
        Test indices of each fold (a partition, from
        :func:`lssvm.cv.resolve_folds`).
    alpha : float
    basis_in_holdout : {"remove", "keep", "train"}

    Returns
    -------
    list of callables ``(Mx, K_x) -> ndarray (t, v)``
        Fold k's model at new points, from their eigenbasis rows ``Mx`` (and
        their raw kernel rows ``K_x``, used only when a fold is refitted:
        basis points removed from a numerically singular K_BB).

    Notes
    -----
    Per fold the cheaper by flop count of the fold's moments, O(h r^2 +
    r^3) (:mod:`lssvm.cv.fold_models`), and the h x h system, O(h^2 r + h^3
    + h |E| r + |E|^2 r) (module docstring), with the conditioning guard of
    :func:`cv_plus_folds`, which also gives the out-of-fold predictions.
    """
    alphas, _ = check_alphas(alpha)
    a = float(alphas[0])
    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    r = engine.fac.rank
    models = []
    with single_threaded_blas():  # small dense systems: threaded BLAS only adds contention
        for H in folds:
            H = np.asarray(H, dtype=np.intp)
            p, E = _fold_plan(engine, H, basis_in_holdout)
            cheap = moments_cost(H.size, p.size, r, E.size) <= hside_cost(H.size, p.size, r, E.size)
            models.append(_fold_fit(engine, H, p, E, a, cheap))
    return models


def _fold_plan(engine, H, basis_in_holdout):
    """Positions ``p`` (into ``H``) of the rows left out of training and the
    removed basis points ``E`` of one fold, as :class:`HoldoutEngine` has
    them (a basis point leaves only with every row that holds it)."""
    E = engine.removed_points(H) if basis_in_holdout == "remove" else np.empty(0, dtype=np.intp)
    if E.size and E.size == engine.fac.whitener.shape[0]:
        raise ValueError(
            f"a fold holds every basis vector ({E.size}): with basis_in_holdout='remove' its model "
            "would have no basis; use basis_in_holdout='keep', more basis vectors or smaller folds"
        )
    p = np.flatnonzero(engine.row_to_basis[H] < 0) if basis_in_holdout == "train" else np.arange(H.size)
    return p, E


def _fold_fit(engine, H, p, E, a, moments):
    """One fold's model (``_LinearModel``, or ``_RefitModel`` for removed
    points of a singular K_BB) by its moments or the h x h system, with the
    conditioning guard: past ``GUARD_RTOL`` the fold is refitted by an SVD
    of its remaining rows, and a NumericalWarning says if even that fails."""
    fac = engine.fac
    if E.size and fac.method != "cholesky":
        return _RefitModel(engine, H[p], E, a)
    beta, b0, est = (fold_fit if moments else _hside_fit)(fac, H[p], E, a)
    if not est <= GUARD_RTOL:  # the downdate lost digits (or is not positive definite)
        beta, b0, est = stable_fold_fit(fac, H, p, E, a)
        if est > GUARD_RTOL:
            warn_inaccurate("CV+ fold models", est, a, stacklevel=6)
    return _LinearModel(beta, b0)


def _hside_fit(fac, Hp, E, a):
    """A fold's model through the h' x h' system ``I - U`` (module docstring):
    ``(beta, b0, est)`` as :func:`lssvm.cv.fold_models.fold_fit` gives them,
    ``est`` the estimate of :class:`lssvm.cv.holdout.HSidePath`.
    O(h'^2 r + h'^3), plus O(h' r |E| + r |E|^2)."""
    m = fac.n_samples
    lam = fac.eigenvalues
    sq = np.sqrt(1.0 / (lam + a))
    Yc_p = fac.y_centered[Hp]
    Ms = fac.M[Hp] * sq
    gs = sq[:, None] * fac.z
    Qp = None
    if E.size:
        Qp, _ = linalg.qr((fac.Q[E] * sq).T, mode="economic", check_finite=False)
        gs = gs - Qp @ (Qp.T @ gs)
        MsQ = Ms @ Qp
    w = np.zeros((0, fac.z.shape[1]))
    inv_norm = 1.0
    if Hp.size:
        U = Ms @ Ms.T + 1.0 / m
        if Qp is not None:
            U -= MsQ @ MsQ.T
        r = Ms @ gs - U @ Yc_p  # centred targets: the intercept's y_mean cancels
        A = -U
        A.flat[:: A.shape[0] + 1] += 1.0
        anorm = np.abs(A).sum(axis=0).max()
        L, info = lapack.dpotrf(A.T, lower=1, clean=0, overwrite_a=1)  # A is symmetric: A.T its Fortran view
        if info != 0:
            return None, None, np.inf
        rcond, info = lapack.dpocon(L, anorm, uplo="L")
        inv_norm = np.inf if info != 0 or rcond <= 0 else 1.0 / (rcond * anorm)
        w = Yc_p - lapack.dpotrs(L, r, lower=1)[0]
    t = sq[:, None] * (fac.z - fac.M[Hp].T @ w)
    if Qp is not None:
        t -= Qp @ (Qp.T @ t)
    est = EPS * (lam.max() + a) / (lam.min() + a) * inv_norm
    return sq[:, None] * t, fac.y_mean - w.sum(axis=0) / m, est


#: below this many flops in all, the folds run one after the other on one BLAS thread (a thread plan and a
#: pool cost milliseconds); above it, one fold per core (:func:`lssvm._threads.parallel_map`)
_SERIAL_FLOPS = 1e9


def cv_plus_folds(engine: HoldoutEngine, folds, alpha, basis_in_holdout="remove", threads=1):
    """Out-of-fold predictions and the K fold models of CV+, in one pass.

    Parameters
    ----------
    engine : HoldoutEngine
    folds : list of array-like of int
        Test rows of each fold, a partition of the m training rows (from
        :func:`lssvm.cv.resolve_folds`).
    alpha : float
    basis_in_holdout : {"remove", "keep", "train"}
    threads : int, default=1
        Threads for a small problem's folds (below ``_SERIAL_FLOPS``; from
        :func:`lssvm.cv.fold_models.fold_threads`); larger ones use lssvm's
        thread rule.

    Returns
    -------
    oof : ndarray of shape (m, v)
        Each row's prediction by the model trained without its fold (as
        :func:`lssvm.cv.cross_val_predictions`).
    models : FoldValues
        ``models(K_x)`` gives the K fold models at new points with kernel
        rows ``K_x`` (t, n), as (t, K, v).

    Raises
    ------
    ValueError
        If the folds do not partition the rows, a fold holds every basis
        point with ``basis_in_holdout="remove"``, or the mode is unknown.

    Notes
    -----
    Per fold, the cheaper by flop count of the fold's own moments
    (:func:`lssvm.cv.fold_models.fold_fit`, O(h r^2 + r^3)) and the h x h
    hold-out system (O(h^2 r + h^3)); either gives the fold model as
    eigenbasis coefficients, and the out-of-fold predictions are that model
    at the fold's rows (O(h r v)).  Their conditioning is guarded (a fold
    past ``GUARD_RTOL`` is refitted by an SVD of its remaining rows, with a
    ``NumericalWarning`` if even that route cannot resolve it).  A
    numerically singular K_BB with removed basis points refits the fold on
    its remaining basis, as :class:`HoldoutEngine` does (and warns).
    """
    alphas, _ = check_alphas(alpha)
    a = float(alphas[0])
    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    fac = engine.fac
    m, v = fac.n_samples, fac.z.shape[1]  # not y_centered.shape: that property forms the m x v centred targets
    r = fac.rank
    folds = _check_folds(folds, m)
    plans = []  # (H, p, E, use the moments)
    for H in folds:
        p, E = _fold_plan(engine, H, basis_in_holdout)
        plans.append((H, p, E, moments_cost(H.size, p.size, r, E.size) <= hside_cost(H.size, p.size, r, E.size)))
    oof = np.empty((m, v))
    B = np.zeros((r, len(folds), v))
    b0 = np.zeros((len(folds), v))
    refits = {}

    def work(k):
        H, p, E, cheap = plans[k]
        model = _fold_fit(engine, H, p, E, a, cheap)
        if isinstance(model, _RefitModel):
            refits[k] = model
            oof[H] = engine.predict(H, a, basis_in_holdout)
        else:
            B[:, k], b0[k] = model.beta, model.b0
            oof[H] = rows_of(fac.M, H) @ model.beta + model.b0

    flops = sum(min(moments_cost(H.size, p.size, r, E.size), hside_cost(H.size, p.size, r, E.size))
                for H, p, E, _ in plans)
    todo = list(range(len(folds)))
    if flops < _SERIAL_FLOPS:
        with single_threaded_blas():
            got = None
            if all(E.size == 0 and p.size == H.size for H, p, E, _ in plans):
                got = block_folds_fit(fac, folds, a)  # the fit's blocks: no SYRK per fold
            if got is None and all(E.size == 0 and cheap and p.size == H.size == folds[0].size
                                   for H, p, E, cheap in plans):
                got = equal_folds_fit(fac, folds, a, threads)  # the small steps over all folds at once
            if got is not None:
                B, b0, oof, todo = got  # folds whose Cholesky failed go the guarded way below
            run_split(lambda i: work(todo[i]), len(todo), threads)
    else:
        parallel_map(work, todo)
    return oof, FoldValues(fac, B, b0, refits)


def _check_folds(folds, m):
    """The folds as index arrays if they partition the m rows (ValueError
    otherwise, as :func:`lssvm.cv.cross_val_predictions` says it); the
    partition check (one bincount) also finds duplicates, so the per-fold
    check skips its sort."""
    if isinstance(folds, (str, bytes)) or not hasattr(folds, "__iter__"):
        raise ValueError(f"folds must be a list of test-index arrays (see resolve_folds); got {folds!r}")
    out = []
    for i, f in enumerate(folds):
        idx = np.asarray(f)
        ok = idx.ndim == 1 and 0 < idx.size < m and idx.dtype.kind in "iu"
        out.append(idx.astype(np.intp, copy=False) if ok else check_indices(f, m, name=f"fold {i} test indices"))
    if out:
        rows = np.concatenate(out)
        if rows.min() < 0 or rows.max() >= m:  # one range check for all folds; the culprit's message
            for i, idx in enumerate(out):
                check_indices(idx, m, name=f"fold {i} test indices")
    return _check_partition(out, m)


class _LinearModel:
    def __init__(self, beta, b0):
        self.beta, self.b0 = beta, b0

    def __call__(self, Mx, K_x):
        return Mx @ self.beta + self.b0


class _RefitModel:
    """A fold refitted on the remaining basis (singular K_BB; see
    :func:`lssvm.cv.holdout._refit_fold`), evaluated on raw kernel rows."""

    def __init__(self, engine, Hp, E, alpha):
        from ...solvers import factorize_sparse_rls

        fac = engine.fac
        m, n = fac.n_samples, fac.kernel_mean.size
        train = np.setdiff1d(np.arange(m), Hp)
        self.keep = np.setdiff1d(np.arange(n), E)
        refit = factorize_sparse_rls(
            engine._kernel_block(train, self.keep), engine._basis_kernel(self.keep), engine.Y[train],
            rcond=engine._rcond, warn=False,
        )
        self.a, self.b = refit.coef(alpha)

    def __call__(self, Mx, K_x):
        return K_x[:, self.keep] @ self.a + self.b
