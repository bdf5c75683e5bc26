"""Nyström LS-SVMs solved by the Woodbury identity (Ding & Liao 2012).

The LS-SVM dual is solved on ``K~ = C W_k^+ C^T`` from ``n_basis``
sampled columns (the basis) truncated to ``rank``, never forming an n x n matrix
(:mod:`lssvm.solvers.nystrom`).  The factorisation serves every alpha, and
gives the exact LOO and k-fold residuals of this approximate model.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._params import count_or_fraction
from .._sums import sum_squares, warn_if_overflow
from .._targets import check_numeric_targets, warn_constant_targets
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import SAMPLINGS, nystrom_columns
from ..cv import resolve_folds
from ..exceptions import warn_numerical
from ..kernels import DEFAULT_BLOCK_SIZE, iter_row_blocks, make_kernel, resolve_gamma
from ..solvers import check_alphas
from ..solvers.nystrom import model_error_bound, nystrom_factorize, nystrom_kernel_error
from ._constraints import KERNEL_PARAMS, POSITIVE, SIZE, UNIT_OPEN, ValidatedParamsMixin
from ._docs import PARAMETER_NAMES_NOTE
from ._expansion import ExpansionMixin
from ._family_calibration import NystromProbaMixin, with_calibration
from ._family_dask import NystromDaskMixin
from ._intervals import RefitIntervalMixin
from ._labels import CodedClassifierMixin, LabelCoder, encode_classes
from ._scoring import CLASSIFICATION_SCORINGS, REGRESSION_SCORINGS, check_scoring_name
from ._validation import validate_input

__all__ = ["NystromLSSVC", "NystromLSSVR"]

KERNEL_ERRORS = ("trace", "spectral")
PREDICTORS = ("exact", "low-rank")

_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"} or lssvm.kernels.Kernel, default="rbf"
    gamma : float > 0 or "scale", default="scale"
        "scale": ``1 / (n_features * X.var())`` at fit, as scikit-learn's
        ``SVC`` (:func:`lssvm.kernels.resolve_gamma`); stored as ``gamma_``.
        Kernel width (``exp(-gamma ||x - z||^2)`` for "rbf"); larger values
        give narrower kernels.
    alpha : float > 0, default=1.0
        Regularisation: the dual is ``[K~ + alpha I, 1; 1^T, 0]``; larger
        values give smoother fits (LS-SVMlab's ``gam`` is ``1/alpha``: Notes).
    basis : {"random", "kcenter", "fvs"} or 1-D int array, default="random"
        The sampled columns (the basis): drawn uniformly without replacement
        (the paper), by farthest-point clustering, by greedy feature-vector
        selection, or given as training-row indices (``n_basis`` is then
        ignored).
    n_basis : int or float, optional
        c, columns sampled: a count or a fraction of n; default
        ``min(700, ceil(10 sqrt(n)), n)`` (:func:`lssvm.basis.default_n_basis`;
        Ding & Liao 2012 used c = 0.1 n).
    rank : int or float, optional
        k <= c: a count or a fraction of c; default 0.5 (the paper's k = 0.5 c).
    predictor : {"low-rank", "exact"}, default="low-rank"
        "low-rank": the Nyström model itself, ``k(x, X_S) W_k^+ C^T a + b``
        -- O(c d) per point, and the model whose LOO / CV residuals the
        ``cv_*`` methods give; "exact": ``f(x) = sum_i a_i k(x, x_i) + b``
        with the true kernel to all n training points, as Ding & Liao 2012 assume
        -- O(n d) per point and the training inputs are kept.  The exact
        predictor departs from the Nyström model by up to
        ``||K - K~|| / alpha^2`` (Ding & Liao 2012, Thm. 3): with a small alpha the
        coefficients' large components outside the range of K~ meet the
        true kernel, and it can predict far worse than "low-rank" (R² of
        -22,490 against 0.64 on Boston at alpha = 0.01).  ``fit`` measures
        that departure on up to 256 training rows and warns
        (:class:`lssvm.NumericalWarning`) when it exceeds half the
        targets' standard deviation.
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
    basis_indices_ : ndarray of shape (c,)
    n_basis_ : int
        c, the columns sampled (FVS may stop before ``n_basis``).
    rank_ : int
        k after dropping non-positive eigenvalues of W.
    dual_coef_ : ndarray of shape (n,) or (n, n_outputs)
        a, one per training point.
    intercept_ : float or ndarray of shape (n_outputs,)
    factorization_ : lssvm.solvers.nystrom.NystromFactorization

    Notes
    -----
    Fit: O(n c d) kernel columns, O(c^3) eigh of W, O(n c k + n k^2) for the
    orthogonalised features; memory O(n c).  Each further alpha (LOO path,
    k-fold) costs O(n k).

""" + PARAMETER_NAMES_NOTE + """"""


