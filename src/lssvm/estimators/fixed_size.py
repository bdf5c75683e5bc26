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

Everything estimator-level of the family is here: the fit in memory (weighted
or not) and on Dask, the engine at the support, where the classifier's
calibration takes its held-out values, the search over the family
(:class:`FixedSizeFamily`) with its two presets, and the public solver
:func:`scdp` (with :class:`SCDPResult`), re-exported by the package root.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import PROTOTYPE_METHODS, prototype_pool
from ..cv import resolve_folds, same_folds_every_time
from ..cv.fixed_size import (
    RowsInMemory,
    SummedRows,
    WeightedRowsInMemory,
    coordinate_groups,
    scdp_seed,
    selected_coordinates_held_out,
    support_engine,
)
from ..exceptions import NotFittedError
from ..kernels import DEFAULT_BLOCK_SIZE, gamma_scale, make_kernel
from ..selection import SparseLSSVMCV
from ..selection.fixed_size import (
    WHOLE_POOL_RCOND,
    FixedSizeCV,
    size_on_folds,
    whole_pool_fold_scores,
)
from ..solvers.fixed_size import DEFAULT_N_CANDIDATES, SCDPResult, grow_to_size, scdp
from ._base import assemble_target_groups, check_sample_weight
from ._bayes import BayesMixin
from ._calibration import ProbaMixin, SearchProbaMixin, with_calibration
from ._constraints import (
    COUNT,
    KERNEL_PARAMS,
    POSITIVE,
    SEARCH_PARAMS,
    SIZE,
    KernelParamsMixin,
    Number,
    ValidatedParamsMixin,
)
from ._docs import KERNEL_DOC, PARAMETER_NAMES_NOTE, RESULT_DOC, SEARCH_DOC
from ._exact_cv import ClassifierCVMixin, RegressorCVMixin
from ._expansion import ExpansionMixin, ExpansionRegressorMixin
from ._intervals import SearchIntervalMixin, SparseIntervalMixin
from ._labels import CodedClassifierMixin, encode_classes
from ._scale import is_scale
from ._training_data import check_training_data, remember_training_data
from ._validation import validate_input, validate_regression_data
from ._weighted_search import WeightedSearchMixin
from ._weights import check_weighted_classes
from .family_search_cv import _dask_rows
from .search_cv import ClassifierSearchMixin, FamilySearchCV, SearchFamily

__all__ = ["FixedSizeFamily", "FixedSizeLSSVC", "FixedSizeLSSVCCV", "FixedSizeLSSVR", "FixedSizeLSSVRCV", "SCDPResult",
           "SIZE_SEARCHES", "scdp"]

SOLVERS = ("scdp", "scdpp", "direct")

