"""Fixed-size LS-SVMs solved sparsely by SCDP (Karsmakers et al. 2011).

Prototypes Z, the basis (pivoted Cholesky, k-center, random, Rényi entropy, all rows, or given), span the
model ``f(x) = sum_i w_i k(x, z_i) + b0``.  Fitting solves the fixed-size
normal equations (:mod:`lssvm.solvers.fixed_size`) either directly (all
prototypes) or by sparse conjugate directions pursuit, which adds one
prototype per step and is stopped at the size chosen by fast v-fold CV
(:mod:`lssvm.cv.fixed_size`).

At its support (the prototypes that carry a weight) the fitted model is the
sparse model on those prototypes at the same alpha (the documentation's
Mathematics page, §4 and §6; SCDP's solution after k steps is the exact
least-squares solution on its k coordinates).  Its engine
(:class:`lssvm.cv.MemorySparseEngine`, built on first use) gives the shared
exact CV, interval and evidence methods (:mod:`lssvm.estimators._exact_cv`).
The one difference is the intercept's regulariser ``nu`` (1e-8 by default),
which the engine's model does not have: its predictions differ from the
fitted model's by about ``nu / m`` relative to the intercept.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._targets import check_numeric_targets, warn_constant_targets
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import PROTOTYPE_METHODS, prototype_pool
from ..cv import resolve_folds
from ..cv.fixed_size import RowsInMemory, chosen_sizes, scdp_seed
from ..exceptions import warn_numerical
from ..kernels import DEFAULT_BLOCK_SIZE, make_kernel, resolve_gamma
from ..solvers.fixed_size import DEFAULT_N_CANDIDATES, FS_GUARD_RTOL, SCDPState
from ._base import check_sample_weight
from ._bayes import BayesMixin
from ._constraints import COUNT, KERNEL_PARAMS, POSITIVE, SIZE, Number, ValidatedParamsMixin
from ._docs import PARAMETER_NAMES_NOTE
from ._exact_cv import ClassifierCVMixin, RegressorCVMixin
from ._expansion import ExpansionMixin
from ._family_calibration import FixedSizeProbaMixin, with_calibration
from ._family_dask import FixedSizeDaskMixin
from ._fixed_size_docs import FIXED_SIZE_ATTRS_DOC as _ATTRS_DOC
from ._fixed_size_docs import FIXED_SIZE_PARAMS_DOC as _PARAMS_DOC
from ._fixed_size_engine import SupportEngineMixin
from ._intervals import SparseIntervalMixin
from ._labels import CodedClassifierMixin, encode_classes
from ._scale import is_scale
from ._validation import validate_input
from ._weights import fit_weighted_fixed_size
from ._whole_pool import WHOLE_POOL_RCOND, dask_whole_pool_cv, whole_pool_fold_scores, whole_pool_outputs

__all__ = ["FixedSizeLSSVC", "FixedSizeLSSVR"]

SOLVERS = ("scdp", "scdpp", "direct")

class _BaseFixedSizeLSSVM(FixedSizeDaskMixin, SupportEngineMixin, ValidatedParamsMixin, ExpansionMixin, BaseEstimator):
    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        alpha=1.0,
        basis="pchol",
        n_basis=None,
        random_state=None,
        *,
        solver="scdp",
        max_size=None,
        cv=10,
        n_candidates=None,
        nu=1e-8,
        stop_window=10,
        stop_tol=1e-4,
        size_rule=0.1,
        scoring=None,
        degree=3,
        coef0=1.0,
        normalize_kernel=False,
        block_size=DEFAULT_BLOCK_SIZE,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.basis = basis
        self.n_basis = n_basis
        self.random_state = random_state
        self.solver = solver
        self.max_size = max_size
        self.cv = cv
        self.n_candidates = n_candidates
        self.nu = nu
        self.stop_window = stop_window
        self.stop_tol = stop_tol
        self.size_rule = size_rule
        self.scoring = scoring
        self.degree = degree
        self.coef0 = coef0
        self.normalize_kernel = normalize_kernel
        self.block_size = block_size
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ checks
    _parameter_constraints = {
        **KERNEL_PARAMS,
        "alpha": [POSITIVE],
        "basis": [StrOptions(set(PROTOTYPE_METHODS)), "array-like"],
        "n_basis": SIZE,
        "solver": [StrOptions(set(SOLVERS))],
        "max_size": [COUNT, None],
        "cv": ["cv_object"],
        "n_candidates": [COUNT, None],
        "nu": [POSITIVE],  # Theorem 2 needs nu > 0
        "stop_window": [COUNT],
        "stop_tol": [Number(Real, 0, None, closed="left"), None],
        "size_rule": [Number(Real, 0, None, closed="left")],
        "scoring": [StrOptions({"mse", "error_rate"}), None],
    }

    def _check_param_rules(self):
        if isinstance(self.n_basis, Integral) and self.max_size is not None and self.max_size > self.n_basis + 1:
            raise ValueError(
                f"max_size={self.max_size} exceeds the n_basis + 1 = {self.n_basis + 1} coefficients (prototypes "
                "plus intercept); lower max_size or raise n_basis"
            )
        if self.scoring == "error_rate" and not is_classifier(self):
            raise ValueError(f"scoring must be 'mse' for regression; got {self.scoring!r}")

    def _check_params(self, X=None):
        """Validate the parameters (:meth:`_validate_params`); returns the kernel."""
        self._validate_params()
        return self._kernel_for(X)

    def _kernel_for(self, X):
        return make_kernel(
            self.kernel, gamma=resolve_gamma(self.gamma, X), degree=self.degree, coef0=self.coef0, normalize=self.normalize_kernel
        )

    @property
    def _scoring(self):
        return "mse" if self.scoring is None else self.scoring

    # --------------------------------------------------------------- fit
    def _check_max_size(self, M):
        """k_m for a pool of M prototypes (checked before any pass over the rows)."""
        D = M + 1
        if self.max_size is not None and self.max_size > D:
            raise ValueError(f"max_size={self.max_size} exceeds the {D} coefficients (M={M} prototypes + intercept)")
        return D if self.max_size is None else int(self.max_size)

    @uses_threads
    def _fit_targets(self, X, Y, groups, split_labels, weights=None):
        if weights is not None:  # SCDP on the weighted normal equations, the size by weighted v-fold CV
            return fit_weighted_fixed_size(self, X, Y, weights, groups, split_labels)
        self._X_fit, self._Y_fit, self._engine = X, Y, None  # the engine at the support: built on first use
        kernel = self._kernel_for(X)  # fit has validated the parameters
        self.gamma_ = resolve_gamma(self.gamma, X)
        rng = check_random_state(self.random_state)
        Z, zidx = prototype_pool(X, kernel, self.basis, self.n_basis, rng)
        self._check_max_size(Z.shape[0])
        seed = scdp_seed(rng)
        K = kernel(X, Z)
        K_ZZ = K[zidx] if zidx is not None else kernel(Z, Z)
        folds = None
        if self.cv is not None:
            # an int is scikit-learn's check_cv rule: unshuffled (Stratified)KFold
            folds = resolve_folds(self.cv, X.shape[0], y=split_labels, groups=groups,
                                  classifier=split_labels is not None)
        whole_pool_cv = None
        kept = self.__dict__.pop("_kept_factorization", None)  # a search's factorisation of the whole pool
        if folds is not None and zidx is not None and isinstance(self.kernel, str) and Y.shape[1] == 1:
            fac = kept.fac if kept is not None and kept.matches(X, Y, kernel, zidx, WHOLE_POOL_RCOND) else None

            def whole_pool_cv(alpha):
                return whole_pool_fold_scores(X, Y, K, zidx, folds, kernel, alpha, self._scoring, fac, self.n_jobs,
                                              fold_spread=True)
        self._fit_rows(kernel, Z, zidx, RowsInMemory(K, K_ZZ, Y, folds), seed, whole_pool_cv)
        self._alpha_groups = self._support_groups()
        return self

    def _fit_dask(self, X, y, groups, classification):
        """Fit on Dask collections: the pool drawn as in memory, one pass of
        per-fold sums (:mod:`lssvm.backends.dask.families`), then the
        in-memory fit on the sums."""
        from ..backends import dask as dask_backend
        from ..backends.dask import families as fam

        data = dask_backend.as_row_data(X, y, groups, numeric_y=not classification)
        Xg = data.X if is_scale(self.gamma) else None  # not ==: an ARD width vector
        kernel = self._kernel_for(Xg)
        self.gamma_ = resolve_gamma(self.gamma, Xg)
        if classification:
            self.classes_ = dask_backend.count_classes(data)
            if self._scoring == "error_rate" and self.classes_.size > 2:
                raise ValueError("scoring='error_rate' needs two classes: with more, each one-vs-rest output picks "
                                 "its own size; use scoring='mse'")
        else:
            self._y_1d = data.y.ndim == 1
        rng = check_random_state(self.random_state)
        Z, zidx = fam.prototype_pool(data, kernel, self.basis, self.n_basis, rng)
        self._check_max_size(Z.shape[0])
        seed = scdp_seed(rng)
        folds = None if self.cv is None else dask_backend.resolve_dask_cv(self.cv, data, classification)
        rows = fam.summed_rows(data, Z, kernel, self.classes_ if classification else None, folds)
        self.n_features_in_ = data.n_features
        self._X_fit, self._Y_fit, self._dask_data = None, None, data  # the engines' rows (output groups too)
        self._engine, self._alpha_groups = None, None
        whole_pool_cv = None
        if folds is not None and zidx is not None:
            whole_pool_cv = dask_whole_pool_cv(data, Z, zidx, kernel, folds, self.classes_ if classification else None,
                                               self._scoring)
        self._fit_rows(kernel, Z, zidx, rows, seed, whole_pool_cv)
        self._alpha_groups, self._group_engines = self._support_groups(), {}
        # the engine: the sparse model on the support, its training pass deferred to its first use (or why none)
        engine = fam.support_engine(data, kernel, Z, zidx, self.coef_full_, self.support_,
                                    self.classes_ if classification else None)
        self._engine = None if isinstance(engine, str) else engine
        self._dask_engine = (engine, self.coef_full_)  # with the fit it belongs to (FixedSizeDaskMixin)
        return self

    def _fit_rows(self, kernel, Z, zidx, rows, seed, whole_pool_cv=None):
        """The fit given the rows, in memory or as sums over row blocks
        (:class:`lssvm.cv.fixed_size.RowsInMemory` / ``SummedRows``): one
        code path for NumPy and Dask input."""
        M = Z.shape[0]
        D = M + 1
        kmax = self._check_max_size(M)
        system = rows.system()
        A = system.matrix(float(self.alpha), float(self.nu))
        v = system.rhs.shape[1]
        name = type(self).__name__
        self.cv_curve_ = self.cv_curve_std_ = self.cv_score_ = None
        W = np.zeros((D, v))
        if self.solver == "direct":
            W[:] = rows.solve(system, float(self.alpha), float(self.nu), call=f"{name}(solver='direct').fit")
            sizes = np.full(v, D)
            orders = [np.arange(D)] * v
            if self.cv is not None:
                sse, wrong = rows.direct_cv(system, float(self.alpha), float(self.nu), f"{name}(solver='direct') CV",
                                            count_wrong=self._scoring == "error_rate")
                self.cv_score_ = (sse if self._scoring == "mse" else wrong) / rows.n_samples
        else:
            full = None
            rho = None if self.solver != "scdpp" else (
                DEFAULT_N_CANDIDATES if self.n_candidates is None else self.n_candidates)
            sizes = np.full(v, kmax)
            if self.cv is not None:
                curves = rows.curves(
                    system, [float(self.alpha)], nu=float(self.nu), max_size=kmax, n_candidates=rho, seed=seed,
                    stop_window=self.stop_window, stop_tol=self.stop_tol, stop_scoring=self._scoring,
                )
                mean, std = curves.curve(self._scoring)
                last = int(curves.stopped_at.max())
                mean, std = mean[0, :, :last], std[0, :, :last]
                sizes = chosen_sizes(curves, self._scoring, self.size_rule)[0]
                self.cv_curve_, self.cv_curve_std_ = mean, std
                self.cv_score_ = mean[np.arange(v), sizes - 1]
                if last < kmax and kmax == D:
                    full = whole_pool_outputs(self, rows, system, mean, std, name, whole_pool_cv)
                    if full is not None:  # the size rule on the curve completed by the whole pool
                        sizes = full[3]
                        self.cv_score_ = mean[np.arange(v), sizes - 1]
            orders = []
            for j in range(v):
                if full is not None and full[0][j]:  # the whole pool: the size rule's pick on the full curve
                    W[:, j] = full[1][:, j]
                    orders.append(np.arange(D))
                    sizes[j] = D
                    self.cv_score_[j] = full[2][j]
                    continue
                state = SCDPState(A, system.rhs[:, j], rho, seed)
                while state.k < sizes[j] and state.step() is not None:
                    pass
                if state.k < sizes[j] and state.skipped:
                    warn_numerical(f"{name}: SCDP kept {state.k} of the {int(sizes[j])} requested "
                        f"non-zeros: {len(state.skipped)} coordinate(s) are numerically dependent on the selected "
                        "ones in the normal equations (K^T K squares the kernel's conditioning), so the model "
                        "is the minimiser over the kept prototypes only. solver='direct' (solved by QR when "
                        "ill-conditioned), a larger alpha or a narrower kernel avoid this", stacklevel=3)
                W[state.order, j] = state.coef
                orders.append(state.order.copy())
                sizes[j] = state.k
                if state.k:  # conditioning guard: SCDP solves the normal equations
                    sel = state.order
                    err = rows.fit_error(A[np.ix_(sel, sel)], sel, state.coef)
                    if err > FS_GUARD_RTOL:
                        warn_numerical(f"{name}: the SCDP solution's fitted values have an estimated "
                            f"relative error of {err:.1e} (the normal equations square the kernel's "
                            "conditioning); solver='direct' re-solves by QR, or increase alpha", stacklevel=3)
        if v == 1:  # keep SCDP's selection order
            used = np.array([c for c in orders[0] if c < M and W[c, 0] != 0], dtype=np.intp)
        else:
            used = np.flatnonzero(np.any(W[:M] != 0, axis=1))
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = zidx
        self.n_basis_ = M
        self.support_ = used
        self.support_vectors_ = Z[used]
        self.n_support_ = int(used.size)
        self._coef_2d = W[used]
        self._intercept_2d = W[M]
        self.coef_full_ = W
        single = self._single_output
        self.model_size_ = int(sizes[0]) if single else sizes
        self.selection_order_ = orders[0] if single else orders
        if single and self.cv_curve_ is not None:
            self.cv_curve_, self.cv_curve_std_ = self.cv_curve_[0], self.cv_curve_std_[0]
        if single and self.cv_score_ is not None:
            self.cv_score_ = float(self.cv_score_[0])
        self.dual_coef_ = self._coef_2d[:, 0] if single else self._coef_2d
        self.intercept_ = float(self._intercept_2d[0]) if single else self._intercept_2d
        return self

    # ----------------------------------------------------------- predict
    def _expansion_arrays(self):
        """``support_vectors_`` (n, d), coefficients (n, v), intercept (v,)."""
        check_is_fitted(self, "_coef_2d")
        return self.support_vectors_, self._coef_2d, self._intercept_2d


class FixedSizeLSSVR(SparseIntervalMixin, BayesMixin, RegressorCVMixin, RegressorMixin, _BaseFixedSizeLSSVM):
    __doc__ = (
        """Fixed-size LS-SVM regression, solved sparsely by SCDP with the model
    size chosen by fast v-fold CV (Karsmakers et al. 2011).

    Minimises ``||y - K w - b0||^2 + alpha w^T K_ZZ w + nu b0^2`` over the
    weights ``w`` on a pool of M prototypes Z, where ``K = k(X, Z)``.  SCDP
    adds one prototype per step and each step is the exact least-squares
    solution on the prototypes chosen so far; v-fold CV of every size
    (by downdating the normal equations per fold) picks where to stop.
    """
        + _PARAMS_DOC
        + _ATTRS_DOC
        + """
    Notes
    -----
