"""A fitted model with what it needs to predict from raw inputs: the input
scaling, the column names and the tabular encoding (:mod:`lssvm.io.tabular`)
it was trained with.  :func:`lssvm.io.save_model` writes it,
:func:`lssvm.io.load_model` reads it back.

Every prediction method takes a table (a pandas DataFrame with the training
columns: text, missing values and unseen levels go through the stored
encoding, as in ``lssvm predict``) or, for numeric models, an unscaled
array, through one path (:meth:`SavedModel.model_inputs`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..estimators.input_transform import InputTransform
from ..estimators.target_transform import TargetTransform, TargetTransformRegressor
from ..exceptions import InputWarning
from .tables import input_matrix
from .tabular import TabularEncoding

__all__ = ["SavedModel"]


@dataclass
class SavedModel:
    """A fitted estimator with the input scaling and column names it was
    trained with.

    Attributes
    ----------
    estimator : SparseLSSVR or SparseLSSVC
    x_center, x_scale : ndarray of shape (d,)
        Inputs are transformed as ``(X - x_center) / x_scale`` before the
        estimator sees them.
    feature_names : list of str
    target_name : str or None
    metadata : dict
        Anything else (training summary), JSON-serialisable.
    fitted_as : str or None
        Class of the estimator that was fitted (set when loaded).
    fitted_params : dict or None
        Its parameters, as JSON values (set when loaded).
    preprocessing : lssvm.io.tabular.TabularEncoding or None
        A tabular encoding (one-hot levels, imputation, scaling) applied to
        a table before the estimator; ``feature_names`` are then its output
        columns and the scaling above is the identity.
    basis_curve : dict or None
        The CV error per basis size of a model whose basis was grown by
        exact CV (``n_basis="auto"``): the fitted estimator's
        ``basis_curve_`` as stored (:mod:`lssvm.io.basis_curve`), else None.
    target_transform : lssvm.estimators.target_transform.TargetTransform or None
        A regressor fitted on a transformed target (log or Box-Cox,
        ``lssvm select --target-transform``): ``estimator`` predicts on that
        scale, and :meth:`predictor` (every prediction method here, and
        ``lssvm predict``) maps back to the original one.  None: identity.
    input_transform : lssvm.estimators.input_transform.InputTransform or None
        A per-column transform of the scaled or encoded inputs (quantile or
        Yeo-Johnson, ``lssvm select --input-transform``), fitted on the
        training rows and applied after them by :meth:`encode` and
        :meth:`transform`.  None: the inputs as encoded.
    """

    estimator: object
    x_center: np.ndarray
    x_scale: np.ndarray
    feature_names: list
    target_name: str | None = None
    metadata: dict = field(default_factory=dict)
    fitted_as: str | None = None
    fitted_params: dict | None = None
    preprocessing: TabularEncoding | None = None
    basis_curve: dict | None = None
    target_transform: TargetTransform | None = None
    input_transform: InputTransform | None = None

    def predictor(self):
        """What predicts on the original target scale: the estimator, or, with a target transform, the
        estimator wrapped to map its predictions and interval bounds back (the transforms are increasing)."""
        if self.target_transform is None or self.target_transform.name == "identity":
            return self.estimator
        return TargetTransformRegressor.from_fitted(self.estimator, self.target_transform)

    def encode(self, frame):
        """Estimator inputs from a table (m rows): the tabular encoding, or
        the named numeric columns scaled; shape (m, d).

        What the encoding changed (missing values filled in, unseen
        levels) is left in :meth:`input_changes`; ``lssvm predict`` prints
        it, the prediction methods below warn it.
        """
        if self.preprocessing is not None:
            return self._transform_inputs(self.preprocessing.transform(frame))
        return self.transform(input_matrix(frame, self.feature_names))

    def input_changes(self):
        """Sentences on what the last :meth:`encode` changed in its table
        (columns and row counts); empty for a model without a tabular
        encoding, or when nothing was changed."""
        return [] if self.preprocessing is None else self.preprocessing.input_changes()

    def _transform_inputs(self, Z):
        return Z if self.input_transform is None else self.input_transform.transform(Z)

    def transform(self, X):
        """Apply the stored input scaling (and input transform), shape (m, d) -> (m, d)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.x_center.size:
            raise ValueError(
                f"the model expects {self.x_center.size} input column(s) "
                f"({', '.join(self.feature_names)}); got an array of shape {X.shape}"
            )
        return self._transform_inputs((X - self.x_center) / self.x_scale)

    def model_inputs(self, X):
        """The estimator's inputs (m, d) for raw inputs ``X``, the one path of
        the prediction methods and of ``lssvm predict``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (m, d)
            A table with the training columns (by name; other columns are
            ignored; text, missing values and unseen levels as the stored
            encoding takes them), or, for a model of numeric inputs without
            a tabular encoding, an array (or a frame of unnamed columns)
            of the ``feature_names`` columns in that order, unscaled.

        Warns
        -----
        lssvm.exceptions.InputWarning
            When missing values were filled in or levels unseen in training
            met, naming the columns and row counts.

        Raises
        ------
        ValueError
            A missing column, text in a numeric column, an array given to a
            model that encodes a table, or an array of the wrong width.
        """
        # a frame of unnamed columns (0, 1, ...) is an array; named columns are taken by name
        by_name = isinstance(X, pd.DataFrame) and (
            self.preprocessing is not None or any(isinstance(c, str) for c in X.columns))
        if by_name:
            Z = self.encode(X)
            for change in self.input_changes():
                warnings.warn(change, InputWarning, stacklevel=3)
            return Z
        if self.preprocessing is not None:
            raise ValueError(
                "this model encodes a table (one-hot levels, imputation, scaling): pass a pandas DataFrame with "
                f"the input columns {', '.join(self.preprocessing.input_columns)}; got {type(X).__name__}")
        return self.transform(X)

    def predict(self, X):
        """Predictions (m,) or (m, v) for raw inputs: a table with the
        training columns, or an unscaled array (:meth:`model_inputs`)."""
        return self.predictor().predict(self.model_inputs(X))

    def decision_function(self, X):
        """Decision values of a classifier for raw inputs (:meth:`model_inputs`)."""
        return self._method("decision_function", "it is a regressor: use predict")(self.model_inputs(X))

    def predict_proba(self, X):
        """Calibrated class probabilities (m, n_classes) for raw inputs
        (:meth:`model_inputs`); the model must have been fitted with a
        ``calibration`` (``lssvm select --calibration``, ``lssvm fit``)."""
        return self._method("predict_proba", "it was saved without a calibration (lssvm select --calibration "
                            "sigmoid, or lssvm fit)")(self.model_inputs(X))

    def predict_interval(self, X, coverage=0.9, **kwargs):
        """Jackknife+ prediction intervals (m, 2) or (m, 2, v) of a regressor
        for raw inputs (:meth:`model_inputs`), from the leave-one-out data
        stored in the file; ``kwargs`` as the estimator's ``predict_interval``."""
        return self._method("predict_interval", "it is a classifier: use predict_proba")(
            self.model_inputs(X), coverage=coverage, **kwargs)

    def predict_std(self, X, **kwargs):
        """Predictive standard deviations for raw inputs (:meth:`model_inputs`),
        where the estimator has them."""
        return self._method("predict_std", "its estimator has no predictive variance")(
            self.model_inputs(X), **kwargs)

    def _method(self, name, why):
        est = self.predictor()
        classifier = hasattr(est, "classes_")
        wrong_task = (name == "predict_interval" and classifier) or (
            name in ("decision_function", "predict_proba") and not classifier)
        if wrong_task or not hasattr(est, name):
            raise AttributeError(f"this {type(est).__name__} model has no {name}: {why}")
        return getattr(est, name)
