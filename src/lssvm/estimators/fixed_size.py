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

import copy
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
from ..cv import MemorySparseEngine, TargetGroupsEngine, WeightedSparseEngine, resolve_folds
from ..cv.fixed_size import (
    InterceptOnlyEngine,
    RowsInMemory,
    SummedRows,
    WeightedRowsInMemory,
    chosen_sizes,
    scdp_seed,
    selected_coordinates_held_out,
)
from ..cv.no_intercept import NoInterceptRidgeEngine
from ..exceptions import NotFittedError, warn_numerical
from ..kernels import DEFAULT_BLOCK_SIZE, make_kernel, resolve_gamma
from ..selection.fixed_size import WHOLE_POOL_RCOND, whole_pool_fold_scores, whole_pool_outputs
from ..solvers import factorize_sparse_rls, factorize_weighted_rls
from ..solvers.fixed_size import DEFAULT_N_CANDIDATES, FS_GUARD_RTOL, SCDPState
from ._base import assemble_target_groups, check_sample_weight
from ._bayes import BayesMixin
from ._calibration import ProbaMixin, with_calibration
from ._constraints import COUNT, KERNEL_PARAMS, POSITIVE, SIZE, Number, ValidatedParamsMixin
from ._docs import PARAMETER_NAMES_NOTE
from ._exact_cv import ClassifierCVMixin, RegressorCVMixin
from ._expansion import ExpansionMixin
from ._intervals import SparseIntervalMixin
from ._labels import CodedClassifierMixin, encode_classes
from ._scale import is_scale
from ._training_data import check_training_data, remember_training_data
from ._validation import validate_input
from ._weights import check_weighted_classes, weighted_kernel

__all__ = ["FixedSizeLSSVC", "FixedSizeLSSVR"]

SOLVERS = ("scdp", "scdpp", "direct")

