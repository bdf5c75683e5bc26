"""Shared machinery of the sparse LS-SVM estimators.

The estimators are thin: they validate input, choose the basis
(:mod:`lssvm.basis`), hand the kernel matrices to the path factorisation
(:mod:`lssvm.solvers`), and expose its training-set results (coefficients,
LOO residuals) in scikit-learn's conventions.
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier
from sklearn.utils.validation import check_is_fitted

from .._sums import sum_squares, warn_if_overflow
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import basis_holders, select_basis
from ..cv import HoldoutEngine, cross_val_predictions, resolve_folds
from ..exceptions import NotFittedError
from ..kernels import make_kernel, resolve_gamma
from ..kernels._distances import DEFAULT_BLOCK_SIZE, iter_row_blocks
from ..solvers import check_alphas, factorize_sparse_rls
from ..solvers.sparse_rls import warn_tiny_leverage
from ._constraints import SPARSE_PARAMS, ValidatedParamsMixin
from ._validation import validate_input

__all__ = ["BaseSparseLSSVM"]


class BaseSparseLSSVM(ValidatedParamsMixin, BaseEstimator):
    """Sparse LS-SVM on a basis, with the training factorisation kept for
    exact fast cross-validation.  Not for direct use."""

    _parameter_constraints = SPARSE_PARAMS

    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        alpha=1.0,
        basis="pchol",
        n_basis=None,
        random_state=None,
        *,
        degree=3,
        coef0=1.0,
        basis_tol=1e-6,
        pivot_tol=1e-6,
        n_candidates=None,
        rcond=1e-10,
        block_size=DEFAULT_BLOCK_SIZE,
        normalize_kernel=False,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.basis = basis
        self.n_basis = n_basis
        self.random_state = random_state
        self.degree = degree
        self.coef0 = coef0
        self.basis_tol = basis_tol
        self.pivot_tol = pivot_tol
        self.n_candidates = n_candidates
        self.rcond = rcond
        self.block_size = block_size
        self.normalize_kernel = normalize_kernel
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fit
    def _validate_params_(self, X=None):
        """Validate the parameters (:meth:`_validate_params`); returns the kernel,
        at ``gamma="scale"`` resolved on ``X`` (1.0 without it)."""
        self._validate_params()
        return self._kernel_for(X)

    def _kernel_for(self, X):
        """The kernel of validated parameters, ``gamma="scale"`` resolved on ``X``."""
        return make_kernel(
            self.kernel, gamma=resolve_gamma(self.gamma, X), degree=self.degree, coef0=self.coef0, normalize=self.normalize_kernel
        )

    @uses_threads
    def _fit_targets(self, X, Y):
        """Fit on validated ``X`` (m, d) and 2-D targets ``Y`` (m, v); ``fit`` has validated the parameters."""
        kernel = self._kernel_for(X)
        self.gamma_ = resolve_gamma(self.gamma, X)
        if sp.issparse(X) and not kernel.accepts_sparse:
            raise ValueError(
                f"sparse input is supported only with kernel='linear' or 'poly' (got {kernel.name!r}); "
                "pass a dense array or choose a dot-product kernel"
            )
        sel = select_basis(
            X,
            kernel,
            self.basis,
            self.n_basis,
            y=Y,
            alpha=self.alpha,
            tol=self.basis_tol,
            pivot_tol=self.pivot_tol,
            rcond=self.rcond,
            n_candidates=self.n_candidates,
            random_state=self.random_state,
        )
        Z = sel.vectors
        K_mn = kernel(X, Z, block_size=self.block_size)
        K_BB = K_mn[sel.indices] if sel.indices is not None else kernel(Z, Z)
        fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=self.rcond, overwrite_k=True)
        a, b = fac.coef(self.alpha)
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = sel.indices
        self.n_basis_ = Z.shape[0]
        self.reconstruction_error_curve_ = sel.error_curve
        self.basis_stop_reason_ = sel.stop_reason
        self.greedy_training_error_ = sel.training_error
        self.rank_ = fac.rank
        self.factorization_ = fac
        self._X_fit = X  # hold-out with basis removal re-evaluates k(x_H, z_E)
        self._dask_fit = None
        self._set_coef(a, b)
        return self

    def _fit_dask(self, X, y, classification):
        """Fit on Dask collections, block by block (:mod:`lssvm.backends.dask`).

        Returns the class labels for classifiers (else None) and whether
        the targets are 1-D."""
        from ..backends import dask as dask_backend

        data = dask_backend.as_row_data(X, y, numeric_y=not classification)
        kernel = self._validate_params_(data.X if self.gamma == "scale" else None)
        self.gamma_ = resolve_gamma(self.gamma, data.X if self.gamma == "scale" else None)
        classes = dask_backend.count_classes(data) if classification else None
        fit = dask_backend.fit_sparse(data, kernel, self.basis, self.n_basis, self.random_state, self.rcond, classes)
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.basis_vectors_ = fit.ctx.basis
        self.basis_indices_ = fit.basis_indices
        self.n_basis_ = fit.ctx.basis.shape[0]
        self.reconstruction_error_curve_ = None
        self.basis_stop_reason_ = None
        self.greedy_training_error_ = None
        self.rank_ = fit.solution.rank
        self.factorization_ = fit.solution
        self._X_fit = None
        self._dask_fit = fit
        return classes, data.y.ndim == 1

    def _set_coef(self, a, b):
        self._dual_coef_2d = a
        self._intercept_2d = b

    # -------------------------------------------------------------- predict
    @uses_threads
    def _decision_2d(self, X):
        check_is_fitted(self, "_dual_coef_2d")
        if is_dask_collection(X):
            from ..backends.dask import decision_blocks

            return decision_blocks(X, self.kernel_, self.basis_vectors_, self._dual_coef_2d, self._intercept_2d)
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        out = np.empty((X.shape[0], self._dual_coef_2d.shape[1]))
        for rows in iter_row_blocks(X.shape[0], self.block_size):
            out[rows] = self.kernel_(X[rows], self.basis_vectors_) @ self._dual_coef_2d
        out += self._intercept_2d
        return out

    # ------------------------------------------------------------ LOO (2-D)
    def _factorization(self):
        check_is_fitted(self, "_dual_coef_2d")
        fac = getattr(self, "factorization_", None)
        if fac is None:
            raise NotFittedError(
                "this model has no training factorisation (it was loaded from a file); "
                "call fit on the training data to get cross-validation results"
            )
        return fac

    @uses_threads
    def _loo_residuals_3d(self, alpha):
        """LOO residuals as (A, m, v) and whether alpha was a scalar."""
        alpha = self.alpha if alpha is None else alpha
        alphas, scalar = check_alphas(alpha)
        fac = self._factorization()
        if self._dask is not None:
            return self._dask.loo_residuals(alphas), scalar
        return fac.loo_residuals(alphas), scalar

    def _loo_sums(self, alpha):
        """Sums of squared LOO residuals (A, v), misclassified rows (A,), the
        number of rows, and whether alpha was a scalar.  The residuals are
        reduced per row block of about 1 MiB (on Dask data, in the pass),
        never held for all rows; an overflowing sum gives a NumericalWarning."""
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        fac = self._factorization()
        if self._dask is not None:
            out = self._dask.loo_sums(alphas)
            warn_if_overflow(out["sse"], "leave-one-out sums of squares", stacklevel=4)
            return out["sse"], out["wrong"], out["count"], scalar
        m, v = fac.y_centered.shape
        sse = np.zeros((alphas.size, v))
        wrong = np.zeros(alphas.size, dtype=np.int64) if is_classifier(self) else None
        Y = self._targets_2d() if wrong is not None else None
        tiny = []
        step = max(1, (1 << 20) // (8 * alphas.size * v + 8 * fac.rank))
        for lo in range(0, m, step):
            rows = slice(lo, min(lo + step, m))
            R, t = fac.loo_rows(fac.M[rows], fac.y_centered[rows], alphas)
            tiny.append(lo + t)
            sse += sum_squares(R, axis=1)
            if wrong is not None:
                wrong += self._wrong(Y[None, rows] - R, rows)
        warn_tiny_leverage(np.concatenate(tiny), stacklevel=4)
        warn_if_overflow(sse, "leave-one-out sums of squares", stacklevel=4)
        return sse, wrong, m, scalar

    @property
    def _dask(self):
        """The Dask fit (:class:`lssvm.backends.dask.DaskSparseFit`), or None."""
        return getattr(self, "_dask_fit", None)

    def _targets_2d(self):
        """Training targets (coded for classifiers), (m, v): NumPy, or Dask for Dask fits."""
        if self._dask is not None:
            return self._dask.targets()
        fac = self.factorization_
        return fac.y_centered + fac.y_mean

    def _wrong(self, F, rows=slice(None)):
        """Misclassified rows per alpha for outputs ``F`` (A, b, v) of training
        rows ``rows`` (classifiers)."""
        return None


    # ---------------------------------------------------- hold-out and CV
    def _holdout_engine(self):
        fac = self._factorization()
        holders = getattr(self, "_basis_holders", None)
        if holders is None or holders[0] is not fac:  # O(m d) row hashing, once per fit
            holders = (fac, basis_holders(self._X_fit, self.basis_vectors_, self.basis_indices_))
            self._basis_holders = holders
        return HoldoutEngine.from_kernel(fac, self._X_fit, self.basis_vectors_, self.kernel_, holders[1], self.rcond)

    @uses_threads
    def _holdout_3d(self, test_indices, alpha, basis_in_holdout):
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        if self._dask is not None:
            self._factorization()
            return self._dask.holdout_outputs(test_indices, alphas, basis_in_holdout), scalar
        return self._holdout_engine().predict(test_indices, alphas, basis_in_holdout), scalar

    @uses_threads
    def _cv_3d(self, cv, alpha, groups, basis_in_holdout, reduce=False):
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        if self._dask is not None:
            self._factorization()
            out = self._dask.cross_validate(cv, alphas, groups, basis_in_holdout, reduce=reduce)
            if isinstance(out, dict):
                warn_if_overflow(out["sse"], "cross-validation sums of squares", stacklevel=4)
            return out, scalar
        engine = self._holdout_engine()
        folds = resolve_folds(
            cv, engine.fac.n_samples, y=self._split_labels(), groups=groups, classifier=is_classifier(self)
        )
        self._check_fold_classes(folds)
        if not reduce:
            return cross_val_predictions(engine, folds, alphas, basis_in_holdout), scalar
        # Reduced per fold, as on Dask: never all A x m x v predictions at once.
        Y = self._targets_2d()
        sums = {"sse": np.zeros((alphas.size, Y.shape[1])), "count": Y.shape[0],
                "wrong": np.zeros(alphas.size, dtype=np.int64) if is_classifier(self) else None}
        lock = threading.Lock()

        def sink(rows, F):
            sse = sum_squares(F - Y[None, rows], axis=1)
            wrong = self._wrong(F, rows) if sums["wrong"] is not None else None
            with lock:
                sums["sse"] += sse
                if wrong is not None:
                    sums["wrong"] += wrong

        cross_val_predictions(engine, folds, alphas, basis_in_holdout, sink=sink)
        warn_if_overflow(sums["sse"], "cross-validation sums of squares", stacklevel=4)
        return sums, scalar

    def _check_fold_classes(self, folds):
        """Classifiers warn about folds whose training rows lack a class."""

    def _split_labels(self):
        """Targets handed to splitters (first output for multi-output)."""
        fac = self.factorization_
        return fac.y_centered[:, 0] + fac.y_mean[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        name = self.kernel if isinstance(self.kernel, str) else getattr(self.kernel, "name", "")
        tags.input_tags.sparse = name in ("linear", "poly") or bool(getattr(self.kernel, "accepts_sparse", False))
        return tags


def squeeze_outputs(arr, scalar, single_output):
    """Drop the alpha axis (axis 0) for scalar alpha and the output axis
    (last) for 1-D targets."""
    if single_output:
        arr = arr[..., 0]
    return arr[0] if scalar else arr
