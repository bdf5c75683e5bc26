"""Nyström LS-SVMs solved by the Woodbury identity (paper 003).

The LS-SVM dual is solved on ``K~ = C W_k^+ C^T`` from ``n_components``
sampled columns truncated to ``rank``, never forming an n x n matrix
(:mod:`lssvm.solvers.nystrom`).  The factorisation serves every alpha, and
gives the exact LOO and k-fold residuals of this approximate model.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._params import count_or_fraction
from .._targets import check_numeric_targets, warn_constant_targets
from ..basis import nystrom_columns
from ..cv import resolve_folds
from ..kernels import make_kernel, resolve_gamma
from ..kernels._distances import DEFAULT_BLOCK_SIZE, iter_row_blocks
from ..solvers import check_alphas
from ..solvers.nystrom import model_error_bound, nystrom_factorize, nystrom_kernel_error
from ._labels import CodedClassifierMixin, encode_classes
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
        Kernel width (``exp(-gamma ||x - z||^2)``; 1/sigma^2 of paper 003).
    alpha : float > 0, default=1.0
        Regularisation: the dual is ``[K~ + alpha I, 1; 1^T, 0]``, so alpha
        is ``1/gamma`` of paper 003 and LS-SVMlab.
    n_components : int or float, optional
        c, columns sampled: a count or a fraction of n; default
        ``min(1000, ceil(10 sqrt(n)), n)`` (:func:`lssvm.basis.default_n_basis`;
        paper 003 used c = 0.1 n).
    rank : int or float, optional
        k <= c: a count or a fraction of c; default 0.5 (the paper's k = 0.5 c).
    sampling : {"uniform", "kcenter", "fvs"} or 1-D int array, default="uniform"
        Columns drawn uniformly without replacement (the paper), by
        farthest-point clustering, by greedy feature-vector selection, or
        given as training-row indices (``n_components`` is then ignored).
    predictor : {"exact", "low-rank"}, default="low-rank"
        "exact": ``f(x) = sum_i a_i k(x, x_i) + b`` with the true kernel to
        all n training points, as the paper assumes -- O(n d) per point and
        the training inputs are kept; "low-rank": the Nyström model itself,
        ``k(x, X_S) W_k^+ C^T a + b`` -- O(c d) per point, and the model
        whose LOO / CV residuals the ``cv_*`` methods give.  The exact
        predictor departs from the Nyström model by up to
        ``||K - K~|| / alpha^2`` (paper 003 Thm. 3): with a small alpha the
        coefficients' large components outside the range of K~ meet the
        true kernel, and it can predict far worse than "low-rank".
    random_state : int, RandomState or None
    degree, coef0, normalize_kernel, block_size : as for :class:`lssvm.SparseLSSVR`.

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
"""


class _BaseNystromLSSVM(BaseEstimator):
    def __init__(self, kernel="rbf", gamma="scale", alpha=1.0, n_components=None, rank=None, sampling="uniform",
                 predictor="low-rank", random_state=None, *, degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE):
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
        return kernel

    def _fit_targets(self, X, Y):
        kernel = self._check_params(X)
        self.gamma_ = resolve_gamma(self.gamma, X)
        S = nystrom_columns(X, kernel, self.sampling, self.n_components, check_random_state(self.random_state))
        k = count_or_fraction("rank", self.rank, 0.5, S.size)  # FVS may stop before c points
        C = kernel(X, X[S], block_size=self.block_size)
        fac = nystrom_factorize(C, C[S], Y, rank=k)
        a, b, _ = fac.solve(float(self.alpha))
        self.kernel_ = kernel
        self.components_ = X[S]
        self.component_indices_ = S
        self.rank_ = fac.rank
        self.factorization_ = fac
        self._X_fit = X
        self._a, self._b = a, b
        P = fac.projection
        self._beta = P @ (P.T @ (C.T @ a))  # W_k^+ C^T a, for the low-rank predictor
        single = self._single_output
        self.dual_coef_ = a[:, 0] if single else a
        self.intercept_ = float(b[0]) if single else b
        return self

    def _decision_2d(self, X):
        check_is_fitted(self, "_a")
        X = validate_input(self, X, reset=False, dtype=np.float64)
        out = np.empty((X.shape[0], self._a.shape[1]))
        Z, coef = (self._X_fit, self._a) if self.predictor == "exact" else (self.components_, self._beta)
        for rows in iter_row_blocks(X.shape[0], self.block_size):
            out[rows] = self.kernel_(X[rows], Z) @ coef
        return out + self._b

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
    def _residuals_3d(self, cv, alpha, groups):
        check_is_fitted(self, "_a")
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
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
        R, scalar = self._residuals_3d(cv, alpha, groups)
        mse = (R**2).mean(axis=1)
        if self._single_output:
            mse = mse[:, 0]
        return mse[0] if scalar else mse


class NystromLSSVR(RegressorMixin, _BaseNystromLSSVM):
    __doc__ = """LS-SVM regression on a rank-k Nyström kernel, solved by Woodbury (paper 003).
""" + _DOC

    @property
    def _single_output(self):
        return self._y_1d

    def _split_labels(self):
        return None

    def fit(self, X, y):
        """Fit on X (n, d) and y (n,) or (n, n_outputs)."""
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
    (paper 003): labels coded +1/-1 (one-vs-rest for more classes).
""" + _DOC + """    classes_ : ndarray of shape (n_classes,)
"""

    @property
    def _single_output(self):
        return self.classes_.size == 2

    def _split_labels(self):
        return self._codes

    def fit(self, X, y):
        """Fit on X (n, d) and labels y (n,) of any type."""
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_, self._codes, Y = encode_classes(y, "NystromLSSVC")
        return self._fit_targets(X, Y)

    def cv_error_rate(self, cv="loo", alpha=None, groups=None):
        """Out-of-fold misclassification rate of the Nyström model, per alpha."""
        R, scalar = self._residuals_3d(cv, alpha, groups)
        F = self.factorization_.Y[None] - R
        idx = (F[..., 0] > 0).astype(int) if F.shape[-1] == 1 else np.argmax(F, axis=-1)
        rate = (idx != self._codes[None]).mean(axis=1)
        return float(rate[0]) if scalar else rate
