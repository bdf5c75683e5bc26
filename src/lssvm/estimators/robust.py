"""Robust sparse LS-SVM regression by iterative reweighting (Suykens, De
Brabanter, Lukas and Vandewalle 2002; LS-SVMlab's ``robustlssvm``)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._targets import check_numeric_targets, warn_constant_targets
from ..backends import is_dask_collection
from ..cv import WeightedSparseEngine
from ..solvers.robust_weights import WEIGHT_FUNCTIONS, robust_reweight, robust_statistic, robust_weights
from ._base import BaseSparseLSSVM, check_sample_weight
from ._calibration import signature_with
from ._constraints import SPARSE_PARAMS
from ._validation import validate_input
from .regressor import SparseLSSVR

__all__ = ["RobustLSSVR"]

_NAMES = set(WEIGHT_FUNCTIONS) | {"w" + k for k in WEIGHT_FUNCTIONS}


class RobustLSSVR(SparseLSSVR):
    """Robust sparse LS-SVM regression: iteratively reweighted least squares
    with LS-SVMlab's weight functions (Suykens, De Brabanter, Lukas and
    Vandewalle 2002, §3).

    It takes every parameter of :class:`SparseLSSVR` and sets its
    attributes; below, the keyword-only parameters and attributes it adds.

    Parameters
    ----------
    weight_function : {"hampel", "huber", "logistic", "myriad"}, default="hampel"
        LS-SVMlab's ``whampel``, ``whuber``, ``wlogistic``, ``wmyriad`` (the
        "w" names are accepted too); see :mod:`lssvm.solvers.robust_weights`.
        "hampel" is the weighting of Suykens et al. 2002 (§3, c1 = 2.5,
        c2 = 3): it gives gross outliers almost no weight, where Huber's
        weights decay only as ``c / |r|`` (at 20 % outliers of 5-20 SD,
        ``benchmarks/robust.py``: Hampel 1.07x, Huber 1.74x the clean fit's
        test RMSE on Friedman #1).
    weight_parameter : float, pair of floats or None, default=None
        Huber's ``c`` (1.345), Hampel's ``(c1, c2)`` ((2.5, 3)), the myriad's
        ``K`` (half the interquartile range of the standardised residuals).
    max_iter : int, default=50
        Reweighting steps at most (LS-SVMlab: 500); a
        ``ConvergenceWarning`` if the weights have not settled by then.
    tol : float, default=1e-4
        Converged when no weight changes by more than ``tol`` in a step.

    Attributes
    ----------
    weights_ : ndarray of shape (m,)
        The robust weights of the final fit, in (0, 1] (the fit uses them
        times any ``sample_weight``).
    scale_ : float
        The robust residual scale ``1.483 MAD`` of the final step.
    n_iter_ : int
        Weighted refits made after the first (unweighted) fit.
    converged_ : bool

    Notes
    -----
    Step: residuals ``e`` of the current fit, scale ``s = 1.483 median(|e -
    median(e)|)``, weights ``v = f(e / s)``, refit with row weights ``v``
    (:mod:`lssvm.solvers.weighted_rls`).  The basis is chosen once by the
    first fit, and the kernel matrices are computed once: each step costs
    one weighted factorisation, O(m n^2 + n^3).  The CV methods then give
    the exact held-out outputs of the final weighted model (weights held at
    ``weights_``), refitted without the held-out rows; their error sums are
    weighted by ``weights_``.  Targets are one column.

    References
    ----------
    J. A. K. Suykens, J. De Brabanter, L. Lukas and J. Vandewalle, Weighted
    least squares support vector machines: robustness and sparse
    approximation, Neurocomputing 48 (2002).  K. De Brabanter et al.,
    LS-SVMlab toolbox user's guide 1.8 (2011), ``robustlssvm``.

    Examples
    --------
    >>> import numpy as np
    >>> from lssvm import RobustLSSVR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    >>> y[:20] += 10.0
    >>> model = RobustLSSVR(gamma=1.0, alpha=0.1, weight_function="hampel").fit(X, y)
    >>> bool(model.weights_[:20].max() < 0.01)
    True
    """

    _parameter_constraints = {
        **SPARSE_PARAMS,
        "weight_function": [StrOptions(_NAMES)],
        "weight_parameter": [Interval(Real, 0, None, closed="neither"), "array-like", None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, *args, weight_function="hampel", weight_parameter=None, max_iter=50, tol=1e-4, **kwargs):
        super().__init__(*args, **kwargs)
        self.weight_function = weight_function
        self.weight_parameter = weight_parameter
        self.max_iter = max_iter
        self.tol = tol

    __init__.__signature__ = signature_with(BaseSparseLSSVM.__init__, weight_function="hampel", weight_parameter=None,
                                            max_iter=50, tol=1e-4)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit, then reweight until the weights settle.

        Parameters
        ----------
        X : array-like of shape (m, d)
        y : array-like of shape (m,)
        sample_weight : array-like of shape (m,), optional
            Prior row weights, multiplied into the robust weights; the
            scale's medians are weighted by them, so an integer weight is a
            repeated row (with the myriad's default ``K``, whose
            interquartile range is unweighted, only approximately).

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):
            raise ValueError("RobustLSSVR needs the rows in memory; fit on a NumPy sample")
        X, y = validate_input(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_samples=2,
                              accept_sparse="csr")
        y = check_numeric_targets(y)
        warn_constant_targets(y)
        self._single_output = True
        prior = check_sample_weight(self, sample_weight, X, y)
        prior = np.ones(X.shape[0]) if prior is None else prior
        robust_weights(np.zeros(1), self.weight_function, self.weight_parameter)  # a clear error for a bad name
        Y = y[:, None]
        self._fit_targets(X, Y, prior)
        kernel, Z, rows = self.kernel_, self.basis_vectors_, self.basis_indices_
        K_mn = kernel(X, Z, block_size=self.block_size)
        K_BB = K_mn[rows] if rows is not None else kernel(Z, Z)
        fac, v, self.scale_, self.n_iter_, self.converged_ = self._reweight(K_mn, K_BB, Y, prior, self.alpha,
                                                                              self.factorization_)
        if not self.converged_:
            warnings.warn(f"RobustLSSVR: the weights did not settle within max_iter={self.max_iter} steps "
                          f"(tol={self.tol:g}); increase max_iter or tol", ConvergenceWarning, stacklevel=2)
        self.weights_ = v
        self.factorization_ = fac
        self.rank_ = fac.rank
        self._engine = WeightedSparseEngine(fac, X, Z, rows, kernel, self.rcond, None, self.n_jobs)
        self._prior = prior
        self._set_coef(*fac.coef(self.alpha))
        return self

    def _reweight(self, K_mn, K_BB, Y, prior, alpha, fac=None):
        """The reweighting loop at ``alpha`` from the fit ``fac`` (default: the prior-weighted fit),
        :func:`lssvm.solvers.robust_weights.robust_reweight`.

        Returns the final factorisation, the robust weights, the scale, the
        number of refits and whether the weights settled."""
        return robust_reweight(K_mn, K_BB, Y, prior, alpha, self.weight_function, self.weight_parameter,
                               max_iter=self.max_iter, tol=self.tol, rcond=self.rcond, fac=fac)

    def robust_cv_error(self, cv="loo", alpha=None, statistic="median", *, groups=None, trim=0.1):
        """A robust CV criterion per alpha: a robust statistic of the absolute
        exact held-out residuals of the robust model reweighted at that alpha.

        Parameters
        ----------
        cv : "loo", int, splitter or iterable of (train, test), default="loo"
            As for :meth:`cv_predict`; "loo" is the exact weighted LOO.
        alpha : float or array-like of shape (A,), optional
            Default the fitted ``alpha``.  Each alpha gets its own
            reweighting loop (the weights of the robust fit at that alpha),
            then its exact held-out residuals with those weights held fixed
            (Debruyne, Hubert and Suykens 2008; LS-SVMlab's
            ``rcrossvalidatelssvm``).
        statistic : {"median", "trimmed", "mae"}, default="median"
            Median of ``|r|``; mean of ``|r|`` without its largest ``trim``
            share; plain mean of ``|r|``.  Rows are weighted by any
            ``sample_weight`` of the fit (weighted median / means).
        groups : array-like of shape (m,), optional
        trim : float in [0, 1), default=0.1

        Returns
        -------
        float or ndarray of shape (A,)

        Notes
        -----
        Per alpha, the reweighting steps (one weighted factorisation each,
        O(m n^2 + n^3)) and one exact CV pass.
        """
        from ..solvers import check_alphas

        robust_statistic(np.zeros(1), None, statistic, trim)  # a clear error for a bad statistic or trim
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        self._factorization()
        X, Z, rows, kernel = self._X_fit, self.basis_vectors_, self.basis_indices_, self.kernel_
        K_mn = kernel(X, Z, block_size=self.block_size)
        K_BB = K_mn[rows] if rows is not None else kernel(Z, Z)
        Y, prior = self._targets_2d(), self._prior
        used = prior > 0
        out = np.empty(alphas.size)
        for i, a in enumerate(alphas):
            fac = self.factorization_ if a == self.alpha else self._reweight(K_mn, K_BB, Y, prior, a)[0]
            engine = WeightedSparseEngine(fac, X, Z, rows, kernel, self.rcond, None, self.n_jobs)
            if isinstance(cv, str) and cv == "loo":
                R = engine.loo_residuals(np.array([a]))[0, :, 0]
            else:
                folds = engine.resolve_cv(cv, groups)
                R = Y[:, 0] - engine.cv_outputs(folds, np.array([a]))[0, :, 0]
            out[i] = robust_statistic(R[used], prior[used], statistic, trim)
        return float(out[0]) if scalar else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        return tags