FIXED_SIZE_PARAMS_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"} or lssvm.kernels.Kernel, default="rbf"
    gamma : float > 0 or "scale", default="scale"
        "scale": ``1 / (n_features * X.var())`` at fit, as scikit-learn's
        ``SVC`` (:func:`lssvm.kernels.resolve_gamma`); stored as ``gamma_``.
        Kernel width, ``exp(-gamma ||x - z||^2)`` for "rbf"; larger values
        give narrower kernels (1/sigma^2 in Karsmakers et al. 2011: Notes).
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
    degree, coef0 : int, float
        Parameters of the "poly" kernel.
    normalize_kernel : bool, default=False
    block_size : int, default=2048
        Rows per kernel block at prediction.
    n_jobs : int or None, default=None
        As for :class:`lssvm.SparseLSSVR`.
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
        keys = [np.flatnonzero(W[:, j] != 0).tobytes() for j in range(W.shape[1])]
        if len(set(keys)) == 1:
            return None
        groups = {}
        for j, key in enumerate(keys):
            groups.setdefault(key, []).append(j)
        return [(float(self.alpha), np.array(cols)) for cols in groups.values()]

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
        supported prototypes at the fitted alpha, built on first use (O(m s d + m s^2 + s^3) for s
        supported prototypes).

        An output whose SCDP run left the intercept out is the same ridge without intercept on its
        supported prototypes (:class:`lssvm.cv.no_intercept.NoInterceptRidgeEngine`, exact by one
        solve per fold and alpha).

        Raises
        ------
        ValueError
            Where no sparse model is the fitted one: a weighted fit without the intercept among its
            coordinates, no prototype, or a fit on Dask collections (the rows are not in memory).  A
            regressor's outputs on different prototypes run their methods group by group
            (:meth:`_support_groups`), each group on its own engine.  A classifier's outputs on different prototypes get one engine per
            group (:class:`lssvm.cv.TargetGroupsEngine`).
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
        W, M = self.coef_full_, self.n_basis_
        chosen = W[:M] != 0  # (M, v): the prototypes each output's SCDP run gave a weight
        coords = W != 0  # (M + 1, v): and whether it chose the intercept
        if np.any(W[M] == 0) and getattr(self, "_fit_weights", None) is not None:
            raise ValueError(
                "SCDP left the intercept out of this weighted model (its coefficient is 0), while the exact "
                "weighted CV engine's model has an unpenalised intercept; use a larger max_size or solver='direct'")
        classes = self.classes_ if is_classifier(self) else None
        if np.all(coords == coords[:, :1]) and (classes is None or chosen[:, 0].any()):
            support = np.asarray(self.support_, dtype=np.intp) if W.shape[1] == 1 else np.flatnonzero(chosen[:, 0])
            self._engine = self._support_engine(X, Y, support, classes, bool(coords[M, 0]))
            return self._engine
        if classes is None:
            raise ValueError(
                f"the {W.shape[1]} outputs of this {type(self).__name__} use different prototypes (each output's "
                "SCDP run chooses its own), so no one sparse model is the fitted one: its methods run output "
                "group by output group; fit one output at a time, or use solver='direct'")
        # a classifier's one-vs-rest outputs on their own supports (an output's may be the intercept alone):
        # one engine per group, assembled
        groups = {}
        for j in range(W.shape[1]):
            groups.setdefault(coords[:, j].tobytes(), []).append(j)
        cols = [np.array(g) for g in groups.values()]
        engines = [self._support_engine(X, Y[:, g], np.flatnonzero(chosen[:, g[0]]), None, bool(coords[M, g[0]]))
                   for g in cols]
        self._engine = TargetGroupsEngine(engines, cols, Y, classes, weights=getattr(self, "_fit_weights", None))
        return self._engine

    def _support_engine(self, X, Y, support, classes, intercept=True):
        """The sparse model's engine on prototypes ``support`` for targets ``Y``: O(m s d + m s^2 + s^3);
        without ``intercept``, the engine of the ridge without intercept on them."""
        if support.size and not intercept:
            Z = self.basis_vectors_[support]
            rows = None if self.basis_indices_ is None else np.asarray(self.basis_indices_)[support]
            return NoInterceptRidgeEngine(X, Y, Z, rows, self.kernel_, classes, unavailable=(
                "this fixed-size model has none (its SCDP run left the intercept out): use a larger max_size or "
                "solver='direct'"))
        if not intercept:  # neither a prototype nor the intercept: the model is 0
            raise ValueError("this model uses no coordinate (SCDP chose neither a prototype nor the intercept), so "
                             "it has nothing to cross-validate: use a larger max_size, size_rule=0 or solver='direct'")
        if support.size == 0 and is_classifier(self):  # an output that predicts its training mean
            return InterceptOnlyEngine(Y)
        if support.size == 0:
            raise ValueError(
                "this model uses no prototype (SCDP stopped at the intercept alone), so it has no basis to "
                "cross-validate; its out-of-sample outputs are the training mean's: use a larger max_size, "
                "size_rule=0 or solver='direct'")
        Z = self.basis_vectors_[support]
        rows = None if self.basis_indices_ is None else np.asarray(self.basis_indices_)[support]
        K = self.kernel_(X, Z, block_size=self.block_size)
        K_SS = K[rows] if rows is not None else self.kernel_(Z, Z)
        weights = getattr(self, "_fit_weights", None)
        if weights is not None:  # the weighted sparse model on the support (a weighted fit)
            fac = factorize_weighted_rls(K, K_SS, Y, weights)
            return WeightedSparseEngine(fac, X, Z, rows, self.kernel_, 1e-10, classes, self.n_jobs)
        fac = factorize_sparse_rls(K, K_SS, Y, overwrite_k=True)
        return MemorySparseEngine(fac, X, Z, rows, self.kernel_, 1e-10, classes, self.n_jobs)


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
        from ..backends.dask import RowData
        from ..backends.dask import fixed_size as fam

        cache = self.__dict__.setdefault("_group_engines", {})
        key = (id(self.coef_full_), np.asarray(targets).tobytes())
        if key not in cache:
            data = self._dask_data
            rows = RowData(data.X, data.y[:, targets], data.groups, data.offsets)
            W = self.coef_full_[:, targets]
            support = np.flatnonzero(W[:self.n_basis_, 0] != 0)
            cache[key] = fam.support_engine(rows, self.kernel_, self.basis_vectors_, self.basis_indices_, W, support)
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