class _BaseNystromLSSVM(NystromDaskMixin, ValidatedParamsMixin, ExpansionMixin, BaseEstimator):
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

    def _check_params(self, X=None):
        """Validate the parameters (:meth:`_validate_params`); returns the kernel."""
        self._validate_params()
        return self._kernel_for(X)

    def _kernel_for(self, X):
        return make_kernel(self.kernel, gamma=resolve_gamma(self.gamma, X), degree=self.degree, coef0=self.coef0,
                           normalize=self.normalize_kernel)

    def _rank_for(self, c):
        """k for c distinct sampled columns."""
        if isinstance(self.rank, Integral) and not isinstance(self.rank, bool) and self.rank > c >= 1:
            raise ValueError(
                f"rank={self.rank} is more than the {c} distinct column(s) sampled (duplicate or "
                "near-duplicate training rows give one column; FVS may stop early): lower rank, sample "
                "more columns (n_basis), or leave rank=None"
            )
        return count_or_fraction("rank", self.rank, 0.5, c)  # FVS may stop before c points

    @uses_threads
    def _fit_targets(self, X, Y):
        kernel = self._kernel_for(X)  # fit has validated the parameters
        self.gamma_ = resolve_gamma(self.gamma, X)
        S = nystrom_columns(X, kernel, self.basis, self.n_basis, check_random_state(self.random_state))
        k = self._rank_for(S.size)
        C = kernel(X, X[S], block_size=self.block_size)
        fac = nystrom_factorize(C, C[S], Y, rank=k, rcond=float(self.rcond))
        a, b, _ = fac.solve(float(self.alpha))
        if self.predictor == "exact":
            fac.warn_conditioning([float(self.alpha)], stacklevel=4, what="the exact predictor's coefficients")
        self.kernel_ = kernel
        self.basis_vectors_ = X[S]
        self.basis_indices_ = S
        self.n_basis_ = int(S.size)
        self.rank_ = fac.rank
        self.factorization_ = fac
        self._X_fit = X
        self._dask_fit = None
        self._a, self._b = a, b
        # W_k^+ C^T a = projection V^T a for the low-rank predictor, by the
        # route without cancellation (NystromFactorization.feature_coef)
        self._beta = fac.projection @ fac.feature_coef(float(self.alpha), b)
        single = self._single_output
        self.dual_coef_ = a[:, 0] if single else a
        self.intercept_ = float(b[0]) if single else b
        if self.predictor == "exact":
            self._warn_unstable_exact(X, Y, C, np.random.default_rng(0))
        return self

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
        P = self.factorization_.projection
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

        return nystrom_kernel_error(self.factorization_, kern.diag(X), matvec, method=method)

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
        da, db = model_error_bound(self.factorization_, float(self.alpha), eps)
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
                tr_e = max(trace_k - float(np.sum(self.factorization_.s2)), 0.0)
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

    # ---------------------------------------------- CV of the Nyström model
    @uses_threads
    def _residuals_3d(self, cv, alpha, groups):
        check_is_fitted(self, "_a")
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        if getattr(self, "_dask_fit", None) is not None:
            return self._dask_cv(cv, alphas, groups, reduce=False), scalar
        fac = self.factorization_
        if cv == "loo":
            return fac.loo_residuals(alphas), scalar
        folds = resolve_folds(cv, fac.n_samples, y=self._split_labels(), groups=groups,
                              classifier=is_classifier(self))
        return fac.cv_residuals(folds, alphas), scalar

    def cv_residuals(self, cv=10, alpha=None, groups=None):
        """Exact out-of-fold residuals of the (low-rank) Nyström LS-SVM.

        Parameters
        ----------
        cv : "loo", int, scikit-learn splitter or iterable of (train, test), default=10
            An int k means ``KFold(k)`` (``StratifiedKFold(k)`` for classifiers).
        alpha : float or array of floats, optional
            Default: the fitted alpha.
        groups : array-like of shape (n,), optional

        Returns
        -------
        ndarray of shape (n,), (n, v), (A, n) or (A, n, v)

        Notes
        -----
        LOO: O(n k) per alpha; a fold of h rows: O(n k + h^2 k + h^3) per alpha.
        """
        R, scalar = self._residuals_3d(cv, alpha, groups)
        if self._single_output:
            R = R[..., 0]
        return R[0] if scalar else R

    def cv_error(self, cv=10, alpha=None, scoring=None, *, groups=None):
        """Out-of-fold error of the Nyström model, per alpha (and output).

        Parameters
        ----------
        cv, alpha, groups
            As for :meth:`cv_residuals` (``cv="loo"``: exact LOO, O(n k) per alpha).
        scoring : {"mse", "press"} (regression) or {"error_rate", "mse", "press"} (classification), optional
            The first is the default (None): mean squared residual (PRESS / n)
            or the misclassification rate; "press" the sum of squares, per
            output (of the coded +1/-1 targets for classifiers).

        Returns
        -------
        float or ndarray of shape (v,), (A,) or (A, v); (A,) for "error_rate"
        """
        scoring = check_scoring_name(
            self, scoring, CLASSIFICATION_SCORINGS if is_classifier(self) else REGRESSION_SCORINGS)
        if getattr(self, "_dask_fit", None) is not None:  # reduced in the passes
            alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
            sums = self._dask_cv(cv, alphas, groups, reduce=True)
            if scoring == "error_rate":
                rate = sums.wrong / sums.count
                return float(rate[0]) if scalar else rate
            err = sums.sse / (sums.count if scoring == "mse" else 1)
        else:
            R, scalar = self._residuals_3d(cv, alpha, groups)
            if scoring == "error_rate":
                F = self.factorization_.Y[None] - R
                rate = LabelCoder.misclassified(F, self._codes) / F.shape[1]
                return float(rate[0]) if scalar else rate
            err = sum_squares(R, axis=1)
            if scoring == "mse":
                err = err / R.shape[1]
        warn_if_overflow(err, f"{type(self).__name__}.cv_error")
        if self._single_output:
            err = err[:, 0]
        return err[0] if scalar else err


