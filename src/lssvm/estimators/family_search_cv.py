"""The six self-tuning estimators: each is the one search of
:mod:`lssvm.estimators.search_cv` over a family, a thin preset in the style of
skglm's estimators composing a solver and a penalty.

A family (:class:`SparseFamily`, Cawley & Talbot 2004; :class:`FixedSizeFamily`,
Karsmakers et al. 2011; :class:`NystromFamily`, Ding & Liao 2012) supplies its
criterion, its base estimators, the model parameters the refit takes and the
rows it is given; a preset adds the constructor (scikit-learn reads the
parameters from it) and the docstring.
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
from ..selection.weighted_criteria import WeightedNystromCV
from ._basis_size import AUTO_BASIS_DOC, is_auto
from ._calibration import SearchProbaMixin, with_calibration
from ._constraints import SEARCH_PARAMS, SPARSE_SEARCH_PARAMS
from ._docs import PER_TARGET_RESULT_DOC, RESULT_DOC, SEARCH_DOC, SPARSE_SEARCH_DOC
from ._intervals import SearchIntervalMixin
from ._weighted_search import WeightedSearchMixin
from .ard_stage import ARD_DOC, DEFAULT_TIME_BUDGET
from .classifier import SparseLSSVC
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .gradient_search import GradientSearch
from .nystrom import NystromLSSVC, NystromLSSVR
from .regressor import SparseLSSVR
from .search_cv import ClassifierSearchMixin, FamilySearchCV, SearchFamily

__all__ = ["FixedSizeFamily", "FixedSizeLSSVCCV", "FixedSizeLSSVRCV", "NystromFamily", "NystromLSSVCCV",
           "NystromLSSVRCV", "SIZE_SEARCHES", "SparseFamily", "SparseLSSVCCV", "SparseLSSVRCV"]

#: When the fixed-size search picks the model size: once, at the best width and alpha of the full-pool model
#: ("refit"), or at every candidate ("candidates", Karsmakers et al. 2011's procedure).
SIZE_SEARCHES = ("refit", "candidates")


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
        return GradientSearch(lambda **params: s._estimator_class(**{**s._model_params(), **params}),
                              classification=s._classification,
                              **{k: getattr(s, k) for k in GradientSearch.PARAMETERS}).check()


class _SparseSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = SparseFamily
    _parameter_constraints = {**SPARSE_SEARCH_PARAMS, "ard": [StrOptions({"auto"}), "boolean"]}

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="auto", n_basis=None, random_state=None, *,
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


# ------------------------------------------------------------ fixed size
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
    in the refit; with "candidates" by :class:`lssvm.selection.FixedSizeCV` at every candidate."""

    regressor, classifier = FixedSizeLSSVR, FixedSizeLSSVC
    default_cv = 10
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
            from ..backends.dask.family_cv import DaskFixedSizeCV

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


# --------------------------------------------------------------- Nyström
#: The Nyström searches' parameters (``NystromLSSVRCV``, ``NystromLSSVCCV``).
NYSTROM_SEARCH_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : "loo", int, splitter or iterable of (train, test), default="loo"
        Exact CV of the Nyström model (the approximate CV of Ding & Liao 2012).
    basis : {"random", "kcenter", "fvs"} or 1-D int array, default="random"
        As for :class:`lssvm.NystromLSSVR`; random and k-center columns are drawn once for the whole
        search, FVS columns per candidate.  Why "random" where the sparse and fixed-size families
        default to "pchol": it is Ding & Liao's uniform column sample, the model their bounds are for,
        and pivoted Cholesky is not a Nyström column rule here (on pivoted-Cholesky columns the model
        is :class:`lssvm.SparseLSSVRCV`'s).  It works on NumPy and Dask input.
    n_basis, rank
        As for :class:`lssvm.NystromLSSVR`.
    predictor : {"low-rank", "exact"}, default="low-rank"
        Predictor of the refitted model; "low-rank" is the model the CV
        criterion scores.
    random_state : int, RandomState or None
    gamma, degree, coef0, normalize_kernel, block_size, n_jobs, rcond
        As for :class:`lssvm.NystromLSSVR` (gamma only when not searched).
""" + SEARCH_DOC + RESULT_DOC


class NystromFamily(SearchFamily):
    """The Nyström LS-SVM (Ding & Liao 2012): sampled columns cut to rank k, scored by the approximate model's
    exact CV (:class:`lssvm.selection.NystromCV`)."""

    regressor, classifier = NystromLSSVR, NystromLSSVC
    default_cv = "loo"
    model_params = ("kernel", "gamma", "rank", "predictor", "degree", "coef0", "normalize_kernel", "block_size",
                    "rcond")

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        columns = dict(n_basis=s.n_basis, rank=0.5 if s.rank is None else s.rank, basis=s.basis, rcond=s.rcond)
        if is_dask_collection(X) or is_dask_collection(y):
            from ..backends.dask.family_cv import DaskNystromCV

            return DaskNystromCV(X, y, **columns, **kw)
        if kw.get("sample_weight") is not None:  # the weighted model's exact weighted CV
            return WeightedNystromCV(X, y, **columns, **kw)
        return NystromCV(X, y, **columns, **kw)


class _NystromSearchCV(WeightedSearchMixin, FamilySearchCV):
    _family = NystromFamily
    _parameter_constraints = {
        **SEARCH_PARAMS,
        **{k: NystromLSSVR._parameter_constraints[k] for k in ("basis", "n_basis", "rank", "predictor", "rcond")},
    }

    def __init__(self, kernel="rbf", alphas=None, param_space=None, cv="loo", search="grid", scoring=None,
                 max_evaluations=None, refit=True, basis="random", n_basis=None, random_state=None, *,
                 rank=None, predictor="low-rank", gamma="scale", degree=3, coef0=1.0,
                 normalize_kernel=False, block_size=DEFAULT_BLOCK_SIZE, n_jobs=None, rcond=1e-10):
        self.kernel, self.alphas, self.param_space, self.cv, self.search = kernel, alphas, param_space, cv, search
        self.scoring, self.max_evaluations, self.refit = scoring, max_evaluations, refit
        self.basis, self.n_basis, self.random_state, self.rcond = basis, n_basis, random_state, rcond
        self.rank, self.predictor, self.gamma, self.degree, self.coef0 = rank, predictor, gamma, degree, coef0
        self.normalize_kernel, self.block_size, self.n_jobs = normalize_kernel, block_size, n_jobs


class NystromLSSVRCV(SearchIntervalMixin, RegressorMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM regression (Ding & Liao 2012) with built-in hyper-parameter
    selection on the approximate model's exact CV.
""" + NYSTROM_SEARCH_DOC


@with_calibration("the refitted model's exact LOO (see :class:`lssvm.NystromLSSVC`)", "\n    Other Parameters", False)
class NystromLSSVCCV(SearchProbaMixin, ClassifierSearchMixin, ClassifierMixin, _NystromSearchCV):
    __doc__ = """Nyström LS-SVM classification (Ding & Liao 2012) with built-in
    hyper-parameter selection on the approximate model's exact CV.
""" + NYSTROM_SEARCH_DOC + """    classes_ : ndarray of shape (n_classes,)
"""
