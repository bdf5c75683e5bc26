"""Nyström LS-SVMs (Ding & Liao 2012) as the sparse model on their sampled columns.

The LS-SVM dual on ``K~ = C W_k^+ C^T``, from ``n_basis`` sampled columns (the
basis) truncated to ``rank``, is ridge regression with an unpenalised
intercept on the k features ``k(x, X_S) U_k L_k^(-1/2)`` (the documentation's
Mathematics page, §6): the sparse factorisation with that map as its
whitening (:func:`lssvm.solvers.factorize_sparse_rls`, ``whitener=``).  One
factorisation serves every alpha; the engine built on it
(:class:`lssvm.cv.MemorySparseEngine`) gives the shared exact CV, interval
and evidence methods (:mod:`lssvm.estimators._exact_cv`).  The Woodbury
factorisation of the dual (:mod:`lssvm.solvers.nystrom`) serves the exact
predictor and the model-approximation bounds.

Everything estimator-level of the family is here: the fit on Dask input (the
sparse Dask fit with the rank-k map as its whitener), the weighted fit (the
weighted sparse model on the columns), where the classifier's calibration
takes its held-out decision values (the low-rank model's exact LOO or k-fold
values, also with ``predictor="exact"``, whose own held-out values have no
closed form), and the search over the family (:class:`NystromFamily`, scored
by :class:`lssvm.selection.nystrom.NystromCV`) with its two presets.
"""

from __future__ import annotations