FIXED_SIZE_PARAMS_DOC = KERNEL_DOC + """\
    alpha : float > 0, default=1.0
        Regularisation; larger values give smoother fits (LS-SVMlab's
        ``gam`` is ``1/alpha``: Notes).
    basis : {"pchol", "kcenter", "random", "renyi", "all"}, array-like of shape (M, n_features) or 1-D int array, default="pchol"
        The prototype pool SCDP picks from: pivoted Cholesky of the kernel
        matrix (on Dask input: among a uniform sample of 20 M rows,
        :func:`lssvm.basis.sampled_pivoted_cholesky`), Gonzalez
        farthest-point clustering, uniform distinct rows, maximal quadratic Rényi entropy (classic
        FS-LSSVM), every distinct training row, given points (they need
        not be training rows), or training-row indices.
    n_basis : int or float, optional
        Pool size M: a count, or a fraction of the training rows (the
        SCDP-FSLSSVM_PV of Karsmakers et al. 2011 uses 0.3; capped at the distinct rows); default
        ``min(distinct rows, 2000)``.
    solver : {"scdp", "scdpp", "direct"}, default="scdp"
        "scdp" grows the model one prototype at a time (Algorithm 3);
        "scdpp" scores only ``n_candidates`` random coordinates per step
        (§3.5.2); "direct" solves with all prototypes (classic FS-LSSVM).
    max_size : int, optional
        k_m: non-zeros (prototypes plus intercept) at most; default M + 1.
    cv : int, splitter, iterable of (train, test) or None, default=10
        Folds of the fast CV that picks the model size (an int k is
        unshuffled ``KFold(k)``, ``StratifiedKFold(k)`` for classifiers, as
        scikit-learn's ``check_cv``; pass a splitter to shuffle); None fits
        ``max_size`` non-zeros without CV.
    random_state : int, RandomState or None
        Seeds the prototype pool, the folds and SCDPP's draws (the same
        draws for every fold and hyper-parameter, Remark 8).
    n_candidates : int, optional
        rho of "scdpp"; default 59 (one of the top 5 % with probability 0.95, §3.5.2).
    nu : float > 0, default=1e-8
        Penalty on the intercept that makes the system positive definite.
    stop_window : int, default=10
        Delta_k of stopping rule (38).
    stop_tol : float or None, default=1e-4
        epsilon of rule (38): a fold's SCDP run stops once its validation
        score changes by less than this, relative to the mean of the
        ``stop_window`` previous ones; None runs every fold to ``max_size``.
    size_rule : float >= 0, default=0.1
        The final size is the smallest whose CV score is within
        ``size_rule`` standard deviations (over folds) of the best (§4.5).
    scoring : {"mse", "error_rate"} or None, default=None
        CV criterion for the model size and rule (38): mean squared error
        (PRESS / N, the paper's choice; None means "mse"), or the
        misclassification rate (classifiers with two classes).
    degree, coef0, normalize_kernel, block_size, n_jobs : as for :class:`lssvm.SparseLSSVR`.
"""

FIXED_SIZE_ATTRS_DOC = """
    Attributes
    ----------
    basis_vectors_ : ndarray of shape (M, n_features)
        The prototype pool.
    basis_indices_ : ndarray of shape (M,) or None
        Training rows of the pool (None for given points).
    n_basis_ : int
        M, the pool size.
    support_ : ndarray of shape (n_support_,)
        Indices into the pool of the prototypes the model uses, in the
        order SCDP chose them (sorted for several outputs).
    support_vectors_ : ndarray of shape (n_support_, n_features)
    n_support_ : int
        Prototypes used ("# PV" in Karsmakers et al. 2011).
    dual_coef_ : ndarray of shape (n_support_,) or (n_support_, n_outputs)
    intercept_ : float or ndarray of shape (n_outputs,)
    model_size_ : int or ndarray of shape (n_outputs,)
        SCDP steps kept: non-zeros among prototypes and intercept; M + 1 where
        the whole pool was kept because its CV score beats every size SCDP
        reached by more than ``size_rule`` standard deviations (solved
        directly; SCDP's runs stop early on ill-conditioned systems).
    selection_order_ : ndarray of shape (model_size_,) or list of them
        Coordinates in the order chosen (index M is the intercept).
    cv_curve_ : ndarray of shape (K,) or (n_outputs, K), or None
        CV score of the model with 1..K non-zeros.
    cv_curve_std_ : ndarray like ``cv_curve_``
        Standard deviation over folds of the per-fold scores.
    cv_score_ : float or ndarray of shape (n_outputs,), or None
        CV score at the chosen size (with all prototypes for "direct").
"""


