"""One search over a model family, in the style of scikit-learn's ``RidgeCV``:
kernel parameters searched (grid, coarse-to-fine, Nelder-Mead, coupled
simulated annealing + Nelder-Mead, or L-BFGS-B on the exact CV gradient),
every candidate scored on a whole alpha path at once by an exact (for
Nyström, the approximate model's exact) CV criterion, then a refit of the
best model on all data.

The search is written once.  What differs between the families is a
:class:`SearchFamily`: its criterion (:mod:`lssvm.selection.criteria`), its
base estimators, the model parameters the refit takes, and the rows the
refit is given.  The criterion reports the training rows a candidate used
(basis, prototype pool, Nyström columns); the refit is given those rows, so
``best_estimator_`` is exactly the model whose CV score is ``best_score_``.
The six public ``*CV`` classes (:mod:`lssvm.estimators.family_search_cv`)
are presets: a family, its constructor parameters and its docstring.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints
from sklearn.utils.validation import check_is_fitted

from .._targets import check_numeric_targets
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..selection import coarse_to_fine_search, csa_search, grid_search, nelder_mead_search
from ..solvers import check_alphas
from ._basis_size import auto_basis_refusal, grow_after_search, is_auto, record_not_applicable
from ._constraints import SEARCH_PARAMS, SEARCHES, ValidatedParamsMixin
from ._expansion import BestExpansionMixin
from ._numerical_notes import fit_reporting_notes
from ._per_target import TargetPaths, check_per_target_request, finish_per_target
from ._scale import DEFAULT_CV_GAMMA_FACTORS, is_scale, search_scale
from ._validation import validate_input
from .ard_stage import ard_after_search, ard_applies, check_ard

__all__ = ["DEFAULT_CV_ALPHAS", "DEFAULT_CV_GAMMA_FACTORS", "FamilySearchCV", "SEARCHES", "SearchFamily"]

#: 21 alphas, half a decade apart: paper 000's motorcycle (415) and Boston (1.7e-5) optima lie inside.
DEFAULT_CV_ALPHAS = np.logspace(-6, 4, 21)

#: Kernel parameters a search may vary, per kernel name.
_SEARCHABLE = {"rbf": {"gamma"}, "laplacian": {"gamma"}, "linear": set(), "poly": {"gamma", "degree", "coef0"}}


class SearchFamily:
    """What the search needs to know about one model family; built by the search at each fit
    (``family = search._family(search)``) and kept for that fit only.

    A family names its base estimators and the constructor parameters the refit passes on; it builds the
    criterion that scores a candidate's whole alpha path and says which rows the refit takes.  The defaults
    here suit a family whose refit needs only the scored rows as ``basis``; a family overrides what differs.

    Parameters
    ----------
    search : FamilySearchCV
        The estimator whose parameters the family reads.
    """

    #: The family's base estimators (the search fits its classifier or its regressor).
    regressor = classifier = None
    #: Constructor parameters of the search passed unchanged to every model it fits.
    model_params = ()
    #: ``cv=None``: the folds the family's criterion uses.
    default_cv = "loo"
    #: The string ``basis`` values the family draws on Dask input, its default there first.
    dask_bases = ("pchol", "random")
    #: The cost model of a search of this family (``lssvm select``'s estimate): "sparse" (the exact path on a
    #: basis), "pool" (a prototype pool with SCDP's curves on folds) or "low-rank" (columns cut to rank k).
    cost_kind = "sparse"
    #: Whether the family has ``search="gradient"`` (:meth:`gradient_search`).
    has_gradient_search = False

    def __init__(self, search):
        self.search = search

    def criterion(self, X, y, scoring, **kw):
        """The criterion scoring one candidate's alpha path (a :class:`lssvm.selection.CVPath` per call):
        NumPy rows or Dask collections; ``kw`` are the criterion's common arguments (``cv``, ``alphas``,
        ``classification``, ``groups``, ``random_state``, ``kernel``, ``kernel_params``, ``sample_weight``)."""
        raise NotImplementedError

    def refit_params(self, criterion, rows, scoring):
        """Parameters that make the refit use the rows ``rows`` the criterion scored at the best candidate."""
        return {"basis": rows}

    def check_refit(self, est, rows):
        """Whether the refit ``est`` is on ``rows`` (else it is refitted on them explicitly)."""
        return True

    def validation_params(self, alphas):
        """Parameters of the one model built to validate the search's parameters before any work."""
        return {"alpha": float(alphas[0])}

    def default_scoring(self, y):
        """``scoring=None``: the error rate for classifiers (ties to the lower MSE), the MSE for regression."""
        return "error_rate" if self.search._classification else "mse"

    def check_scoring(self, scoring, y):
        """Refuse a ``scoring`` the family cannot score on ``y`` (none by default)."""

    def gradient_search(self):
        """The :class:`lssvm.estimators.gradient_search.GradientSearch` of this family, or a clear error where it
        has none."""
        raise ValueError(f"search='gradient' is available in SparseLSSVRCV and SparseLSSVCCV only, not in "
                         f"{type(self.search).__name__} (see lssvm.estimators.gradient_search)")


