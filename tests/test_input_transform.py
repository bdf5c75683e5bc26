"""Per-column input transforms chosen by the search's exact CV: each candidate's score is its search's
best CV score, which equals brute-force fold refits of that search's best model; the fitted model takes
raw inputs; bad input is refused clearly."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold
from sklearn.preprocessing import QuantileTransformer

from lssvm import SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators.input_transform import InputTransform, InputTransformSearch, skewed_columns


def _skewed(seed, m=120):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.lognormal(sigma=1.2, size=m), rng.lognormal(sigma=0.8, size=m), rng.normal(size=m),
                         rng.integers(0, 2, size=m)])
    y = np.log(X[:, 0]) + 0.5 * np.tanh(np.log(X[:, 1])) + 0.3 * X[:, 3] + 0.1 * rng.normal(size=m)
    return X, y


def _kfold_mse_removed(X, y, rows, alpha, gamma, pairs):
    """Mean squared hold-out error of the sparse LS-SVM solved afresh on each fold's training rows (dense
    normal equations), its basis ``X[rows]`` without the held-out rows (``basis_in_holdout="remove"``)."""
    sse = 0.0
    for train, test in pairs:
        b = np.setdiff1d(rows, test)
        K = np.exp(-gamma * ((X[:, None, :] - X[None, b, :]) ** 2).sum(axis=2))
        F = np.column_stack([K[train], np.ones(train.size)])
        P = np.zeros((b.size + 1, b.size + 1))
        P[:-1, :-1] = alpha * K[b]
        coef = np.linalg.lstsq(F.T @ F + P, F.T @ y[train], rcond=None)[0]
        sse += np.sum((y[test] - K[test] @ coef[:-1] - coef[-1]) ** 2)
    return sse / X.shape[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_each_candidate_is_scored_by_the_exact_cv_of_its_search(seed):
    X, y = _skewed(seed)
    cv = KFold(4, shuffle=True, random_state=seed)
    base = SparseLSSVRCV(param_space={"gamma": [0.05, 0.2, 0.8]}, cv=cv, n_basis=40, ard=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = InputTransformSearch(base, input_transform=["none", "quantile", "yeo-johnson"]).fit(X, y)
    scores = model.input_transform_scores_
    assert set(scores) == {"none", "quantile", "yeo-johnson"}
    pairs = [(np.setdiff1d(np.arange(X.shape[0]), t), t) for _, t in cv.split(X)]
    for name, score in scores.items():
        Z = InputTransform(name).fit(X).transform(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            by_hand = SparseLSSVRCV(param_space={"gamma": [0.05, 0.2, 0.8]}, cv=pairs, n_basis=40, ard=False,
                                    random_state=0).fit(Z, y)
        assert score == pytest.approx(by_hand.best_score_, rel=1e-10)
        best = by_hand.best_estimator_
        brute = _kfold_mse_removed(Z, y, np.asarray(best.basis_indices_), by_hand.alpha_, by_hand.gamma_, pairs)
        np.testing.assert_allclose(-score, brute, rtol=1e-6)
    chosen = max(scores, key=scores.get)
    assert model.input_transform_ == chosen
    # the fitted model is the chosen candidate's search, and takes raw inputs
    Xte, _ = _skewed(seed + 10, m=30)
    np.testing.assert_allclose(model.predict(Xte), model.estimator_.predict(model.transformer_.transform(Xte)))
    assert model.best_score_ == pytest.approx(scores[chosen])


def test_the_quantile_transform_is_scikit_learns_standardised_binary_columns_kept():
    X, _ = _skewed(3)
    Z = InputTransform("quantile").fit(X).transform(X)
    ref = QuantileTransformer(output_distribution="normal", n_quantiles=X.shape[0],
                              random_state=0).fit_transform(X[:, :3])
    ref = (ref - ref.mean(axis=0)) / ref.std(axis=0)
    np.testing.assert_allclose(Z[:, :3], ref, atol=1e-12)
    np.testing.assert_array_equal(Z[:, 3], X[:, 3])  # 0/1 column untouched
    np.testing.assert_array_equal(InputTransform("none").fit(X).transform(X), X)


def test_auto_compares_only_where_a_column_is_skewed():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=80)
    assert not skewed_columns(X).any()
    base = SparseLSSVRCV(param_space={"gamma": [0.2]}, n_basis=20, random_state=0)
    model = InputTransformSearch(base).fit(X, y)
    assert model.input_transform_ == "none" and model.input_transform_scores_ == {}
    Xs, ys = _skewed(5, m=80)
    assert skewed_columns(Xs)[:2].all()
    model = InputTransformSearch(base).fit(Xs, ys)
    assert set(model.input_transform_scores_) == {"none", "quantile"}


def test_classifier_keeps_its_methods_on_raw_inputs():
    X, y = _skewed(6)
    labels = (y > np.median(y)).astype(int)
    base = SparseLSSVCCV(param_space={"gamma": [0.1, 0.5, 2.0, 8.0]}, n_basis=30, ard=False, random_state=0)
    model = InputTransformSearch(base, input_transform="auto").fit(X, labels)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    Z = model.transformer_.transform(X)
    np.testing.assert_array_equal(model.predict(X), model.estimator_.predict(Z))
    np.testing.assert_allclose(model.decision_function(X), model.estimator_.decision_function(Z))
    assert model.score(X, labels) == model.estimator_.score(Z, labels)


@pytest.mark.parametrize("kwargs, X_kind, error, match", [
    ({"input_transform": "log"}, "dense", ValueError, "input_transform must be"),
    ({"input_transform": []}, "dense", ValueError, "input_transform must be"),
    ({"input_transform": None}, "dense", ValueError, "input_transform must be"),
    ({"input_transform": ["quantile", "quantile"]}, "nan", ValueError, "NaN"),
    ({"input_transform": ["none", "box-cox"]}, "dense", ValueError, "input_transform must be"),
    ({}, "sparse", TypeError, "dense X"),
    ({}, "nan", ValueError, "NaN"),
    ({"estimator": SparseLSSVR()}, "dense", TypeError, "search estimator"),
])
def test_bad_input_is_refused_clearly(kwargs, X_kind, error, match):
    X, y = _skewed(7, m=40)
    if X_kind == "sparse":
        X = sp.csr_matrix(X)
    elif X_kind == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    with pytest.raises(error, match=match):
        InputTransformSearch(**kwargs).fit(X, y)
    with pytest.raises(ValueError, match="method must be"):
        InputTransform("rank").fit(np.ones((5, 2)))


@pytest.mark.parametrize("cv", ["loo", pytest.param(4, marks=pytest.mark.slow)])
def test_the_winner_goes_on_to_the_stages_as_its_own_fit_would(cv):
    X, y = _skewed(8, m=150)
    base = SparseLSSVRCV(cv=cv, time_budget=None, random_state=0)  # ARD stage and basis growth, no clock
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = InputTransformSearch(base).fit(X, y)
        Z = model.transformer_.transform(X)
        direct = SparseLSSVRCV(cv=cv, time_budget=None, random_state=0).fit(Z, y)
    assert set(model.input_transform_scores_) == {"none", "quantile"}
    got = model.estimator_
    assert got.ard == "auto" and got.n_basis == "auto"
    assert got.ard_stage_["ran"] and direct.ard_stage_["ran"]
    assert got.ard_stage_["kept"] == direct.ard_stage_["kept"]
    assert got.basis_curve_["n_chosen"] == direct.basis_curve_["n_chosen"]
    assert got.best_score_ == pytest.approx(direct.best_score_, rel=1e-9)
    np.testing.assert_allclose(model.predict(X), direct.predict(Z), rtol=1e-8, atol=1e-10)
