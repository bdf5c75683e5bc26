"""Sparse LS-SVM regression with exact fast leave-one-out."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin, _fit_context

from .._targets import check_numeric_targets, warn_constant_targets
from ..backends import is_dask_collection
from ._base import BaseSparseLSSVM, check_sample_weight
from ._bayes import BayesMixin
from ._docs import PARAMETER_NAMES_NOTE
from ._exact_cv import RegressorCVMixin
from ._expansion import ExpansionRegressorMixin
from ._intervals import SparseIntervalMixin
from ._validation import validate_input

__all__ = ["SparseLSSVR"]


class SparseLSSVR(ExpansionRegressorMixin, SparseIntervalMixin, BayesMixin, RegressorCVMixin, RegressorMixin,
                  BaseSparseLSSVM):
    _alpha_per_target = True

    __doc__ = """Sparse least-squares support vector regression (sparse kernel ridge
    regression / subset-of-regressors) with exact fast leave-one-out.

    Minimises ``||y - K_B^T a - b||^2 + alpha * a^T K_BB a`` over the dual
    coefficients ``a`` (one per basis point) and an unpenalised intercept
    ``b``, where ``K_B = k(Z, X)`` for basis points ``Z``.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly", "ard"} or lssvm.kernels.Kernel, default="rbf"
    gamma : float > 0, array of shape (n_features,) for "ard", or "scale", default="scale"
        Kernel width: ``exp(-gamma ||x - z||^2)`` for "rbf"; larger values
        give narrower kernels and more flexible fits (other names: Notes).
        "scale": ``1 / (n_features * X.var())`` at fit, as scikit-learn's
        ``SVC``; the number used is ``gamma_``.
    alpha : float > 0 or array-like of shape (n_outputs,), default=1.0
        Regularisation: the weight of the penalty ``a^T K_BB a`` against the
        sum of squared errors; larger values give smoother fits.  An array
        gives each target (column of ``y``) its own: one factorisation serves
        all of them, and ``predict``, ``predict_interval``, ``predict_std``
        and the CV methods called without ``alpha`` use each target's value
        (``SparseLSSVRCV(alpha_per_target=True)`` chooses them).
    basis : {"pchol", "fvs", "random", "greedy", "kcenter", "renyi"} or array-like of shape (n_basis, n_features), default="pchol"
        "pchol": pivoted incomplete Cholesky on the largest residual
        diagonal, O(m (d + k)) for the k-th point (the default);
        "fvs": greedy feature-vector selection (Cawley & Talbot 2004, §2.4.1),
        O(m^2) per point (``n_candidates`` makes it near-linear);
        "random": uniform sample of distinct training points; "greedy":
        randomized greedy forward selection by training error at ``alpha``
        (Pahikkala et al. 2012, Algorithm 1); "kcenter": farthest points;
        "renyi": maximal quadratic Rényi entropy; the basis points
        themselves; or a 1-D integer array of training-row indices.
    n_basis : int or "auto", optional
        Number of basis points: an upper bound for "pchol" and "fvs" (which
        also stop by ``basis_tol``/``pivot_tol``), the sample size for the
        others.  "auto" (with "pchol"): the basis grows by doublings from 50
        points while a doubling lowers the exact LOO error (at ``alpha``) of
        the prefix sizes by more than one standard error, and the fit keeps
        the size of lowest LOO error (:mod:`lssvm.cv.basis_size`).  Default for m training rows: ``min(500, ceil(10 sqrt(m)), m)``
        for "pchol" (the classifiers: ``min(700, ceil(10 sqrt(m)), m)``;
        :func:`lssvm.basis.default_basis_size`); ``min(200, m)`` for "random",
        "greedy", "kcenter" and "renyi"; no bound for "fvs".
    random_state : int, RandomState or None
        Seeds "random" and ``n_candidates``.
    degree, coef0 : int, float
        Parameters of the "poly" kernel ``(gamma x.z + coef0) ** degree``.
    basis_tol : float in [0, 1), default=1e-6
        FVS stops once the mean relative reconstruction error is at most this.
    pivot_tol : float in (0, 1), default=1e-6
        FVS stops when no remaining point has relative residual above this
        (K_SS would stop being numerically invertible).
    n_candidates : int, optional
        Random candidates scored per selection step: "fvs" scores all points
        by default (exact greedy; set this for large data), "greedy" draws
        60 by default (Pahikkala et al. 2012, Algorithm 1).
    rcond : float in (0, 1), default=1e-10
        Below this reciprocal condition number of ``K_BB`` the model is fitted
        on the numerical range of ``K_BB`` (with a ``NumericalWarning``).
    block_size : int, default=2048
        Rows per kernel block.
    normalize_kernel : bool, default=False
        Use ``k(x, z) / sqrt(k(x, x) k(z, z))`` (Pahikkala et al. 2012, §6.4).
    n_jobs : int or None, default=None
        Threads for fit, prediction and cross-validation (scikit-learn's
        meaning: -1 all usable cores, k > 0 exactly k).  None: the cores
        that are free now (affinity, cgroup quota, load of other processes;
        one per worker inside Dask or joblib), see ``docs/notes.md``.

    Attributes
    ----------
    basis_vectors_ : ndarray of shape (n_basis_, n_features)
    basis_indices_ : ndarray of shape (n_basis_,) or None
        Training rows used as basis (None for an explicit basis array).
    n_basis_ : int
    dual_coef_ : ndarray of shape (n_basis_,) or (n_basis_, n_outputs)
    intercept_ : float or ndarray of shape (n_outputs,)
    reconstruction_error_curve_ : ndarray of shape (n_basis_ + 1,) or None
        FVS mean relative reconstruction error after 0, 1, ... basis points
        (Cawley & Talbot 2004, Fig. 3); None for other bases.
    basis_stop_reason_ : str or None
        Why FVS or greedy selection stopped ("n_basis", "tol" or "singular").
    greedy_training_error_ : ndarray of shape (n_basis_ + 1,) or None
        For ``basis="greedy"``: training error after each added point.
    basis_curve_ : dict or None
        With ``n_basis="auto"``: ``n_basis`` (sizes 1..N grown), ``cv_error``
        (LOO mean squared error per size), ``cv_error_se`` (its standard
        error), ``alpha``, ``n_chosen`` and ``stop_reason`` ("plateau",
        "max_size" or "singular"); None otherwise.
    basis_pivots_ : ndarray of shape (N,) or None
        With ``n_basis="auto"``: every pivot grown, in order; the first
        ``n_basis_`` are ``basis_indices_``, and any prefix can be refitted.
    rank_ : int
        Numerical rank used for ``K_BB`` (``n_basis_`` unless singular).
    factorization_ : lssvm.solvers.SparseRLSFactorization
        Training factorisation reused by :meth:`loo_residuals` (O(m n) memory);
        for Dask input a :class:`lssvm.solvers.PathSolution` (no per-row
        arrays: the CV methods make passes over the data).
    n_features_in_ : int

    Notes
    -----
    ``fit`` costs O(m n d) for the kernel, m n^2 for the centred Gram matrix
    and O(n^3) for one generalised eigendecomposition, plus the basis
    selection (FVS: O(m^2 n)).  Afterwards the LOO residuals for any alpha
    cost O(m n) each.

    Sparse input (scipy CSR) is accepted with the dot-product kernels
    ("linear", "poly"), as for high-dimensional sparse features such as bags of words.