class SupportEngineMixin:
    """``_fitted_engine()`` of a fitted fixed-size estimator (needs ``coef_full_``, ``support_``,
    ``basis_vectors_``, ``basis_indices_``, ``kernel_`` and the fit's ``_X_fit`` / ``_Y_fit``)."""

    #: the support groups of a regressor's outputs hold at every alpha (per_target_alpha runs them all)
    _groups_at_any_alpha = True

    def _support_groups(self):
        """A regressor's outputs grouped by the coordinates (prototypes, intercept) their SCDP runs chose, as ``(alpha, outputs)``
        pairs (the groups :func:`lssvm.estimators._base.per_target_alpha` runs the shared methods on, one
        engine each, at the fitted alpha or any other); None where every output has the same support, and
        for classifiers (whose error rates need every output's values together)."""
        W = self.coef_full_
        if is_classifier(self) or W.shape[1] == 1:
            return None
        groups = coordinate_groups(W)
        return None if len(groups) == 1 else [(float(self.alpha), cols) for cols in groups]

    def _target_subset(self, targets, alpha):
        """A shallow copy of this fitted regressor restricted to outputs ``targets`` that share a support."""
        sub = copy.copy(self)
        sub._alpha_groups, sub._y_1d, sub._engine = None, False, None
        sub.coef_full_ = self.coef_full_[:, targets]
        sub._coef_2d = sub._intercept_2d = None  # the group's expansion is not needed by the engine's methods
        sub.support_ = np.flatnonzero(sub.coef_full_[:self.n_basis_, 0] != 0)
        sub._Y_fit = None if self._Y_fit is None else self._Y_fit[:, targets]
        if self._Y_fit is None and getattr(self, "_dask_data", None) is not None:  # fitted on Dask
            sub._dask_engine = (self._dask_group_engine(targets), sub.coef_full_)
        return sub

    def _per_target_alpha_call(self, method, args, kwargs):
        """``method`` of each group of outputs that share a support, assembled along the output axis."""
        return assemble_target_groups(self, method, args, kwargs, self.coef_full_.shape[1])

    def _fitted_engine(self):
        """The engine of the fitted model (:class:`lssvm.cv.SparseEngine`): the sparse model on the
        supported prototypes at the fitted alpha, built on first use by
        :func:`lssvm.cv.fixed_size.support_engine` (which says where no sparse model is the fitted one; a
        regressor's outputs on different prototypes run their methods group by group, :meth:`_support_groups`).

        Raises
        ------
        ValueError
            For a fit on Dask collections (the rows are not in memory), and as ``support_engine``.
        """
        check_is_fitted(self, "coef_full_")
        check_training_data(self)
        engine = getattr(self, "_engine", None)
        if engine is not None:
            return engine
        X, Y = getattr(self, "_X_fit", None), getattr(self, "_Y_fit", None)
        if X is None or Y is None:
            if getattr(self, "_dask_data", None) is not None:
                raise ValueError(
                    f"{type(self).__name__} fitted on Dask collections has no exact cross-validation engine at its "
                    "support (its rows are not in memory); fit on a NumPy sample")
            raise NotFittedError("this model keeps no training data (it was loaded from a file); fit it on the "
                                 "training data to get cross-validation results")
        self._engine = support_engine(
            X, Y, self.basis_vectors_, self.basis_indices_, self.kernel_, self.coef_full_, self.support_,
            classes=self.classes_ if is_classifier(self) else None, weights=getattr(self, "_fit_weights", None),
            block_size=self.block_size, n_jobs=self.n_jobs, name=f"this {type(self).__name__}")
        return self._engine


class FixedSizeDaskMixin:
    """The engine of a Dask fit of the fixed-size models (their ``_fit_dask``
    sets it: :func:`lssvm.backends.dask.fixed_size.support_engine`)."""

    def _fitted_engine(self):
        """The engine of a Dask fit: the sparse model on the support, a
        :class:`lssvm.backends.dask.DaskSparseFit` whose training pass runs
        at its first use; otherwise the in-memory one, where the estimator
        has it.

        Raises
        ------
        ValueError
            Where no one sparse model is the fitted one (outputs on different
            prototypes, the intercept left out, no prototype).
        """
        engine, fitted = getattr(self, "_dask_engine", (None, None))
        if fitted is not None and fitted is getattr(self, "coef_full_", None):  # not refitted in memory since
            if isinstance(engine, str):
                raise ValueError(engine)
            return engine
        in_memory = getattr(super(), "_fitted_engine", None)
        if in_memory is None:
            raise ValueError(f"{type(self).__name__} has no engine: it was not fitted on Dask input")
        return in_memory()

    def _dask_group_engine(self, targets):
        """The engine of a Dask-fitted regressor's outputs ``targets``, which share a support: the sparse
        model on that support fitted to those outputs (its training pass deferred to its first use, then
        kept with the fit)."""
        from ..backends.dask import fixed_size as fam

        cache = self.__dict__.setdefault("_group_engines", {})
        key = (id(self.coef_full_), np.asarray(targets).tobytes())
        if key not in cache:
            W = self.coef_full_[:, targets]
            cache[key] = fam.support_engine(self._dask_data, self.kernel_, self.basis_vectors_, self.basis_indices_,
                                            W, np.flatnonzero(W[:self.n_basis_, 0] != 0), targets=targets)
        return cache[key]


class FixedSizeProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.FixedSizeLSSVC`: calibrated on exact
    held-out decision values.

    With the size chosen by v-fold CV (``cv`` set, the default) and rows in memory, unweighted,
    ``calibration_cv=None`` takes the out-of-fold values the size selection already computes: row i's
    value is that of the fold model that left i out (SCDP on the other folds' rows, grown to the
    chosen size, :func:`lssvm.cv.fixed_size.fold_decision_values`), O(N k) beyond the fit.  Otherwise
    (``cv=None``, weights, Dask, the whole pool chosen, or ``calibration_cv`` given), the values below.

    The model at its support is the sparse model on the prototypes that carry
    a weight (the documentation's Mathematics page, §4, §6), whose engine gives
    the values: those of ``loo_decision_function`` and ``cv_decision_function``.
    The prototypes stay the fitted ones (a fold does not regrow its own by
    SCDP).  An output whose SCDP run left the intercept out is not that model
    (its intercept is unpenalised): fitted in memory, its values are those of
    its own coordinates, intercept penalty ``nu`` included
    (:func:`lssvm.cv.fixed_size.selected_coordinates_held_out`); fitted on
    Dask, such a model has no calibration and fit says so.
    """

    def _calibration_decisions(self, groups=None):
        F = getattr(self, "_fold_decisions", None)
        if F is not None and self.calibration_cv is None:  # the size selection's out-of-fold values
            return F
        W, M = self.coef_full_, self.n_basis_
        if getattr(self, "_X_fit", None) is None or not np.any(W[M] == 0):
            return super()._calibration_decisions(groups)
        # an output whose SCDP run left the intercept out is not the sparse model (whose intercept is
        # unpenalised): its held-out values from its own coordinates (class notes)
        folds = None
        if self.calibration_cv is not None:
            folds = resolve_folds(self.calibration_cv, self._X_fit.shape[0], y=self._codes, groups=groups,
                                  classifier=True)
        return selected_coordinates_held_out(self, self._X_fit, self._Y_fit, folds, getattr(self, "_fit_weights", None))


class _BaseFixedSizeLSSVM(FixedSizeDaskMixin, SupportEngineMixin, KernelParamsMixin, ValidatedParamsMixin, ExpansionMixin,
                          BaseEstimator):
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
        """Fit on validated ``X`` (N, d) and 2-D targets ``Y`` (N, v); ``fit`` has validated the parameters.
        With row ``weights`` (N,), as ``fit`` says; the size's weighted error rate is ``sum w [wrong] / sum w``
        per fold, and a fold's downdate subtracts its weighted Gram sums.  O(N M (d + M)) plus the SCDP runs.
        """
        if weights is not None:
            check_weighted_classes(self, weights)
        kept = self.__dict__.pop("_kept_factorization", None)  # a search's factorisation of the whole pool
        self._X_fit, self._Y_fit, self._engine = X, Y, None  # the engine at the support: built on first use
        remember_training_data(self, X, Y)
        kernel = self._fitted_kernel(X, weights)  # fit has validated the parameters
        rng = check_random_state(self.random_state)
        Z, zidx = prototype_pool(X, kernel, self.basis, self.n_basis, rng, weights)
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
        if weights is not None:
            rows = WeightedRowsInMemory(K, K_ZZ, Y, weights, folds)
        else:
            rows = RowsInMemory(K, K_ZZ, Y, folds)
            if folds is not None and zidx is not None and isinstance(self.kernel, str) and Y.shape[1] == 1:
                fac = kept.fac if kept is not None and kept.matches(X, Y, kernel, zidx, WHOLE_POOL_RCOND) else None

                def whole_pool_cv(alpha):
                    return whole_pool_fold_scores(X, Y, K, zidx, folds, kernel, alpha, self._scoring, fac,
                                                  self.n_jobs, fold_spread=True)
        self._fit_rows(kernel, Z, zidx, rows, seed, whole_pool_cv)
        self._alpha_groups = self._support_groups()
        return self

    def _fit_dask(self, X, y, groups, classification):
        """Fit on Dask collections: the pool drawn as in memory, one pass of
        per-fold sums (:mod:`lssvm.backends.dask.fixed_size`), then the
        in-memory fit on the sums."""
        from ..backends import dask as dask_backend
        from ..backends.dask import fixed_size as fam

        data = dask_backend.as_row_data(X, y, groups, numeric_y=not classification)
        kernel = self._fitted_kernel(data.X if is_scale(self.gamma) else None)  # not ==: an ARD width vector
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
            whole_pool_cv = fam.dask_whole_pool_cv(data, Z, zidx, kernel, folds, self.classes_ if classification else None,
                                               self._scoring)
        self._fit_rows(kernel, Z, zidx, rows, seed, whole_pool_cv)
        if self._fold_models is not None:  # the calibration's values: the size selection's out-of-fold values
            self._fold_decisions = fam.fold_values_pass(data, Z, kernel, self.classes_, folds, *self._fold_models)
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
        # the calibration's held-out values (and the fold models that give them), where the size CV has them
        self._fold_decisions = self._fold_models = None
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
                # a classifier calibrating on the size selection's fold models (FixedSizeProbaMixin) keeps them
                keep = type(rows) in (RowsInMemory, SummedRows) and getattr(self, "calibration", None) is not None \
                    and getattr(self, "calibration_cv", None) is None
                choice = size_on_folds(self, rows, system, kmax, rho, seed, whole_pool_cv, keep)
                self.cv_curve_, self.cv_curve_std_, sizes, self.cv_score_, full = choice[:5]
                if keep and full is None and choice[5].paths is not None:  # Dask: values by a pass (_fit_dask)
                    self._fold_models = (choice[5].paths, sizes)
                    if type(rows) is RowsInMemory:
                        self._fold_decisions = rows.fold_values(choice[5], sizes)
            orders = []
            for j in range(v):
                if full is not None and full[0][j]:  # the whole pool: the size rule's pick on the full curve
                    W[:, j] = full[1][:, j]
                    orders.append(np.arange(D))
                    sizes[j] = D
                    self.cv_score_[j] = full[2][j]
                    continue
                state = grow_to_size(A, system.rhs[:, j], sizes[j], rho, seed, rows.fit_error, name)
                W[state.order, j] = state.coef
                orders.append(state.order.copy())
                sizes[j] = state.k
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


class FixedSizeLSSVR(ExpansionRegressorMixin, SparseIntervalMixin, BayesMixin, RegressorCVMixin, RegressorMixin,
                     _BaseFixedSizeLSSVM):
    __doc__ = (
        """Fixed-size LS-SVM regression, solved sparsely by SCDP with the model
    size chosen by fast v-fold CV (Karsmakers et al. 2011).

    Minimises ``||y - K w - b0||^2 + alpha w^T K_ZZ w + nu b0^2`` over the
    weights ``w`` on a pool of M prototypes Z, where ``K = k(X, Z)``.  SCDP
    adds one prototype per step and each step is the exact least-squares
    solution on the prototypes chosen so far; v-fold CV of every size
    (by downdating the normal equations per fold) picks where to stop.
    """
        + FIXED_SIZE_PARAMS_DOC
        + FIXED_SIZE_ATTRS_DOC
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
        X, Y, self._y_1d = validate_regression_data(self, X, y)
        self._fit_weights = check_sample_weight(self, sample_weight, X, Y)  # the support engine is weighted
        return self._fit_targets(X, Y, groups, None, self._fit_weights)


@with_calibration("with the size chosen by v-fold CV (``cv`` set, rows in memory, no weights), the\n        "
                  "out-of-fold values of the size selection's fold models at the chosen size (O(m s) after\n        "
                  "the fit); otherwise the exact leave-one-out values of the model at its support (the sparse\n        "
                  "model on the prototypes that carry a weight)")
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
        + FIXED_SIZE_PARAMS_DOC
        + FIXED_SIZE_ATTRS_DOC
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


# ---------------------------------------------------------------- the search over the family
#: When the fixed-size search picks the model size: once, at the best width and alpha of the full-pool model
#: ("refit"), or at every candidate ("candidates", Karsmakers et al. 2011's procedure).
SIZE_SEARCHES = ("refit", "candidates")


#: The fixed-size searches' parameters (``FixedSizeLSSVRCV``, ``FixedSizeLSSVCCV``).
FIXED_SIZE_SEARCH_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : int, splitter or iterable of (train, test), default=10
        The fast v-fold CV of Karsmakers et al. 2011 (§4.4): an int k is unshuffled
        ``KFold(k)`` (``StratifiedKFold(k)`` for classifiers), used for every candidate.
        Why 10 where the sparse and Nyström searches default to "loo": SCDP picks the model size
        on held-out folds (the size rule compares fold errors along each SCDP curve), which has no
        leave-one-out closed form; with ``size_search="refit"`` an int ``cv`` still scores the
        candidates by exact LOO and uses the k folds for the size only.
    basis : {"pchol", "kcenter", "random", "renyi", "all"} or 1-D int array, default="pchol"
        The prototype pool, drawn once ("pchol" at the fixed width, or at the "scale" width when the
        width is searched; on Dask input among a sample of rows; "renyi" depends on the kernel: per candidate).
        The default is the sparse family's and works on NumPy and Dask input.
    size_search : {"refit", "candidates"}, default="refit"
        "refit": every candidate (width, alpha) is scored by the exact CV of the model on the whole
        pool (the sparse LS-SVM on the prototypes; exact LOO for an int ``cv``, as
        :class:`lssvm.SparseLSSVRCV`, whose cost the search then has; a splitter's folds with the
        prototypes kept in every fold's training rows), then SCDP and its size rule run once, at the
        best candidate, on ``cv``'s folds, in the refit (the whole pool where SCDP's sizes all score
        worse, see :class:`lssvm.FixedSizeLSSVR`): ``best_score_`` is the full-pool model's score and
        ``best_estimator_.cv_score_`` the refitted model's at its size.  "candidates": each alpha of each
        candidate is scored at the size the size rule picks on its own SCDP curves (Karsmakers et al. 2011,
        §4.5; many times slower: ``benchmarks/defaults_speed.py``).  A "renyi" pool always uses
        "candidates"; ``solver="direct"`` always "refit" (the full-pool model is its model).
    size_rule : float >= 0, default=0.0
        The size rule's tolerance in fold standard deviations (:class:`lssvm.FixedSizeLSSVR`, whose
        default is the paper's 0.1): 0 keeps the size of lowest CV score, the whole pool included.
        On elevators 0.1 kept 155 and 176 of 500 prototypes in 2 of 10 draws, at 1.06x the test MSE
        of the whole pool, which 0 keeps (its fold scores are heavy-tailed: 0.1 spread is about 5 %
        of the score).
    n_basis, solver, max_size, n_candidates, nu, stop_window, stop_tol,
    degree, coef0, normalize_kernel, block_size, n_jobs
        As for :class:`lssvm.FixedSizeLSSVR`; each alpha is scored at the
        model size ``size_rule`` picks, with the search's ``scoring``.
    random_state : int, RandomState or None
    gamma : float or "scale", default="scale"
        Used only when "gamma" is not searched.
""" + SEARCH_DOC + RESULT_DOC


class FixedSizeFamily(SearchFamily):
    """The fixed-size LS-SVM (Karsmakers et al. 2011): a prototype pool, SCDP choosing which prototypes get a
    weight and its size rule the model size on v folds.  With ``size_search="refit"`` the candidates are scored
    by the exact CV of the model on the whole pool (the sparse criterion on the prototypes) and SCDP runs once,
    in the refit; with "candidates" by :class:`lssvm.selection.fixed_size.FixedSizeCV` at every candidate."""

    regressor, classifier = FixedSizeLSSVR, FixedSizeLSSVC
    default_cv = 10
    cost_kind = "pool"
    model_params = ("kernel", "gamma", "solver", "max_size", "n_candidates", "nu", "stop_window", "stop_tol",
                    "size_rule", "degree", "coef0", "normalize_kernel", "block_size")

    def __init__(self, search):
        super().__init__(search)
        self.refit_seed = None  # the full-pool search's seed of the SCDP refit

    def full_pool_search(self):
        """Whether the width and alpha are searched on the full-pool model (``size_search="refit"``): for
        pools drawn once (a kernel-dependent "renyi" pool keeps the per-candidate criterion); "direct" solves
        are the full-pool model itself."""
        s = self.search
        per_candidate = isinstance(s.basis, str) and s.basis == "renyi"
        return (s.size_search == "refit" or s.solver == "direct") and not per_candidate

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        if self.full_pool_search():
            return self._full_pool_criterion(X, y, scoring, **kw)
        if kw.get("sample_weight") is not None:
            raise ValueError("sample_weight is taken by the fixed-size search with size_search='refit' (the "
                             "default; the size then by the refit's weighted v-fold CV), not with "
                             "size_search='candidates' or basis='renyi'")
        size = dict(basis=s.basis, n_basis=s.n_basis, solver=s.solver, max_size=s.max_size,
                    n_candidates=s.n_candidates, nu=s.nu, stop_window=s.stop_window, stop_tol=s.stop_tol,
                    size_rule=s.size_rule, size_scoring=scoring)
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.fixed_size import DaskFixedSizeCV

            return DaskFixedSizeCV(X, y, **size, **kw)
        return FixedSizeCV(X, y, **size, **kw)

    def _full_pool_criterion(self, X, y, scoring, **kw):
        """The exact CV of the model on the whole pool (SCDP run to the end, i.e. the sparse LS-SVM on the
        prototypes), the prototypes kept in every fold's training rows as the fixed-size CV keeps them
        (:class:`lssvm.selection.SparseLSSVMCV`, ``basis_in_holdout="keep"``): the search then costs what
        the sparse family's does; SCDP and its size rule run once, in the refit."""
        rng = kw["random_state"]
        self.refit_seed = int(rng.randint(2**31 - 1))
        basis, n_basis = self.search.basis, self.search.n_basis
        on_dask = is_dask_collection(X) or is_dask_collection(y)
        X, y = _dask_rows(X, y, kw)
        if on_dask:
            if isinstance(basis, str) and basis == "random" and n_basis is None:  # the fixed-size default pool
                from ..basis import default_n_basis

                n_basis = default_n_basis(X.n_samples)
        elif isinstance(basis, str) and basis != "pchol" or np.ndim(basis) == 2:
            # the pool of the fixed-size model, drawn once (at the "scale" width if the width is searched)
            params = {k: v for k, v in kw["kernel_params"].items() if not (k == "gamma" and v is None)}
            weights = kw.get("sample_weight")
            params.setdefault("gamma", gamma_scale(X, weights))
            kern = make_kernel(kw["kernel"], **params)
            basis = prototype_pool(np.asarray(X, dtype=float), kern, basis, n_basis, rng, weights)[1]
            if basis is None:
                raise ValueError("the basis (prototype pool) must come from the training rows: a method name or "
                                 "row indices (a search scores every candidate on its own rows)")
        if isinstance(kw["cv"], Integral):  # exact LOO, as the sparse family: 2.5x cheaper than 10 folds
            kw["cv"] = "loo"
        # the best candidate's factorisation is kept: the refit's whole-pool model is that factorisation's
        return SparseLSSVMCV(X, y, basis=basis, n_basis=n_basis, basis_in_holdout="keep",
                             keep_best=scoring if self.search.refit else None, **kw)

    def refit_params(self, criterion, rows, scoring):
        cv, folds = self.search.cv, getattr(criterion, "folds", None)
        if self.full_pool_search():  # the size picked once, by the model's own CV on the search's folds
            rows = criterion.basis_points() if rows is None else rows
            seed = self.refit_seed
        else:
            # Dask input: the same splitter, assigned by passes.  An int or a (Stratified)KFold that splits
            # the same way every time names the same folds on the full rows; kept as such, the refits of CV+
            # folds (predict_interval) split their own rows as the Dask fit's do
            seed, cv = criterion.refit_random_state, cv if folds is not None else criterion.cv
        if folds is not None and not same_folds_every_time(cv):
            n = sum(len(t) for t in folds) if self.full_pool_search() else criterion.X.shape[0]
            cv = [(np.setdiff1d(np.arange(n), t), t) for t in folds]
        return {"basis": rows, "cv": cv, "random_state": seed, "scoring": scoring}

    def _n_classes(self, y):
        if is_dask_collection(y):  # one pass; the labels are checked when the criterion counts them
            from ..backends.dask.families import class_labels

            return class_labels(y).size
        return encode_classes(y, type(self.search).__name__)[0].size  # clear errors for invalid labels

    def default_scoring(self, y):
        if not self.search._classification:
            return "mse"
        # with more classes each one-vs-rest output picks its own size: only the MSE is defined
        return "error_rate" if self._n_classes(y) == 2 else "mse"

    def check_scoring(self, scoring, y):
        if self.search._classification and scoring == "error_rate" and self._n_classes(y) > 2:
            raise ValueError("scoring='error_rate' needs two classes for fixed-size models (each one-vs-rest "
                             "output picks its own size); use scoring='mse'")


class _FixedSizeSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = FixedSizeFamily
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: FixedSizeLSSVR._parameter_constraints[k] for k in (
            "basis", "n_basis", "solver", "max_size", "cv", "n_candidates", "nu", "stop_window", "stop_tol",
            "size_rule")},
        "size_search": [StrOptions(set(SIZE_SEARCHES))],
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv=10, search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="pchol", n_basis=None, random_state=None, *,
                 solver="scdp", max_size=None, gamma="scale", n_candidates=None, nu=1e-8, stop_window=10,
                 stop_tol=1e-4, size_rule=0.0, size_search="refit", degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None):
        self.kernel, self.alphas, self.param_space, self.cv, self.search = kernel, alphas, param_space, cv, search
        self.scoring, self.max_evaluations, self.refit = scoring, max_evaluations, refit
        self.basis, self.n_basis, self.random_state = basis, n_basis, random_state
        self.solver, self.max_size, self.gamma, self.n_candidates = solver, max_size, gamma, n_candidates
        self.nu, self.stop_window, self.stop_tol, self.size_rule = nu, stop_window, stop_tol, size_rule
        self.size_search, self.degree, self.coef0 = size_search, degree, coef0
        self.normalize_kernel, self.block_size, self.n_jobs = normalize_kernel, block_size, n_jobs


class FixedSizeLSSVRCV(SearchIntervalMixin, RegressorMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM regression (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and (by its own CV) model size.
""" + FIXED_SIZE_SEARCH_DOC


@with_calibration("the refitted model's v-fold values (see :class:`lssvm.FixedSizeLSSVC`)", "\n    Other Parameters", False)
class FixedSizeLSSVCCV(SearchProbaMixin, ClassifierSearchMixin, ClassifierMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM classification (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and model size.  With more than two
    classes the criterion is the MSE of the coded outputs.
""" + FIXED_SIZE_SEARCH_DOC + """    classes_ : ndarray of shape (n_classes,)
"""
