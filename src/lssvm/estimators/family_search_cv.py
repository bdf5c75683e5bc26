"""The sparse family's self-tuning estimators: each ``*CV`` estimator is the one search of
:mod:`lssvm.estimators.search_cv` over a family, a thin preset in the style of
skglm's estimators composing a solver and a penalty.

A family (:class:`SparseFamily`, Cawley & Talbot 2004; :class:`lssvm.estimators.fixed_size.FixedSizeFamily`,
Karsmakers et al. 2011; :class:`lssvm.estimators.nystrom.NystromFamily`, Ding & Liao 2012) supplies its
criterion, its base estimators, the model parameters the refit takes and the
rows it is given; a preset adds the constructor (scikit-learn reads the
parameters from it) and the docstring.  The other families' presets live in
their families' modules.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import StrOptions

from ..backends import is_dask_collection
from ..kernels import DEFAULT_BLOCK_SIZE
from ..selection import SparseLSSVMCV
from ._basis_size import AUTO_BASIS_DOC, is_auto
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SPARSE_SEARCH_PARAMS
from ._docs import PER_TARGET_RESULT_DOC, RESULT_DOC, SEARCH_DOC, SPARSE_SEARCH_DOC
from ._intervals import SearchIntervalMixin
from ._weighted_search import WeightedSearchMixin
from .ard_stage import ARD_DOC, DEFAULT_TIME_BUDGET
from .classifier import SparseLSSVC
from .gradient_search import GradientSearch
from .regressor import SparseLSSVR
from .search_cv import ClassifierSearchMixin, FamilySearchCV, SearchFamily

__all__ = ["SparseFamily", "SparseLSSVCCV", "SparseLSSVRCV"]


def _dask_rows(X, y, kw):
    """NumPy rows as given, Dask collections as a row source (``lssvm.backends.dask.DaskRows``) of the same
    criterion; takes ``groups`` out of ``kw`` for the latter."""
    if not (is_dask_collection(X) or is_dask_collection(y)):
        return X, y
    from ..backends.dask import DaskRows

    return DaskRows(X, y, kw.pop("groups"), kw["classification"]), None


# ---------------------------------------------------------------- sparse
class SparseFamily(SearchFamily):
    """The sparse LS-SVM (Cawley & Talbot 2004): a basis of training rows, exact LOO / k-fold paths
    (:class:`lssvm.selection.SparseLSSVMCV`); the only family with the gradient search."""

    regressor, classifier = SparseLSSVR, SparseLSSVC
    default_cv = "loo"
    has_gradient_search = True
    model_params = ("kernel", "gamma", "degree", "coef0", "basis_tol", "pivot_tol", "rcond", "block_size",
                    "normalize_kernel")

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        X, y = _dask_rows(X, y, kw)
        return SparseLSSVMCV(X, y, basis="pchol" if str(s.basis) == "auto" else s.basis,
                             n_basis=None if is_auto(s.n_basis) else s.n_basis,
                             basis_in_holdout=s.basis_in_holdout, basis_alpha=s.alpha, basis_tol=s.basis_tol,
                             pivot_tol=s.pivot_tol, n_candidates=s.n_candidates, rcond=s.rcond,
                             keep_best=scoring if s.refit else None, n_targets_batch=s.n_targets_batch, **kw)

    def refit_params(self, criterion, rows, scoring):
        s = self.search
        if criterion.draw_seed is not None:
            # redraw by the method with the criterion's seed: the same rows, and the
            # refitted model keeps its selection record (FVS reconstruction curve)
            return {"basis": s.basis, "n_basis": None if is_auto(s.n_basis) else s.n_basis,
                    "random_state": criterion.draw_seed, "n_candidates": s.n_candidates}
        if rows is None:  # explicit basis points (Dask input)
            return {"basis": criterion.basis_points()}
        return {"basis": rows}

    def check_refit(self, est, rows):
        return np.array_equal(est.basis_indices_, rows)

    def validation_params(self, alphas):
        # alpha ranks greedy basis candidates; the path is searched separately
        return {"alpha": self.search.alpha, "n_candidates": self.search.n_candidates}

    def gradient_search(self):
        s = self.search
        # n_basis="auto" does not apply to the gradient search: its own default size
        return GradientSearch(lambda **params: s._estimator_class(**{**s._model_params(), **params}),
                              classification=s._classification,
                              **{k: None if k == "n_basis" and is_auto(s.n_basis) else getattr(s, k)
                                 for k in GradientSearch.PARAMETERS}).check()


class _SparseSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = SparseFamily
    _parameter_constraints = {**SPARSE_SEARCH_PARAMS, "ard": [StrOptions({"auto"}), "boolean"]}

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="auto", n_basis="auto", random_state=None, *,
                 basis_in_holdout="remove", gamma="scale", alpha=1.0, degree=3, coef0=1.0, basis_tol=1e-6,
                 pivot_tol=1e-6, n_candidates=None, rcond=1e-10, block_size=DEFAULT_BLOCK_SIZE,
                 normalize_kernel=False, n_jobs=None, n_restarts=2, hyper_penalty=False, selection_rule="one-se",
                 alpha_per_target=False, store_cv_results=False, n_targets_batch="auto",
                 time_budget=DEFAULT_TIME_BUDGET, ard="auto"):
        self.ard = ard
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


_SPARSE_DOC = SPARSE_SEARCH_DOC.replace("    random_state : int", AUTO_BASIS_DOC + ARD_DOC + "    random_state : int", 1) \
    + SEARCH_DOC + RESULT_DOC + PER_TARGET_RESULT_DOC


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


@with_calibration("the refitted model's exact LOO (see :class:`lssvm.SparseLSSVC`)", "\n    Other Parameters", False)
class SparseLSSVCCV(SearchProbaMixin, ClassifierSearchMixin, ClassifierMixin, _SparseSearchCV):
    __doc__ = """Sparse LS-SVM classification with built-in hyper-parameter selection
    (labels coded +1/-1, one-vs-rest for more classes).
""" + _SPARSE_DOC + """    classes_ : ndarray of shape (n_classes,)
"""
