"""search="gradient" in SparseLSSVRCV / SparseLSSVCCV (issue 20)."""

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVCCV, SparseLSSVRCV
from lssvm.estimators import FixedSizeLSSVRCV
from lssvm.estimators.gradient_search import GAMMA_BOUNDS


def _data(m=150, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(1.5 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=m)  # features 0 and 1 matter
    return X, y


def _search(**kw):
    params = dict(kernel="ard", search="gradient", basis="random", n_basis=30, random_state=0, max_evaluations=15,
                  n_restarts=1, param_space={"gamma": 2.0 ** np.arange(-6, 2)}, alphas=np.logspace(-4, 1, 6))
    return SparseLSSVRCV(**{**params, **kw})


def test_ard_search_finds_the_relevant_features_and_beats_its_start():
    X, y = _data()
    est = _search().fit(X, y)
    assert est.gamma_.shape == (5,) and np.all((est.gamma_ >= GAMMA_BOUNDS[0]) & (est.gamma_ <= GAMMA_BOUNDS[1]))
    assert est.feature_relevance_.sum() == pytest.approx(1.0)
    assert set(np.argsort(est.feature_relevance_)[-2:]) == {0, 1}
    grid_best = -est.cv_results_["mean_test_score"].max()
    assert -est.best_score_ < 0.8 * grid_best  # the widths improve on the best isotropic point
    assert est.gradient_trace_["mse"].min() == pytest.approx(-est.best_score_)
    # the refitted model is the one scored: its exact LOO error is best_score_
    loo = est.best_estimator_.loo_residuals(est.alpha_)
    assert np.mean(loo**2) == pytest.approx(-est.best_score_, rel=1e-6)


def test_search_is_reproducible_with_a_seed():
    X, y = _data()
    a, b = _search(random_state=3).fit(X, y), _search(random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.gamma_, b.gamma_)
    assert a.alpha_ == b.alpha_


def test_hyper_penalty_and_kfold_and_classifier():
    X, y = _data(m=120)
    est = _search(hyper_penalty=True, cv=4, basis="kcenter", basis_in_holdout="keep").fit(X, y)
    assert np.isfinite(est.best_score_) and est.gamma_.shape == (5,)
    clf = SparseLSSVCCV(kernel="ard", search="gradient", basis="random", n_basis=30, random_state=0,
                        max_evaluations=10, n_restarts=0, param_space={"gamma": 2.0 ** np.arange(-4, 1)}).fit(X, y > 0)
    assert clf.scoring_ == "mse" and clf.score(X, y > 0) > 0.8


def test_rbf_gradient_search_gives_a_scalar_width():
    X, y = _data()
    est = _search(kernel="rbf").fit(X, y)
    assert isinstance(est.gamma_, float) and est.feature_relevance_ is None


@pytest.mark.parametrize("kw, match", [
    (dict(basis="fvs"), "does not depend on the kernel"),
    (dict(basis="greedy"), "does not depend on the kernel"),
    (dict(kernel="laplacian"), "kernel='ard'"),
    (dict(n_restarts=-1), "n_restarts"),
    (dict(hyper_penalty="yes"), "hyper_penalty"),
    (dict(scoring="error_rate"), "scoring"),
])
def test_bad_settings_are_refused(kw, match):
    X, y = _data(m=40)
    with pytest.raises(ValueError, match=match):
        _search(**kw).fit(X, y)


def test_other_estimators_refuse_gradient_search():
    X, y = _data(m=40)
    with pytest.raises(ValueError, match="SparseLSSVRCV and SparseLSSVCCV only"):
        FixedSizeLSSVRCV(search="gradient", basis="all").fit(X, y)


def test_singular_basis_stops_with_a_warning_at_the_best_point():
    X, y = _data(m=60)
    X[:, 2:] = 0.0
    X[30:, :2] = X[:30, :2] + 1e-9  # near-duplicate rows: K_BB singular at wide widths
    with pytest.warns(NumericalWarning, match="stopped early at the best point so far"):
        est = _search(basis=np.arange(20, 40), param_space={"gamma": [1e-3]}, n_restarts=0).fit(X, y)
    np.testing.assert_allclose(est.gamma_, 1e-3, rtol=1e-12)  # the isotropic start, nothing better was found


def test_cli_select_gradient_ard_writes_relevance_and_trace(tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    X, y = _data(m=120, d=4)
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "d", "t"]).to_csv(tmp_path / "d.csv", index=False)
    out, rep = tmp_path / "m.npz", tmp_path / "rep"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--search", "gradient", "--kernel", "ard",
                                   "--n-basis", "25", "--gammas", "0.01:1:3", "--max-evaluations", "10",
                                   "-o", str(out), "--report", str(rep)])
    assert res.exit_code == 0, res.output
    assert "relevance  " in res.output and "gamma=[" in res.output
    assert (rep / "relevance.png").is_file() and (rep / "trace.png").is_file()
    assert load_model(out).estimator.kernel_.gamma.shape == (4,)
