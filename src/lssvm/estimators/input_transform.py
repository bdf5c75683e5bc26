"""A per-column transform of skewed numeric inputs chosen by exact CV.

An isotropic RBF kernel measures every input on one length scale.  On a
standardised but heavily skewed column (a size, a count, a money amount)
most rows sit within a fraction of one standard deviation while a few
outliers lie tens of deviations away: the one width the search picks must
reach those outliers, and so smooths over the bulk of the rows.  Mapping
each such column to normal scores first (scikit-learn's
``QuantileTransformer(output_distribution="normal")``, rank based, or the
``PowerTransformer``'s Yeo-Johnson map, parametric) spreads the rows
evenly over the width.

Which treatment predicts better is not known in advance, so
:class:`InputTransformSearch` decides by the search's own criterion: it
runs the wrapped search (its grid of widths and alpha path, scored by exact
LOO or on fixed folds) once on each candidate input matrix, and keeps the
candidate of best CV score, plain inputs ("none") on a tie.  The candidate
searches run without the ARD stage and with the fixed basis size rule, so
that they compare the inputs, not the stages' budgets; the winner's search
then goes on to the wrapped search's own stages (ARD stage, basis growth),
as its ``fit`` would have, within its time budget counted from the first
candidate's start: the comparison spends the budget too, so that a search
with a budget stays within it.  The transform is part of the fitted model: ``predict`` takes
the raw inputs.

Columns with at most two distinct values (binary flags, one-hot columns)
are left as they are; the others are transformed and standardised (mean 0,
standard deviation 1 on the training rows).  ``"auto"`` compares "none"
with "quantile" where some transformed column is skewed (absolute sample
skewness above :data:`SKEW_THRESHOLD`), else uses "none" at no extra cost.

Cost: one search per candidate, then the winner's stages.  Without a time
budget that is about twice the wrapped search's time for "auto" on a
skewed table; with one, the stages get what the candidates' searches leave
of it, so the whole fit stays near the budget.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy import stats
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.preprocessing import PowerTransformer, QuantileTransformer
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_is_fitted

from ..cv import resolve_folds
from ._basis_size import auto_basis_refusal, grow_after_search, is_auto, record_not_applicable
from ._validation import validate_input
from .ard_stage import ard_after_search, check_ard

__all__ = ["INPUT_TRANSFORMS", "SKEW_THRESHOLD", "InputTransform", "InputTransformSearch", "skewed_columns"]

#: The transforms that can be asked for by name ("none": the inputs as given).
INPUT_TRANSFORMS = ("none", "quantile", "yeo-johnson")
#: ``"auto"`` tries "quantile" where some column's absolute sample skewness is above this.  Above it: MAGIC's
#: fLength (2.0), fWidth (3.4), fAsym and fM3Long (-1.1); adult's capital-gain (12), capital-loss (4.6) and
#: fnlwgt (1.45).  A normal or uniform column is near 0.
SKEW_THRESHOLD = 1.0
#: Quantiles of the quantile transform at most (scikit-learn's default); fewer rows: one per row.
N_QUANTILES = 1000


def _transformable(X):
    """Columns of ``X`` (m, d) with more than two distinct values: the ones a transform changes."""
    return np.array([np.unique(X[:, j]).size > 2 for j in range(X.shape[1])], dtype=bool)


def skewed_columns(X, threshold=SKEW_THRESHOLD):
    """Boolean mask (d,): columns with more than two distinct values and absolute sample skewness above
    ``threshold``."""
    X = np.asarray(X, dtype=float)
    cols = _transformable(X)
    skew = np.zeros(X.shape[1])
    if cols.any():
        with np.errstate(all="ignore"):
            skew[cols] = np.nan_to_num(np.abs(stats.skew(X[:, cols], axis=0)))
    return cols & (skew > threshold)


class InputTransform(TransformerMixin, BaseEstimator):
    """One named per-column transform of the inputs, fitted on the training rows.

    Parameters
    ----------
    method : {"none", "quantile", "yeo-johnson"}, default="quantile"
        "quantile": normal scores of the column's empirical quantiles (at most 1,000; rank based, so
        robust to any outlier); "yeo-johnson": the power transform of maximal normal likelihood.
        Both are followed by standardisation.  "none": the identity.

    Attributes
    ----------
    columns_ : ndarray of shape (d,), bool
        The columns transformed: those with more than two distinct values on the training rows.
    transformer_ : fitted scikit-learn transformer or None

    Notes
    -----
    Cost O(m d log m) to fit (sorting the columns) and O(m d log q) to transform.
    """

    def __init__(self, method="quantile"):
        self.method = method

    def fit(self, X, y=None):
        if self.method not in INPUT_TRANSFORMS:
            raise ValueError(f"method must be one of {INPUT_TRANSFORMS}; got {self.method!r}")
        X = _check_inputs(X, type(self).__name__)
        self.n_features_in_ = X.shape[1]
        self.columns_ = _transformable(X) if self.method != "none" else np.zeros(X.shape[1], dtype=bool)
        self.transformer_ = None
        if self.columns_.any():
            if self.method == "quantile":
                self.transformer_ = QuantileTransformer(output_distribution="normal",
                                                        n_quantiles=min(N_QUANTILES, X.shape[0]),
                                                        subsample=max(X.shape[0], 10_000), random_state=0)
            else:
                self.transformer_ = PowerTransformer(method="yeo-johnson", standardize=False)
            Z = self.transformer_.fit_transform(X[:, self.columns_])
            self.mean_ = Z.mean(axis=0)
            sd = Z.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
        return self

    def transform(self, X):
        check_is_fitted(self, "columns_")
        X = _check_inputs(X, type(self).__name__)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns; the transform was fitted on {self.n_features_in_}")
        out = X.copy()
        if self.transformer_ is not None:
            out[:, self.columns_] = (self.transformer_.transform(X[:, self.columns_]) - self.mean_) / self.scale_
        return out

    def to_stored(self):
        """The fitted transform as (JSON values, arrays): what a model file keeps (:meth:`from_stored`)."""
        check_is_fitted(self, "columns_")
        meta = {"method": self.method, "n_features_in": int(self.n_features_in_)}
        arrays = {"input_transform_columns": self.columns_.astype(np.uint8)}
        if self.transformer_ is not None:
            arrays.update(input_transform_mean=self.mean_, input_transform_scale=self.scale_)
            if self.method == "quantile":
                arrays.update(input_transform_quantiles=self.transformer_.quantiles_,
                              input_transform_references=self.transformer_.references_)
            else:
                arrays["input_transform_lambdas"] = self.transformer_.lambdas_
        return meta, arrays

    @classmethod
    def from_stored(cls, meta, arrays):
        """The fitted transform of :meth:`to_stored`'s output; ``ValueError`` if it is not one."""
        if not isinstance(meta, dict) or set(meta) != {"method", "n_features_in"} or \
                meta["method"] not in INPUT_TRANSFORMS or meta["method"] == "none":
            raise ValueError(f"an input transform is an object with a method in {INPUT_TRANSFORMS[1:]} and "
                             "n_features_in")
        d = meta["n_features_in"]
        columns = np.asarray(arrays.get("input_transform_columns", ()), dtype=bool)
        if isinstance(d, bool) or not isinstance(d, int) or columns.shape != (d,) or not columns.any():
            raise ValueError("the input transform's columns do not match its number of inputs")
        k = int(columns.sum())
        need = ("quantiles", "references") if meta["method"] == "quantile" else ("lambdas",)
        got = {n: np.asarray(arrays.get(f"input_transform_{n}", ()), dtype=float)
               for n in ("mean", "scale", *need)}
        q = got.get("quantiles", np.zeros((2, k)))
        shapes_ok = got["mean"].shape == got["scale"].shape == (k,) and q.ndim == 2 and q.shape[1] == k and (
            meta["method"] != "quantile" or (q.shape[0] >= 2 and got["references"].shape == (q.shape[0],))) and (
            meta["method"] == "quantile" or got["lambdas"].shape == (k,))
        if not shapes_ok or not all(np.isfinite(a).all() for a in got.values()) or np.any(got["scale"] <= 0):
            raise ValueError("the input transform's arrays have the wrong shapes or non-finite values")
        self = cls(meta["method"])
        self.n_features_in_, self.columns_ = d, columns
        self.mean_, self.scale_ = got["mean"], got["scale"]
        if meta["method"] == "quantile":
            tr = QuantileTransformer(output_distribution="normal", n_quantiles=q.shape[0])
            tr.quantiles_, tr.references_, tr.n_quantiles_ = q, got["references"], q.shape[0]
        else:
            tr = PowerTransformer(method="yeo-johnson", standardize=False)
            tr.lambdas_ = got["lambdas"]
        tr.n_features_in_ = k
        self.transformer_ = tr
        return self


