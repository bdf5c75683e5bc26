"""Nyström LS-SVMs solved by the Woodbury identity (Ding & Liao 2012).

The LS-SVM dual is solved on ``K~ = C W_k^+ C^T`` from ``n_components``
sampled columns truncated to ``rank``, never forming an n x n matrix
(:mod:`lssvm.solvers.nystrom`).  The factorisation serves every alpha, and
gives the exact LOO and k-fold residuals of this approximate model.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._params import count_or_fraction
from .._sums import sum_squares, warn_if_overflow
from .._targets import check_numeric_targets, warn_constant_targets
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..basis import nystrom_columns
from ..cv import resolve_folds
from ..exceptions import NumericalWarning
from ..kernels import DEFAULT_BLOCK_SIZE, iter_row_blocks, make_kernel, resolve_gamma
from ..solvers import check_alphas
from ..solvers.nystrom import model_error_bound, nystrom_factorize, nystrom_kernel_error
from ._docs import PARAMETER_NAMES_NOTE
from ._expansion import ExpansionMixin
from ._intervals import RefitIntervalMixin
from ._labels import CodedClassifierMixin, LabelCoder, encode_classes
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
    n_components : int or float, optional
        c, columns sampled: a count or a fraction of n; default
        ``min(1000, ceil(10 sqrt(n)), n)`` (:func:`lssvm.basis.default_n_basis`;
        Ding & Liao 2012 used c = 0.1 n).
    rank : int or float, optional
        k <= c: a count or a fraction of c; default 0.5 (the paper's k = 0.5 c).
    sampling : {"uniform", "kcenter", "fvs"} or 1-D int array, default="uniform"
        Columns drawn uniformly without replacement (the paper), by
        farthest-point clustering, by greedy feature-vector selection, or
        given as training-row indices (``n_components`` is then ignored).
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
    degree, coef0, normalize_kernel, block_size, n_jobs : as for :class:`lssvm.SparseLSSVR`.
    rcond : float in (0, 1), default=1e-10
        Eigenvalues of the sampled block W below ``rcond`` times the largest
        are dropped (``W_k^+`` is a pseudo-inverse).  With every column
        sampled and ``rcond`` near ``c * 2.2e-16`` the model is the exact
        LS-SVM to about 1e-10; the default trades that for robustness to
        near-duplicate columns.

    Attributes
    ----------
    components_ : ndarray of shape (c, n_features)
        The sampled points X_S.
    component_indices_ : ndarray of shape (c,)
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


class _BaseNystromLSSVM(ExpansionMixin, BaseEstimator):
    def __init__(self, kernel="rbf", gamma="scale", alpha=1.0, n_components=None, rank=None, sampling="uniform",
                 predictor="low-rank", random_state=None, *, degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None, rcond=1e-10):
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.n_components = n_components
        self.rank = rank
        self.sampling = sampling
        self.predictor = predictor
        self.random_state = random_state
        self.degree = degree
        self.coef0 = coef0
        self.normalize_kernel = normalize_kernel
        self.block_size = block_size
        self.n_jobs = n_jobs
        self.rcond = rcond

    def _check_params(self, X=None):
        """Validate the hyper-parameters; returns the kernel."""
        kernel = make_kernel(self.kernel, gamma=resolve_gamma(self.gamma, X), degree=self.degree, coef0=self.coef0,
                             normalize=self.normalize_kernel)
        if np.ndim(self.alpha) != 0:
            raise ValueError(f"alpha must be a single number > 0; got {self.alpha!r}")
        check_alphas(self.alpha)
        if self.predictor not in PREDICTORS:
            raise ValueError(f"predictor must be one of {PREDICTORS}; got {self.predictor!r}")
        if not (isinstance(self.block_size, Integral) and not isinstance(self.block_size, bool)
                and self.block_size >= 1):
            raise ValueError(f"block_size must be a positive integer; got {self.block_size!r}")
        if not (isinstance(self.rcond, Real) and not isinstance(self.rcond, bool) and 0 < self.rcond < 1):
            raise ValueError(f"rcond must be a number in (0, 1); got {self.rcond!r}")
        return kernel

    def _rank_for(self, c):
        """k for c distinct sampled columns."""
        if isinstance(self.rank, Integral) and not isinstance(self.rank, bool) and self.rank > c >= 1:
            raise ValueError(
                f"rank={self.rank} is more than the {c} distinct column(s) sampled (duplicate or "
                "near-duplicate training rows give one column; FVS may stop early): lower rank, sample "
                "more columns (n_components), or leave rank=None"
            )
        return count_or_fraction("rank", self.rank, 0.5, c)  # FVS may stop before c points

    @uses_threads
    def _fit_targets(self, X, Y):
        kernel = self._check_params(X)
        self.gamma_ = resolve_gamma(self.gamma, X)
        S = nystrom_columns(X, kernel, self.sampling, self.n_components, check_random_state(self.random_state))
        k = self._rank_for(S.size)
        C = kernel(X, X[S], block_size=self.block_size)
        fac = nystrom_factorize(C, C[S], Y, rank=k, rcond=float(self.rcond))
        a, b, _ = fac.solve(float(self.alpha))
        if self.predictor == "exact":
            fac.warn_conditioning([float(self.alpha)], stacklevel=4, what="the exact predictor's coefficients")
        self.kernel_ = kernel
        self.components_ = X[S]
        self.component_indices_ = S
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

    def _fit_dask(self, X, y, classification):
        """Fit the low-rank Nyström model on Dask collections: the columns
        drawn as in memory, one pass of feature moments
        (:mod:`lssvm.backends.dask.families`)."""
        from ..backends import dask as dask_backend
        from ..backends.dask import families as fam

        if self.predictor != "low-rank":
            raise ValueError(f"predictor={self.predictor!r} needs every training row and its dual coefficient in "
                             "memory; on Dask input use predictor='low-rank' (the model the CV methods score)")
        data = dask_backend.as_row_data(X, y, numeric_y=not classification)
        kernel = self._check_params(data.X if self.gamma == "scale" else None)
        self.gamma_ = resolve_gamma(self.gamma, data.X if self.gamma == "scale" else None)
        classes = dask_backend.count_classes(data) if classification else None
        Z, S = fam.nystrom_columns(data, kernel, self.sampling, self.n_components, self.random_state)
        fit = fam.fit_nystrom(data, kernel, (Z, S), self._rank_for(S.size), float(self.rcond), classes)
        beta, b = fit.solution.coef(float(self.alpha))
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.components_ = Z
        self.component_indices_ = S
        self.rank_ = int(fit.ctx.W.shape[1])
        self.factorization_ = None
        self._X_fit = None
        self._dask_fit = fit
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

    @property
    def _dask(self):
        """The Dask fit (:class:`lssvm.backends.dask.DaskSparseFit` of the
        Nyström features), or None."""
        return getattr(self, "_dask_fit", None)

    def _in_memory(self, what):
        if getattr(self, "_dask_fit", None) is not None:
            raise ValueError(f"{what} needs the training rows in memory; this model was fitted on Dask input")

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
            warnings.warn(
                f"predictor='exact' is unstable at new points: on training rows it departs from the Nyström "
                f"model by {ratio:.3g} x the targets' standard deviation (the coefficients' component outside "
                f"the Nyström kernel's range, about 1/alpha, meets the true kernel); use predictor='low-rank' "
                f"(the default) or a larger alpha (now {float(self.alpha):.4g})",
                NumericalWarning, stacklevel=3)

    def _expansion_arrays(self):
        """Centres, coefficients (n, v) and intercept (v,) of ``predictor``: the
        training rows and ``a`` ("exact") or ``components_`` and ``beta``."""
        check_is_fitted(self, "_beta")
        if self.predictor == "exact":
            return self._X_fit, self._a, self._b
        return self.components_, self._beta, self._b

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
                gap = Kx @ self._a - kern(X[rows], self.components_) @ self._beta
                out[rows] += np.abs(gap)
        return out[:, 0] if self._single_output else out

    # ---------------------------------------------- CV of the Nyström model
    def _dask_cv(self, cv, alphas, groups, reduce):
        """Out-of-fold residuals (A, m, v), lazy, or with ``reduce`` the sums
        of squared residuals and misclassified rows, of a Dask fit."""
        fit = self._dask_fit
        if cv == "loo":
            return fit.loo_sums(alphas) if reduce else fit.loo_residuals(alphas)
        folds = fit.resolve_cv(cv, groups, is_classifier(self))
        if reduce:  # held-out columns stay: the CV of the fixed Nystrom kernel
            return fit.cv_sums(folds, alphas, "keep")
        return fit.targets()[None] - fit.cv_outputs(folds, alphas, "keep")

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

    def cv_residuals(self, cv="loo", alpha=None, groups=None):
        """Exact out-of-fold residuals of the (low-rank) Nyström LS-SVM.

        Parameters
        ----------
        cv : "loo", int, scikit-learn splitter or iterable of (train, test)
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

    def cv_error(self, cv="loo", alpha=None, groups=None):
        """Mean squared out-of-fold residual (PRESS / n), per alpha (and output)."""
        if getattr(self, "_dask_fit", None) is not None:  # reduced in the passes
            alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
            sums = self._dask_cv(cv, alphas, groups, reduce=True)
            mse = sums.sse / sums.count
        else:
            R, scalar = self._residuals_3d(cv, alpha, groups)
            mse = sum_squares(R, axis=1) / R.shape[1]
        warn_if_overflow(mse, "NystromLSSVR.cv_error")
        if self._single_output:
            mse = mse[:, 0]
        return mse[0] if scalar else mse


