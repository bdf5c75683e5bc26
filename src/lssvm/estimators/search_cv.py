"""Estimators that select their own hyper-parameters, in the style of
scikit-learn's ``RidgeCV``: a search over kernel parameters (grid,
Nelder-Mead or coupled simulated annealing + Nelder-Mead) in which every
candidate is scored on a whole alpha path at once by an exact (or, for
Nyström, the approximate model's exact) CV criterion, then a refit of the
best model on all data.  The criterion (:mod:`lssvm.selection.criteria`)
reports the training rows a candidate used (basis, prototype pool, Nyström
columns); the refit is given those rows, so ``best_estimator_`` is exactly
the model whose CV score is ``best_score_``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._targets import check_numeric_targets
from .._threads import uses_threads
from ..backends import is_dask_collection
from ..kernels import DEFAULT_BLOCK_SIZE
from ..selection import (
    SparseLSSVMCV,
    coarse_to_fine_search,
    csa_search,
    grid_search,
    nelder_mead_search,
)
from ..solvers import check_alphas
from ._basis_size import AUTO_BASIS_DOC, AutoBasisSearchMixin, is_auto
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SEARCH_PARAMS, SEARCHES, SPARSE_SEARCH_PARAMS, ValidatedParamsMixin
from ._docs import PER_TARGET_RESULT_DOC, SPARSE_SEARCH_DOC
from ._docs import RESULT_DOC as _RESULT_DOC
from ._expansion import BestExpansionMixin
from ._intervals import SearchIntervalMixin
from ._numerical_notes import fit_reporting_notes
from ._per_target import TargetPaths, check_per_target_request, finish_per_target
from ._scale import DEFAULT_CV_GAMMA_FACTORS, is_scale, search_scale
from ._validation import validate_input
from ._weighted_search import WeightedSearchMixin
from .classifier import SparseLSSVC
from .regressor import SparseLSSVR

__all__ = ["DEFAULT_CV_ALPHAS", "DEFAULT_CV_GAMMA_FACTORS", "FixedSizeLSSVCCV", "FixedSizeLSSVRCV", "NystromLSSVCCV",
           "NystromLSSVRCV", "SEARCHES", "SparseLSSVCCV", "SparseLSSVRCV"]

#: 21 alphas, half a decade apart: paper 000's motorcycle (415) and Boston (1.7e-5) optima lie inside.
DEFAULT_CV_ALPHAS = np.logspace(-6, 4, 21)

_SEARCH_DOC = """
    Other Parameters
    ----------------
    alphas : array-like of float > 0, optional
        The regularisation path scored at every candidate (free: one
        factorisation serves all of it); default ``DEFAULT_CV_ALPHAS``,
        ``10^-6 ... 10^4`` (21 values).
    param_space : dict, optional
        Kernel parameters to search.  For ``search="grid"`` each maps to
        its values; for "nelder-mead" and "csa" to ``(low, high)`` (or
        values, whose min and max are used), searched in log2.  Default
        ``{"gamma": s * DEFAULT_CV_GAMMA_FACTORS}`` (s 2^-6 ... s 2^6, s = gamma_scale(X)), or ``{}`` for the
        linear kernel (alpha path only); a best value on an edge warns (``lssvm.SearchEdgeWarning``).
        The default grid is searched coarse-to-fine (``lssvm.selection.coarse_to_fine_search``), a given one in full.
    search : {"grid", "nelder-mead", "csa"}, default="grid"
        Exhaustive grid (as Ding & Liao 2012), SciPy's Nelder-Mead from the middle of
        the box (as Cawley & Talbot 2004), or coupled simulated annealing then Nelder-Mead
        (as Karsmakers et al. 2011 and LS-SVMlab).
    scoring : {"mse", "error_rate", "gcv", "evidence"}, optional
        CV criterion to minimise; default "error_rate" for classifiers (ties
        to the lower MSE), "mse" (PRESS / n) for regression; SparseLSSVRCV: "gcv" or -log "evidence" too.
    max_evaluations : int or None, default=None
        Most criterion calls of "nelder-mead" (it stops once converged: simplex within 0.05 in log2, values within
        1e-3 relative) and of each "csa" stage, None: 30; "gradient": per L-BFGS-B start, None: ``max(60, 3 (d' + 1))``
        (d' non-constant inputs).  At most ``lssvm.selection.MAX_EVALUATIONS`` (10,000); the grid evaluates all points.
    refit : bool, default=True
        Refit the best model on all data as ``best_estimator_``.
"""

#: Kernel parameters a search may vary, per kernel name.
_SEARCHABLE = {"rbf": {"gamma"}, "laplacian": {"gamma"}, "linear": set(), "poly": {"gamma", "degree", "coef0"}}


class _BaseSearchCV(BestExpansionMixin, ValidatedParamsMixin, BaseEstimator):
    """Search over kernel parameters with the alpha path free, then refit."""

    _classification = False
    _default_cv = "loo"
    _parameter_constraints = SEARCH_PARAMS

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

    def _default_scoring(self, y):
        return "error_rate" if self._classification else "mse"

    def _check_search_params(self, y):
        scoring = self._default_scoring(y) if self.scoring is None else self.scoring
        alphas, _ = check_alphas(DEFAULT_CV_ALPHAS if self.alphas is None else self.alphas)
        return scoring, alphas

    def _check_model_params(self, alphas):
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
        est = self._estimator_class(**{**self._model_params(), **self._validation_params(alphas), **first})
        (getattr(est, "_validate_params_", None) or est._check_params)()

    def _validation_params(self, alphas):
        return {"alpha": float(alphas[0])}

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
            Or, for the sparse searches, a Dask array / DataFrame: every
            evaluation then makes its passes over row blocks
            (``docs/scaling.md``; basis "random", row indices or points).
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
        return fit_reporting_notes(self, self._fit, X, y, groups, callback)  # one warning at most

    def _fit(self, X, y, groups=None, callback=None, sample_weight=None):
        on_dask = is_dask_collection(X) or is_dask_collection(y)
        if not on_dask:
            X, y = validate_input(self, X, y, dtype=np.float64, multi_output=not self._classification,
                                 y_numeric=not self._classification, ensure_min_samples=2)
            if not self._classification:
                y = check_numeric_targets(y)
        elif not self._accepts_dask:
            raise TypeError(f"{type(self).__name__} does not take Dask input (it needs all rows in memory); "
                            "SparseLSSVRCV and SparseLSSVCCV do")
        sample_weight = None if sample_weight is None else self._check_weights(sample_weight, X, y)  # sparse only
        scoring, alphas = self._check_search_params(y)
        per_target = getattr(self, "alpha_per_target", False)
        if per_target:  # shared kernel parameters, each target's alpha by its own CV path
            check_per_target_request(self, scoring, on_dask)
            if sample_weight is not None:
                raise ValueError("alpha_per_target=True does not take sample_weight yet; fit without weights, "
                                 "or with one shared alpha")
            scoring = "mse_per_target"
        self._scale = search_scale(self, X, sample_weight)
        self._check_model_params(alphas)
        rng = check_random_state(self.random_state)
        cv = self._default_cv if self.cv is None else self.cv
        if self.search == "gradient":
            if on_dask:
                raise TypeError("search='gradient' needs all rows in memory; pass a NumPy array, not Dask input")
            return self._fit_gradient(X, y, groups, alphas, cv, rng, callback)
        t0 = time.perf_counter()
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        criterion = self._criterion(X, y, cv=cv, alphas=alphas, classification=self._classification,
                                    groups=groups, random_state=rng, kernel=self.kernel,
                                    kernel_params=self._kernel_params(), scoring=scoring, **weighted)
        if on_dask:
            self.n_features_in_ = criterion.data.n_features
        if per_target:
            criterion = TargetPaths(criterion, self.store_cv_results)
        result = self._run_search(criterion, scoring, rng, callback)
        self.search_time_ = time.perf_counter() - t0
        self.scoring_ = scoring
        self.n_evaluations_ = result.n_evaluations
        self.cv_folds_ = None if criterion.loo else criterion.folds
        self.cv_results_ = self._results_table(result, scoring)
        self.best_index_ = int(np.flatnonzero(result.cv_results["rank"] == 1)[0])
        self.best_params_ = dict(result.best_params)
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.alpha_ = self.best_params_["alpha"]
        if per_target:
            finish_per_target(self, criterion, {k: v for k, v in self.best_params_.items() if k != "alpha"})
        self.gamma_ = self.best_params_.get("gamma")
        self.refit_time_ = 0.0
        if self.refit:
            t0 = time.perf_counter()
            kernel_params = {k: (int(v) if k == "degree" else v) for k, v in self.best_params_.items()
                             if k != "alpha"}
            rows = criterion.rows_for(**kernel_params)
            params = {**self._model_params(), **kernel_params, "alpha": self.alpha_,
                      **self._refit_params(criterion, rows, scoring)}
            kept = getattr(criterion, "kept_factorization", None)  # the sparse criterion keeps the best's
            est = self._fit_one(params, X, y, None if kept is None else kept(**kernel_params), groups, sample_weight)
            if not self._check_refit(est, rows):  # defensive: the refit must be on the rows scored
                est = self._fit_one({**params, **self._explicit_rows(rows)}, X, y, groups, sample_weight)
            self.best_estimator_ = est
            self.refit_time_ = time.perf_counter() - t0
            if self._classification:
                self.classes_ = est.classes_
        elif self._classification:
            self.classes_ = criterion.classes if on_dask else np.unique(y)
        return self

    _accepts_dask = False

    def _fit_gradient(self, X, y, groups, alphas, cv, rng, callback):
        raise ValueError(f"search='gradient' is available in SparseLSSVRCV and SparseLSSVCCV only, not in "
                         f"{type(self).__name__} (see lssvm.estimators.gradient_search)")

    def _fit_one(self, params, X, y, kept=None, groups=None, sample_weight=None):
        # a refit that cross-validates (fixed size): the criterion's folds, or a splitter (with any groups)
        est = self._estimator_class(**params, n_jobs=self.n_jobs)
        if kept is not None:  # the factorisation scored at these parameters; used if data, kernel and rows match
            est._kept_factorization = kept
        kw = {"groups": groups} if hasattr(params.get("cv"), "split") and groups is not None else {}
        return est.fit(X, y, **kw, **({} if sample_weight is None else {"sample_weight": sample_weight}))

    def _check_refit(self, est, rows):
        return True

    def _explicit_rows(self, rows):
        return {"basis": rows}

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
        return self.best_estimator_

    def predict(self, X):
        """Predictions of ``best_estimator_``."""
        return self._best().predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = not self._classification
        return tags


class _ClassifierSearchMixin:
    _classification = True

    def decision_function(self, X):
        """Decision values of ``best_estimator_``."""
        return self._best().decision_function(X)


# ---------------------------------------------------------------- sparse
class _SparseSearchCV(AutoBasisSearchMixin, WeightedSearchMixin, _BaseSearchCV):
    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="auto", n_basis=None, random_state=None, *,
                 basis_in_holdout="remove", gamma="scale", alpha=1.0, degree=3, coef0=1.0, basis_tol=1e-6,
                 pivot_tol=1e-6, n_candidates=None, rcond=1e-10, block_size=DEFAULT_BLOCK_SIZE,
                 normalize_kernel=False, n_jobs=None, n_restarts=2, hyper_penalty=False, selection_rule="one-se",
                 alpha_per_target=False, store_cv_results=False, n_targets_batch="auto", time_budget=None):
        self.n_restarts, self.hyper_penalty, self.selection_rule = n_restarts, hyper_penalty, selection_rule
        self.alpha_per_target, self.store_cv_results = alpha_per_target, store_cv_results
        self.n_targets_batch = n_targets_batch
        self.kernel, self.alphas, self.param_space, self.cv, self.search = kernel, alphas, param_space, cv, search
        self.scoring, self.max_evaluations, self.refit = scoring, max_evaluations, refit
        self.basis, self.n_basis, self.random_state, self.time_budget = basis, n_basis, random_state, time_budget
        self.basis_in_holdout, self.gamma, self.alpha = basis_in_holdout, gamma, alpha
        self.degree, self.coef0, self.basis_tol, self.pivot_tol = degree, coef0, basis_tol, pivot_tol
        self.n_candidates, self.rcond, self.block_size = n_candidates, rcond, block_size
        self.normalize_kernel, self.n_jobs = normalize_kernel, n_jobs

    _accepts_dask = True
    _parameter_constraints = SPARSE_SEARCH_PARAMS

    def _fit_gradient(self, X, y, groups, alphas, cv, rng, callback):
        from .gradient_search import fit_gradient_search

        return fit_gradient_search(self, X, y, groups, alphas, cv, rng, callback)

    def _criterion(self, X, y, scoring, **kw):
        if is_dask_collection(X) or is_dask_collection(y):  # the rows as a row source of the same criterion
            from ..backends.dask import DaskRows

            X, y = DaskRows(X, y, kw.pop("groups"), kw["classification"]), None
        return SparseLSSVMCV(X, y, basis="pchol" if str(self.basis) == "auto" else self.basis,
                             n_basis=None if is_auto(self.n_basis) else self.n_basis,
                             basis_in_holdout=self.basis_in_holdout, basis_alpha=self.alpha, basis_tol=self.basis_tol,
                             pivot_tol=self.pivot_tol, n_candidates=self.n_candidates, rcond=self.rcond,
                             keep_best=scoring if self.refit else None, n_targets_batch=self.n_targets_batch, **kw)

    def _model_params(self):
        return dict(kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                    basis_tol=self.basis_tol, pivot_tol=self.pivot_tol, rcond=self.rcond,
                    block_size=self.block_size, normalize_kernel=self.normalize_kernel)

    def _refit_params(self, criterion, rows, scoring):
        if criterion.draw_seed is not None:
            # redraw by the method with the criterion's seed: the same rows, and the
            # refitted model keeps its selection record (FVS reconstruction curve)
            return {"basis": self.basis, "n_basis": None if is_auto(self.n_basis) else self.n_basis,
                    "random_state": criterion.draw_seed,
                    "n_candidates": self.n_candidates}
        if rows is None:  # explicit basis points (Dask input)
            return {"basis": criterion.basis_points()}
        return {"basis": rows}

    def _check_refit(self, est, rows):
        return np.array_equal(est.basis_indices_, rows)

    def _validation_params(self, alphas):
        # alpha ranks greedy basis candidates; the path is searched separately
        return {"alpha": self.alpha, "n_candidates": self.n_candidates}


_SPARSE_DOC = SPARSE_SEARCH_DOC.replace("    random_state : int", AUTO_BASIS_DOC + "    random_state : int", 1) \
    + _SEARCH_DOC + _RESULT_DOC + PER_TARGET_RESULT_DOC


class SparseLSSVRCV(SearchIntervalMixin, RegressorMixin, _SparseSearchCV):
    __doc__ = """Sparse LS-SVM regression with built-in hyper-parameter selection:
    kernel parameters searched, alpha along an exact CV path (Cawley & Talbot 2004; Pahikkala et al. 2012).
""" + _SPARSE_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from lssvm import SparseLSSVRCV
    >>> from lssvm.datasets import load_motorcycle
    >>> X, y = load_motorcycle(return_X_y=True)
    >>> X = (X - X.mean()) / X.std()
    >>> model = SparseLSSVRCV(param_space={"gamma": 2.0 ** np.arange(-2, 6)}).fit(X, y)
    >>> sorted(model.best_params_)
    ['alpha', 'gamma']
    """

    _estimator_class = SparseLSSVR


@with_calibration("the refitted model's exact LOO (see :class:`lssvm.SparseLSSVC`)", "\n    Other Parameters", False)
class SparseLSSVCCV(SearchProbaMixin, _ClassifierSearchMixin, ClassifierMixin, _SparseSearchCV):
    __doc__ = """Sparse LS-SVM classification with built-in hyper-parameter selection
    (labels coded +1/-1, one-vs-rest for more classes).
""" + _SPARSE_DOC + """    classes_ : ndarray of shape (n_classes,)
"""

    _estimator_class = SparseLSSVC


# The fixed-size and Nyström searches live in family_search_cv (module size);
# imported here so that this module keeps exporting all six.
from .family_search_cv import (  # noqa: E402
    FixedSizeLSSVCCV,
    FixedSizeLSSVRCV,
    NystromLSSVCCV,
    NystromLSSVRCV,
)
