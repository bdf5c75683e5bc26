"""Shared machinery of the sparse LS-SVM estimators.

The estimators are thin: they validate input, choose the basis
(:mod:`lssvm.basis`), hand the kernel matrices to the path factorisation
(:mod:`lssvm.solvers`), and expose its training-set results (coefficients,
LOO residuals) in scikit-learn's conventions.
"""

from __future__ import annotations

import copy
import functools
import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._threads import uses_threads
from ..basis import default_basis_size, select_basis
from ..cv import MemorySparseEngine, WeightedSparseEngine
from ..exceptions import NotFittedError
from ..kernels import DEFAULT_BLOCK_SIZE, make_kernel, resolve_gamma
from ..solvers import factorize_sparse_rls, factorize_weighted_rls
from ..solvers.block_gram import DEFAULT_BLOCKS
from ..solvers.loo_block import coef_per_target, restrict_targets
from ._basis_size import auto_basis_rows, check_auto_basis, is_auto
from ._constraints import SPARSE_PARAMS, ValidatedParamsMixin, check_target_alphas
from ._expansion import ExpansionMixin, FromExpansionMixin
from ._training_data import check_training_data, remember_training_data

__all__ = ["BaseSparseLSSVM", "assemble_target_groups", "check_sample_weight", "per_target_alpha", "squeeze_outputs"]


def check_sample_weight(estimator, sample_weight, X, y=None):
    """Validated row weights (m,) float64, or None.

    Raises
    ------
    ValueError
        For Dask input, a wrong length, NaN, infinity, a negative weight or
        weights that sum to zero.
    """
    if sample_weight is None:
        return None
    from ..backends import is_dask_collection

    if is_dask_collection(X) or is_dask_collection(y) or is_dask_collection(sample_weight):
        raise ValueError(f"{type(estimator).__name__}: sample_weight is not supported for Dask input; "
                         "fit on a NumPy sample")
    # scikit-learn's rules and messages: scalar broadcast, length, NaN / infinity, negative values
    # a copy (m floats): the fitted model's exact-CV methods read the weights again, and the caller's
    # array may be modified in place after the fit
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True)
    if not w.sum() > 0:
        raise ValueError("sample_weight sums to zero: at least one row needs a positive weight")
    return w

