"""A transform of the regression target (log, Box-Cox) chosen by exact CV on the original scale.

Skewed positive targets (prices, counts, durations) are often fitted
better on a log or Box-Cox scale, but the test error a user cares about is
on the original scale.  :func:`choose_target_transform` refits the model
(same kernel, same basis rows) on each transformed target, takes its exact
LOO or k-fold predictions along the alpha path (O(m n) per alpha after one
O(m n^2) factorisation per transform), maps them back with the inverse
transform and scores the mean squared error **on the original scale**: the
transform of lowest error wins, identity included, so a transform is only
used where the exact CV says it predicts the original target better.
:class:`TargetTransformRegressor` wraps a sparse LS-SVM regressor or its
search with that choice (``target_transform="auto"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

__all__ = ["TARGET_TRANSFORMS", "TargetTransform", "TargetTransformChoice", "TargetTransformRegressor",
           "choose_target_transform", "fit_target_transform", "transform_fitted_target"]

#: The transforms that can be asked for by name.
TARGET_TRANSFORMS = ("identity", "log", "boxcox")


@dataclass(frozen=True)
class TargetTransform:
    """A monotone map of the target and its inverse.

    Attributes
    ----------
    name : {"identity", "log", "boxcox"}
    lmbda : float or None
        Box-Cox's exponent (``(y^lmbda - 1) / lmbda``, log at 0).
    low, high : float
        Range the inverse clips transformed predictions to: the image of the
        training targets' range widened by its width on each side (above half
        the smallest target), so inside the inverse's domain (Box-Cox with
        ``lmbda != 0`` maps only one side of ``-1/lmbda`` back to positive
        values).  Without it a prediction far outside the training range
        would overflow ``exp``, leave the domain, or, near the domain's edge,
        map back to a huge value.
    """

    name: str
    lmbda: float | None = None
    low: float = -np.inf
    high: float = np.inf

    def to_dict(self):
        """The transform as JSON values (a model file's ``target_transform`` object)."""
        return {"name": self.name, "lmbda": self.lmbda, "low": self.low, "high": self.high}

    @classmethod
    def from_dict(cls, d):
        """The transform of :meth:`to_dict`'s output; ``ValueError`` if it is not one."""
        if not isinstance(d, dict) or set(d) != {"name", "lmbda", "low", "high"}:
            raise ValueError("a target transform is an object with the keys name, lmbda, low and high")
        name, lmbda, low, high = d["name"], d["lmbda"], d["low"], d["high"]
        if name not in TARGET_TRANSFORMS or name == "identity":
            raise ValueError(f"target transform name must be 'log' or 'boxcox'; got {name!r}")
        numbers = [v for v in (low, high, lmbda) if v is not None]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) for v in numbers):
            raise ValueError("the target transform's lmbda, low and high must be finite numbers")
        if (name == "boxcox") != (lmbda is not None) or low is None or high is None or not low < high:
            raise ValueError("a target transform needs low < high, and lmbda exactly for 'boxcox'")
        return cls(name, None if lmbda is None else float(lmbda), float(low), float(high))

    def forward(self, y):
        """Transformed targets, shape of ``y``."""
        y = np.asarray(y, dtype=float)
        if self.name == "identity":
            return y
        if self.name == "log":
            return np.log(y)
        return special.boxcox(y, self.lmbda)

    def inverse(self, z):
        """Targets on the original scale, shape of ``z`` (clipped to ``[low, high]`` first)."""
        z = np.asarray(z, dtype=float)
        if self.name == "identity":
            return z
        z = np.clip(z, self.low, self.high)
        if self.name == "log":
            return np.exp(z)
        return special.inv_boxcox(z, self.lmbda)


