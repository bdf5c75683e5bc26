"""The exact cross-validation methods of every family, written once against
the engine protocol (:class:`lssvm.cv.SparseEngine`).

Sparse, Nyström and fixed-size models are one model, ridge with an
unpenalised intercept on the features of a basis (the documentation's
Mathematics page, §6).  Each fitted estimator returns the engine of that
model at its fitted basis from ``_fitted_engine()``: the sparse model on its
basis; the Nyström model on its sampled columns with the rank-k map as the
whitening; the fixed-size model on the prototypes that carry a weight.  The
mixins here turn the engine's (A, m, v) arrays and error sums into the
public methods, so that every family answers with the same code:

* :class:`RegressorCVMixin`: ``loo_residuals``, ``loo_predict``, ``press``,
  ``holdout_predict``, ``cv_predict``, ``cv_error``;
* :class:`ClassifierCVMixin`: ``loo_residuals``, ``loo_decision_function``,
  ``loo_error_rate``, ``holdout_decision_function``, ``holdout_predict``,
  ``cv_decision_function``, ``cv_predict``, ``cv_error``, ``press``.

An estimator using them provides ``_fitted_engine()``, ``alpha``,
``_single_output`` and (classifiers) ``_decode``.  ``_fitted_engine()``
raises a clear error where no engine is exact for the fitted model.
"""

from __future__ import annotations

from sklearn.base import is_classifier

from .._threads import uses_threads
from ..solvers import check_alphas
from ._base import per_target_alpha, squeeze_outputs
from ._scoring import CLASSIFICATION_SCORINGS, REGRESSION_SCORINGS, check_scoring_name

__all__ = ["ClassifierCVMixin", "EngineMethodsMixin", "RegressorCVMixin"]


class EngineMethodsMixin:
    """The engine's results as (A, m, v) arrays with the alpha rule of every
    method (``alpha=None``: the fitted one; a scalar drops the alpha axis)."""

    @uses_threads
    def _loo_residuals_3d(self, alpha):
        """LOO residuals as (A, m, v) and whether alpha was a scalar."""
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        return self._fitted_engine().loo_residuals(alphas), scalar

    def _loo_sums(self, alpha):
        """Sums of squared LOO residuals (A, v), misclassified rows (A,), the
        number of rows, and whether alpha was a scalar.  The residuals are
        reduced per row block (on Dask data, in the pass), never held for
        all rows; an overflowing sum gives a NumericalWarning."""
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        sums = self._fitted_engine().loo_sums(alphas)
        return sums.sse, sums.wrong, sums.count, scalar

    def _targets_2d(self):
        """Training targets (coded for classifiers), (m, v): NumPy, or Dask for Dask fits."""
        return self._fitted_engine().targets()

    # ---------------------------------------------------- hold-out and CV
    def _holdout_engine(self):
        """The exact hold-out engine of an in-memory fit (:class:`lssvm.cv.HoldoutEngine`)."""
        return self._fitted_engine().in_memory("the hold-out engine").holdout_engine()

    def _holdout_mode(self, basis_in_holdout):
        """``basis_in_holdout`` with None as the family's default, ``_default_basis_in_holdout``: "remove"
        where deleting a basis point's column is the model without it (sparse, fixed size), "keep" where
        the basis carries a map fitted on all its points (Nyström's rank k: removing a column re-truncates
        the map, a refit per fold at 10-18x the cost of the closed form; Ding & Liao 2012 and the Nyström searches
        score with the map kept, so the default describes the searched model)."""
        return getattr(self, "_default_basis_in_holdout", "remove") if basis_in_holdout is None else basis_in_holdout

    @uses_threads
    def _holdout_3d(self, test_indices, alpha, basis_in_holdout):
        basis_in_holdout = self._holdout_mode(basis_in_holdout)
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        return self._fitted_engine().holdout_outputs(test_indices, alphas, basis_in_holdout), scalar

    @uses_threads
    def _cv_3d(self, cv, alpha, groups, basis_in_holdout, reduce=False):
        """Out-of-fold outputs (A, m, v), or with ``reduce`` their
        :class:`lssvm.cv.ErrorSums`; and whether alpha was a scalar."""
        basis_in_holdout = self._holdout_mode(basis_in_holdout)
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        engine = self._fitted_engine()
        if isinstance(cv, str) and cv == "loo" and basis_in_holdout == "keep":  # folds of one row, basis kept:
            if reduce:  # the closed-form LOO, on every engine (Dask's included)
                return engine.loo_sums(alphas), scalar
            return engine.targets()[None] - engine.loo_residuals(alphas), scalar
        if isinstance(cv, str) and cv == "loo" and not engine.rows_in_memory:
            raise ValueError(
                f"cv='loo' with basis_in_holdout={basis_in_holdout!r} takes each basis point's row out of the "
                "basis, one refit per such row, which a model fitted on Dask collections does not run; give "
                "basis_in_holdout='keep' (the closed-form leave-one-out, one pass) or a k-fold cv")
        folds = engine.resolve_cv(cv, groups, classifier=is_classifier(self))
        if reduce:  # reduced per fold (Dask: in the pass): never all A x m x v outputs at once
            return engine.cv_sums(folds, alphas, basis_in_holdout), scalar
        return engine.cv_outputs(folds, alphas, basis_in_holdout), scalar