class BaseSparseLSSVM(ValidatedParamsMixin, FromExpansionMixin, ExpansionMixin, BaseEstimator):
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

    _predict_accepts_sparse = True

    # ------------------------------------------------------------------ fit
    def _validate_params_(self, X=None):
        """Validate the parameters (:meth:`_validate_params`); returns the kernel,
        at ``gamma="scale"`` resolved on ``X`` (1.0 without it)."""
        self._validate_params()
        return self._kernel_for(X)

    def _kernel_for(self, X, weights=None):
        """The kernel of validated parameters, ``gamma="scale"`` resolved on ``X`` (weighted rows with ``weights``)."""
        return make_kernel(
            self.kernel, gamma=resolve_gamma(self.gamma, X, weights), degree=self.degree, coef0=self.coef0, normalize=self.normalize_kernel
        )

    @uses_threads
    def _fit_targets(self, X, Y, sample_weight=None):
        """Fit on validated ``X`` (m, d) and 2-D targets ``Y`` (m, v); ``fit`` has validated the parameters.

        With ``sample_weight`` (validated, :func:`check_sample_weight`) the weighted model is fitted
        (:mod:`lssvm.solvers.weighted_rls`); its basis is chosen among the rows of positive weight, so
        that a zero weight is a removed row."""
        if sample_weight is not None:
            return self._fit_weighted(X, Y, sample_weight)
        kernel = self._kernel_for(X)
        self.gamma_ = resolve_gamma(self.gamma, X)
        if sp.issparse(X) and not kernel.accepts_sparse:
            raise ValueError(
                f"sparse input is supported only with kernel='linear' or 'poly' (got {kernel.name!r}); "
                "pass a dense array or choose a dot-product kernel"
            )
        basis, n_basis = self.basis, self.n_basis
        self.basis_curve_ = self.basis_pivots_ = None
        if is_auto(n_basis):  # the size chosen by the exact LOO error of every prefix, at alpha
            check_auto_basis(basis, X, type(self).__name__)
            basis, _, _ = auto_basis_rows(self, X, Y, kernel, [self._basis_alpha()])
            n_basis = None
        sel = select_basis(
            X,
            kernel,
            basis,
            default_basis_size(basis, n_basis, X.shape[0], is_classifier(self)),
            y=Y,
            alpha=self._basis_alpha(),
            tol=self.basis_tol,
            pivot_tol=self.pivot_tol,
            rcond=self.rcond,
            n_candidates=self.n_candidates,
            random_state=self.random_state,
        )
        Z = sel.vectors
        # a search's refit is handed the factorisation it scored at these parameters: one factorisation fewer
        kept = self.__dict__.pop("_kept_factorization", None)
        if kept is not None and kept.matches(X, Y, kernel, sel.indices, self.rcond):
            fac = kept.fac
        else:
            K_mn = kernel(X, Z, block_size=self.block_size)
            K_BB = K_mn[sel.indices] if sel.indices is not None else kernel(Z, Z)
            fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=self.rcond, overwrite_k=True,  # CV+'s default folds
                                       fold_blocks=0 if is_classifier(self) else DEFAULT_BLOCKS)
        a, b = self._coef_at_alpha(fac, Y.shape[1])
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
        classes = self.classes_ if is_classifier(self) else None
        self._engine = MemorySparseEngine(fac, X, Z, sel.indices, kernel, self.rcond, classes, self.n_jobs)
        remember_training_data(self, X, fac.y)
        self._set_coef(a, b)
        return self

    @uses_threads
    def _fit_weighted(self, X, Y, weights):
        """The weighted fit: basis from the positive-weight rows, weighted factorisation and engine."""
        self.__dict__.pop("_kept_factorization", None)  # an unweighted search's factorisation does not apply
        if is_auto(self.n_basis):
            raise ValueError(f"{type(self).__name__}: n_basis='auto' grows an unweighted basis; "
                             "give an int n_basis with sample_weight")
        kernel = self._kernel_for(X, weights)
        self.gamma_ = resolve_gamma(self.gamma, X, weights)
        if sp.issparse(X) and not kernel.accepts_sparse:
            raise ValueError(
                f"sparse input is supported only with kernel='linear' or 'poly' (got {kernel.name!r}); "
                "pass a dense array or choose a dot-product kernel"
            )
        # a method chooses among the positive-weight rows (a zero weight is a removed row);
        # row indices and points given by the user are kept as given
        positive = np.flatnonzero(weights > 0) if isinstance(self.basis, str) else np.arange(X.shape[0])
        sel = select_basis(
            X[positive],
            kernel,
            self.basis,
            default_basis_size(self.basis, self.n_basis, positive.size, is_classifier(self)),
            y=Y[positive],
            alpha=self._basis_alpha(),
            tol=self.basis_tol,
            pivot_tol=self.pivot_tol,
            rcond=self.rcond,
            n_candidates=self.n_candidates,
            random_state=self.random_state,
        )
        Z = sel.vectors
        indices = None if sel.indices is None else positive[sel.indices]
        K_mn = kernel(X, Z, block_size=self.block_size)
        K_BB = K_mn[indices] if indices is not None else kernel(Z, Z)
        fac = factorize_weighted_rls(K_mn, K_BB, Y, weights, rcond=self.rcond)
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = indices
        self.n_basis_ = Z.shape[0]
        self.reconstruction_error_curve_ = sel.error_curve
        self.basis_stop_reason_ = sel.stop_reason
        self.greedy_training_error_ = sel.training_error
        self.rank_ = fac.rank
        self.factorization_ = fac
        self._X_fit = X
        classes = self.classes_ if is_classifier(self) else None
        self._engine = WeightedSparseEngine(fac, X, Z, indices, kernel, self.rcond, classes, self.n_jobs)
        remember_training_data(self, X, None)  # the weighted factorisation holds centred copies
        self._set_coef(*self._coef_at_alpha(fac, Y.shape[1]))
        return self

    def _fit_dask(self, X, y, classification):
        """Fit on Dask collections, block by block (:mod:`lssvm.backends.dask`).

        Returns the class labels for classifiers (else None) and whether
        the targets are 1-D."""
        from ..backends import dask as dask_backend

        if is_auto(self.n_basis):
            raise ValueError(f"{type(self).__name__}: n_basis='auto' needs the rows in memory; "
                             "give an int n_basis for Dask input")
        if np.ndim(self.alpha) != 0:  # the per-target methods restrict an in-memory engine
            raise ValueError("a model fitted on Dask collections takes one alpha for all targets; "
                             "fit on a NumPy sample for one alpha per target")
        data = dask_backend.as_row_data(X, y, numeric_y=not classification)
        scale = isinstance(self.gamma, str) and self.gamma == "scale"  # not ==: an ARD vector
        kernel = self._validate_params_(data.X if scale else None)
        self.gamma_ = resolve_gamma(self.gamma, data.X if scale else None)
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
        self._engine = fit  # the Dask engine (lssvm.backends.dask.DaskSparseFit)
        return classes, data.y.ndim == 1

    def _set_coef(self, a, b):
        self._dual_coef_2d = a
        self._intercept_2d = b

    # ----------------------------------------------------- alpha per target
    #: whether ``alpha`` may be an array, one per target (the regressor)
    _alpha_per_target = False

    def _basis_alpha(self):
        """The alpha at which ``basis="greedy"`` ranks candidates: the fitted one, or
        with one per target their geometric mean."""
        if np.ndim(self.alpha) == 0:
            return self.alpha
        return float(np.exp(np.mean(np.log(np.asarray(self.alpha, dtype=float)))))

    def _coef_at_alpha(self, sol, n_targets):
        """Coefficients (n, v) and intercepts (v,) at the fitted ``alpha``, one per target when it is an
        array; records the targets of each distinct alpha (``_alpha_groups``)."""
        self._alpha_groups = None
        if np.ndim(self.alpha) == 0:
            return sol.coef(self.alpha)
        alphas = check_target_alphas(self.alpha, n_targets)
        values, which = np.unique(alphas, return_inverse=True)
        self._alpha_groups = [(float(a), np.flatnonzero(which == i)) for i, a in enumerate(values)]
        return coef_per_target(sol, alphas)

    def _target_subset(self, targets, alpha):
        """A shallow copy of this fitted model restricted to some targets, all at one ``alpha``: what the
        methods of a model with one alpha per target run on, one group of equal alphas at a time."""
        engine = self._fitted_engine()
        if not engine.rows_in_memory:
            raise ValueError("a model fitted on Dask collections takes one alpha for all targets; "
                             "fit on a NumPy sample for one alpha per target")
        sub = copy.copy(self)
        sub.alpha = alpha
        sub._alpha_groups = None
        sub._single_output = False
        sub.factorization_ = restrict_targets(self.factorization_, targets)
        sub._engine = engine.restricted(targets)
        sub._set_coef(self._dual_coef_2d[:, targets], self._intercept_2d[targets])
        return sub

    def _per_target_alpha_call(self, method, args, kwargs):
        """``method`` of each group of targets that share an alpha, assembled along the last (target) axis."""
        out = assemble_target_groups(self, method, args, kwargs, self._dual_coef_2d.shape[1])
        return out[..., 0] if self._single_output else out

    # -------------------------------------------------------------- predict
    def _expansion_arrays(self):
        """``basis_vectors_`` (n, d), coefficients (n, v), intercept (v,)."""
        check_is_fitted(self, "_dual_coef_2d")
        return self.basis_vectors_, self._dual_coef_2d, self._intercept_2d

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

    def _fitted_engine(self):
        """The engine of the fit (:class:`lssvm.cv.SparseEngine`): in memory or on Dask."""
        self._factorization()
        check_training_data(self)
        return self._engine

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        name = self.kernel if isinstance(self.kernel, str) else getattr(self.kernel, "name", "")
        tags.input_tags.sparse = name in ("linear", "poly") or bool(getattr(self.kernel, "accepts_sparse", False))
        return tags


