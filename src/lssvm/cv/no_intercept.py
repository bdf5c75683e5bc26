"""Exact cross-validation of kernel ridge regression without an intercept on a fixed basis.

The model is ``f(x) = k(x, Z) w`` with

    w = argmin ||y - K w||^2 + alpha w^T K_ZZ w,     K = k(X, Z),

the sparse model of the documentation's Mathematics page (§6) with its intercept fixed at 0.  A
fixed-size model whose SCDP run chose prototypes but not the intercept is this model on its
supported prototypes (the intercept's coordinate is 0 and carries no penalty then).  Its engine
(:class:`NoInterceptRidgeEngine`) gives the per-row results and error sums of the engine protocol
(:class:`lssvm.cv.SparseEngine`) by solving the model's s x s normal equations: leave-one-out in
closed form, hold-outs and folds by one solve per fold and alpha.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._labels import LabelCoder
from .._sums import sum_squares, warn_if_overflow
from ..basis import basis_holders
from ..solvers.row_blocks import misclassified
from ..solvers.sparse_rls import LEVERAGE_TOL, warn_tiny_leverage
from .engine import ErrorSums, MemorySparseEngine
from .holdout import BASIS_IN_HOLDOUT, check_indices

__all__ = ["NoInterceptRidgeEngine"]


class NoInterceptRidgeEngine:
    """The engine of kernel ridge without intercept on basis ``Z``, rows in memory (module notes).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Training inputs.
    Y : ndarray of shape (m, v)
        Training targets (the +1/-1 codes for a classifier).
    basis_vectors : ndarray of shape (s, d)
    basis_indices : ndarray of shape (s,) or None
        The training row of each basis point, where the basis came from rows.
    kernel : lssvm.kernels.Kernel
    classes : ndarray of shape (c,), optional
        Class labels of a classifier.
    unavailable : str, default=""
        What the model is, for the error of methods that need the sparse model's factorisation
        (intervals, ``predict_std``, the evidence): :meth:`in_memory` raises it.

    Notes
    -----
    ``basis_in_holdout`` as for the sparse engine: "remove" takes out of a fold's basis the points
    whose every holding row is held out, "keep" keeps them as basis functions, "train" keeps their
    rows among the fold's training rows.  Costs: O(m s d) for the kernel once; leave-one-out
    O(m s^2 + s^3) per alpha; a fold of h rows O(m s^2 + s^3) per alpha (its training Gram is the
    full one minus the fold's rows).
    """

    rows_in_memory = True

    def __init__(self, X, Y, basis_vectors, basis_indices, kernel, classes=None, unavailable=""):
        self.X, self.Y, self.classes, self.unavailable = X, np.asarray(Y, dtype=float), classes, unavailable
        self.basis_vectors, self.basis_indices, self.kernel = basis_vectors, basis_indices, kernel
        self.K = kernel(X, basis_vectors)
        self.K_ZZ = self.K[basis_indices] if basis_indices is not None else kernel(basis_vectors, basis_vectors)
        self._holders = basis_holders(X, basis_vectors, basis_indices)
        self._gram = self.K.T @ self.K
        self._rhs = self.K.T @ self.Y

    @property
    def n_samples(self):
        return self.Y.shape[0]

    @property
    def n_basis(self):
        return self.basis_vectors.shape[0]

    def targets(self):
        return self.Y

    def in_memory(self, what, hint=""):
        raise ValueError(f"{what} needs the sparse model's factorisation (an unpenalised intercept); "
                         f"{self.unavailable or 'this model has no intercept'}")

    def split_labels(self):
        """What splitters stratify on: class codes, or the first output."""
        return self.Y[:, 0] if self.classes is None else LabelCoder.index_of(self.Y)

    resolve_cv = MemorySparseEngine.resolve_cv
    _check_fold_classes = MemorySparseEngine._check_fold_classes

    def _solve(self, gram, rhs, keep, alpha):
        """Coefficients (s_keep, v) of ``(G + alpha K_ZZ) w = r`` on basis points ``keep``."""
        A = gram[np.ix_(keep, keep)] + float(alpha) * self.K_ZZ[np.ix_(keep, keep)]
        return linalg.solve(A, rhs[keep], assume_a="sym", check_finite=False)

    def loo_residuals(self, alphas):
        """``y_i - f_{-i}(x_i)``, the basis kept, (A, m, v): ``(y_i - f_i) / (1 - h_ii)``."""
        alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
        out = np.empty((alphas.size,) + self.Y.shape)
        tiny = np.zeros(self.n_samples, dtype=bool)
        bad = np.zeros(alphas.size, dtype=bool)
        for a, alpha in enumerate(alphas):
            A = self._gram + alpha * self.K_ZZ
            sol = linalg.solve(A, np.hstack([self._rhs, self.K.T]), assume_a="sym", check_finite=False)
            coef, KinvKt = sol[:, :self.Y.shape[1]], sol[:, self.Y.shape[1]:]
            denom = 1.0 - np.einsum("ij,ji->i", self.K, KinvKt)
            low = denom <= LEVERAGE_TOL  # the row is its own fit: its residual is not determined
            tiny |= low
            bad[a] = low.any()
            with np.errstate(divide="ignore", invalid="ignore"):
                out[a] = (self.Y - self.K @ coef) / denom[:, None]
        warn_tiny_leverage(np.flatnonzero(tiny), stacklevel=4, alphas=alphas[bad])
        return out

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        """Outputs (A, h, v) on rows ``test_indices`` of the model refitted on the other rows."""
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
        H = check_indices(test_indices, self.n_samples)
        alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
        rows, points = self._holders
        train = np.ones(self.n_samples, dtype=bool)
        train[H] = False
        held = np.isin(rows, H)
        keep = np.ones(self.n_basis, dtype=bool)
        if basis_in_holdout == "remove":  # points whose every holding row is held out
            keep[np.setdiff1d(points[held], points[~held])] = False
        elif basis_in_holdout == "train":
            train[rows[held]] = True
        out = np.zeros((alphas.size, H.size, self.Y.shape[1]))
        keep = np.flatnonzero(keep)
        if keep.size == 0:  # no basis function left: the model is 0
            return out
        out_rows = ~train
        gram = self._gram - self.K[out_rows].T @ self.K[out_rows]
        rhs = self._rhs - self.K[out_rows].T @ self.Y[out_rows]
        for a, alpha in enumerate(alphas):
            out[a] = self.K[np.ix_(H, keep)] @ self._solve(gram, rhs, keep, alpha)
        return out

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        """Out-of-fold outputs (A, m, v): each fold's rows from the model refitted without them."""
        alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
        F = np.full((alphas.size,) + self.Y.shape, np.nan)
        for test in folds:
            F[:, test] = self.holdout_outputs(test, alphas, basis_in_holdout)
        return F

    def _sums(self, F):
        with np.errstate(over="ignore", invalid="ignore"):  # said by warn_if_overflow
            sse = sum_squares(F - self.Y[None], axis=1)
        warn_if_overflow(sse, "cross-validation sums of squares", stacklevel=5)
        return ErrorSums(sse, misclassified(F, self.Y) if self.classes is not None else None, self.n_samples)

    def loo_sums(self, alphas):
        return self._sums(self.Y[None] - self.loo_residuals(alphas))

    def cv_sums(self, folds, alphas, basis_in_holdout="remove"):
        return self._sums(self.cv_outputs(folds, alphas, basis_in_holdout))