class RegressorCVMixin(EngineMethodsMixin):
    """The exact CV methods of a regressor (module notes)."""

    @per_target_alpha
    def loo_residuals(self, alpha=None):
        """Exact leave-one-out residuals ``y_i - f_{-i}(x_i)``, without retraining.

        Parameters
        ----------
        alpha : float or array-like of shape (A,), optional
            Regularisation value(s); default the fitted ``alpha``.

        Returns
        -------
        ndarray of shape (m,), (m, v), (A, m) or (A, m, v)

        Notes
        -----
        O(m n) per alpha from the training factorisation (the
        documentation's Mathematics page, §2).  The basis is held fixed: a left-out basis point stays a basis function.
        """
        R, scalar = self._loo_residuals_3d(alpha)
        return squeeze_outputs(R, scalar, self._single_output)

    @per_target_alpha
    def loo_predict(self, alpha=None):
        """Leave-one-out predictions ``f_{-i}(x_i)``, shaped like :meth:`loo_residuals`."""
        R, scalar = self._loo_residuals_3d(alpha)
        P = self._targets_2d()[None] - R
        return squeeze_outputs(P, scalar, self._single_output)

    @per_target_alpha
    def press(self, alpha=None):
        """Predicted residual sum of squares, sum_i (LOO residual_i)^2.

        Returns
        -------
        float, ndarray of shape (v,), (A,) or (A, v)
        """
        sse, _, _, scalar = self._loo_sums(alpha)
        return squeeze_outputs(sse, scalar, self._single_output)

    @per_target_alpha
    def holdout_predict(self, test_indices, alpha=None, basis_in_holdout=None):
        """Predictions for training rows ``test_indices`` from the model trained
        on all other rows, without retraining (Pahikkala et al. 2012, §5).

        Parameters
        ----------
        test_indices : array-like of int or boolean mask
            Training rows to hold out.
        alpha : float or array-like of shape (A,), optional
            Default the fitted ``alpha``.
        basis_in_holdout : {"remove", "keep", "train"} or None, default=None
            Treatment of held-out rows that are basis points; None: the
            family's default, "remove" (Nyström: "keep", the map fitted on
            all sampled columns kept, as its searches score).  "remove" takes
            them out of the basis, as if the model had never seen them;
            a training row holds a basis point when it is the point's row
            index or equals the point value for value (so a basis given as
            points equal to rows works too), and a point held by several
            (duplicate) rows is removed only when all of them are held out;
            "keep" leaves them as basis functions and drops only their loss
            terms (Pahikkala et al. 2012, Cor. 2); "train" keeps those rows in training.
            Nyström with "remove": the fold is refitted on the kept
            columns with the rank rule and map of the fit (removing a
            column re-truncates the map, so no closed form applies),
            O(m c k + c^3) per fold that removes a column.

        Returns
        -------
        ndarray of shape (h,), (h, v), (A, h) or (A, h, v)

        Notes
        -----
        O(h^2 n + h^3 + h |E| n + |E|^3) per alpha, |E| the removed basis
        points, after the training factorisation.
        """
        F, scalar = self._holdout_3d(test_indices, alpha, basis_in_holdout)
        return squeeze_outputs(F, scalar, self._single_output)

    @per_target_alpha
    def cv_predict(self, cv=10, alpha=None, groups=None, basis_in_holdout=None):
        """Exact out-of-fold predictions for every training row, without retraining.

        Parameters
        ----------
        cv : int, scikit-learn splitter or iterable of (train, test), default=10
            An int k means ``KFold(k)``; any splitter (``KFold``,
            ``GroupKFold``, ``LeaveOneGroupOut``, ``LeaveOneOut``, ...) or
            explicit folds whose test sets partition the rows.
        alpha : float or array-like of shape (A,), optional
        groups : array-like of shape (m,), optional
            Group labels for group splitters.
        basis_in_holdout : {"remove", "keep", "train"} or None, default=None
            See :meth:`holdout_predict`.

        Returns
        -------
        ndarray of shape (m,), (m, v), (A, m) or (A, m, v)

        Notes
        -----
        One hold-out per fold: for k folds of m/k rows about
        O(m^2 n / k + m^3 / k^2) per alpha, at most about one training for
        a 20-alpha path at k = 10 (Pahikkala et al. 2012, §5).
        """
        F, scalar = self._cv_3d(cv, alpha, groups, basis_in_holdout)
        return squeeze_outputs(F, scalar, self._single_output)

    @per_target_alpha
    def cv_error(self, cv=10, alpha=None, scoring=None, *, groups=None, basis_in_holdout=None):
        """Cross-validated error per alpha and output.

        Parameters
        ----------
        cv, alpha
            As for :meth:`cv_predict`.
        scoring : {"mse", "press"}, optional
            Mean squared error (the default, None) or the sum of squared
            out-of-fold residuals, per output.
        groups, basis_in_holdout
            As for :meth:`cv_predict`.

        Returns
        -------
        float, ndarray of shape (v,), (A,) or (A, v)
        """
        scoring = check_scoring_name(self, scoring, REGRESSION_SCORINGS)
        sums, scalar = self._cv_3d(cv, alpha, groups, basis_in_holdout, reduce=True)
        agg = sums.sse if scoring == "press" else sums.sse / sums.count
        return squeeze_outputs(agg, scalar, self._single_output)