def fit_target_transform(name, y):
    """The transform ``name`` fitted on training targets ``y`` (Box-Cox's exponent by maximum likelihood,
    :func:`scipy.stats.boxcox`).

    Raises
    ------
    ValueError
        For an unknown name, or log / Box-Cox with a target that is not positive everywhere.
    """
    if name not in TARGET_TRANSFORMS:
        raise ValueError(f"target_transform must be 'auto' or one of {list(TARGET_TRANSFORMS)}; got {name!r}")
    y = np.asarray(y, dtype=float)
    if name == "identity":
        return TargetTransform("identity")
    if y.ndim != 1:
        raise ValueError(f"target_transform={name!r} needs a one-dimensional target; got shape {y.shape}")
    if not np.all(y > 0):
        raise ValueError(f"target_transform={name!r} needs a positive target; the smallest value is {y.min():.6g}")
    lmbda = None
    if name == "boxcox":
        if np.ptp(y) == 0:
            raise ValueError("target_transform='boxcox' needs a target that is not constant")
        lmbda = float(stats.boxcox(y)[1])
    # The clip range, set on the original scale (the training range widened by its width, above half the
    # smallest target) and mapped by the monotone transform: a range widened on the transformed scale
    # reached Box-Cox's domain edge on elevators (lmbda = -2.1), where the inverse returns huge values.
    span = float(np.ptp(y))
    low, high = TargetTransform(name, lmbda).forward(np.array([max(y.min() - span, y.min() / 2), y.max() + span]))
    return TargetTransform(name, lmbda, float(low), float(high))


@dataclass
class TargetTransformChoice:
    """Outcome of :func:`choose_target_transform`.

    Attributes
    ----------
    transform : TargetTransform
        Identity, unless the transform of lowest CV error on the original scale
        is lower than identity's by more than one standard error of the paired
        per-row differences (without identity among the candidates: the lowest).
    scores : dict
        Name -> CV mean squared error on the original scale, at its best alpha.
    alphas : dict
        Name -> the alpha of that error.
    cv : str
        "LOO" or "K-fold".
    """

    transform: TargetTransform
    scores: dict = field(default_factory=dict)
    alphas: dict = field(default_factory=dict)
    cv: str = "LOO"


def _candidates(target_transform, y):
    if target_transform == "auto":
        y = np.asarray(y)
        positive = y.ndim == 1 and np.all(y > 0) and np.ptp(y) > 0
        return TARGET_TRANSFORMS if positive else ("identity",)
    if isinstance(target_transform, str):
        return (target_transform,)
    names = tuple(target_transform)
    if not names:
        raise ValueError("target_transform: give at least one transform")
    return names


def choose_target_transform(model, X, y, target_transform="auto", *, alphas=None, folds=None):
    """Score target transforms by the exact CV error on the original scale, and pick the lowest.

    Parameters
    ----------
    model : fitted SparseLSSVR (or any fitted regressor of the package with ``loo_predict``/``cv_predict``)
        Its kernel parameters and basis rows are kept; each transform refits it on the transformed target.
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
        Targets on the original scale.
    target_transform : "auto", a name of :data:`TARGET_TRANSFORMS`, or a list of names
        "auto": identity, and log and Box-Cox when every target is positive.
    alphas : array-like of shape (A,), optional
        Regularisation path scored for each transform (each keeps its best); default the model's alpha.
    folds : list of ndarray, optional
        Test indices of k folds (the held-out basis points removed, as the searches score); None is LOO.

    Returns
    -------
    TargetTransformChoice

    Notes
    -----
    Per transform: one refit, O(m n^2), then O(m n) per alpha for LOO
    (O(m^2 n / k) per alpha for k folds).  The predictions ``f_{-i}`` on the
    transformed scale are mapped back by the inverse transform and scored
    against ``y_i``; a transform replaces identity only when it lowers that
    error by more than one standard error of the paired per-row differences: the back-transformed median of a log model is scored as
    the predictor it is, so no transform wins by the scale it is scored on
    (the documentation's Mathematics page, §2, for the CV formulas).
    """
    X = np.asarray(X)
    y = np.asarray(y, dtype=float)
    names = _candidates(target_transform, y)
    path = np.atleast_1d(np.asarray(model.alpha if alphas is None else alphas, dtype=float))
    basis = getattr(model, "basis_indices_", None)
    choice = TargetTransformChoice(TargetTransform("identity"), cv="LOO" if folds is None else "K-fold")
    errors = {}
    for name in names:
        tr = fit_target_transform(name, y)
        est = clone(model)
        if basis is not None:
            est.set_params(basis=np.asarray(basis))
        est.fit(X, tr.forward(y))
        if folds is None:
            pred = est.loo_predict(path)
        else:
            every = np.arange(y.shape[0])
            pred = est.cv_predict([(np.setdiff1d(every, f), np.asarray(f)) for f in folds], alpha=path)
        pred = np.asarray(pred, dtype=float).reshape(path.size, -1)
        with np.errstate(over="ignore", invalid="ignore"):
            mse = np.mean((tr.inverse(pred) - y[None, :]) ** 2, axis=1)
        mse = np.where(np.isfinite(mse), mse, np.inf)
        i = int(np.argmin(mse))
        choice.scores[name], choice.alphas[name] = float(mse[i]), float(path[i])
        with np.errstate(over="ignore", invalid="ignore"):
            errors[name] = (tr.inverse(pred[i]) - y) ** 2
    # Identity unless another transform is lower by more than one standard error of the paired difference
    # of the per-row squared errors: on Boston's five splits the plain lowest score switched on differences
    # of 1-5 % and tested worse on three of them.
    choice.transform = fit_target_transform(names[0], y)
    if "identity" in errors:
        choice.transform = TargetTransform("identity")
        for name in sorted(choice.scores, key=choice.scores.get):
            if name == "identity":
                break
            diff = errors[name] - errors["identity"]
            if np.all(np.isfinite(diff)) and diff.mean() < -diff.std(ddof=1) / np.sqrt(diff.size):
                choice.transform = fit_target_transform(name, y)
                break
    else:
        choice.transform = fit_target_transform(min(choice.scores, key=choice.scores.get), y)
    return choice