import warnings
from functools import partial
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._params import count_or_fraction
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import SAMPLINGS, drop_near_duplicates, sampled_columns
from ..cv import MemorySparseEngine, WeightedSparseEngine
from ..exceptions import NotFittedError, NumericalWarning, warn_numerical
from ..kernels import DEFAULT_BLOCK_SIZE, iter_row_blocks, resolve_gamma
from ..selection.nystrom import NystromCV, WeightedNystromCV
from ..solvers import factorize_sparse_rls, factorize_weighted_rls
from ..solvers.nystrom import (
    NystromMap,
    model_error_bound,
    nystrom_factorize,
    nystrom_kernel_error,
    nystrom_projection,
)
from ._base import check_sample_weight
from ._bayes import BayesMixin
from ._calibration import ProbaMixin, SearchProbaMixin, with_calibration
from ._constraints import (
    KERNEL_PARAMS,
    POSITIVE,
    SEARCH_PARAMS,
    SIZE,
    UNIT_OPEN,
    KernelParamsMixin,
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
from ._weights import check_weighted_classes, weighted_kernel
from .search_cv import ClassifierSearchMixin, FamilySearchCV, SearchFamily

__all__ = ["NystromFamily", "NystromLSSVC", "NystromLSSVCCV", "NystromLSSVR", "NystromLSSVRCV"]

KERNEL_ERRORS = ("trace", "spectral")
PREDICTORS = ("exact", "low-rank")

_DOC = KERNEL_DOC + """\
    alpha : float > 0, default=1.0
        Regularisation: the dual is ``[K~ + alpha I, 1; 1^T, 0]``; larger
        values give smoother fits (LS-SVMlab's ``gam`` is ``1/alpha``: Notes).
    basis : {"random", "kcenter", "fvs"}, 1-D int array or array of shape (c, n_features), default="random"
        The sampled columns (the basis): drawn uniformly without replacement
        (the paper), by farthest-point clustering, by greedy feature-vector
        selection, given as training-row indices, or given as points
        (``n_basis`` is then ignored).  Points stay the basis whatever rows
        the model is fitted on; their kernel block ``k(Z, Z)`` plays the
        sampled block W.
    n_basis : int or float, optional
        c, columns sampled: a count or a fraction of n; default
        ``min(700, ceil(10 sqrt(n)), n)`` (:func:`lssvm.basis.default_n_basis`;
        Ding & Liao 2012 used c = 0.1 n).
    rank : int or float, optional
        k <= c: a count or a fraction of c; default 0.5 (the paper's k = 0.5 c).
    predictor : {"low-rank", "exact"}, default="low-rank"
        "low-rank": the Nyström model itself, ``k(x, X_S) W_k^+ C^T a + b``
        -- O(c d) per point, and the model whose exact LOO / hold-out /
        k-fold values, intervals and evidence the shared methods give; "exact": ``f(x) = sum_i a_i k(x, x_i) + b``
        with the true kernel to all n training points, as Ding & Liao 2012 assume
        -- O(n d) per point and the training inputs are kept.  The exact
        predictor departs from the Nyström model by up to
        ``||K - K~|| / alpha^2`` (Ding & Liao 2012, Thm. 3): with a small alpha the
        coefficients' large components outside the range of K~ meet the
        true kernel, and it can predict far worse than "low-rank" (R² of
        -22,490 against 0.64 on Boston at alpha = 0.01).  ``fit`` measures
        that departure on up to 256 training rows and warns
        (:class:`lssvm.NumericalWarning`) when it exceeds half the
        targets' standard deviation.  The exact predictor is not ridge on a
        basis, so the CV, interval and evidence methods raise a
        ``ValueError`` that says so (its calibration maps use the low-rank
        model's held-out values).
    random_state : int, RandomState or None
        Seeds the "random" and "kcenter" draws.
    degree, coef0, normalize_kernel, block_size, n_jobs : as for :class:`lssvm.SparseLSSVR`.
    rcond : float in (0, 1), default=1e-10
        Eigenvalues of the sampled block W below ``rcond`` times the largest
        are dropped (``W_k^+`` is a pseudo-inverse).  With every column
        sampled and ``rcond`` near ``c * 2.2e-16`` the model is the exact
        LS-SVM to about 1e-10; the default trades that for robustness to
        near-duplicate columns.

    Attributes
    ----------
    basis_vectors_ : ndarray of shape (c, n_features)
        The sampled points X_S.
    basis_indices_ : ndarray of shape (c,) or None
        None for a basis given as points.
    n_basis_ : int
        c, the columns sampled (FVS may stop before ``n_basis``).
    rank_ : int
        k after dropping non-positive eigenvalues of W.
    dual_coef_ : ndarray of shape (n,) or (n, n_outputs)
        a, one per training point.
    intercept_ : float or ndarray of shape (n_outputs,)
    factorization_ : lssvm.solvers.SparseRLSFactorization
        The sparse factorisation on the k features (its ``whitener`` is the
        map ``U_k L_k^(-1/2)``, c x k), as the sparse models'; None for a
        Dask fit.

    Notes
    -----
    Fit: O(n c d) kernel columns, O(c^3) eigh of W, O(n c k + n k^2) for the
    features and their Gram matrix; memory O(n c).  Each further alpha (LOO
    path, k-fold) costs O(n k).  ``basis_in_holdout`` defaults to "keep" for
    this family: the fitted rank-k map stays the model's kernel and only the
    held-out rows drop, O(n k) per alpha for the whole k-fold, the criterion
    of Ding & Liao 2012 and of the Nyström searches.  "remove" makes a fold that
    holds a sampled column the Nyström model of its training rows on the
    kept columns, at the fit's rank rule (the map is a truncation, so
    removing a column is not a deletion of features), O(n c k + c^3) per
    such fold, in memory and on Dask: 10-18x the cost of "keep" at
    m = 5,000, c = 500 (``benchmarks/nystrom_default_mode.py``).

""" + PARAMETER_NAMES_NOTE + """"""


# ---------------------------------------------------------------- Dask fit
def nystrom_map(W, rank, rcond):
    """The Nyström map of c columns with kernel block ``W`` (c, c) at the
    estimator's ``rank`` (a count, capped to c; a fraction of c; None: half):
    what a fold that removes columns refits on its kept ones with."""
    c = W.shape[0]
    if isinstance(rank, Integral) and not isinstance(rank, bool):
        rank = min(int(rank), c)
    return nystrom_projection(W, count_or_fraction("rank", rank, 0.5, c), rcond)


class NystromDaskMixin:
    """``_fit_dask``, the engine of a Dask fit and the guards of a Dask-fitted model."""

    def _fit_dask(self, X, y, classification):
        """Fit the low-rank Nyström model on Dask collections: the columns
        drawn as in memory, then one pass of feature moments
        (:func:`lssvm.backends.dask.fit_sparse` with the map
        ``nystrom_projection(K_SS, k)``)."""
        from ..backends import dask as dask_backend
        from ..backends.dask import families as fam

        if self.predictor != "low-rank":
            raise ValueError(f"predictor={self.predictor!r} needs every training row and its dual coefficient in "
                             "memory; on Dask input use predictor='low-rank' (the model the CV methods score)")
        data = dask_backend.as_row_data(X, y, numeric_y=not classification)
        Xg = data.X if is_scale(self.gamma) else None  # not ==: an ARD width vector
        kernel = self._kernel_for(Xg)
        self.gamma_ = resolve_gamma(self.gamma, Xg)
        classes = dask_backend.count_classes(data) if classification else None
        given = self._given_points(data.n_features, kernel, stacklevel=6)  # points stay the basis
        Z, S = given if given is not None else fam.sampled_columns(data, kernel, self.basis, self.n_basis,
                                                                   self.random_state)
        rcond = float(self.rcond)
        projection = nystrom_projection(kernel(Z, Z), self._rank_for(Z.shape[0]), rcond)
        fit = dask_backend.fit_sparse(data, kernel, None, None, None, rcond, classes, basis_rows=(Z, S),
                                      whitener=projection, fold_whitener=partial(nystrom_map, rank=self.rank,
                                                                                 rcond=rcond))
        beta, b = fit.solution.coef(float(self.alpha))
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = S
        self.n_basis_ = int(Z.shape[0])
        self.rank_ = int(projection.shape[1])
        self.factorization_ = None
        self._X_fit = None
        self._dask_fit = self._engine = fit  # the engine (lssvm.cv.SparseEngine protocol)
        self._a, self._b, self._beta = None, b, beta
        if classification:
            self.classes_ = classes
        else:
            self._y_1d = data.y.ndim == 1
        # a = (y - f(x)) / alpha, lazily: the dual coefficients are the scaled training residuals
        a = (fit.targets() - self._decision_2d(data.X)) / float(self.alpha)
        single = self._single_output
        self.dual_coef_ = a[:, 0] if single else a
        self.intercept_ = float(b[0]) if single else b
        return self

    def _fitted_engine(self):
        """The engine of a Dask fit (:class:`lssvm.backends.dask.DaskSparseFit`
        on the Nyström features); otherwise the in-memory one, where the
        estimator has it."""
        engine = getattr(self, "_dask_fit", None)
        if engine is not None:
            return engine
        in_memory = getattr(super(), "_fitted_engine", None)
        if in_memory is None:
            raise ValueError(f"{type(self).__name__} has no engine: it was not fitted on Dask input")
        return in_memory()

    def _in_memory(self, what):
        if getattr(self, "_dask_fit", None) is not None:
            raise ValueError(f"{what} needs the training rows in memory; this model was fitted on Dask input")


# ---------------------------------------------------------------- weighted fit
def fit_weighted_nystrom(est, X, Y, weights):
    """Fit a Nyström estimator with row weights: the weighted sparse model on its sampled columns
    with the rank-k map as the whitening.

    Parameters
    ----------
    est : NystromLSSVR or NystromLSSVC
        Parameters validated; ``classes_`` set for a classifier.
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, v)
    weights : ndarray of shape (n,)
        Validated row weights (finite, >= 0, positive sum).

    Returns
    -------
    est

    Notes
    -----
    Columns drawn by a method ("random", "kcenter", "fvs") come from the
    rows of positive weight; indices or points given are kept.  Cost as the
    unweighted fit: O(n c d + c^3 + n c k + n k^2).  The dual coefficients
    are ``a_i = w_i (y_i - f(x_i)) / alpha``.
    """
    if est.predictor == "exact":
        raise ValueError(
            "predictor='exact' is not available with sample_weight (its dual solve on the true kernel is "
            "unweighted); use predictor='low-rank' (the default)")
    check_weighted_classes(est, weights)
    kernel = weighted_kernel(est, X, weights)
    if isinstance(est.basis, str):
        positive = np.flatnonzero(weights > 0)
        S = positive[sampled_columns(X[positive], kernel, est.basis, est.n_basis,
                                     check_random_state(est.random_state))]
        Z = X[S]
    else:
        Z, S = est._columns(X, kernel)
    k = est._rank_for(Z.shape[0])
    C = kernel(X, Z, block_size=est.block_size)
    W = C[S] if S is not None else kernel(Z, Z)
    proj = nystrom_projection(W, k, float(est.rcond))
    fac = factorize_weighted_rls(C, W, Y, weights, rcond=float(est.rcond), whitener=proj)
    alpha = float(est.alpha)
    beta, b = fac.coef(alpha)
    a = weights[:, None] * fac.residuals(alpha) / alpha
    est._set_fitted(kernel, Z, S, fac, X, Y, k, a, b, beta, WeightedSparseEngine)
    return est


# ---------------------------------------------------------------- calibration
class NystromProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.NystromLSSVC`, calibrated on the
    low-rank model's exact LOO or k-fold decision values (module docstring)."""

    def _calibration_engine(self):
        return self._low_rank_engine()


# ---------------------------------------------------------------- estimators
class _BaseNystromLSSVM(NystromDaskMixin, KernelParamsMixin, ValidatedParamsMixin, ExpansionMixin, BaseEstimator):
    #: the CV and hold-out methods keep the fitted rank-k map by default (``_holdout_mode``)
    _default_basis_in_holdout = "keep"

    def __init__(self, kernel="rbf", gamma="scale", alpha=1.0, basis="random", n_basis=None, random_state=None, *,
                 rank=None, predictor="low-rank", degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None, rcond=1e-10):
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.basis = basis
        self.n_basis = n_basis
        self.random_state = random_state
        self.rank = rank
        self.predictor = predictor
        self.degree = degree
        self.coef0 = coef0
        self.normalize_kernel = normalize_kernel
        self.block_size = block_size
        self.n_jobs = n_jobs
        self.rcond = rcond

    _parameter_constraints = {
        **KERNEL_PARAMS,
        "alpha": [POSITIVE],
        "basis": [StrOptions(set(SAMPLINGS)), "array-like"],
        "n_basis": SIZE,
        "rank": SIZE,
        "predictor": [StrOptions(set(PREDICTORS))],
        "rcond": [UNIT_OPEN],
    }

    def _check_param_rules(self):
        if isinstance(self.rank, Integral) and isinstance(self.n_basis, Integral) and self.rank > self.n_basis:
            raise ValueError(
                f"rank={self.rank} is more than the n_basis={self.n_basis} columns sampled; lower rank, raise "
                "n_basis, or leave rank=None"
            )

    def _rank_for(self, c):
        """k for c distinct sampled columns."""
        if isinstance(self.rank, Integral) and not isinstance(self.rank, bool) and self.rank > c >= 1:
            raise ValueError(
                f"rank={self.rank} is more than the {c} distinct column(s) sampled (duplicate or "
                "near-duplicate training rows give one column; FVS may stop early): lower rank, sample "
                "more columns (n_basis), or leave rank=None"
            )
        return count_or_fraction("rank", self.rank, 0.5, c)  # FVS may stop before c points

    def _map_rule(self):
        """The rank rule and floor of the feature map (:class:`lssvm.solvers.nystrom.NystromMap`)."""
        return NystromMap(self.rank, float(self.rcond))

    def _given_points(self, n_features, kernel, stacklevel=8):
        """The basis given as points (c, d), checked, near-duplicates dropped, with None for their rows;
        None where ``basis`` is a rule or row indices.  In memory and on Dask alike."""
        basis = self.basis
        if isinstance(basis, str) or np.ndim(basis) != 2:
            return None
        Z = np.asarray(basis, dtype=np.float64)
        if Z.shape[1] != n_features or Z.shape[0] == 0:
            raise ValueError(f"basis points must be an array of shape (c, {n_features}) with c >= 1 (the "
                             f"training rows' width); got shape {Z.shape}")
        if not np.all(np.isfinite(Z)):
            raise ValueError("basis points contain NaN or infinity")
        return drop_near_duplicates(Z, kernel, None, what="Nystrom column", stacklevel=stacklevel)

    def _columns(self, X, kernel):
        """The basis points (c, d) and their training rows (c,), or None for points given."""
        given = self._given_points(X.shape[1], kernel)
        if given is not None:
            return given
        S = sampled_columns(X, kernel, self.basis, self.n_basis, check_random_state(self.random_state))
        return X[S], S

    @uses_threads
    def _fit_targets(self, X, Y, weights=None):
        if weights is not None:  # the weighted sparse model on the sampled columns
            return fit_weighted_nystrom(self, X, Y, weights)
        kernel = self._kernel_for(X)  # fit has validated the parameters
        self.gamma_ = resolve_gamma(self.gamma, X)
        Z, S = self._columns(X, kernel)
        k = self._rank_for(Z.shape[0])
        C = kernel(X, Z, block_size=self.block_size)
        W = C[S] if S is not None else kernel(Z, Z)
        exact = self.predictor == "exact"
        alpha = float(self.alpha)
        woodbury = nystrom_factorize(C, W, Y, rank=k, rcond=float(self.rcond)) if exact else None
        proj = woodbury.projection if exact else nystrom_projection(W, k, float(self.rcond))
        # the Nyström model is the sparse model on the k features (the Mathematics page, §6)
        fac = factorize_sparse_rls(C, W, Y, whitener=proj, overwrite_k=not exact)
        beta, b = fac.coef(alpha)
        if exact:
            a, b, _ = woodbury.solve(alpha)
            woodbury.warn_conditioning([alpha], stacklevel=4, what="the exact predictor's coefficients")
        else:
            a = fac.residuals(alpha) / alpha  # the dual coefficients: (y - f(x_i)) / alpha
        self._set_fitted(kernel, Z, S, fac, X, Y, k, a, b, beta, MemorySparseEngine, woodbury)
        if exact:
            self._warn_unstable_exact(X, Y, C, np.random.default_rng(0))
        return self

    def _set_fitted(self, kernel, Z, S, fac, X, Y, k, a, b, beta, engine_class, woodbury=None):
        """The fitted state of an in-memory fit: basis, factorisation ``fac`` on the k features, dual
        coefficients ``a`` (m, v), intercept ``b`` (v,), eigenbasis coefficients ``beta`` and the
        engine, ``engine_class`` (:class:`lssvm.cv.MemorySparseEngine`, or the weighted one) on ``fac``."""
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = S
        self.n_basis_ = int(Z.shape[0])
        self.rank_ = fac.rank
        self.factorization_ = fac
        self._X_fit, self._Y_fit = X, Y
        self._requested_rank = k
        self._woodbury = woodbury
        self._dask_fit = None
        self._a, self._b, self._beta = a, b, beta
        classes = self.classes_ if is_classifier(self) else None
        self._engine = engine_class(fac, X, Z, S, kernel, float(self.rcond), classes, self.n_jobs,
                                    fold_whitener=self._map_rule())
        remember_training_data(self, X, Y)
        single = self._single_output
        self.dual_coef_ = a[:, 0] if single else a
        self.intercept_ = float(b[0]) if single else b

    def _woodbury_factorization(self):
        """The dual's Woodbury factorisation (:class:`lssvm.solvers.nystrom.NystromFactorization`),
        what the approximation bounds need: formed on first use, O(n c d + n c k + n k^2)."""
        if isinstance(self._engine, WeightedSparseEngine):
            raise ValueError("the approximation bounds are not available for a model fitted with sample_weight "
                             "(they bound the unweighted dual's solution); fit without weights for them")
        if self._woodbury is None:
            X, Z, S = self._X_fit, self.basis_vectors_, self.basis_indices_
            C = self.kernel_(X, Z, block_size=self.block_size)
            W = C[S] if S is not None else self.kernel_(Z, Z)
            with warnings.catch_warnings():  # the fit said what the map's eigendecomposition has to say
                warnings.simplefilter("ignore", NumericalWarning)
                self._woodbury = nystrom_factorize(C, W, self._Y_fit, rank=self._requested_rank,
                                                   rcond=float(self.rcond))
        return self._woodbury

    def _low_rank_engine(self):
        """The engine of the low-rank model, whatever the predictor: in memory or the Dask fit's."""
        check_is_fitted(self, "_b")
        if getattr(self, "_dask_fit", None) is not None:
            return self._dask_fit
        if getattr(self, "factorization_", None) is None:
            raise NotFittedError("this model has no training factorisation; call fit on the training data to get "
                                 "cross-validation results")
        check_training_data(self)
        return self._engine

    def _fitted_engine(self):
        """The engine of the fitted model (:class:`lssvm.cv.SparseEngine`): the sparse model on the sampled
        columns with the rank-k map; none for ``predictor="exact"``, which is not ridge on a basis."""
        engine = self._low_rank_engine()
        if self.predictor == "exact":
            raise ValueError(
                "predictor='exact' predicts with the true kernel to every training row, k(x, X) a + b, which is "
                "not the ridge model on the sampled columns that was trained, so no exact leave-one-out, hold-out, "
                "k-fold, interval or evidence follows from the fit; use predictor='low-rank' (the default)"
            )
        return engine

    def _warn_unstable_exact(self, X, Y, C, rng):
        """Warn when the exact-kernel predictor is unstable at new points.

        Its departure from the Nyström model at a point x is
        ``(k(x, X) - k~(x, X)) a``, driven by the coefficients' component
        outside range(K~), ``(I - Q Q^T)(y - b) / alpha``, which grows like
        1/alpha.  Measured at up to 256 training rows (O(256 n d)), where the
        Nyström model's value is ``C[i] W_k^+ C^T a``, and compared with the
        targets' spread.
        """
        n = X.shape[0]
        rows = np.sort(rng.choice(n, size=min(n, 256), replace=False)) if n > 256 else np.arange(n)
        P = self.factorization_.whitener
        low = C[rows] @ (P @ (P.T @ (C.T @ self._a)))  # k~(x_i, X) a
        exact = self.kernel_(X[rows], X) @ self._a
        gap = np.sqrt(np.mean((exact - low) ** 2, axis=0))
        spread = np.maximum(Y.std(axis=0), np.finfo(float).tiny)
        ratio = float(np.max(gap / spread))
        if ratio > 0.5:
            warn_numerical(f"predictor='exact' is unstable at new points: on training rows it departs from the Nyström "
                f"model by {ratio:.3g} x the targets' standard deviation (the coefficients' component outside "
                f"the Nyström kernel's range, about 1/alpha, meets the true kernel); use predictor='low-rank' "
                f"(the default) or a larger alpha (now {float(self.alpha):.4g})", stacklevel=3)

    def _expansion_arrays(self):
        """Centres, coefficients (n, v) and intercept (v,) of ``predictor``: the
        training rows and ``a`` ("exact") or ``basis_vectors_`` and ``beta``."""
        check_is_fitted(self, "_beta")
        if self.predictor == "exact":
            return self._X_fit, self._a, self._b
        return self.basis_vectors_, self._beta, self._b

    # ------------------------------------- model-approximation error bound
    def kernel_error(self, method="trace"):
        """An upper bound of ``||K - K~||_2`` on the training set.

        Parameters
        ----------
        method : {"trace", "spectral"}
            "trace": ``tr(K - K~)``, guaranteed, O(n d); "spectral": the norm
            itself by Lanczos, O(n^2 d) per iteration (a few dozen), no n x n
            matrix is stored.

        Returns
        -------
        float
        """
        check_is_fitted(self, "_a")
        self._in_memory("kernel_error")
        if method not in KERNEL_ERRORS:
            raise ValueError(f"method must be one of {KERNEL_ERRORS}; got {method!r}")
        X, kern, bs = self._X_fit, self.kernel_, self.block_size

        def matvec(v):
            out = np.empty(X.shape[0])
            for rows in iter_row_blocks(X.shape[0], bs):
                out[rows] = kern(X[rows], X) @ v
            return out

        return nystrom_kernel_error(self._woodbury_factorization(), kern.diag(X), matvec, method=method)

    def approximation_bound(self, X=None, kernel_error="trace"):
        """Paper 003's model-approximation error bound (Theorem 3, re-derived
        a posteriori): how far this model's decision values can be from
        those of the exact LS-SVM (full kernel matrix, same alpha).

        Parameters
        ----------
        X : array-like of shape (m, d), optional
            Points at which to bound ``|f(x) - f~(x)|``, using ``||k_x||``
            exactly (O(m n d)).  Default: the uniform bound over all x,
            ``||k_x|| <= sqrt(kappa sum_i K_ii)`` with ``kappa = sup k(x, x)``
            (needs a bounded kernel: RBF, Laplacian or normalised).
        kernel_error : {"trace", "spectral"} or float
            How ``||K - K~||_2`` enters: see :meth:`kernel_error`, or a known
            upper bound.

        Returns
        -------
        float, ndarray of shape (v,), (m,) or (m, v)
            For the predictor in use: with ``predictor="low-rank"`` the
            distance to the exact-kernel predictor is added (exactly at given
            X; uniformly via ``||k_x - k~_x|| <= sqrt(kappa tr(K - K~))``).
            Classifiers: on the decision values of the +1/-1 coded targets.

        Notes
        -----
        ``||a - a~|| <= eps (||nu~|| + |b~| ||eta~||) / delta + |b - b~| ||eta||``
        and ``|b - b~| <= sqrt(n) eps (||nu~|| + |b~| ||eta~||) / (delta 1^T eta)``
        with eps >= ||K - K~||_2; see :func:`lssvm.solvers.nystrom.model_error_bound`.
        It is loose (a worst case over all kernel perturbations of that norm),
        but it holds for every fit, which the tests check against the dense
        LS-SVM.
        """
        check_is_fitted(self, "_a")
        self._in_memory("approximation_bound")
        if isinstance(kernel_error, str):
            eps = self.kernel_error(kernel_error)
        else:
            eps = float(kernel_error)
            if not (np.isfinite(eps) and eps >= 0):
                raise ValueError(f"kernel_error must be 'trace', 'spectral' or a number >= 0; got {kernel_error!r}")
        woodbury = self._woodbury_factorization()
        da, db = model_error_bound(woodbury, float(self.alpha), eps)
        kern = self.kernel_
        if X is None:
            if kern.max_diag is None:
                raise ValueError(
                    f"the {kern.name!r} kernel is unbounded, so no bound holds for every x; "
                    "pass the points X at which to bound the error"
                )
            kappa = float(kern.max_diag)
            trace_k = float(np.sum(kern.diag(self._X_fit)))
            out = np.sqrt(kappa * trace_k) * da + db
            if self.predictor == "low-rank":
                tr_e = max(trace_k - float(np.sum(woodbury.s2)), 0.0)
                out = out + np.sqrt(kappa * tr_e) * np.linalg.norm(self._a, axis=0)
            return float(out[0]) if self._single_output else out
        X = validate_input(self, X, reset=False, dtype=np.float64)
        out = np.empty((X.shape[0], self._a.shape[1]))
        for rows in iter_row_blocks(X.shape[0], self.block_size):
            Kx = kern(X[rows], self._X_fit)
            out[rows] = np.linalg.norm(Kx, axis=1)[:, None] * da + db
            if self.predictor == "low-rank":
                gap = Kx @ self._a - kern(X[rows], self.basis_vectors_) @ self._beta
                out[rows] += np.abs(gap)
        return out[:, 0] if self._single_output else out


class NystromLSSVR(ExpansionRegressorMixin, SparseIntervalMixin, BayesMixin, RegressorCVMixin, RegressorMixin,
                   _BaseNystromLSSVM):
    __doc__ = """LS-SVM regression on a rank-k Nyström kernel (Ding & Liao 2012), solved as ridge
    regression on its k features (the sparse model on the sampled columns).
""" + _DOC

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n, d) and y (n,) or (n, n_outputs); Dask arrays / DataFrames
        are trained block by block (low-rank predictor).

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,) or (n, n_outputs)
        sample_weight : array-like of shape (n,) or float, optional
            Row weights ``w_i >= 0`` (rows in memory, low-rank predictor):
            the model minimises ``sum_i w_i (y_i - f(x_i))^2 + alpha
            ||beta||^2`` on the rank-k features; a zero weight is a
            removed row and an integer weight a repeated row (columns
            drawn by a method come from the positive-weight rows).  The
            CV methods then give the weighted model refitted without the
            held-out rows (:class:`lssvm.cv.WeightedSparseEngine`), their
            error sums weighted (``press`` is ``sum_i w_i r_i^2``).
            Intervals, predict_std, the evidence, gcv and
            predict_set are not available for weighted fits (their
            conformal and Bayesian conventions are unweighted): a clear error says so.

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):
            check_sample_weight(self, sample_weight, X, y)  # weights with Dask input: a clear error
            return self._fit_dask(X, y, classification=False)
        X, Y, self._y_1d = validate_regression_data(self, X, y)
        return self._fit_targets(X, Y, check_sample_weight(self, sample_weight, X, Y))

@with_calibration("the exact leave-one-out values of the (low-rank) Nyström model, O(n k)")
class NystromLSSVC(NystromProbaMixin, ClassifierCVMixin, CodedClassifierMixin, ClassifierMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM classification on a rank-k Nyström kernel (Ding & Liao 2012), solved as
    ridge regression on its k features: labels coded +1/-1 (one-vs-rest for more classes).
""" + _DOC.replace("\n    Notes\n", "    classes_ : ndarray of shape (n_classes,)\n\n    Notes\n", 1)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n, d) and labels y (n,) of any type; Dask arrays / DataFrames
        are trained block by block (low-rank predictor).

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,)
        sample_weight : array-like of shape (n,) or float, optional
            Row weights of the coded targets' squared errors, as for
            :meth:`NystromLSSVR.fit`; the exact CV values and error rates
            are weighted, and so is the calibration (Platt's fit and the
            isotonic fit weigh each held-out value by its row's weight).
            Intervals, predict_std, the evidence, gcv and
            predict_set are not available for weighted fits (their
            conformal and Bayesian conventions are unweighted): a clear error says so.

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):  # calibrated on the Dask LOO / k-fold passes
            self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # weights: a clear error
            return self._fit_dask(X, y, classification=True)._fit_calibration()
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_, self._codes, Y = encode_classes(y, "NystromLSSVC")
        self._fit_weights = check_sample_weight(self, sample_weight, X, y)  # the calibration weighs by them
        return self._fit_targets(X, Y, self._fit_weights)._fit_calibration()  # exact LOO / k-fold decision values


# ---------------------------------------------------------------- the search over the family
NYSTROM_SEARCH_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : "loo", int, splitter or iterable of (train, test), default="loo"
        Exact CV of the Nyström model (the approximate CV of Ding & Liao 2012).
    basis : {"random", "kcenter", "fvs"} or 1-D int array, default="random"
        As for :class:`lssvm.NystromLSSVR`; random and k-center columns are drawn once for the whole
        search, FVS columns per candidate.  Why "random" where the other two families
        default to "pchol": it is Ding & Liao's uniform column sample, the model their bounds are for,
        and pivoted Cholesky is not a Nyström column rule here (on pivoted-Cholesky columns the model
        is :class:`lssvm.SparseLSSVRCV`'s).  It works on NumPy and Dask input.
    n_basis, rank
        As for :class:`lssvm.NystromLSSVR`.
    predictor : {"low-rank", "exact"}, default="low-rank"
        Predictor of the refitted model; "low-rank" is the model the CV
        criterion scores.
    random_state : int, RandomState or None
    gamma, degree, coef0, normalize_kernel, block_size, n_jobs, rcond
        As for :class:`lssvm.NystromLSSVR` (gamma only when not searched).
""" + SEARCH_DOC + RESULT_DOC


class NystromFamily(SearchFamily):
    """The Nyström LS-SVM (Ding & Liao 2012): sampled columns cut to rank k, scored by the approximate model's
    exact CV (:class:`lssvm.selection.nystrom.NystromCV`)."""

    regressor, classifier = NystromLSSVR, NystromLSSVC
    default_cv = "loo"
    dask_bases = ("random",)  # kcenter and FVS columns need the rows in memory
    cost_kind = "low-rank"
    model_params = ("kernel", "gamma", "rank", "predictor", "degree", "coef0", "normalize_kernel", "block_size",
                    "rcond")

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        columns = dict(n_basis=s.n_basis, rank=0.5 if s.rank is None else s.rank, basis=s.basis, rcond=s.rcond)
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.nystrom import DaskNystromCV

            return DaskNystromCV(X, y, **columns, **kw)
        if kw.get("sample_weight") is not None:  # the weighted model's exact weighted CV
            return WeightedNystromCV(X, y, **columns, **kw)
        return NystromCV(X, y, **columns, **kw)


class _NystromSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = NystromFamily
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: NystromLSSVR._parameter_constraints[k] for k in ("basis", "n_basis", "rank", "predictor", "rcond")},
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="random", n_basis=None, random_state=None, *,
                 rank=None, predictor="low-rank", gamma="scale", degree=3, coef0=1.0,
                 normalize_kernel=False, block_size=DEFAULT_BLOCK_SIZE, n_jobs=None, rcond=1e-10):
        self.kernel, self.alphas, self.param_space, self.cv, self.search = kernel, alphas, param_space, cv, search
        self.scoring, self.max_evaluations, self.refit = scoring, max_evaluations, refit
        self.basis, self.n_basis, self.random_state, self.rcond = basis, n_basis, random_state, rcond
        self.rank, self.predictor, self.gamma, self.degree, self.coef0 = rank, predictor, gamma, degree, coef0
        self.normalize_kernel, self.block_size, self.n_jobs = normalize_kernel, block_size, n_jobs


class NystromLSSVRCV(SearchIntervalMixin, RegressorMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM regression (Ding & Liao 2012) with built-in hyper-parameter
    selection on the approximate model's exact CV.
""" + NYSTROM_SEARCH_DOC


@with_calibration("the refitted model's exact LOO (see :class:`lssvm.NystromLSSVC`)", "\n    Other Parameters", False)
class NystromLSSVCCV(SearchProbaMixin, ClassifierSearchMixin, ClassifierMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM classification (Ding & Liao 2012) with built-in
    hyper-parameter selection on the approximate model's exact CV.
""" + NYSTROM_SEARCH_DOC + """    classes_ : ndarray of shape (n_classes,)
"""