class ClassifierCVMixin(EngineMethodsMixin):
    """The exact CV methods of a classifier on its +1/-1 coded outputs (module notes)."""

    def loo_residuals(self, alpha=None):
        """Exact LOO residuals of the coded targets (+1/-1), without retraining.

        Returns
        -------
        ndarray of shape (m,), (m, n_classes), (A, m) or (A, m, n_classes)
        """
        R, scalar = self._loo_residuals_3d(alpha)
        return squeeze_outputs(R, scalar, self._single_output)

    def _loo_decision_3d(self, alpha):
        R, scalar = self._loo_residuals_3d(alpha)
        return self._targets_2d()[None] - R, scalar

    def loo_decision_function(self, alpha=None):
        """Leave-one-out outputs ``f_{-i}(x_i)``, shaped like :meth:`loo_residuals`."""
        F, scalar = self._loo_decision_3d(alpha)
        return squeeze_outputs(F, scalar, self._single_output)

    def loo_error_rate(self, alpha=None):
        """Leave-one-out misclassification rate from the LOO outputs.

        Returns
        -------
        float or ndarray of shape (A,)
        """
        _, wrong, count, scalar = self._loo_sums(alpha)
        rate = wrong / count
        return float(rate[0]) if scalar else rate

    def holdout_decision_function(self, test_indices, alpha=None, basis_in_holdout=None):
        """Outputs for rows ``test_indices`` of the model trained without them.

        Parameters and costs as :meth:`lssvm.SparseLSSVR.holdout_predict`.

        Returns
        -------
        ndarray of shape (h,), (h, n_classes), (A, h) or (A, h, n_classes)
        """
        F, scalar = self._holdout_3d(test_indices, alpha, basis_in_holdout)
        return squeeze_outputs(F, scalar, self._single_output)

    def holdout_predict(self, test_indices, alpha=None, basis_in_holdout=None):
        """Labels for rows ``test_indices`` from the model trained without them,
        shape (h,) or (A, h)."""
        F, scalar = self._holdout_3d(test_indices, alpha, basis_in_holdout)
        labels = self._decode(F)
        return labels[0] if scalar else labels

    def cv_decision_function(self, cv=10, alpha=None, groups=None, basis_in_holdout=None):
        """Out-of-fold outputs for every training row; parameters as
        :meth:`lssvm.SparseLSSVR.cv_predict` (stratifying splitters see the labels).

        Returns
        -------
        ndarray of shape (m,), (m, n_classes), (A, m) or (A, m, n_classes)
        """
        F, scalar = self._cv_3d(cv, alpha, groups, basis_in_holdout)
        return squeeze_outputs(F, scalar, self._single_output)

    def cv_predict(self, cv=10, alpha=None, groups=None, basis_in_holdout=None):
        """Out-of-fold labels for every training row, shape (m,) or (A, m)."""
        F, scalar = self._cv_3d(cv, alpha, groups, basis_in_holdout)
        labels = self._decode(F)
        return labels[0] if scalar else labels

    def cv_error(self, cv=10, alpha=None, scoring=None, *, groups=None, basis_in_holdout=None):
        """Cross-validated error per alpha.

        Parameters
        ----------
        cv, alpha, groups, basis_in_holdout
            As for :meth:`cv_predict`.
        scoring : {"error_rate", "mse", "press"}, optional
            Misclassification rate (the default, None); or mean squared error
            / PRESS of the coded outputs, per output.

        Returns
        -------
        float or ndarray of shape (A,) for "error_rate"; like :meth:`press` otherwise.
        """
        scoring = check_scoring_name(self, scoring, CLASSIFICATION_SCORINGS)
        sums, scalar = self._cv_3d(cv, alpha, groups, basis_in_holdout, reduce=True)
        sse, wrong, count = sums.sse, sums.wrong, sums.count
        if scoring == "error_rate":
            rate = wrong / count
            return float(rate[0]) if scalar else rate
        agg = sse if scoring == "press" else sse / count
        return squeeze_outputs(agg, scalar, self._single_output)

    def press(self, alpha=None):
        """PRESS of the coded targets: float, (n_classes,), (A,) or (A, n_classes)."""
        sse, _, _, scalar = self._loo_sums(alpha)
        return squeeze_outputs(sse, scalar, self._single_output)