def fit_weighted_fixed_size(est, X, Y, weights, groups=None, split_labels=None):
    """Fit a fixed-size estimator with row weights: SCDP on the weighted normal equations, the size by
    weighted v-fold CV.

    Parameters
    ----------
    est : FixedSizeLSSVR or FixedSizeLSSVC
        Parameters validated; ``classes_`` set for a classifier.
    X : ndarray of shape (N, d)
    Y : ndarray of shape (N, v)
    weights : ndarray of shape (N,)
        Validated row weights.
    groups, split_labels : ndarray of shape (N,), optional
        For the size-selection folds, as the unweighted fit.

    Returns
    -------
    est

    Notes
    -----
    The prototype pool (pivoted Cholesky, k-center, random, Rényi, all) is
    drawn among the rows of positive weight and is not weighted otherwise:
    it depends on the inputs only.  SCDP's choice of prototypes is weighted:
    each step is greedy on the weighted least-squares objective, and the
    size is the weighted v-fold CV curve's (``sum w e^2 / sum w``, or the
    weighted error rate ``sum w [wrong] / sum w``, per fold; the downdate
    subtracts the fold's weighted Gram sums).
    So a zero weight is a removed row and an integer weight a repeated row.
    Cost as the unweighted fit, O(N M (d + M)) plus the SCDP runs.
    """
    check_weighted_classes(est, weights)
    est.__dict__.pop("_kept_factorization", None)  # an unweighted search's factorisation does not apply
    est._X_fit, est._Y_fit, est._engine = X, Y, None  # the engine at the support: built on first use
    kernel = weighted_kernel(est, X, weights)
    rng = check_random_state(est.random_state)
    if isinstance(est.basis, str):  # a method draws among the positive-weight rows
        positive = np.flatnonzero(weights > 0)
        Z, zidx = prototype_pool(X[positive], kernel, est.basis, est.n_basis, rng)
        zidx = None if zidx is None else positive[zidx]
    else:
        Z, zidx = prototype_pool(X, kernel, est.basis, est.n_basis, rng)
    est._check_max_size(Z.shape[0])
    seed = scdp_seed(rng)
    K = kernel(X, Z)
    K_ZZ = K[zidx] if zidx is not None else kernel(Z, Z)
    folds = None
    if est.cv is not None:
        folds = resolve_folds(est.cv, X.shape[0], y=split_labels, groups=groups, classifier=split_labels is not None)
    rows = WeightedRowsInMemory(K, K_ZZ, Y, weights, folds)
    est._fit_rows(kernel, Z, zidx, rows, seed, None)
    est._alpha_groups = est._support_groups()
    return est


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
        remember_training_data(self, X, Y)
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
        per-fold sums (:mod:`lssvm.backends.dask.fixed_size`), then the
        in-memory fit on the sums."""
        from ..backends import dask as dask_backend
        from ..backends.dask import fixed_size as fam

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
                curves = rows.curves(
                    system, [float(self.alpha)], nu=float(self.nu), max_size=kmax, n_candidates=rho, seed=seed,
                    stop_window=self.stop_window, stop_tol=self.stop_tol, stop_scoring=self._scoring,
                    **({"keep_paths": True} if keep else {}),
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
                if keep and full is None and curves.paths is not None:  # Dask: values by a pass (_fit_dask)
                    self._fold_models = (curves.paths, sizes)
                    if type(rows) is RowsInMemory:
                        self._fold_decisions = rows.fold_values(curves, sizes)
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
