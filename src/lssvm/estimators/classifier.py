"""Sparse LS-SVM classification (binary and one-vs-rest multi-class) with
exact fast leave-one-out."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions

from ..backends import is_dask_collection
from ._base import BaseSparseLSSVM, check_sample_weight
from ._calibration import CALIBRATIONS, ProbaMixin, signature_with
from ._exact_cv import ClassifierCVMixin
from ._labels import CodedClassifierMixin, encode_classes
from ._validation import validate_input

__all__ = ["SparseLSSVC"]


class SparseLSSVC(ProbaMixin, ClassifierCVMixin, CodedClassifierMixin, ClassifierMixin, BaseSparseLSSVM):
    """Sparse least-squares support vector classifier with exact fast LOO.

    An LS-SVM classifier regresses on coded labels: +1 / -1 for two classes
    (``classes_[1]`` is +1), and one-vs-rest +1 / -1 columns for more, solved
    together as one multi-output problem (one factorisation for all classes).
    The predicted class is the sign (binary) or the largest output.

    Parameters
    ----------
    kernel, gamma, alpha, basis, n_basis, random_state, degree, coef0,
    basis_tol, pivot_tol, n_candidates, rcond, block_size, normalize_kernel,
    n_jobs
        As for :class:`lssvm.SparseLSSVR`.
    calibration : {"sigmoid", "isotonic", None}, default="sigmoid"
        Map from decision value to probability for :meth:`predict_proba`:
        Platt's sigmoid (the default) or isotonic regression, fitted on the
        exact out-of-sample decision values below (no refit; a few per cent
        of the fit).  With a map, :meth:`predict` is the class of largest
        calibrated probability.  None: no ``predict_proba`` and
        ``predict_set`` (as ``SVC(probability=False)``), and :meth:`predict`
        is the sign (argmax) of the decision values.
    calibration_cv : None, int or scikit-learn splitter, default=None
        Where those decision values come from: None the exact leave-one-out
        ones, else the exact out-of-fold ones of
        :meth:`cv_decision_function` (no refit either way).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    basis_vectors_, basis_indices_, n_basis_, reconstruction_error_curve_,
    basis_stop_reason_, basis_curve_, basis_pivots_, rank_, factorization_, n_features_in_
        As for :class:`lssvm.SparseLSSVR` (``basis_curve_``: the LOO mean
        squared error of the coded +1/-1 outputs).
    dual_coef_ : ndarray of shape (n_basis_,) or (n_basis_, n_classes)
    intercept_ : float or ndarray of shape (n_classes,)
    calibrators_ : list or None
        One calibration map per one-vs-rest output (one for two classes);
        None with ``calibration=None``.

    Examples
    --------
    >>> from lssvm import SparseLSSVC
    >>> from lssvm.datasets import load_ripley
    >>> X, y = load_ripley(return_X_y=True)
    >>> clf = SparseLSSVC(gamma=2.0, alpha=0.1).fit(X, y)
    >>> float(clf.loo_error_rate()) < 0.2
    True
    """

    _parameter_constraints = {
        **BaseSparseLSSVM._parameter_constraints,
        "calibration": [StrOptions(set(CALIBRATIONS)), None],
        "calibration_cv": ["cv_object"],
    }

    def __init__(self, *args, calibration="sigmoid", calibration_cv=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.calibration = calibration
        self.calibration_cv = calibration_cv

    __init__.__signature__ = signature_with(BaseSparseLSSVM.__init__, calibration="sigmoid", calibration_cv=None)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit on labels of any type.

        Parameters
        ----------
        X : array-like of shape (m, d), or a Dask array / DataFrame
        y : array-like of shape (m,), or a Dask array / Series
            Dask input is trained block by block, as for
            :meth:`lssvm.SparseLSSVR.fit`.
        sample_weight : array-like of shape (m,) or float, optional
            Row weights of the coded targets' squared errors, as for
            :meth:`lssvm.SparseLSSVR.fit`; error rates from the CV methods
            are then weighted, and so is the calibration (Platt's fit and
            the isotonic fit weigh each held-out value by its row's weight).
            ``predict_set`` is not available for weighted fits.

        Returns
        -------
        self
        """
        if sample_weight is not None and (is_dask_collection(X) or is_dask_collection(y)):
            check_sample_weight(self, sample_weight, X, y)
        if is_dask_collection(X) or is_dask_collection(y):
            self._fit_weights = None
            self.classes_, _ = self._fit_dask(X, y, classification=True)
            self._codes = None
            self._set_coef(*self.factorization_.coef(self.alpha))
            self._fit_calibration()
            return self
        X, y = validate_input(self, X, y, dtype=np.float64, ensure_min_samples=2, accept_sparse="csr")
        self.classes_, codes, Y = encode_classes(y, "SparseLSSVC")
        self._codes = codes
        weights = check_sample_weight(self, sample_weight, X, y)
        self._fit_weights = weights  # the calibration maps weigh the held-out values by them
        self._fit_targets(X, Y, weights)
        self._fit_calibration()
        return self

    def _set_coef(self, a, b):
        super()._set_coef(a, b)
        self.dual_coef_ = a[:, 0] if self._single_output else a
        self.intercept_ = float(b[0]) if self._single_output else b
