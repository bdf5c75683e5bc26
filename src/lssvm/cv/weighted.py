"""Exact cross-validation of the weighted sparse LS-SVM
(:mod:`lssvm.solvers.weighted_rls`): the outputs of the weighted model
refitted without the held-out rows, without refitting.

Hold-out.  In the eigenbasis of the weighted factorisation, with rows
``g_i = [M_i, 1]`` and ``P^-1 = blockdiag(D, 1 / sum w)``, let
``U = G_H P^-1 G_H'^T`` and ``f0`` the full weighted fit (centred).  Removing
rows ``H'`` (weights ``W' = diag(w_H')``) from the weighted normal equations
``P = sum_i w_i g_i g_i^T + alpha blockdiag(I, 0)`` and applying Woodbury's
identity with the push-through ``S (I - S U S)^-1 S = W (I - U W)^-1``
(``S = W^1/2``) gives, for query rows H,

    g_H = f0_H - U_{H H'} W' y_H',
    f_H = g_H + U_{H H'} W' (I - U_{H'H'} W')^-1 g_H'.

For ``H = H'`` this is ``(I - U W)^-1 (f0 - U W y)``, and for one row
``y_i - f_i = e_i / (1 - w_i h_i)``, the weighted LOO.  Removing basis points
E constrains ``a_E = Q_E c = 0``: ``D`` becomes
``D - D Q_E^T (Q_E D Q_E^T)^-1 Q_E D`` and ``f0`` the constrained fit.
Cost per alpha O(h^2 r + h^3 + h |E| r + |E|^3); a zero weight makes a row's
column of ``U W`` vanish, so it is exactly a removed row.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from .._labels import LabelCoder
from .._sums import warn_if_overflow
from ..basis import basis_holders
from ..exceptions import warn_numerical
from ..solvers.loo_block import restrict_targets
from ..solvers.sparse_rls import warn_tiny_leverage
from ..solvers.weighted_rls import factorize_weighted_rls
from .engine import ErrorSums
from .folds import resolve_folds
from .holdout import BASIS_IN_HOLDOUT, check_indices

__all__ = ["WeightedSparseEngine"]

#: Reciprocal condition of ``I - U W`` below which a hold-out is reported unreliable.
_HOLDOUT_RCOND = 1e-10


class WeightedSparseEngine:
    """The weighted sparse model's engine on rows in memory (the protocol of
    :class:`lssvm.cv.SparseEngine`).

    Parameters
    ----------
    fac : lssvm.solvers.weighted_rls.WeightedRLSFactorization
    X : ndarray or sparse matrix of shape (m, d)
    basis_vectors : ndarray of shape (n, d)
    basis_indices : ndarray of shape (n,) or None
    kernel : lssvm.kernels.Kernel
    rcond : float
    classes : ndarray, optional
        Class labels of a classifier.
    fold_whitener : callable ``K_LL -> W``, optional
        The feature map of a basis reduced to its kept points (a model whose
        map is not the whitening of its basis, as Nyström's rank-k map):
        a hold-out that removes basis points refits the fold on the kept
        points with this map, as :class:`lssvm.cv.MemorySparseEngine` does.

    Notes
    -----
    Error sums are weighted: ``sse = sum_i w_i r_i^2``, ``wrong = sum_i w_i
    [row i misclassified]`` and ``count = sum_i w_i``, so ``sse / count`` is
    the weighted mean squared error.
    """

    rows_in_memory = True

    def __init__(self, fac, X, basis_vectors, basis_indices, kernel, rcond=1e-10, classes=None, n_jobs=None,
                 fold_whitener=None):
        self.fac = fac
        self.fold_whitener = fold_whitener
        self.X = X
        self.basis_vectors = basis_vectors
        self.basis_indices = basis_indices
        self.kernel = kernel
        self.rcond = rcond
        self.classes = classes
        self.n_jobs = n_jobs
        self.Y = fac.y_centered + fac.y_mean
        self._holders = None

    @property
    def solution(self):
        return self.fac

    def restricted(self, targets):
        """The engine of the same fit for some targets only (a model with one alpha per
        target runs its methods one group of equal alphas at a time); the rows holding
        basis points are shared, not found again."""
        engine = copy.copy(self)
        engine.fac = restrict_targets(self.fac, targets)
        engine.Y = self.Y[:, targets]
        engine._holders = self._basis_holders()
        return engine

    @property
    def n_samples(self):
        return self.fac.n_samples

    @property
    def n_basis(self):
        return self.basis_vectors.shape[0]

    @property
    def weights(self):
        return self.fac.weights

    def in_memory(self, what, hint=""):
        raise ValueError(
            f"{what} is not available for a model fitted with sample_weight; the weighted model offers "
            "predictions and its exact weighted leave-one-out, hold-out and k-fold CV"
            + (f" ({hint})" if hint else "")
        )

    def targets(self):
        return self.Y

    def split_labels(self):
        return self.Y[:, 0] if self.classes is None else LabelCoder.index_of(self.Y)

    def resolve_cv(self, cv, groups=None, classifier=False):
        return resolve_folds(cv, self.n_samples, y=self.split_labels(), groups=groups, classifier=classifier)

    # ------------------------------------------------------------------- LOO
    def loo_residuals(self, alphas):
        return self.fac.loo_residuals(alphas)

    def loo_residuals_one_unit(self, alphas):
        """Held-out residuals with one unit of each row's weight left out (repeated rows: one copy),
        what a weighted leave-one-out calibration needs to treat integer weights as repeated rows."""
        return self.fac.loo_residuals_one_unit(alphas)

    def loo_sums(self, alphas):
        R, tiny = self.fac.loo_rows(np.arange(self.n_samples), alphas)
        warn_tiny_leverage(tiny, stacklevel=5)
        return self._sums(R, np.arange(self.n_samples))

    def _sums(self, R, rows):
        w = self.fac.weights[rows]
        with np.errstate(over="ignore", invalid="ignore"):
            sse = np.einsum("h,ahv->av", w, R * R)
        wrong = None
        if self.classes is not None:
            Yr = self.Y[rows]
            bad = LabelCoder.index_of(Yr[None] - R) != LabelCoder.index_of(Yr)[None]  # (A, h)
            wrong = bad.astype(float) @ w
        warn_if_overflow(sse, "weighted error sums of squares", stacklevel=6)
        return ErrorSums(sse, wrong, float(w.sum()))

    # ------------------------------------------------------ hold-out and CV
    def _basis_holders(self):
        """Rows holding each basis point, positive-weight rows only (a zero-weight
        row is a removed row: holding it out removes nothing)."""
        if self._holders is None:
            rows, points = basis_holders(self.X, self.basis_vectors, self.basis_indices)
            keep = self.fac.weights[rows] > 0
            rows, points = rows[keep], points[keep]
            row_to_basis = np.full(self.n_samples, -1, dtype=np.intp)
            row_to_basis[rows] = points
            self._holders = row_to_basis, np.bincount(points, minlength=self.n_basis)
        return self._holders

    def _removed_points(self, H):
        row_to_basis, n_holders = self._basis_holders()
        held = row_to_basis[H]
        held = held[held >= 0]
        if held.size == 0:
            return held
        count = np.bincount(held, minlength=n_holders.size)
        return np.flatnonzero((count > 0) & (count == n_holders))

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        """Outputs (A, h, v) for rows ``test_indices`` of the weighted model trained without them."""
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
        H = check_indices(test_indices, self.n_samples)
        fac = self.fac
        E = self._removed_points(H) if basis_in_holdout == "remove" else np.empty(0, dtype=np.intp)
        if E.size == self.n_basis:
            raise ValueError(
                f"the hold-out set holds every basis vector ({E.size}): with basis_in_holdout='remove' "
                "its model would have no basis; use basis_in_holdout='keep', more basis vectors or smaller folds"
            )
        if basis_in_holdout == "train":
            p = np.flatnonzero(self._basis_holders()[0][H] < 0)
        else:
            p = np.arange(H.size)
        left = fac.weight_sum - fac.weights[H[p]].sum()
        if not left > 1e-12 * fac.weight_sum:
            raise ValueError("the rows left for training have zero total weight: the held-out model is undefined")
        if E.size and (fac.method != "cholesky" or self.fold_whitener is not None):
            return self._refit(H, p, E, alphas)
        return _weighted_holdout(fac, self.Y, H, p, E, alphas)

    def _refit(self, H, p, E, alphas):
        """Refit without rows H[p] and basis points E: a given feature map (``fold_whitener``) is
        re-derived on the kept points; a numerically singular K_BB changes its range."""
        if self.fold_whitener is None:
            warn_numerical(
                "K_BB is numerically singular (the model lives on its range): hold-out with basis points "
                "removed refits the fold on the remaining basis, O(m n^2) per fold",
                stacklevel=4,
            )
        train = np.setdiff1d(np.arange(self.n_samples), H[p])
        keep = np.setdiff1d(np.arange(self.n_basis), E)
        Z = self.basis_vectors[keep]
        K_LL = self.kernel(Z, Z)
        whitener = None if self.fold_whitener is None else self.fold_whitener(K_LL)
        refit = factorize_weighted_rls(self.kernel(self.X[train], Z), K_LL, self.Y[train],
                                       self.fac.weights[train], rcond=self.rcond, warn=False, whitener=whitener)
        A, b = refit.coef(alphas)
        return np.einsum("hn,anv->ahv", self.kernel(self.X[H], Z), A) + b[:, None, :]

    def _folds_outputs(self, folds, alphas, basis_in_holdout, sink):
        folds = [check_indices(f, self.n_samples, name=f"fold {i} test indices") for i, f in enumerate(folds)]
        seen = np.concatenate(folds)
        if seen.size != self.n_samples or np.unique(seen).size != self.n_samples:
            raise ValueError("the folds' test sets must partition the training rows (each row in exactly one)")
        for test in folds:
            sink(test, self.holdout_outputs(test, alphas, basis_in_holdout))

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        out = np.empty((alphas.size,) + self.Y.shape)

        def sink(rows, F):
            out[:, rows] = F

        self._folds_outputs(folds, alphas, basis_in_holdout, sink)
        return out

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        R = self.Y[None] - self.cv_outputs(folds, alphas, basis_in_holdout)
        return self._sums(R, np.arange(self.n_samples))


def _weighted_holdout(fac, Y, H, p, E, alphas):
    """Module notes' formula: outputs (A, h, v) for rows H of the weighted model without rows H[p] and basis E."""
    D = fac._inv_shift(alphas)  # (r, A)
    C = fac._eigen_coef(alphas)  # (r, A, v)
    MH = fac.M[H]
    Yc = fac.y_centered[H]
    wp = fac.weights[H[p]]
    sp = np.sqrt(wp)
    QE = fac.Q[E] if E.size else None
    out = np.empty((alphas.size, H.size, Y.shape[1]))
    worst = np.inf
    for a in range(alphas.size):
        d = D[:, a]
        U = (MH * d) @ MH.T + 1.0 / fac.weight_sum
        f0 = MH @ C[:, a, :]
        if E.size:
            A_ = (MH * d) @ QE.T  # (h, |E|)
            S = (QE * d) @ QE.T
            S_inv_A = np.linalg.solve(S, A_.T)  # (|E|, h)
            U -= A_ @ S_inv_A
            f0 -= S_inv_A.T @ (QE @ C[:, a, :])
        # symmetric form: W (I - U W)^-1 = S (I - S U S)^-1 S, S = W^1/2; I - S U S is the held-out rows'
        # block of I - hat matrix, positive definite while the other rows determine the model
        Up = U[:, p]
        g = f0 - (Up * wp) @ Yc[p]
        if p.size == 0:  # every held-out row stays in training ("train" mode): the full fit
            out[a] = g + fac.y_mean
            continue
        system = -(sp[:, None] * Up[p] * sp[None, :])
        system[np.diag_indices_from(system)] += 1.0
        try:
            factor = linalg.cho_factor(system, lower=True, check_finite=False)
            rc, info = lapack.dpocon(factor[0], np.abs(system).sum(axis=0).max(initial=0.0), uplo="L")
            corr = linalg.cho_solve(factor, sp[:, None] * g[p], check_finite=False)
            worst = min(worst, rc if info == 0 else 0.0)
        except linalg.LinAlgError:
            corr = np.linalg.lstsq(system, sp[:, None] * g[p], rcond=None)[0]
            worst = 0.0
        out[a] = g + Up @ (sp[:, None] * corr) + fac.y_mean
    if worst < _HOLDOUT_RCOND:
        warn_numerical(
            f"weighted hold-out: the fold system is nearly singular (reciprocal condition {worst:.1e}); "
            "its outputs are unreliable: increase alpha or hold out fewer rows",
            stacklevel=4,
        )
    return out
