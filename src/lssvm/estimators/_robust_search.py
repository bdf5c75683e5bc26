"""``RobustLSSVRCV``: the sparse search over the robust LS-SVM with a robust CV
criterion (Debruyne, Hubert and Suykens 2008; LS-SVMlab's
``rcrossvalidatelssvm``).

Each candidate (kernel parameters, alpha along the path) is the robust model
reweighted at that alpha; its score is a robust statistic (median, trimmed
mean or mean) of the absolute exact held-out residuals of that weighted model
(:class:`lssvm.selection.robust_cv.RobustSparseCV`).  The best is refitted as
a :class:`lssvm.RobustLSSVR`.  A preset of the one family search
(:mod:`lssvm.estimators.search_cv`), as the six other searches.
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..backends import is_dask_collection
from ..selection.robust_cv import RobustSparseCV
from ..solvers.robust_weights import ROBUST_STATISTICS
from ._basis_size import is_auto
from ._calibration import signature_with
from .family_search_cv import SparseFamily, _SparseSearchCV
from .robust import RobustLSSVR

__all__ = ["RobustLSSVRCV"]

_ROBUST_PARAMS = dict(weight_function="hampel", weight_parameter=None, max_iter=50, tol=1e-4, statistic="median",
                      trim=0.1)


class RobustFamily(SparseFamily):
    """The robust sparse LS-SVM: the sparse family's basis and folds, the robust criterion, the robust refit."""

    regressor = classifier = RobustLSSVR
    model_params = SparseFamily.model_params + ("weight_function", "weight_parameter", "max_iter", "tol")

    def criterion(self, X, y, scoring, **kw):
        s = self.search
        if is_dask_collection(X) or is_dask_collection(y):
            raise ValueError("RobustLSSVRCV needs the rows in memory; fit on a NumPy sample")
        return RobustSparseCV(X, y, basis="pchol" if str(s.basis) == "auto" else s.basis,
                              n_basis=None if is_auto(s.n_basis) else s.n_basis,
                              basis_in_holdout=s.basis_in_holdout, basis_alpha=s.alpha, basis_tol=s.basis_tol,
                              pivot_tol=s.pivot_tol, n_candidates=s.n_candidates, rcond=s.rcond,
                              weight_function=s.weight_function, weight_parameter=s.weight_parameter,
                              max_iter=s.max_iter, tol=s.tol, statistic=s.statistic, trim=s.trim, **kw)

    def gradient_search(self):
        raise ValueError("search='gradient' is not available in RobustLSSVRCV (its robust criterion has no "
                         "gradient); use search='grid', 'nelder-mead' or 'csa'")


class RobustLSSVRCV(RegressorMixin, _SparseSearchCV):
    """Robust sparse LS-SVM regression with hyper-parameters chosen by a robust CV criterion.

    It takes every parameter of :class:`lssvm.SparseLSSVRCV` (kernel
    parameters searched, alpha along a path) and the robust fit's of
    :class:`lssvm.RobustLSSVR`; below, the keyword-only parameters it adds.

    Parameters
    ----------
    weight_function, weight_parameter, max_iter, tol
        As for :class:`lssvm.RobustLSSVR`.
    statistic : {"median", "trimmed", "mae"}, default="median"
        The robust criterion: median, trimmed mean (without the largest
        ``trim`` share) or mean of the absolute exact held-out residuals of
        the robust model reweighted at each alpha (weights held in the
        folds), weighted by any ``sample_weight``.
    trim : float in [0, 1), default=0.1

    Attributes
    ----------
    best_estimator_ : RobustLSSVR
        Refitted at the best kernel parameters and alpha (its ``weights_``).
    n_iter_ : int
        Reweighting steps of the refit.
    best_score_ : float
        Minus the robust criterion at the best candidate; ``cv_results_``'s
        "mse" columns hold the robust criterion (the score minimised).

    Notes
    -----
    Per candidate: the basis and kernel columns, then per alpha the
    reweighting steps (one weighted factorisation each, O(m n^2 + n^3)) and
    one exact LOO (O(m n)) or k-fold pass: about ``steps x A`` times the
    sparse search's factorisation work.  ``scoring`` is "mse" (the robust
    criterion); the gradient search, ``alpha_per_target`` and Dask input are
    not available.

    References
    ----------
    M. Debruyne, M. Hubert and J. A. K. Suykens, Model selection in kernel
    based regression using the influence function, JMLR 9 (2008).

    Examples
    --------
    >>> import numpy as np
    >>> from lssvm import RobustLSSVRCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(120, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=120)
    >>> y[:12] += 10.0
    >>> model = RobustLSSVRCV(param_space={"gamma": [0.3, 1.0]}, alphas=[0.01, 0.1, 1.0]).fit(X, y)
    >>> bool(model.best_estimator_.weights_[:12].max() < 0.01)
    True
    """

    _family = RobustFamily
    _parameter_constraints = {
        **_SparseSearchCV._parameter_constraints,
        **{k: RobustLSSVR._parameter_constraints[k] for k in ("weight_function", "weight_parameter", "max_iter",
                                                               "tol")},
        "scoring": [StrOptions({"mse"}), None],
        "statistic": [StrOptions(set(ROBUST_STATISTICS))],
        "trim": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *args, weight_function="hampel", weight_parameter=None, max_iter=50, tol=1e-4,
                 statistic="median", trim=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.weight_function, self.weight_parameter, self.max_iter, self.tol = (weight_function, weight_parameter,
                                                                                max_iter, tol)
        self.statistic, self.trim = statistic, trim

    __init__.__signature__ = signature_with(_SparseSearchCV.__init__, **_ROBUST_PARAMS)

    @property
    def n_iter_(self):
        """Reweighting steps of the refitted robust model (``best_estimator_.n_iter_``)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.n_iter_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        return tags
