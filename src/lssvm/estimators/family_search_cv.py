"""The fixed-size (Karsmakers et al. 2011) and Nyström (Ding & Liao 2012)
members of the self-tuning estimators: the search itself, its parameters and
its results are those of :mod:`lssvm.estimators.search_cv`; this module adds
each family's criterion, model parameters and refit rows.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, StratifiedKFold

from .._labels import encode_classes
from ..backends import is_dask_collection
from ..kernels import DEFAULT_BLOCK_SIZE
from ..selection import FixedSizeCV, NystromCV
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SEARCH_PARAMS
from ._intervals import SearchIntervalMixin
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .nystrom import NystromLSSVC, NystromLSSVR
from .search_cv import _RESULT_DOC, _SEARCH_DOC, _BaseSearchCV, _ClassifierSearchMixin

__all__ = ["FixedSizeLSSVRCV", "FixedSizeLSSVCCV", "NystromLSSVRCV", "NystromLSSVCCV"]


# ------------------------------------------------------------ fixed size
class _FixedSizeSearchCV(_BaseSearchCV):
    _default_cv = 10
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: FixedSizeLSSVR._parameter_constraints[k] for k in (
            "basis", "n_basis", "solver", "max_size", "cv", "n_candidates", "nu", "stop_window", "stop_tol",
            "size_rule")},
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv=10, search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="kcenter", n_basis=None, random_state=None, *,
                 solver="scdp", max_size=None, gamma="scale", n_candidates=None, nu=1e-8, stop_window=10,
                 stop_tol=1e-4, size_rule=0.1, degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None):
        self.kernel = kernel
        self.alphas = alphas
        self.param_space = param_space
        self.cv = cv
        self.search = search
        self.scoring = scoring
        self.max_evaluations = max_evaluations
        self.refit = refit
        self.basis = basis
        self.n_basis = n_basis
        self.random_state = random_state
        self.solver = solver
        self.max_size = max_size
        self.gamma = gamma
        self.n_candidates = n_candidates
        self.nu = nu
        self.stop_window = stop_window
        self.stop_tol = stop_tol
        self.size_rule = size_rule
        self.degree = degree
        self.coef0 = coef0
        self.normalize_kernel = normalize_kernel
        self.block_size = block_size
        self.n_jobs = n_jobs

    _accepts_dask = True

    def _criterion(self, X, y, scoring, **kw):
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.family_cv import DaskFixedSizeCV

            return DaskFixedSizeCV(X, y, basis=self.basis, n_basis=self.n_basis, solver=self.solver,
                                   max_size=self.max_size, n_candidates=self.n_candidates, nu=self.nu,
                                   stop_window=self.stop_window, stop_tol=self.stop_tol, size_rule=self.size_rule,
                                   size_scoring=scoring, **kw)
        return FixedSizeCV(X, y, basis=self.basis, n_basis=self.n_basis, solver=self.solver,
                           max_size=self.max_size, n_candidates=self.n_candidates, nu=self.nu,
                           stop_window=self.stop_window, stop_tol=self.stop_tol, size_rule=self.size_rule,
                           size_scoring=scoring, **kw)

    def _model_params(self):
        return dict(kernel=self.kernel, gamma=self.gamma, solver=self.solver, max_size=self.max_size,
                    n_candidates=self.n_candidates, nu=self.nu, stop_window=self.stop_window,
                    stop_tol=self.stop_tol, size_rule=self.size_rule, degree=self.degree, coef0=self.coef0,
                    normalize_kernel=self.normalize_kernel, block_size=self.block_size)

    def _refit_params(self, criterion, rows, scoring):
        # Dask input: the same splitter, assigned by passes.  An int or a (Stratified)KFold that splits the
        # same way every time names the same folds on the full rows; kept as such, the refits of CV+ folds
        # (predict_interval) split their own rows as the Dask fit's do
        if criterion.folds is None or _same_folds_every_time(self.cv):
            cv = self.cv if criterion.folds is not None else criterion.cv
            return {"basis": rows, "cv": cv, "random_state": criterion.refit_random_state, "scoring": scoring}
        n = criterion.X.shape[0]
        folds = [(np.setdiff1d(np.arange(n), t), t) for t in criterion.folds]
        return {"basis": rows, "cv": folds, "random_state": criterion.refit_random_state, "scoring": scoring}


def _same_folds_every_time(cv):
    """Whether ``cv`` splits the same rows into the same folds at every call
    (an int, or an unshuffled or seeded KFold / StratifiedKFold: no groups)."""
    if isinstance(cv, Integral):
        return True
    if type(cv) not in (KFold, StratifiedKFold):
        return False
    return not cv.shuffle or isinstance(cv.random_state, Integral)


_FIXED_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : int, splitter or iterable of (train, test), default=10
        The fast v-fold CV of Karsmakers et al. 2011 (§4.4): an int k is unshuffled
        ``KFold(k)`` (``StratifiedKFold(k)`` for classifiers), used for every candidate.
    basis : {"kcenter", "random", "renyi", "all"} or 1-D int array, default="kcenter"
        The prototype pool, drawn once ("renyi" depends on the kernel: per candidate).
    n_basis, solver, max_size, n_candidates, nu, stop_window, stop_tol, size_rule,
    degree, coef0, normalize_kernel, block_size, n_jobs
        As for :class:`lssvm.FixedSizeLSSVR`; each alpha is scored at the
        model size ``size_rule`` picks, with the search's ``scoring``.
    random_state : int, RandomState or None
    gamma : float or "scale", default="scale"
        Used only when "gamma" is not searched.
""" + _SEARCH_DOC + _RESULT_DOC