""" + PARAMETER_NAMES_NOTE + """
    Examples
    --------
    >>> from lssvm import FixedSizeLSSVR
    >>> from lssvm.datasets import load_motorcycle
    >>> X, y = load_motorcycle(return_X_y=True)
    >>> X = (X - X.min()) / (X.max() - X.min())
    >>> reg = FixedSizeLSSVR(gamma=50.0, alpha=1e-3, basis="all", random_state=0).fit(X, y)
    >>> reg.n_support_ < 40
    True
    """
    )

    @property
    def _single_output(self):
        return self._y_1d

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit; ``groups`` go to a group splitter passed as ``cv``.

        Parameters
        ----------
        X : array-like of shape (N, d)
        y : array-like of shape (N,) or (N, n_outputs)
        groups : array-like of shape (N,), optional
        sample_weight : array-like of shape (N,) or float, optional
            Row weights ``w_i >= 0`` (rows in memory): the model minimises
            ``sum_i w_i (y_i - f(x_i))^2 + alpha w^T K_ZZ w + nu b0^2``.
            The prototype pool is drawn among the positive-weight rows and
            is otherwise unweighted; SCDP's steps and the size's v-fold CV
            are weighted (mean ``sum w e^2 / sum w``), so a zero weight is
            a removed row and an integer weight a repeated row.  The CV
            methods then give the weighted model at its support refitted
            without the held-out rows (:class:`lssvm.cv.WeightedSparseEngine`),
            their error sums weighted.  Intervals, predict_std, the evidence, gcv and
            predict_set are not available for weighted fits (their
            conformal and Bayesian conventions are unweighted): a clear error says so.

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):
            self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # weights: a clear error
            return self._fit_dask(X, y, groups, classification=False)
        X, y = validate_input(self, X, y, dtype=np.float64, multi_output=True, ensure_min_samples=2, y_numeric=True)
        y = check_numeric_targets(y)
        warn_constant_targets(y)
        self._y_1d = y.ndim == 1
        Y = y[:, None] if y.ndim == 1 else y
        self._X_fit, self._Y_fit = X, Y  # the engine at the support is built from them
        self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # the support engine is weighted
        return self._fit_targets(X, Y, groups, None, self._fit_weights)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        """Predictions, shape (m,) or (m, n_outputs)."""
        F = self._decision_2d(X)
        return F[:, 0] if self._single_output else F


@with_calibration("the exact leave-one-out values of the model at its support (the sparse model on\n        "
                  "the prototypes that carry a weight), O(m s) after the fit")
class FixedSizeLSSVC(FixedSizeProbaMixin, ClassifierCVMixin, CodedClassifierMixin, ClassifierMixin,
                     _BaseFixedSizeLSSVM):
    __doc__ = (
        """Fixed-size LS-SVM classification, solved sparsely by SCDP with the
    model size chosen by fast v-fold CV (Karsmakers et al. 2011).

    Regresses the labels coded +1/-1 (one-vs-rest columns for more than two
    classes, each grown by its own SCDP run) as :class:`FixedSizeLSSVR`
    does; predicts the sign or the largest output.  The CV criterion is
    the PRESS / mean squared error of the coded outputs (the paper's
    choice) unless ``scoring="error_rate"`` (two classes only).
    """
        + _PARAMS_DOC
        + _ATTRS_DOC
        + """    classes_ : ndarray of shape (n_classes,)

    Notes
    -----