class TargetTransformRegressor(RegressorMixin, BaseEstimator):
    """A sparse LS-SVM regressor (or its search) on a transformed target chosen by exact CV.

    Parameters
    ----------
    estimator : regressor, default=None
        ``SparseLSSVRCV()`` when None; any of the package's sparse LS-SVM regressors or their searches.
    target_transform : "auto", "identity", "log", "boxcox" or list of these, default="auto"
        "auto": identity, log and Box-Cox (its exponent by maximum likelihood on the training targets) are
        scored when every target is positive, identity alone otherwise.

    Attributes
    ----------
    estimator_ : the fitted estimator, on the chosen transform's scale (its kernel parameters chosen on the
        original target; with another transform than identity its best model is refitted, same kernel and
        basis rows, at the alpha of lowest original-scale CV error).
    target_transform_ : TargetTransform
    target_transform_scores_ : dict
        Name -> exact CV mean squared error on the original scale (LOO, or the search's k folds).
    target_transform_cv_ : str
        "LOO" or "K-fold".

    Notes
    -----
    The search runs once, on the original target; each further transform
    costs one refit at the best kernel parameters and its CV path
    (:func:`choose_target_transform`).  Predictions are the inverse
    transform of the model's, clipped to the training range widened by its
    width (:class:`TargetTransform`).
    """

    def __init__(self, estimator=None, target_transform="auto"):
        self.estimator = estimator
        self.target_transform = target_transform

    def fit(self, X, y):
        """Fit the estimator on ``y``, score the transforms by exact CV on the original scale, keep the
        lowest (identity unless beaten by more than one standard error) and refit on its scale.

        Parameters
        ----------
        X : array-like of shape (m, d)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        from .family_search_cv import SparseLSSVRCV

        y_arr = np.asarray(y, dtype=float)
        names = _candidates(self.target_transform, y_arr)
        for name in names:
            if name not in TARGET_TRANSFORMS:
                raise ValueError(f"target_transform must be 'auto' or among {list(TARGET_TRANSFORMS)}; "
                                 f"got {name!r}")
        est = clone(SparseLSSVRCV() if self.estimator is None else self.estimator)
        if names == ("identity",):
            est.fit(X, y)
            self.estimator_, self.target_transform_ = est, TargetTransform("identity")
            self.target_transform_scores_, self.target_transform_cv_ = {}, None
            return self
        if len(names) == 1:
            first = fit_target_transform(names[0], y_arr)
            est.fit(X, first.forward(y_arr))
            self.estimator_, self.target_transform_ = est, first
            self.target_transform_scores_, self.target_transform_cv_ = {}, None
            return self
        est.fit(X, y_arr)
        est, choice = _choose_on_fitted(est, X, y_arr, names)  # X as given: the refit keeps its column names
        self.estimator_, self.target_transform_ = est, choice.transform
        self.target_transform_scores_, self.target_transform_cv_ = choice.scores, choice.cv
        return self

    @property
    def n_features_in_(self):
        """Number of input columns of the fitted estimator."""
        return self.estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Input column names of the fitted estimator (fitted on a DataFrame)."""
        return self.estimator_.feature_names_in_

    @classmethod
    def from_fitted(cls, estimator, transform):
        """A fitted wrapper of ``estimator`` (fitted on ``transform.forward(y)``) that predicts on the
        original scale: how a model file with a target transform predicts."""
        out = cls(estimator, target_transform=transform.name)
        out.estimator_, out.target_transform_ = estimator, transform
        out.target_transform_scores_, out.target_transform_cv_ = {}, None
        return out

    def predict(self, X):
        """Predictions on the original scale, shape (m,)."""
        check_is_fitted(self, "estimator_")
        return self.target_transform_.inverse(self.estimator_.predict(X))

    def predict_interval(self, X, coverage=0.9, **kwargs):
        """The estimator's prediction intervals mapped back to the original scale, shape (m, 2).

        The transforms are increasing, so an interval that holds the transformed target with a coverage
        holds the original one with the same coverage (jackknife+: the same guarantee); the bounds are
        clipped as the predictions are (:class:`TargetTransform`).
        """
        check_is_fitted(self, "estimator_")
        return self.target_transform_.inverse(self.estimator_.predict_interval(X, coverage=coverage, **kwargs))