""" + PARAMETER_NAMES_NOTE + """
    References
    ----------
    G. C. Cawley and N. L. C. Talbot, Fast exact leave-one-out
    cross-validation of sparse least-squares support vector machines, Neural
    Networks 17 (2004).  T. Pahikkala, H. Suominen and J. Boberg, Efficient
    cross-validation for kernelized least-squares regression with sparse
    basis expansions, Machine Learning 87 (2012).

    Examples
    --------
    >>> from lssvm import SparseLSSVR
    >>> from lssvm.datasets import load_motorcycle
    >>> X, y = load_motorcycle(return_X_y=True)
    >>> X = (X - X.mean()) / X.std()
    >>> model = SparseLSSVR(gamma=13.1, alpha=1 / (2 * 1.2055e-3)).fit(X, y)
    >>> model.loo_residuals().shape
    (133,)
    """

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Select the basis, fit, and factorise for fast cross-validation.

        Parameters
        ----------
        X : array-like of shape (m, d), or a Dask array / DataFrame
        y : array-like of shape (m,) or (m, v), or a Dask array / Series
        sample_weight : array-like of shape (m,) or float, optional
            Row weights ``w_i >= 0``: the model minimises
            ``sum_i w_i ||y_i - f(x_i)||^2 + alpha a^T K_BB a``.  A zero
            weight is a removed row and an integer weight a repeated row
            (the basis is chosen among the positive-weight rows).  The CV
            methods then give the outputs of the weighted model refitted
            without the held-out rows, and their error sums are weighted
            (``press`` is ``sum_i w_i r_i^2``, ``cv_error`` the weighted
            mean).  Intervals, the evidence and Dask input are not
            available for weighted fits (a clear error says so).

        Notes
        -----
        Dask input (:mod:`lssvm.backends.dask`, ``docs/scaling.md``) is
        trained in one pass over row blocks, with ``basis="random"``, row
        indices or points; the CV methods then make their own passes and
        return lazy Dask arrays for per-row results, NumPy values for
        reductions.

        Returns
        -------
        self
        """
        if sample_weight is not None and (is_dask_collection(X) or is_dask_collection(y)):
            check_sample_weight(self, sample_weight, X, y)
        if is_dask_collection(X) or is_dask_collection(y):
            _, self._single_output = self._fit_dask(X, y, classification=False)
            if np.ndim(self.alpha) != 0:
                raise ValueError("a model fitted on Dask collections takes one alpha for all targets; "
                                 "fit on a NumPy sample for one alpha per target")
            self._alpha_groups = None
            self._set_coef(*self.factorization_.coef(self.alpha))
            return self
        X, y = validate_input(
            self, X, y, multi_output=True, y_numeric=True, dtype=np.float64, ensure_min_samples=2,
            accept_sparse="csr",
        )
        y = check_numeric_targets(y)
        warn_constant_targets(y)
        self._single_output = y.ndim == 1
        weights = check_sample_weight(self, sample_weight, X, y)
        return self._fit_targets(X, y.reshape(y.shape[0], -1), weights)

    def _set_coef(self, a, b):
        super()._set_coef(a, b)
        self.dual_coef_ = a[:, 0] if self._single_output else a
        self.intercept_ = float(b[0]) if self._single_output else b


