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
from sklearn.utils._param_validation import StrOptions

from .._labels import encode_classes
from ..backends import is_dask_collection
from ..basis import prototype_pool
from ..kernels import DEFAULT_BLOCK_SIZE, gamma_scale, make_kernel
from ..selection import FixedSizeCV, NystromCV, SparseLSSVMCV
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SEARCH_PARAMS
from ._intervals import SearchIntervalMixin
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .nystrom import NystromLSSVC, NystromLSSVR
from .search_cv import _RESULT_DOC, _SEARCH_DOC, _BaseSearchCV, _ClassifierSearchMixin

__all__ = ["FixedSizeLSSVRCV", "FixedSizeLSSVCCV", "NystromLSSVRCV", "NystromLSSVCCV", "SIZE_SEARCHES"]

#: When the fixed-size search picks the model size: once, at the best width and alpha of the full-pool model
#: ("refit"), or at every candidate ("candidates", Karsmakers et al. 2011's procedure).
SIZE_SEARCHES = ("refit", "candidates")


# ------------------------------------------------------------ fixed size
class _FixedSizeSearchCV(_BaseSearchCV):
    _default_cv = 10
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: FixedSizeLSSVR._parameter_constraints[k] for k in (
            "basis", "n_basis", "solver", "max_size", "cv", "n_candidates", "nu", "stop_window", "stop_tol",
            "size_rule")},
        "size_search": [StrOptions(set(SIZE_SEARCHES))],
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv=10, search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="pchol", n_basis=None, random_state=None, *,
                 solver="scdp", max_size=None, gamma="scale", n_candidates=None, nu=1e-8, stop_window=10,
                 stop_tol=1e-4, size_rule=0.1, size_search="refit", degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None):
        self.size_search = size_search
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

    def _full_pool_search(self):
        """Whether the width and alpha are searched on the full-pool model (``size_search="refit"``): for
        pools drawn once (a kernel-dependent "renyi" pool keeps the per-candidate criterion); "direct" solves
        are the full-pool model itself."""
        per_candidate = isinstance(self.basis, str) and self.basis == "renyi"
        return (self.size_search == "refit" or self.solver == "direct") and not per_candidate

    def _criterion(self, X, y, scoring, **kw):
        on_dask = is_dask_collection(X) or is_dask_collection(y)
        if self._full_pool_search():
            return self._full_pool_criterion(X, y, on_dask, scoring, **kw)
        if on_dask:
            from ..backends.dask.family_cv import DaskFixedSizeCV

            return DaskFixedSizeCV(X, y, basis=self.basis, n_basis=self.n_basis, solver=self.solver,
                                   max_size=self.max_size, n_candidates=self.n_candidates, nu=self.nu,
                                   stop_window=self.stop_window, stop_tol=self.stop_tol, size_rule=self.size_rule,
                                   size_scoring=scoring, **kw)
        return FixedSizeCV(X, y, basis=self.basis, n_basis=self.n_basis, solver=self.solver,
                           max_size=self.max_size, n_candidates=self.n_candidates, nu=self.nu,
                           stop_window=self.stop_window, stop_tol=self.stop_tol, size_rule=self.size_rule,
                           size_scoring=scoring, **kw)

    def _full_pool_criterion(self, X, y, on_dask, scoring, **kw):
        """The exact CV of the model on the whole pool (SCDP run to the end, i.e. the sparse LS-SVM on the
        prototypes), the prototypes kept in every fold's training rows as the fixed-size CV keeps them
        (:class:`lssvm.selection.SparseLSSVMCV`, ``basis_in_holdout="keep"``): the search then costs what
        the sparse family's does; SCDP and its size rule run once, in the refit."""
        rng = kw["random_state"]
        self._refit_seed = int(rng.randint(2**31 - 1))
        basis, n_basis = self.basis, self.n_basis
        if on_dask:
            from ..backends.dask import DaskRows

            X, y = DaskRows(X, y, kw.pop("groups"), kw["classification"]), None
            if isinstance(basis, str) and basis == "random" and n_basis is None:  # the fixed-size default pool
                from ..basis import default_n_basis

                n_basis = default_n_basis(X.n_samples)
        elif isinstance(basis, str) and basis != "pchol" or np.ndim(basis) == 2:
            # the pool of the fixed-size model, drawn once (at the "scale" width if the width is searched)
            params = {k: v for k, v in kw["kernel_params"].items() if not (k == "gamma" and v is None)}
            params.setdefault("gamma", gamma_scale(X))
            kern = make_kernel(kw["kernel"], **params)
            basis = prototype_pool(np.asarray(X, dtype=float), kern, basis, n_basis, rng)[1]
            if basis is None:
                raise ValueError("the basis (prototype pool) must come from the training rows: a method name or "
                                 "row indices (a search scores every candidate on its own rows)")
        if isinstance(kw["cv"], Integral):  # exact LOO, as the sparse family: 2.5x cheaper than 10 folds
            kw["cv"] = "loo"
        # the best candidate's factorisation is kept: the refit's whole-pool model is that factorisation's
        return SparseLSSVMCV(X, y, basis=basis, n_basis=n_basis, basis_in_holdout="keep",
                             keep_best=scoring if self.refit else None, **kw)

    def _model_params(self):
        return dict(kernel=self.kernel, gamma=self.gamma, solver=self.solver, max_size=self.max_size,
                    n_candidates=self.n_candidates, nu=self.nu, stop_window=self.stop_window,
                    stop_tol=self.stop_tol, size_rule=self.size_rule, degree=self.degree, coef0=self.coef0,
                    normalize_kernel=self.normalize_kernel, block_size=self.block_size)

    def _refit_params(self, criterion, rows, scoring):
        if self._full_pool_search():  # the size picked once, by the model's own CV on the search's folds
            if rows is None:
                rows = criterion.basis_points()
            folds = getattr(criterion, "folds", None)
            if folds is None or _same_folds_every_time(self.cv):
                return {"basis": rows, "cv": self.cv, "random_state": self._refit_seed, "scoring": scoring}
            n = sum(len(t) for t in folds)
            return {"basis": rows, "cv": [(np.setdiff1d(np.arange(n), t), t) for t in folds],
                    "random_state": self._refit_seed, "scoring": scoring}
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
    basis : {"pchol", "kcenter", "random", "renyi", "all"} or 1-D int array, default="pchol"
        The prototype pool, drawn once ("pchol" at the fixed width, or at the "scale" width when the
        width is searched; on Dask input among a sample of rows; "renyi" depends on the kernel: per candidate).
    size_search : {"refit", "candidates"}, default="refit"
        "refit": every candidate (width, alpha) is scored by the exact CV of the model on the whole
        pool (the sparse LS-SVM on the prototypes; exact LOO for an int ``cv``, as
        :class:`lssvm.SparseLSSVRCV`, whose cost the search then has; a splitter's folds with the
        prototypes kept in every fold's training rows), then SCDP and its size rule run once, at the
        best candidate, on ``cv``'s folds, in the refit (the whole pool where SCDP's sizes all score
        worse, see :class:`lssvm.FixedSizeLSSVR`): ``best_score_`` is the full-pool model's score and
        ``best_estimator_.cv_score_`` the refitted model's at its size.  "candidates": each alpha of each
        candidate is scored at the size the size rule picks on its own SCDP curves (Karsmakers et al. 2011,
        §4.5; many times slower: ``benchmarks/defaults_speed.py``).  A "renyi" pool always uses
        "candidates"; ``solver="direct"`` always "refit" (the full-pool model is its model).
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