""" + PARAMETER_NAMES_NOTE + """
    Examples
    --------
    >>> from lssvm import FixedSizeLSSVC
    >>> from lssvm.datasets import load_ripley
    >>> X, y = load_ripley(return_X_y=True)
    >>> clf = FixedSizeLSSVC(gamma=2.0, alpha=0.1, random_state=0).fit(X, y)
    >>> clf.n_support_ < 60
    True
    """
    )

    @property
    def _single_output(self):
        return self.classes_.size == 2

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit on labels of any type; ``groups`` go to a group splitter passed as ``cv`` or ``calibration_cv``.

        Parameters
        ----------
        X : array-like of shape (N, d)
        y : array-like of shape (N,)
        groups : array-like of shape (N,), optional
        sample_weight : array-like of shape (N,) or float, optional
            Row weights of the coded targets' squared errors, as for
            :meth:`FixedSizeLSSVR.fit`; the exact CV values and error rates
            are weighted, and so is the calibration (weighted fold systems,
            Platt's and the isotonic fit weigh each held-out value by its
            row's weight).  Intervals, predict_std, the evidence, gcv and
            predict_set are not available for weighted fits (their
            conformal and Bayesian conventions are unweighted): a clear error says so.

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):  # calibrated on the engine's values from Dask passes
            self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # weights: a clear error
            return self._fit_dask(X, y, groups, classification=True)._fit_calibration()
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_, codes, Y = encode_classes(y, "FixedSizeLSSVC")
        if self.scoring == "error_rate" and self.classes_.size > 2:
            raise ValueError(
                "scoring='error_rate' needs two classes: with more, each one-vs-rest output picks "
                "its own size; use scoring='mse'"
            )
        self._codes = codes
        self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # the calibration weighs by them
        return self._fit_targets(X, Y, groups, codes, self._fit_weights)._fit_calibration(groups)  # exact held-out values