def per_target_alpha(method):
    """Run ``method`` of a model fitted with one alpha per target group by group of equal alphas (each
    at its own alpha), when its ``alpha`` argument is None or it has none; as is otherwise.  A model
    whose target groups hold for every alpha (``_groups_at_any_alpha``: a fixed-size regressor's outputs
    on different supports) runs group by group whatever the alpha."""
    signature = inspect.signature(method)
    takes_alpha = "alpha" in signature.parameters

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if getattr(self, "_alpha_groups", None) is None:
            return method(self, *args, **kwargs)
        if takes_alpha and not getattr(self, "_groups_at_any_alpha", False) and \
                signature.bind(self, *args, **kwargs).arguments.get("alpha") is not None:
            return method(self, *args, **kwargs)
        return self._per_target_alpha_call(method, args, kwargs)

    return run


def squeeze_outputs(arr, scalar, single_output):
    """Drop the alpha axis (axis 0) for scalar alpha and the output axis
    (last) for 1-D targets."""
    if single_output:
        arr = arr[..., 0]
    return arr[0] if scalar else arr


def assemble_target_groups(est, method, args, kwargs, n_outputs):
    """``method(sub, *args, **kwargs)`` on ``est._target_subset(targets, alpha)`` for each
    ``(alpha, targets)`` of ``est._alpha_groups``, the parts assembled along the last (output) axis of
    length ``n_outputs``: the outputs of a model whose groups of targets are separate models (one alpha
    per target, or fixed-size outputs on different supports)."""
    out = None
    for alpha, targets in est._alpha_groups:
        part = np.asarray(method(est._target_subset(targets, alpha), *args, **kwargs))
        if out is None:
            out = np.empty(part.shape[:-1] + (n_outputs,), dtype=part.dtype)
        out[..., targets] = part
    return out