def _check_inputs(X, owner):
    if sp.issparse(X):
        raise TypeError(f"{owner}: the input transforms need a dense X (a sparse matrix's zeros would move); "
                        "pass X.toarray() or leave the inputs as they are")
    return check_array(X, dtype=float, ensure_all_finite=True)


def _candidates(input_transform, X):
    if isinstance(input_transform, str):
        if input_transform == "auto":
            return ["none", "quantile"] if skewed_columns(X).any() else ["none"]
        names = [input_transform]
    else:
        try:
            names = list(input_transform)
        except TypeError:
            names = []
    bad = [n for n in names if not (isinstance(n, str) and n in INPUT_TRANSFORMS)]
    if not names or bad:
        raise ValueError(f"input_transform must be 'auto', one of {INPUT_TRANSFORMS} or a list of them; "
                         f"got {input_transform!r}")
    names = list(dict.fromkeys(names))
    return ["none"] + [n for n in names if n != "none"] if "none" in names else names


def _finish_stages(search, X, y, groups, restore, t0):
    """What the search's ``fit`` runs after its search (the ARD stage, the basis growth), on a search fitted
    with those stages off (``restore``: their settings), the budget's clock started at ``t0``
    (``time.perf_counter()`` at the first candidate's start)."""
    if not restore:
        return search
    search.set_params(**restore)
    X, y = validate_input(search, X, y, dtype=np.float64, multi_output=not search._classification,
                          y_numeric=not search._classification, ensure_min_samples=2, reset=False)
    if getattr(search, "ard", False) is not False:
        check_ard(search, X, y)
        ard_after_search(search, X, y, groups, t0)
    if is_auto(getattr(search, "n_basis", None)):
        refusal = auto_basis_refusal(search, X, y)
        return grow_after_search(search, X, y, groups, t0) if refusal is None else \
            record_not_applicable(search, refusal)
    return search


