"""The fixed-size searches: :class:`FixedSizeFamily` (Karsmakers et al. 2011), the family the one search of
:mod:`lssvm.estimators.search_cv` runs over, and its presets :class:`FixedSizeLSSVRCV` and
:class:`FixedSizeLSSVCCV` (the constructor scikit-learn reads the parameters from, and the docstring).
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
from ..selection import SparseLSSVMCV
from ..selection.fixed_size import FixedSizeCV
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SEARCH_PARAMS
from ._docs import RESULT_DOC, SEARCH_DOC
from ._intervals import SearchIntervalMixin
from ._weighted_search import WeightedSearchMixin
from .family_search_cv import _dask_rows
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .search_cv import ClassifierSearchMixin, FamilySearchCV, SearchFamily

__all__ = ["FixedSizeFamily", "FixedSizeLSSVCCV", "FixedSizeLSSVRCV", "SIZE_SEARCHES"]

#: When the fixed-size search picks the model size: once, at the best width and alpha of the full-pool model
#: ("refit"), or at every candidate ("candidates", Karsmakers et al. 2011's procedure).
SIZE_SEARCHES = ("refit", "candidates")


#: The fixed-size searches' parameters (``FixedSizeLSSVRCV``, ``FixedSizeLSSVCCV``).
FIXED_SIZE_SEARCH_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : int, splitter or iterable of (train, test), default=10
        The fast v-fold CV of Karsmakers et al. 2011 (§4.4): an int k is unshuffled
        ``KFold(k)`` (``StratifiedKFold(k)`` for classifiers), used for every candidate.
        Why 10 where the sparse and Nyström searches default to "loo": SCDP picks the model size
        on held-out folds (the size rule compares fold errors along each SCDP curve), which has no
        leave-one-out closed form; with ``size_search="refit"`` an int ``cv`` still scores the
        candidates by exact LOO and uses the k folds for the size only.
    basis : {"pchol", "kcenter", "random", "renyi", "all"} or 1-D int array, default="pchol"
        The prototype pool, drawn once ("pchol" at the fixed width, or at the "scale" width when the
        width is searched; on Dask input among a sample of rows; "renyi" depends on the kernel: per candidate).
        The default is the sparse family's and works on NumPy and Dask input.
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
    size_rule : float >= 0, default=0.0
        The size rule's tolerance in fold standard deviations (:class:`lssvm.FixedSizeLSSVR`, whose
        default is the paper's 0.1): 0 keeps the size of lowest CV score, the whole pool included.
        On elevators 0.1 kept 155 and 176 of 500 prototypes in 2 of 10 draws, at 1.06x the test MSE
        of the whole pool, which 0 keeps (its fold scores are heavy-tailed: 0.1 spread is about 5 %
        of the score).
    n_basis, solver, max_size, n_candidates, nu, stop_window, stop_tol,
    degree, coef0, normalize_kernel, block_size, n_jobs
        As for :class:`lssvm.FixedSizeLSSVR`; each alpha is scored at the
        model size ``size_rule`` picks, with the search's ``scoring``.
    random_state : int, RandomState or None
    gamma : float or "scale", default="scale"
        Used only when "gamma" is not searched.
""" + SEARCH_DOC + RESULT_DOC


def _same_folds_every_time(cv):
    """Whether ``cv`` splits the same rows into the same folds at every call
    (an int, or an unshuffled or seeded KFold / StratifiedKFold: no groups)."""
    if isinstance(cv, Integral):
        return True
    if type(cv) not in (KFold, StratifiedKFold):
        return False
    return not cv.shuffle or isinstance(cv.random_state, Integral)


