"""``best_score_`` (and the gradient search's ``gradient_selection_``) describe
``best_estimator_``, the model actually fitted: each equals the exact CV
score recomputed on that model, for every sparse and Nyström search family
and selection rule."""

import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from lssvm import NystromLSSVCCV, NystromLSSVRCV, SparseLSSVCCV, SparseLSSVRCV
from lssvm.datasets import load_boston

RTOL = 1e-10


def _data(classification, m=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(m)
    return X, (np.where(y > np.median(y), "a", "b") if classification else y)


def _pairs(est, m):
    every = np.arange(m)
    return [(np.setdiff1d(every, f), f) for f in est.cv_folds_]


def _recomputed(est, X):
    """The search's criterion at best_estimator_, recomputed on that model (lower is better)."""
    model = est.best_estimator_
    loo = est.cv_folds_ is None
    if est.scoring_ == "error_rate":
        # 1 - accuracy: best_score_ is the accuracy
        kw = {"basis_in_holdout": "keep"} if loo and "basis_in_holdout" in model.cv_error.__code__.co_varnames else {}
        return 1.0 - float(model.cv_error(cv="loo" if loo else _pairs(est, X.shape[0]), **kw))
    if loo and hasattr(model, "loo_residuals"):
        return -float(np.mean(np.asarray(model.loo_residuals()) ** 2))
    return -float(np.mean(model.cv_error(cv="loo" if loo else _pairs(est, X.shape[0]))))


@pytest.mark.parametrize("cls", [SparseLSSVRCV, SparseLSSVCCV, NystromLSSVRCV, NystromLSSVCCV])
@pytest.mark.parametrize("cv", ["loo", 5])
def test_grid_best_score_is_the_refit_score(cls, cv):
    X, y = _data(cls in (SparseLSSVCCV, NystromLSSVCCV))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the grid's winner (the ARD stage's and the grown basis's models are not rows of cv_results_)
        sparse = {"ard": False, "n_basis": None} if cls in (SparseLSSVRCV, SparseLSSVCCV) else {}
        est = cls(cv=cv, random_state=0, **sparse).fit(X, y)
    assert est.best_score_ == pytest.approx(_recomputed(est, X), rel=RTOL)
    assert est.best_score_ == est.cv_results_["mean_test_score"][est.best_index_]


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["one-se", "min"])
@pytest.mark.parametrize("kernel", ["rbf", "ard"])
def test_gradient_search_records_the_refit(kernel, rule):
    """On Boston the rbf search's chosen K_BB is singular at the default rcond but not at the search's: the
    refit is solved on K_BB's range, and every recorded number must be that model's."""
    X, y = load_boston(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SparseLSSVRCV(kernel=kernel, search="gradient", selection_rule=rule, random_state=0,
                            max_evaluations=40).fit(X, y)
    model = est.best_estimator_
    loo = float(np.mean(model.loo_residuals() ** 2))
    assert -est.best_score_ == pytest.approx(loo, rel=RTOL)
    if rule == "one-se":
        assert est.gradient_selection_["chosen_loo"] == pytest.approx(loo, rel=RTOL)
        assert est.gradient_selection_["chosen_log_evidence"] == pytest.approx(model.log_evidence(), rel=RTOL)