def _has(name):
    return lambda self: hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, name)


class InputTransformSearch(BaseEstimator):
    """A sparse LS-SVM search on inputs transformed per column, the transform chosen by exact CV.

    Parameters
    ----------
    estimator : search estimator, default=SparseLSSVRCV()
        A search with ``best_score_`` after ``fit`` (``SparseLSSVRCV``, ``SparseLSSVCCV`` or another
        family's ``*CV``); cloned.
    input_transform : "auto", {"none", "quantile", "yeo-johnson"} or list of them, default="auto"
        The candidates compared by the search's exact CV score (module notes); one name: that transform,
        no comparison.  "auto": "none" and "quantile" where some column is skewed, else "none".

    Attributes
    ----------
    input_transform_ : str
        The transform kept.
    input_transform_scores_ : dict of str to float
        Each candidate's CV score (the search's ``best_score_``: higher is better), the candidates'
        searches run without the ARD stage and at the fixed basis size rule; empty for one candidate.
    transformer_ : InputTransform
        Fitted on all training rows; applied by ``predict`` and the other methods.
    estimator_ : the fitted search on the transformed inputs
    best_score_, best_params_, best_estimator_, classes_
        The fitted search's.

    Notes
    -----
    The searches share their folds (``cv`` resolved once; LOO is the same for all). The transform is fitted on
    all training rows before the search, as the standardisation is: it uses no target, only the inputs'
    ranks or their power-law fit.  Cost: one search per candidate, then the winner's ARD stage and basis
    growth in what the wrapped search's ``time_budget`` leaves, counted from the first candidate's start.

    Examples
    --------
    >>> import numpy as np
    >>> from lssvm import SparseLSSVRCV
    >>> from lssvm import InputTransformSearch
    >>> rng = np.random.default_rng(0)
    >>> X = rng.lognormal(size=(120, 2))
    >>> y = np.log(X[:, 0]) + 0.1 * rng.normal(size=120)
    >>> model = InputTransformSearch(SparseLSSVRCV(param_space={"gamma": [0.1, 1.0]})).fit(X, y)
    >>> sorted(model.input_transform_scores_)
    ['none', 'quantile']
    """

    def __init__(self, estimator=None, input_transform="auto"):
        self.estimator = estimator
        self.input_transform = input_transform

    def _base(self):
        if self.estimator is None:
            from .family_search_cv import SparseLSSVRCV

            return SparseLSSVRCV()
        return self.estimator

    @property
    def _estimator_type(self):
        return getattr(self._base(), "_estimator_type", None)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = self._base().__sklearn_tags__()
        tags.estimator_type = base.estimator_type
        tags.classifier_tags, tags.regressor_tags = base.classifier_tags, base.regressor_tags
        return tags

    def fit(self, X, y, groups=None, **fit_params):
        """Score each candidate transform by the search's exact CV, then fit the search on the best.

        Parameters
        ----------
        X : array-like of shape (m, d), dense, finite
        y : array-like of shape (m,) or (m, v)
        groups : array-like of shape (m,), optional
            Passed to a group splitter and to the searches.
        **fit_params
            Passed to every search's ``fit`` (e.g. ``callback``).
        """
        start = time.perf_counter()  # the wrapped search's time budget counts every candidate's search
        base = self._base()
        if not hasattr(base, "fit") or "cv" not in base.get_params():
            raise TypeError(f"InputTransformSearch wraps a search estimator with a cv parameter (SparseLSSVRCV, "
                            f"SparseLSSVCCV, ...); got {type(base).__name__}")
        X = _check_inputs(X, type(self).__name__)
        names = _candidates(self.input_transform, X)
        params = base.get_params(deep=False)
        cv = params.get("cv", "loo")
        if not (isinstance(cv, str) and cv == "loo") and len(names) > 1:
            # one set of folds for every candidate (a shuffling splitter without a seed would draw anew)
            folds = resolve_folds(cv, X.shape[0], y=np.asarray(y), groups=groups, classifier=is_classifier(base))
            every = np.arange(X.shape[0])
            cv = [(np.setdiff1d(every, f), np.asarray(f)) for f in folds]
        fit_kw = {**fit_params, **({} if groups is None else {"groups": groups})}
        transforms = {n: InputTransform(n).fit(X) for n in names}
        scores, searches = {}, {}
        plain = {}
        if params.get("ard", False) is not False:
            plain["ard"] = False
        if isinstance(params.get("n_basis"), str) and params["n_basis"] == "auto":
            plain["n_basis"] = None
        if len(names) > 1:
            for n in names:
                searches[n] = clone(base).set_params(cv=cv, **plain).fit(transforms[n].transform(X), y, **fit_kw)
                scores[n] = float(searches[n].best_score_)
        chosen = names[0] if not scores else max(names, key=lambda n: (scores[n], n == "none"))
        self.input_transform_, self.input_transform_scores_ = chosen, scores
        self.transformer_ = transforms[chosen]
        if scores:  # the winner's search is the wrapped search's: only its stages remain to run
            self.estimator_ = _finish_stages(searches[chosen], self.transformer_.transform(X), y, groups,
                                             {k: params[k] for k in plain}, start)
        else:
            self.estimator_ = clone(base).set_params(cv=cv).fit(self.transformer_.transform(X), y, **fit_kw)
        self.n_features_in_ = X.shape[1]
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def _inputs(self, X):
        check_is_fitted(self, "estimator_")
        return self.transformer_.transform(X)

    @property
    def best_score_(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_.best_score_

    @property
    def best_params_(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_.best_params_

    @property
    def best_estimator_(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_.best_estimator_

    def predict(self, X):
        """Predictions for raw inputs X (m, d): transformed, then the fitted search's ``predict``."""
        return self.estimator_.predict(self._inputs(X))

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        return self.estimator_.decision_function(self._inputs(X))

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        return self.estimator_.predict_proba(self._inputs(X))

    @available_if(_has("predict_interval"))
    def predict_interval(self, X, *args, **kwargs):
        return self.estimator_.predict_interval(self._inputs(X), *args, **kwargs)

    def score(self, X, y, sample_weight=None):
        """The fitted search's ``score`` on the transformed inputs (R^2 or accuracy)."""
        return self.estimator_.score(self._inputs(X), y, sample_weight=sample_weight)