class NystromLSSVR(RefitIntervalMixin, RegressorMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM regression on a rank-k Nyström kernel, solved by Woodbury (Ding & Liao 2012).
""" + _DOC

    @property
    def _single_output(self):
        return self._y_1d

    def _split_labels(self):
        return None

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit on X (n, d) and y (n,) or (n, n_outputs); Dask arrays / DataFrames
        are trained block by block (low-rank predictor)."""
        if is_dask_collection(X) or is_dask_collection(y):
            return self._fit_dask(X, y, classification=False)
        X, y = validate_input(self, X, y, dtype=np.float64, multi_output=True, ensure_min_samples=2, y_numeric=True)
        y = check_numeric_targets(y)
        warn_constant_targets(y)
        self._y_1d = y.ndim == 1
        return self._fit_targets(X, y[:, None] if y.ndim == 1 else y)

    def predict(self, X):
        """Predictions, shape (m,) or (m, n_outputs)."""
        F = self._decision_2d(X)
        return F[:, 0] if self._single_output else F

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


@with_calibration("the exact leave-one-out values of the (low-rank) Nyström model, O(n k)")
class NystromLSSVC(NystromProbaMixin, CodedClassifierMixin, ClassifierMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM classification on a rank-k Nyström kernel, solved by Woodbury
    (Ding & Liao 2012): labels coded +1/-1 (one-vs-rest for more classes).
""" + _DOC.replace("\n    Notes\n", "    classes_ : ndarray of shape (n_classes,)\n\n    Notes\n", 1)

    @property
    def _single_output(self):
        return self.classes_.size == 2

    def _split_labels(self):
        return self._codes

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit on X (n, d) and labels y (n,) of any type; Dask arrays / DataFrames
        are trained block by block (low-rank predictor)."""
        if is_dask_collection(X) or is_dask_collection(y):  # calibrated on the Dask LOO / k-fold passes
            return self._fit_dask(X, y, classification=True)._fit_calibration()
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_, self._codes, Y = encode_classes(y, "NystromLSSVC")
        return self._fit_targets(X, Y)._fit_calibration()  # exact LOO / k-fold decision values