class FixedSizeFamily(SearchFamily):
    """The fixed-size LS-SVM (Karsmakers et al. 2011): a prototype pool, SCDP choosing which prototypes get a
    weight and its size rule the model size on v folds.  With ``size_search="refit"`` the candidates are scored
    by the exact CV of the model on the whole pool (the sparse criterion on the prototypes) and SCDP runs once,
    in the refit; with "candidates" by :class:`lssvm.selection.fixed_size.FixedSizeCV` at every candidate."""

    regressor, classifier = FixedSizeLSSVR, FixedSizeLSSVC
    default_cv = 10
    cost_kind = "pool"
    model_params = ("kernel", "gamma", "solver", "max_size", "n_candidates", "nu", "stop_window", "stop_tol",
                    "size_rule", "degree", "coef0", "normalize_kernel", "block_size")

    def __init__(self, search):
        super().__init__(search)
        self.refit_seed = None  # the full-pool search's seed of the SCDP refit

    def full_pool_search(self):
        """Whether the width and alpha are searched on the full-pool model (``size_search="refit"``): for
        pools drawn once (a kernel-dependent "renyi" pool keeps the per-candidate criterion); "direct" solves
        are the full-pool model itself."""
        s = self.search
        per_candidate = isinstance(s.basis, str) and s.basis == "renyi"
        return (s.size_search == "refit" or s.solver == "direct") and not per_candidate

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        if self.full_pool_search():
            return self._full_pool_criterion(X, y, scoring, **kw)
        if kw.get("sample_weight") is not None:
            raise ValueError("sample_weight is taken by the fixed-size search with size_search='refit' (the "
                             "default; the size then by the refit's weighted v-fold CV), not with "
                             "size_search='candidates' or basis='renyi'")
        size = dict(basis=s.basis, n_basis=s.n_basis, solver=s.solver, max_size=s.max_size,
                    n_candidates=s.n_candidates, nu=s.nu, stop_window=s.stop_window, stop_tol=s.stop_tol,
                    size_rule=s.size_rule, size_scoring=scoring)
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.fixed_size import DaskFixedSizeCV

            return DaskFixedSizeCV(X, y, **size, **kw)
        return FixedSizeCV(X, y, **size, **kw)

    def _full_pool_criterion(self, X, y, scoring, **kw):
        """The exact CV of the model on the whole pool (SCDP run to the end, i.e. the sparse LS-SVM on the
        prototypes), the prototypes kept in every fold's training rows as the fixed-size CV keeps them
        (:class:`lssvm.selection.SparseLSSVMCV`, ``basis_in_holdout="keep"``): the search then costs what
        the sparse family's does; SCDP and its size rule run once, in the refit."""
        rng = kw["random_state"]
        self.refit_seed = int(rng.randint(2**31 - 1))
        basis, n_basis = self.search.basis, self.search.n_basis
        on_dask = is_dask_collection(X) or is_dask_collection(y)
        X, y = _dask_rows(X, y, kw)
        if on_dask:
            if isinstance(basis, str) and basis == "random" and n_basis is None:  # the fixed-size default pool
                from ..basis import default_n_basis

                n_basis = default_n_basis(X.n_samples)
        elif isinstance(basis, str) and basis != "pchol" or np.ndim(basis) == 2:
            # the pool of the fixed-size model, drawn once (at the "scale" width if the width is searched)
            params = {k: v for k, v in kw["kernel_params"].items() if not (k == "gamma" and v is None)}
            weights = kw.get("sample_weight")
            params.setdefault("gamma", gamma_scale(X, weights))
            kern = make_kernel(kw["kernel"], **params)
            # a method draws among the positive-weight rows (a zero weight is a removed row)
            pool = np.arange(len(X)) if weights is None or np.ndim(basis) == 2 else np.flatnonzero(weights > 0)
            basis = prototype_pool(np.asarray(X, dtype=float)[pool], kern, basis, n_basis, rng)[1]
            basis = None if basis is None else pool[basis]
            if basis is None:
                raise ValueError("the basis (prototype pool) must come from the training rows: a method name or "
                                 "row indices (a search scores every candidate on its own rows)")
        if isinstance(kw["cv"], Integral):  # exact LOO, as the sparse family: 2.5x cheaper than 10 folds
            kw["cv"] = "loo"
        # the best candidate's factorisation is kept: the refit's whole-pool model is that factorisation's
        return SparseLSSVMCV(X, y, basis=basis, n_basis=n_basis, basis_in_holdout="keep",
                             keep_best=scoring if self.search.refit else None, **kw)

    def refit_params(self, criterion, rows, scoring):
        cv = self.search.cv
        if self.full_pool_search():  # the size picked once, by the model's own CV on the search's folds
            if rows is None:
                rows = criterion.basis_points()
            folds = getattr(criterion, "folds", None)
            if folds is None or _same_folds_every_time(cv):
                return {"basis": rows, "cv": cv, "random_state": self.refit_seed, "scoring": scoring}
            n = sum(len(t) for t in folds)
            return {"basis": rows, "cv": [(np.setdiff1d(np.arange(n), t), t) for t in folds],
                    "random_state": self.refit_seed, "scoring": scoring}
        # Dask input: the same splitter, assigned by passes.  An int or a (Stratified)KFold that splits the
        # same way every time names the same folds on the full rows; kept as such, the refits of CV+ folds
        # (predict_interval) split their own rows as the Dask fit's do
        if criterion.folds is None or _same_folds_every_time(cv):
            return {"basis": rows, "cv": cv if criterion.folds is not None else criterion.cv,
                    "random_state": criterion.refit_random_state, "scoring": scoring}
        n = criterion.X.shape[0]
        folds = [(np.setdiff1d(np.arange(n), t), t) for t in criterion.folds]
        return {"basis": rows, "cv": folds, "random_state": criterion.refit_random_state, "scoring": scoring}

    def _n_classes(self, y):
        if is_dask_collection(y):  # one pass; the labels are checked when the criterion counts them
            from ..backends.dask.families import class_labels

            return class_labels(y).size
        return encode_classes(y, type(self.search).__name__)[0].size  # clear errors for invalid labels

    def default_scoring(self, y):
        if not self.search._classification:
            return "mse"
        # with more classes each one-vs-rest output picks its own size: only the MSE is defined
        return "error_rate" if self._n_classes(y) == 2 else "mse"

    def check_scoring(self, scoring, y):
        if self.search._classification and scoring == "error_rate" and self._n_classes(y) > 2:
            raise ValueError("scoring='error_rate' needs two classes for fixed-size models (each one-vs-rest "
                             "output picks its own size); use scoring='mse'")


