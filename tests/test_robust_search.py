"""RobustLSSVRCV: the search's robust criterion is, per candidate and alpha, the
robust statistic of the exact held-out residuals of the model reweighted at that
alpha (RobustLSSVR.robust_cv_error, itself tested against refits); its refit is
the robust model; under gross outliers it predicts clean rows better than the
least-squares search."""

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import RobustLSSVR, RobustLSSVRCV, SparseLSSVRCV

GAMMAS = {"gamma": [0.3, 1.0]}
ALPHAS = [0.01, 0.1, 1.0]


def _data(seed, m=100, share=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(m, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=m)
    bad = rng.choice(m, int(share * m), replace=False)
    y[bad] -= np.sign(y[bad] - y.mean()) * rng.uniform(5, 20, size=bad.size)
    return X, y, bad


@pytest.mark.parametrize("cv, statistic", [("loo", "median"), (KFold(4, shuffle=True, random_state=0), "trimmed")])
def test_search_scores_are_the_robust_cv_errors(cv, statistic):
    X, y, _ = _data(0)
    search = RobustLSSVRCV(param_space=GAMMAS, alphas=ALPHAS, cv=cv, statistic=statistic, basis="random",
                           n_basis=30, random_state=0).fit(X, y)
    best = search.best_estimator_
    assert isinstance(best, RobustLSSVR)
    np.testing.assert_allclose(-search.best_score_, best.robust_cv_error(cv=cv, statistic=statistic), rtol=1e-9)
    # the whole path of one candidate: the robust criterion of the model at that width, alpha by alpha
    res = search.cv_results_
    for gamma in GAMMAS["gamma"]:
        model = RobustLSSVR(gamma=gamma, alpha=ALPHAS[0], basis=best.basis_indices_).fit(X, y)
        path = model.robust_cv_error(cv=cv, alpha=ALPHAS, statistic=statistic)
        mine = [-res["mean_test_score"][i] for i, p in enumerate(res["params"]) if p["gamma"] == gamma]
        np.testing.assert_allclose(mine, path, rtol=1e-9)


def test_robust_search_beats_least_squares_search_under_outliers():
    X, y, bad = _data(1, m=150)
    Xt = np.linspace(-3, 3, 200)[:, None]
    robust = RobustLSSVRCV(param_space=GAMMAS, alphas=ALPHAS, random_state=0).fit(X, y)
    plain = SparseLSSVRCV(param_space=GAMMAS, alphas=ALPHAS, random_state=0).fit(X, y)
    rmse = [np.sqrt(np.mean((m.predict(Xt) - np.sin(Xt[:, 0])) ** 2)) for m in (robust, plain)]
    assert rmse[0] < 0.5 * rmse[1]
    assert robust.best_estimator_.weights_[bad].max() < 0.05


def test_robust_search_with_sample_weight_zero_is_removed_rows():
    X, y, _ = _data(2)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
    w[:7] = 0.0
    keep = w > 0
    a = RobustLSSVRCV(param_space=GAMMAS, alphas=ALPHAS, random_state=0).fit(X, y, sample_weight=w)
    b = RobustLSSVRCV(param_space=GAMMAS, alphas=ALPHAS, random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
    assert a.best_params_ == pytest.approx(b.best_params_, rel=1e-12)
    np.testing.assert_allclose(a.best_score_, b.best_score_, rtol=1e-9)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)


def test_robust_search_clear_errors():
    X, y, _ = _data(3)
    with pytest.raises(ValueError, match="gradient"):
        RobustLSSVRCV(search="gradient").fit(X, y)
    with pytest.raises(ValueError, match="statistic"):
        RobustLSSVRCV(statistic="mode").fit(X, y)
    with pytest.raises(ValueError, match="scoring"):
        RobustLSSVRCV(scoring="error_rate").fit(X, y)


@pytest.mark.slow
def test_robust_search_passes_scikit_learn_checks():
    from sklearn.utils.estimator_checks import check_estimator

    failed = check_estimator(RobustLSSVRCV(param_space={"gamma": [0.1, 1.0]}, alphas=[0.1, 1.0]), on_fail=None)
    assert not [(c["check_name"], c["exception"]) for c in failed if c["status"] == "failed"]