class FixedSizeLSSVRCV(SearchIntervalMixin, RegressorMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM regression (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and (by its own CV) model size.
""" + _FIXED_DOC

    _estimator_class = FixedSizeLSSVR


@with_calibration("the refitted model's v-fold values (see :class:`lssvm.FixedSizeLSSVC`)", "\n    Other Parameters", False)
class FixedSizeLSSVCCV(SearchProbaMixin, _ClassifierSearchMixin, ClassifierMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM classification (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and model size.  With more than two
    classes the criterion is the MSE of the coded outputs.
""" + _FIXED_DOC + """    classes_ : ndarray of shape (n_classes,)
"""

    _estimator_class = FixedSizeLSSVC

    def _n_classes(self, y):
        if is_dask_collection(y):  # one pass; the labels are checked when the criterion counts them
            from ..backends.dask.families import class_labels

            return class_labels(y).size
        return encode_classes(y, type(self).__name__)[0].size  # clear errors for invalid labels

    def _default_scoring(self, y):
        # with more classes each one-vs-rest output picks its own size: only the MSE is defined
        return "error_rate" if self._n_classes(y) == 2 else "mse"

    def _check_search_params(self, y):
        scoring, alphas = super()._check_search_params(y)
        if scoring == "error_rate" and self._n_classes(y) > 2:
            raise ValueError("scoring='error_rate' needs two classes for fixed-size models (each one-vs-rest "
                             "output picks its own size); use scoring='mse'")
        return scoring, alphas


# --------------------------------------------------------------- Nyström
class _NystromSearchCV(_BaseSearchCV):
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: NystromLSSVR._parameter_constraints[k] for k in ("basis", "n_basis", "rank", "predictor", "rcond")},
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="random", n_basis=None, random_state=None, *,
                 rank=None, predictor="low-rank", gamma="scale", degree=3, coef0=1.0,
                 normalize_kernel=False, block_size=DEFAULT_BLOCK_SIZE, n_jobs=None, rcond=1e-10):
        self.kernel = kernel
        self.alphas = alphas
        self.param_space = param_space
        self.cv = cv
        self.search = search
        self.scoring = scoring
        self.max_evaluations = max_evaluations
        self.refit = refit
        self.basis = basis
        self.n_basis = n_basis
        self.random_state = random_state
        self.rcond = rcond
        self.rank = rank
        self.predictor = predictor
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.normalize_kernel = normalize_kernel
        self.block_size = block_size
        self.n_jobs = n_jobs

    _accepts_dask = True

    def _criterion(self, X, y, scoring, **kw):
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.family_cv import DaskNystromCV

            return DaskNystromCV(X, y, n_basis=self.n_basis, rank=0.5 if self.rank is None else self.rank,
                                 basis=self.basis, rcond=self.rcond, **kw)
        return NystromCV(X, y, n_basis=self.n_basis, rank=0.5 if self.rank is None else self.rank,
                         basis=self.basis, rcond=self.rcond, **kw)

    def _model_params(self):
        return dict(kernel=self.kernel, gamma=self.gamma, rank=self.rank, predictor=self.predictor,
                    degree=self.degree, coef0=self.coef0, normalize_kernel=self.normalize_kernel,
                    block_size=self.block_size, rcond=self.rcond)

    def _refit_params(self, criterion, rows, scoring):
        return {"basis": rows}


_NYSTROM_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : "loo", int, splitter or iterable of (train, test), default="loo"
        Exact CV of the Nyström model (the approximate CV of Ding & Liao 2012).
    basis, n_basis, rank
        As for :class:`lssvm.NystromLSSVR`; random and k-center columns
        are drawn once for the whole search, FVS columns per candidate.
    predictor : {"low-rank", "exact"}, default="low-rank"
        Predictor of the refitted model; "low-rank" is the model the CV
        criterion scores.
    random_state : int, RandomState or None
    gamma, degree, coef0, normalize_kernel, block_size, n_jobs, rcond
        As for :class:`lssvm.NystromLSSVR` (gamma only when not searched).
""" + _SEARCH_DOC + _RESULT_DOC


class NystromLSSVRCV(SearchIntervalMixin, RegressorMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM regression (Ding & Liao 2012) with built-in hyper-parameter
    selection on the approximate model's exact CV.
""" + _NYSTROM_DOC

    _estimator_class = NystromLSSVR


@with_calibration("the refitted model's exact LOO (see :class:`lssvm.NystromLSSVC`)", "\n    Other Parameters", False)
class NystromLSSVCCV(SearchProbaMixin, _ClassifierSearchMixin, ClassifierMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM classification (Ding & Liao 2012) with built-in
    hyper-parameter selection on the approximate model's exact CV.
""" + _NYSTROM_DOC + """    classes_ : ndarray of shape (n_classes,)
"""

    _estimator_class = NystromLSSVC