class FamilySearchCV(BestExpansionMixin, ValidatedParamsMixin, BaseEstimator):
    """The search over kernel parameters with the alpha path free, then the refit, for the family ``_family``.

    A preset sets ``_family`` (a :class:`SearchFamily`), ``_parameter_constraints`` and the constructor;
    classifiers add :class:`ClassifierSearchMixin`.  The stages around the search are written
    here once: ``sample_weight`` (a preset whose ``fit`` takes it), ``alpha_per_target`` and
    ``n_basis="auto"`` (where the preset has those parameters), and one summary of numerical notes.
    """

    _classification = False
    _parameter_constraints = SEARCH_PARAMS
    _family = SearchFamily

    @classmethod
    def search_family(cls):
        """The :class:`SearchFamily` this search runs over; its class attributes (``default_cv``,
        ``dask_bases``, ``cost_kind``, ``has_gradient_search``) describe the family to the command line."""
        return cls._family

    @classmethod
    def accepts(cls, **params):
        """Whether the constructor takes each of ``params`` at its value (its parameter constraints; a
        parameter it does not have is not taken).  Cross-parameter rules are checked at ``fit``."""
        constraints = cls._parameter_constraints
        if not set(params) <= set(constraints):
            return False
        try:
            validate_parameter_constraints({k: constraints[k] for k in params}, params, cls.__name__)
        except (ValueError, TypeError):
            return False
        return True

    @classmethod
    def string_options(cls, param):
        """The string values the constructor takes for ``param``, sorted (empty if none)."""
        return tuple(sorted(option for constraint in cls._parameter_constraints.get(param, ())
                            if isinstance(constraint, StrOptions) for option in constraint.options))

    @property
    def _estimator_class(self):
        """The family's base estimator this search fits: its regressor or its classifier."""
        return self._family.classifier if self._classification else self._family.regressor

    def _check_param_rules(self):
        allowed = ("mse", "error_rate") if self._classification else ("mse", *getattr(self, "_path_scorings", ()))
        if self.scoring is not None and self.scoring not in allowed:
            raise ValueError(f"scoring must be {' or '.join(map(repr, allowed))}; got {self.scoring!r}")
        self._estimator_class._check_param_rules(self)  # the model's own rules, on the same parameter names

    # ------------------------------------------------------------ helpers
    def _space(self):
        space = self.param_space
        if space is None:
            name = self.kernel if isinstance(self.kernel, str) else getattr(self.kernel, "name", "")
            return {} if name == "linear" else {"gamma": self._scale * DEFAULT_CV_GAMMA_FACTORS}
        if not isinstance(space, Mapping):
            raise ValueError(f"param_space must be a dict of kernel parameter -> values or (low, high); got {space!r}")
        out = {}
        for k, v in space.items():
            if k == "alpha":
                raise ValueError("alpha is searched along the path: give it as alphas=..., not in param_space")
            try:
                vals = np.atleast_1d(np.asarray(v, dtype=float))
            except (TypeError, ValueError):
                raise ValueError(f"param_space[{k!r}] must be numbers (a list of values or (low, high)); "
                                 f"got {v!r}") from None
            if vals.size == 0 or not np.all(np.isfinite(vals)):
                raise ValueError(f"param_space[{k!r}] must hold finite values; got {v!r}")
            out[k] = vals
        return out

    def _kernel_params(self):
        """Fixed kernel parameters handed to the criterion."""
        params = {"degree": self.degree, "coef0": self.coef0, "normalize": self.normalize_kernel}
        if "gamma" not in self._space():
            params["gamma"] = self._scale if is_scale(self.gamma) else self.gamma
        return params

    def _model_params(self):
        """The family's model parameters as set on this search (every model the search fits takes them)."""
        return {k: getattr(self, k) for k in self._family.model_params}

    def _check_search_params(self, y):
        family = self._family(self)
        scoring = family.default_scoring(y) if self.scoring is None else self.scoring
        family.check_scoring(scoring, y)
        alphas, _ = check_alphas(DEFAULT_CV_ALPHAS if self.alphas is None else self.alphas)
        return scoring, alphas

    def _check_model_params(self, family, alphas):
        """Validate the model's own parameters before searching: the check of
        the estimator the search refits, on one candidate."""
        space = self._space()
        name = self.kernel if isinstance(self.kernel, str) else None
        allowed = _SEARCHABLE.get(name)
        if allowed is not None and not set(space) <= allowed:
            raise ValueError(
                f"param_space keys must be parameters of the {name!r} kernel "
                f"({', '.join(sorted(allowed)) or 'it has none to search'}); got {sorted(space)}"
            )
        # the largest value: bounds (low, high) are checked by the search itself
        first = {k: (int(v.max()) if k == "degree" and float(v.max()).is_integer() else float(v.max()))
                 for k, v in space.items()}
        est = self._estimator_class(**{**self._model_params(), **family.validation_params(alphas), **first})
        (getattr(est, "_validate_params_", None) or est._check_params)()

    def _run_search(self, criterion, scoring, rng, callback):
        space = self._space()
        if self.search == "grid" or not space:
            if self.param_space is None:  # the default widths: coarse-to-fine (an explicit grid is exhaustive)
                return coarse_to_fine_search(criterion, space, scoring, callback=callback)
            return grid_search(criterion, space, scoring, callback=callback)
        if "degree" in space:
            raise ValueError(f"search={self.search!r} proposes fractional values; search the degree with search='grid'")
        bounds = {k: (float(v.min()), float(v.max())) for k, v in space.items()}
        for k, (lo, hi) in bounds.items():
            if not 0 < lo < hi:
                raise ValueError(
                    f"param_space[{k!r}] needs 0 < low < high for search={self.search!r}; got ({lo}, {hi})"
                )
        n_eval = 30 if self.max_evaluations is None else self.max_evaluations  # None: 30 ("gradient": per start)
        if self.search == "nelder-mead":
            return nelder_mead_search(criterion, bounds, scoring=scoring, max_evaluations=n_eval, callback=callback)
        return csa_search(criterion, bounds, scoring=scoring, max_evaluations=n_eval,
                          refine_evaluations=n_eval, random_state=rng, callback=callback)

    # --------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=False)
    @uses_threads
    def fit(self, X, y, groups=None, callback=None):
        """Search, then refit the best model on all data.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Or a Dask array / DataFrame: every evaluation then makes its
            passes over row blocks (``docs/scaling.md``).
        y : array-like of shape (n,) (labels for classifiers) or (n, v)
        groups : array-like of shape (n,), optional
            Group labels for a group splitter passed as ``cv``.
        callback : callable, optional
            ``callback(params, path)`` after every criterion evaluation
            (``path`` a :class:`lssvm.selection.CVPath`); used by the
            command line's progress bar.

        Returns
        -------
        self
        """
        return self._fit_stages(X, y, groups, callback)

    def _fit_stages(self, X, y, groups, callback, sample_weight=None):
        """The search with every numerical note collected into one summary; then, where the preset has ``ard``,
        the ARD stage (:func:`ard_after_search`), and with ``n_basis="auto"`` the growth of the basis at the
        kernel kept (:func:`grow_after_search`)."""
        ard = getattr(self, "ard", False)
        if ard is not False:
            check_ard(self, X, y, sample_weight)
        auto = is_auto(getattr(self, "n_basis", None))
        if not auto and ard is False:
            fit_reporting_notes(self, self._fit, X, y, groups, callback, sample_weight)
            return ard_after_search(self, X, y, groups, None) if hasattr(self, "ard") else self  # "ard=False"
        t0 = time.perf_counter()
        refusal = auto_basis_refusal(self, X, y, sample_weight) if auto else None
        fit_reporting_notes(self, self._search_then_ard, X, y, groups, callback, sample_weight, t0)
        if not auto:
            return self
        if refusal is not None:  # the fixed size rule, the reason recorded in basis_curve_
            return record_not_applicable(self, refusal)
        X, y = validate_input(self, X, y, dtype=np.float64, multi_output=not self._classification,
                              y_numeric=not self._classification, ensure_min_samples=2, reset=False)
        return grow_after_search(self, X, y, groups, t0)

    def _search_then_ard(self, X, y, groups, callback, sample_weight, t0):
        self._fit(X, y, groups, callback, sample_weight)
        if not hasattr(self, "ard"):  # a preset without the stage
            return self
        if self.ard is not False and ard_applies(self, X, y, sample_weight):
            X, y = validate_input(self, X, y, dtype=np.float64, multi_output=not self._classification,
                                  y_numeric=not self._classification, ensure_min_samples=2, reset=False)
        return ard_after_search(self, X, y, groups, t0, sample_weight)

    def _fit(self, X, y, groups=None, callback=None, sample_weight=None):
        family = self._family(self)
        on_dask = is_dask_collection(X) or is_dask_collection(y)
        if not on_dask:
            X, y = validate_input(self, X, y, dtype=np.float64, multi_output=not self._classification,
                                 y_numeric=not self._classification, ensure_min_samples=2)
            if not self._classification:
                y = check_numeric_targets(y)
        sample_weight = None if sample_weight is None else self._check_weights(sample_weight, X, y)
        scoring, alphas = self._check_search_params(y)
        per_target = getattr(self, "alpha_per_target", False)
        if per_target:  # shared kernel parameters, each target's alpha by its own CV path
            check_per_target_request(self, scoring, on_dask)
            if sample_weight is not None:
                raise ValueError("alpha_per_target=True does not take sample_weight yet; fit without weights, "
                                 "or with one shared alpha")
            scoring = "mse_per_target"
        self._scale = search_scale(self, X, sample_weight)
        self._check_model_params(family, alphas)
        rng = check_random_state(self.random_state)
        cv = family.default_cv if self.cv is None else self.cv
        if self.search == "gradient":
            if on_dask:
                raise TypeError("search='gradient' needs all rows in memory; pass a NumPy array, not Dask input")
            searcher = family.gradient_search()
            gammas = self._space().get("gamma")
            if gammas is None or set(self._space()) != {"gamma"}:
                raise ValueError("search='gradient' starts from a grid of widths: param_space must be {'gamma': values}")
            return self._store_gradient(searcher.run(X, y, gammas, alphas, cv, rng, groups, callback), y)
        t0 = time.perf_counter()
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        criterion = family.criterion(X, y, cv=cv, alphas=alphas, classification=self._classification,
                                     groups=groups, random_state=rng, kernel=self.kernel,
                                     kernel_params=self._kernel_params(), scoring=scoring, **weighted)
        if on_dask:
            self.n_features_in_ = criterion.data.n_features
        if per_target:
            criterion = TargetPaths(criterion, self.store_cv_results)
        result = self._run_search(criterion, scoring, rng, callback)
        self.search_time_ = time.perf_counter() - t0
        self._store_search(result, criterion, scoring)
        if per_target:
            finish_per_target(self, criterion, {k: v for k, v in self.best_params_.items() if k != "alpha"})
        self.refit_time_ = 0.0
        if self.refit:
            self._refit(family, criterion, scoring, X, y, groups, sample_weight)
        elif self._classification:
            self.classes_ = criterion.classes if on_dask else np.unique(y)
        return self

    def _store_search(self, result, criterion, scoring):
        """The fitted attributes of a finished search (a :class:`lssvm.selection.SearchResult`)."""
        self.scoring_ = scoring
        self.n_evaluations_ = result.n_evaluations
        self.cv_folds_ = None if criterion.loo else criterion.folds
        self.cv_results_ = self._results_table(result, scoring)
        self.best_index_ = int(np.flatnonzero(result.cv_results["rank"] == 1)[0])
        self.best_params_ = dict(result.best_params)
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.alpha_ = self.best_params_["alpha"]
        self.gamma_ = self.best_params_.get("gamma")

    def _refit(self, family, criterion, scoring, X, y, groups, sample_weight):
        """``best_estimator_``: the best candidate refitted on all rows, on the rows its score was computed on."""
        t0 = time.perf_counter()
        kernel_params = {k: (int(v) if k == "degree" else v) for k, v in self.best_params_.items() if k != "alpha"}
        rows = criterion.rows_for(**kernel_params)
        params = {**self._model_params(), **kernel_params, "alpha": self.alpha_,
                  **family.refit_params(criterion, rows, scoring)}
        kept = getattr(criterion, "kept_factorization", None)  # the sparse criterion keeps the best's
        est = self._fit_one(params, X, y, None if kept is None else kept(**kernel_params), groups, sample_weight)
        if not family.check_refit(est, rows):  # defensive: the refit must be on the rows scored
            est = self._fit_one({**params, "basis": rows}, X, y, None, groups, sample_weight)
        self.best_estimator_ = est
        self.refit_time_ = time.perf_counter() - t0
        if self._classification:
            self.classes_ = est.classes_

    def _store_gradient(self, result, y):
        """The fitted attributes of a finished :class:`GradientSearch` (its :class:`GradientSearchResult`)."""
        self.search_time_ = result.search_time
        self.scoring_ = result.scoring
        self.n_evaluations_ = result.n_evaluations
        self.cv_folds_ = result.cv_folds
        self.cv_results_ = self._results_table(result.grid, result.scoring)
        self.grid_best_params_ = dict(result.grid.best_params)
        self.gradient_trace_ = result.trace
        self.gradient_selection_ = result.selection
        self.best_index_ = None
        self.basis_rows_ = result.basis_rows
        self.gradient_basis_ = result.basis
        self.max_evaluations_ = result.max_evaluations
        self.best_score_ = result.best_score
        self.alpha_, self.gamma_ = result.alpha, result.gamma
        self.best_params_ = {"gamma": self.gamma_, "alpha": self.alpha_}
        self.feature_relevance_ = result.feature_relevance
        self.refit_time_ = 0.0
        if self.refit:
            self.best_estimator_ = result.model
            self.refit_time_ = result.refit_time
        if self._classification:
            self.classes_ = result.model.classes_ if self.refit else np.unique(y)
        return self

    def _fit_one(self, params, X, y, kept=None, groups=None, sample_weight=None):
        # a refit that cross-validates (fixed size): the criterion's folds, or a splitter (with any groups)
        est = self._estimator_class(**params, n_jobs=self.n_jobs)
        if kept is not None:  # the factorisation scored at these parameters; used if data, kernel and rows match
            est._kept_factorization = kept
        kw = {"groups": groups} if hasattr(params.get("cv"), "split") and groups is not None else {}
        return est.fit(X, y, **kw, **({} if sample_weight is None else {"sample_weight": sample_weight}))

    @staticmethod
    def _results_table(result, scoring):
        res = result.cv_results
        names = [k[len("param_"):] for k in res if k.startswith("param_")]
        n = res["score"].size
        table = {"params": [{k: float(res[f"param_{k}"][i]) for k in names} for i in range(n)]}
        for k in names:
            table[f"param_{k}"] = res[f"param_{k}"]
        table["mean_test_score"] = 1.0 - res["error_rate"] if scoring == "error_rate" else -res["score"]
        table["rank_test_score"] = res["rank"]
        table["mean_test_mse"] = res["mse"]
        if "error_rate" in res:
            table["mean_test_error_rate"] = res["error_rate"]
        skip = {"score", "mse", "error_rate", "rank"}
        for k, v in res.items():
            if not k.startswith("param_") and k not in skip:
                table[k] = v
        return table

    # ----------------------------------------------------------- predict
    def _best(self):
        check_is_fitted(self, "best_params_")
        if not (self.refit and hasattr(self, "best_estimator_")):  # never an earlier fit's model
            raise AttributeError("refit=False: there is no refitted model to predict with; fit with refit=True")
        best = self.best_estimator_
        # the refits run on the validated array, so the refitted model holds no column names; it takes the
        # search's, as scikit-learn's searches' models do, so that X passed on to it is checked against them
        # (columns in another order refused, not read as the fitted ones; no false "fitted without feature
        # names" warning).  Set here, not at the fit: later stages (a target transform) replace the model.
        names = getattr(self, "feature_names_in_", None)
        if names is not None and getattr(best, "feature_names_in_", None) is None:
            best.feature_names_in_ = names
        return best

    def predict(self, X):
        """Predictions of ``best_estimator_``."""
        return self._best().predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = not self._classification
        return tags


class ClassifierSearchMixin:
    """The classifier presets' decision values (before :class:`FamilySearchCV` in the MRO)."""

    _classification = True

    def decision_function(self, X):
        """Decision values of ``best_estimator_``."""
        return self._best().decision_function(X)
