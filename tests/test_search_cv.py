"""The ``*CV`` estimators: their ``cv_results_`` are the CV engine's numbers,
the refitted model is the model scored, and they behave as scikit-learn
estimators (``check_estimator``, ``GridSearchCV``, ``Pipeline``)."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import (
    FixedSizeLSSVCCV,
    FixedSizeLSSVRCV,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVCCV,
    SparseLSSVR,
    SparseLSSVRCV,
)

GAMMAS = {"gamma": [0.1, 1.0]}

#: classifiers calibrate by default: predict follows the calibrated probabilities, not the sign of
#: decision_function, and a weight is not a repetition for the held-out values calibrated on
CALIBRATED_CHECKS = {
    "check_classifiers_train": "predict follows the calibrated probabilities, not the sign of decision_function",
    "check_sample_weight_equivalence_on_dense_data": "held-out calibration: a weight is not a repetition",
}


# n_basis=0.5 draws half of the rows as columns: repeated rows are more rows and another draw
_DRAWN = {"check_sample_weight_equivalence_on_dense_data": "columns drawn: repetition draws other columns"}


@parametrize_with_checks([
    SparseLSSVRCV(param_space=GAMMAS, cv=3),
    SparseLSSVCCV(param_space=GAMMAS),
    FixedSizeLSSVRCV(param_space=GAMMAS, cv=3, alphas=[0.1, 1.0]),
    FixedSizeLSSVCCV(param_space=GAMMAS, cv=3, alphas=[0.1, 1.0]),
    NystromLSSVRCV(param_space=GAMMAS, n_basis=0.5),
    NystromLSSVCCV(param_space=GAMMAS, n_basis=0.5),
], expected_failed_checks=lambda est: {**(CALIBRATED_CHECKS if hasattr(est, "calibration") else {}),
                                           **(_DRAWN if isinstance(est, (NystromLSSVRCV, NystromLSSVCCV)) else {})})
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def data(rng):
    X = rng.standard_normal((70, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(70)
    return X, y


def test_cv_results_are_the_cv_engine_numbers(data):
    X, y = data
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))
    gammas, alphas = [0.25, 1.0, 4.0], np.geomspace(1e-3, 10, 6)
    model = SparseLSSVRCV(param_space={"gamma": gammas}, alphas=alphas, cv=folds, basis="random", n_basis=25,
                          random_state=1).fit(X, y)
    res = model.cv_results_
    assert len(res["params"]) == res["mean_test_mse"].size == 18
    rows = model.best_estimator_.basis_indices_
    for g in gammas:
        mse = SparseLSSVR(gamma=g, basis=rows).fit(X, y).cv_error(cv=folds, alpha=alphas)
        sel = res["param_gamma"] == g
        np.testing.assert_allclose(res["mean_test_mse"][sel], mse, rtol=1e-12)
        np.testing.assert_array_equal(res["param_alpha"][sel], alphas)
    best = int(np.argmax(res["mean_test_score"]))
    assert model.best_index_ == best and res["rank_test_score"][best] == 1
    assert model.best_score_ == -res["mean_test_mse"][best] == res["mean_test_score"].max()
    assert model.best_params_ == {"gamma": res["param_gamma"][best], "alpha": res["param_alpha"][best]}
    assert model.alpha_ == model.best_estimator_.alpha and model.gamma_ == model.best_estimator_.gamma
    np.testing.assert_allclose(model.predict(X), model.best_estimator_.predict(X))


def test_refit_is_the_scored_model_for_kernel_dependent_rows(data):
    X, y = data
    # FVS basis (redrawn per width) and the fixed-size model at its CV-chosen size
    model = SparseLSSVRCV(param_space={"gamma": [0.5, 2.0]}, cv=4, basis="fvs", n_basis=20,
                          random_state=0).fit(X, y)
    est = model.best_estimator_
    folds = list(KFold(4).split(X))
    assert est.n_basis_ == model.cv_results_["n_basis"][model.best_index_]
    assert est.reconstruction_error_curve_ is not None  # refitted by FVS itself, same seed, same rows
    fs = FixedSizeLSSVRCV(param_space={"gamma": [0.5, 2.0]}, alphas=[0.01, 0.3], n_basis=20, cv=5,
                          size_search="candidates", random_state=0).fit(X, y)
    i = fs.best_index_
    assert fs.best_estimator_.cv_score_ == pytest.approx(fs.cv_results_["mean_test_mse"][i], rel=1e-12)
    assert fs.best_estimator_.model_size_ == fs.cv_results_["model_size"][i]
    ny = NystromLSSVRCV(param_space={"gamma": [0.5, 2.0]}, cv=folds, n_basis=20, random_state=0).fit(X, y)
    ref = NystromLSSVR(gamma=ny.gamma_, basis=ny.best_estimator_.basis_indices_, predictor="low-rank")
    assert ref.fit(X, y).cv_error(cv=folds, alpha=ny.alpha_) == pytest.approx(-ny.best_score_, rel=1e-12)


@pytest.mark.parametrize("search", ["nelder-mead", "csa"])
def test_continuous_searches_are_reproducible_and_beat_the_coarse_grid(data, search):
    X, y = data
    kw = dict(param_space={"gamma": (2.0**-4, 2.0**4)}, basis="random", n_basis=30, cv=5, max_evaluations=15)
    a = SparseLSSVRCV(search=search, random_state=3, **kw).fit(X, y)
    b = SparseLSSVRCV(search=search, random_state=3, **kw).fit(X, y)
    assert a.best_params_ == b.best_params_
    grid = SparseLSSVRCV(param_space={"gamma": [2.0**-4, 1.0, 2.0**4]}, basis="random", n_basis=30, cv=5,
                         random_state=3).fit(X, y)
    assert a.best_score_ >= grid.best_score_ - 1e-12
    assert 2 <= a.n_evaluations_ <= 2 * 15


def test_classifier_scores_error_rate_with_mse_ties(rng):
    X = rng.standard_normal((90, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "yes", "no")
    clf = SparseLSSVCCV(param_space={"gamma": [0.3, 3.0]}, cv=5, random_state=0).fit(X, y)
    res = clf.cv_results_
    assert clf.best_score_ == pytest.approx(1 - res["mean_test_error_rate"].min())
    at_best = res["mean_test_error_rate"] == res["mean_test_error_rate"].min()
    assert res["mean_test_mse"][clf.best_index_] == res["mean_test_mse"][at_best].min()
    assert set(clf.classes_) == {"no", "yes"} and clf.score(X, y) > 0.8
    assert clf.decision_function(X).shape == (90,)


def test_linear_kernel_searches_only_alpha(data):
    X, y = data
    model = SparseLSSVRCV(kernel="linear", alphas=[0.1, 1.0, 10.0]).fit(X, y)
    assert model.n_evaluations_ == 1 and model.gamma_ is None
    assert [k for k in model.cv_results_ if k.startswith("param_")] == ["param_alpha"]


def test_in_pipeline_and_grid_search(data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), SparseLSSVRCV(param_space=GAMMAS, basis="random", n_basis=20))
    assert pipe.fit(X, y).score(X, y) > 0.5
    outer = GridSearchCV(SparseLSSVRCV(param_space=GAMMAS, basis="random"), {"n_basis": [10, 30]}, cv=3)
    outer.fit(X, y)
    assert outer.best_params_["n_basis"] in (10, 30)


def test_search_cv_input_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="'search' parameter of SparseLSSVRCV must be"):
        SparseLSSVRCV(search="random").fit(X, y)
    with pytest.raises(ValueError, match="scoring must be 'mse'"):
        SparseLSSVRCV(scoring="error_rate").fit(X, y)
    with pytest.raises(ValueError, match="alphas=..."):
        SparseLSSVRCV(param_space={"alpha": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="0 < low < high"):
        SparseLSSVRCV(search="nelder-mead", param_space={"gamma": (0.0, 1.0)}).fit(X, y)
    with pytest.raises(ValueError, match="'cv' parameter of FixedSizeLSSVRCV .* Got 'loo' instead"):
        FixedSizeLSSVRCV(cv="loo").fit(X, y)
    with pytest.raises(ValueError, match="two classes"):
        FixedSizeLSSVCCV(scoring="error_rate", cv=3).fit(X, np.arange(70) % 3)
    with pytest.raises(ValueError, match="max_evaluations"):
        SparseLSSVRCV(max_evaluations=1).fit(X, y)
    model = SparseLSSVRCV(param_space=GAMMAS, refit=False).fit(X, y)
    assert np.isfinite(model.best_score_)
    with pytest.raises(AttributeError, match="refit=False"):
        model.predict(X)