def _choose_on_fitted(est, X, y, names):
    """Score ``names`` on a fitted search or model (its best kernel parameters and basis rows), and refit on
    the chosen transform's scale; returns ``(estimator, TargetTransformChoice)``."""
    search = hasattr(est, "_check_search_params")  # a *CV search: its best model and alpha path
    model = est.best_estimator_ if search else est
    folds = getattr(est, "cv_folds_", None) if search else None
    path = est._check_search_params(y)[1] if search else None
    choice = choose_target_transform(model, X, y, names, alphas=path, folds=folds)
    tr = choice.transform
    if tr.name != "identity":
        refit = clone(model).set_params(alpha=choice.alphas[tr.name])
        basis = getattr(model, "basis_indices_", None)
        if basis is not None:
            refit.set_params(basis=np.asarray(basis))
        refit.fit(X, tr.forward(y))
        if search:  # the search's best model, alpha and score now describe the refit
            est.best_estimator_ = refit
            est.alpha_ = choice.alphas[tr.name]
            est.best_params_ = {**est.best_params_, "alpha": est.alpha_}
            if getattr(est, "scoring_", None) == "mse":
                est.best_score_ = -choice.scores[tr.name]  # original-scale CV MSE
        else:
            est = refit
    return est, choice


def transform_fitted_target(est, X, y, target_transform="auto"):
    """Choose the target transform for an already fitted search (or model) by exact CV on the original
    scale, and refit its best model on the chosen scale: what ``lssvm select --target-transform`` does.

    Parameters
    ----------
    est : fitted SparseLSSVRCV (or another regressor search or model of the package)
        Fitted on ``y``; with a transform other than identity chosen, its ``best_estimator_``,
        ``alpha_``, ``best_params_["alpha"]`` and (MSE scoring) ``best_score_`` describe the refit.
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
        Targets on the original scale.
    target_transform : "auto", "identity", "log" or "boxcox"
        "auto": identity, log and Box-Cox scored when every target is positive (identity unless beaten by
        more than one standard error of the paired per-row differences); a name: that transform (scored, and
        used whatever its score).

    Returns
    -------
    estimator : the search (or the refitted model), on the chosen scale
    choice : TargetTransformChoice
        The transform, and each candidate's exact CV mean squared error on the original scale.

    Notes
    -----
    One refit (O(m n^2)) and its CV path (O(m n) per alpha, LOO) per candidate, plus one refit at the
    chosen alpha: no new search.
    """
    y = np.asarray(y, dtype=float)
    names = _candidates(target_transform, y)
    for name in names:
        if name not in TARGET_TRANSFORMS:
            raise ValueError(f"target_transform must be 'auto' or among {list(TARGET_TRANSFORMS)}; got {name!r}")
    if names == ("identity",):
        return est, TargetTransformChoice(TargetTransform("identity"), cv=None)
    return _choose_on_fitted(est, np.asarray(X), y, names)