class _FixedSizeSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = FixedSizeFamily
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
                 stop_tol=1e-4, size_rule=0.0, size_search="refit", degree=3, coef0=1.0, normalize_kernel=False,
                 block_size=DEFAULT_BLOCK_SIZE, n_jobs=None):
        self.kernel, self.alphas, self.param_space, self.cv, self.search = kernel, alphas, param_space, cv, search
        self.scoring, self.max_evaluations, self.refit = scoring, max_evaluations, refit
        self.basis, self.n_basis, self.random_state = basis, n_basis, random_state
        self.solver, self.max_size, self.gamma, self.n_candidates = solver, max_size, gamma, n_candidates
        self.nu, self.stop_window, self.stop_tol, self.size_rule = nu, stop_window, stop_tol, size_rule
        self.size_search, self.degree, self.coef0 = size_search, degree, coef0
        self.normalize_kernel, self.block_size, self.n_jobs = normalize_kernel, block_size, n_jobs


class FixedSizeLSSVRCV(SearchIntervalMixin, RegressorMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM regression (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and (by its own CV) model size.
""" + FIXED_SIZE_SEARCH_DOC


@with_calibration("the refitted model's v-fold values (see :class:`lssvm.FixedSizeLSSVC`)", "\n    Other Parameters", False)
class FixedSizeLSSVCCV(SearchProbaMixin, ClassifierSearchMixin, ClassifierMixin, _FixedSizeSearchCV):
    __doc__ = """Fixed-size LS-SVM classification (SCDP, Karsmakers et al. 2011) with built-in
    selection of kernel parameters, alpha and model size.  With more than two
    classes the criterion is the MSE of the coded outputs.
""" + FIXED_SIZE_SEARCH_DOC + """    classes_ : ndarray of shape (n_classes,)
"""
