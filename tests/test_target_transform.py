"""Target transforms (log, Box-Cox) chosen by the exact CV error on the original scale, checked against
explicit refits scored on the original scale."""

import numpy as np
import pytest
from scipy import special, stats
from sklearn.model_selection import KFold

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.estimators.target_transform import (
    TargetTransformRegressor,
    choose_target_transform,
    fit_target_transform,
)


def _skewed(seed, m=40, d=2):
    """A positive target, log-normal around a smooth function of the inputs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.exp(1.0 + np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.4 * rng.normal(size=m))
    return X, y


def _explicit_original_scale_mse(X, y, tr, rows, alpha, gamma, folds):
    """Mean squared error on the original scale of the sparse LS-SVM fitted afresh on each fold's training
    rows of the transformed target (dense direct solve, basis the points ``X[rows]`` not held out), its
    held-out predictions mapped back by the inverse transform."""
    m = X.shape[0]
    z = tr.forward(y)
    K = np.exp(-gamma * ((X[:, None, :] - X[None, rows, :]) ** 2).sum(axis=2))
    sse = 0.0
    for test in folds:
        train = np.setdiff1d(np.arange(m), test)
        keep = ~np.isin(rows, test) if len(test) > 1 else np.ones(len(rows), dtype=bool)  # k folds: "remove"
        Kt = K[:, keep]
        F = np.column_stack([Kt[train], np.ones(train.size)])
        P = np.zeros((keep.sum() + 1, keep.sum() + 1))
        P[:-1, :-1] = alpha * Kt[rows[keep]]
        coef = np.linalg.lstsq(F.T @ F + P, F.T @ z[train], rcond=None)[0]
        sse += np.sum((y[test] - tr.inverse(Kt[test] @ coef[:-1] + coef[-1])) ** 2)
    return sse / m


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("scheme", ["loo", "kfold"])
def test_each_transform_is_scored_on_the_original_scale(seed, scheme):
    X, y = _skewed(seed)
    m, gamma = X.shape[0], 0.5
    alphas = np.array([1e-3, 0.1, 3.0])
    model = SparseLSSVR(gamma=gamma, alpha=0.1, n_basis=12, random_state=seed).fit(X, y)
    rows = np.asarray(model.basis_indices_)
    folds = None if scheme == "loo" else [t for _, t in KFold(5, shuffle=True, random_state=seed).split(X)]
    choice = choose_target_transform(model, X, y, alphas=alphas, folds=folds)
    assert set(choice.scores) == {"identity", "log", "boxcox"}
    explicit_folds = [np.array([i]) for i in range(m)] if folds is None else folds
    for name, score in choice.scores.items():
        tr = fit_target_transform(name, y)
        expected = [_explicit_original_scale_mse(X, y, tr, rows, a, gamma, explicit_folds) for a in alphas]
        np.testing.assert_allclose(score, min(expected), rtol=1e-6)
        assert choice.alphas[name] == alphas[int(np.argmin(expected))]
    assert choice.scores[choice.transform.name] <= choice.scores["identity"]


def test_a_transform_replaces_identity_only_beyond_one_standard_error():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    model = SparseLSSVR(gamma=0.5, alpha=0.01, n_basis=20, random_state=0)
    alphas = [1e-4, 1e-3, 0.01, 0.1, 1.0]
    # steeply exponential in the inputs, small multiplicative noise: linear on the log scale, log wins clearly
    y = np.exp(6.0 * X[:, 0] + 2.0 * X[:, 1] + 0.1 * rng.normal(size=200))
    choice = choose_target_transform(model.fit(X, y), X, y, alphas=alphas)
    assert choice.transform.name in ("log", "boxcox")
    assert choice.scores[choice.transform.name] < 0.8 * choice.scores["identity"]
    # additive noise on a positive level: a transform scores within a hair of identity, which is kept
    y = 50.0 + np.sin(3.0 * X[:, 0]) + 0.3 * rng.normal(size=200)
    choice = choose_target_transform(model.fit(X, y), X, y, alphas=alphas)
    assert min(choice.scores.values()) < choice.scores["identity"]  # the rule, not the lowest score, decides
    assert choice.transform.name == "identity"


def test_boxcox_exponent_and_inverse():
    y = np.random.default_rng(3).lognormal(size=200) + 0.1
    tr = fit_target_transform("boxcox", y)
    assert tr.lmbda == pytest.approx(stats.boxcox(y)[1])
    np.testing.assert_allclose(tr.forward(y), special.boxcox(y, tr.lmbda))
    np.testing.assert_allclose(tr.inverse(tr.forward(y)), y, rtol=1e-10)
    # far outside the training range: clipped, finite and positive, never NaN
    far = tr.inverse(np.array([-1e6, 1e6]))
    assert np.all(np.isfinite(far)) and np.all(far > 0)
    assert np.all(np.isfinite(fit_target_transform("log", y).inverse(np.array([1e6]))))
    # a strongly negative exponent (elevators-like targets): predictions near the domain's edge map back to
    # at most the training range widened by its width, not to huge values
    y = 0.012 + 0.066 * np.random.default_rng(5).beta(1, 8, size=500)
    tr = fit_target_transform("boxcox", y)
    assert tr.lmbda < -0.5
    back = tr.inverse(np.array([-1.0 / tr.lmbda - 1e-9, 1e9, -1e9]))
    assert back.max() <= y.max() + np.ptp(y) + 1e-12 and back.min() >= y.min() / 2 - 1e-12


def test_the_wrapper_uses_the_transform_of_lowest_original_scale_error():
    X, y = _skewed(1, m=150)  # Box-Cox wins here (identity 5.1, Box-Cox 3.0): the refit path is exercised
    reg = TargetTransformRegressor(SparseLSSVRCV(n_basis=30, ard=False, random_state=0)).fit(X, y)  # isotropic
    scores = reg.target_transform_scores_
    assert reg.target_transform_.name == min(scores, key=scores.get)
    assert reg.target_transform_cv_ == "LOO"
    # its predictions are the inverse transform of the refitted best model's
    best = reg.estimator_.best_estimator_
    tr = reg.target_transform_
    np.testing.assert_allclose(reg.predict(X[:5]), tr.inverse(best.predict(X[:5])))
    assert tr.name != "identity"
    # the refitted model's LOO error on the original scale is the score that chose it
    loo = tr.inverse(best.loo_predict())
    np.testing.assert_allclose(np.mean((loo - y) ** 2), scores[tr.name], rtol=1e-8)
    assert reg.estimator_.alpha_ == best.alpha
    np.testing.assert_allclose(-reg.estimator_.best_score_, scores[tr.name])


def test_a_target_with_non_positive_values_keeps_identity():
    X, y = _skewed(1, m=60)
    y = np.log(y)  # takes negative values
    reg = TargetTransformRegressor(SparseLSSVR(n_basis=15)).fit(X, y)
    assert reg.target_transform_.name == "identity"
    np.testing.assert_allclose(reg.predict(X), reg.estimator_.predict(X))


@pytest.mark.parametrize("name, y, match", [
    ("log", np.array([1.0, -2.0, 3.0]), "positive target"),
    ("boxcox", np.array([0.0, 2.0, 3.0]), "positive target"),
    ("sqrt", np.array([1.0, 2.0, 3.0]), "target_transform must be"),
])
def test_bad_transform_requests_are_clear_errors(name, y, match):
    with pytest.raises(ValueError, match=match):
        fit_target_transform(name, y)
    X = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match=match):
        TargetTransformRegressor(SparseLSSVR(n_basis=2), target_transform=name).fit(X, y)


@pytest.mark.parametrize("make", [lambda: SparseLSSVR(gamma=0.3, alpha=0.1, n_basis=20, random_state=0),
                                  lambda: SparseLSSVRCV(param_space={"gamma": [0.3]}, n_basis=20, ard=False)])
def test_the_wrapper_fitted_on_a_dataframe_checks_its_columns(make):
    # the model refitted on the chosen scale keeps the column names: the same columns predict without a
    # warning, columns in another order are refused (not read as the fitted ones)
    import warnings

    import pandas as pd

    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    y = np.exp(X["a"].to_numpy() + 0.1 * rng.normal(size=60))
    model = TargetTransformRegressor(make(), target_transform=["log", "boxcox"]).fit(X, y)
    assert model.n_features_in_ == 3 and list(model.feature_names_in_) == ["a", "b", "c"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert model.predict(X).shape == (60,)
    with pytest.raises(ValueError, match="feature names"):
        model.predict(X[["c", "a", "b"]])