class NystromLSSVR(RefitIntervalMixin, RegressorMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM regression on a rank-k Nyström kernel, solved by Woodbury (Ding & Liao 2012).
""" + _DOC

    @property
    def _single_output(self):
        return self._y_1d

    def _split_labels(self):
        return None

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


class NystromLSSVC(CodedClassifierMixin, ClassifierMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM classification on a rank-k Nyström kernel, solved by Woodbury
    (Ding & Liao 2012): labels coded +1/-1 (one-vs-rest for more classes).
""" + _DOC.replace("\n    Notes\n", "    classes_ : ndarray of shape (n_classes,)\n\n    Notes\n", 1)

    @property
    def _single_output(self):
        return self.classes_.size == 2

    def _split_labels(self):
        return self._codes

    def fit(self, X, y):
        """Fit on X (n, d) and labels y (n,) of any type; Dask arrays / DataFrames
        are trained block by block (low-rank predictor)."""
        if is_dask_collection(X) or is_dask_collection(y):
            return self._fit_dask(X, y, classification=True)
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_, self._codes, Y = encode_classes(y, "NystromLSSVC")
        return self._fit_targets(X, Y)

    def cv_error_rate(self, cv="loo", alpha=None, groups=None):
        """Out-of-fold misclassification rate of the Nyström model, per alpha."""
        if getattr(self, "_dask_fit", None) is not None:  # counted in the passes
            alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
            sums = self._dask_cv(cv, alphas, groups, reduce=True)
            rate = sums.wrong / sums.count
            return float(rate[0]) if scalar else rate
        R, scalar = self._residuals_3d(cv, alpha, groups)
        F = self.factorization_.Y[None] - R
        rate = LabelCoder.misclassified(F, self._codes) / F.shape[1]
        return float(rate[0]) if scalar else rate
