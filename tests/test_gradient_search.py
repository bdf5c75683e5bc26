"""search="gradient" in SparseLSSVRCV / SparseLSSVCCV."""

import warnings

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


@pytest.mark.parametrize("rule", ["one-se", "min"])
def test_ard_search_finds_the_relevant_features_and_beats_its_start(rule):
    X, y = _data()
    est = _search(selection_rule=rule).fit(X, y)
    assert est.gamma_.shape == (5,) and np.all((est.gamma_ >= GAMMA_BOUNDS[0]) & (est.gamma_ <= GAMMA_BOUNDS[1]))
    assert est.feature_relevance_.sum() == pytest.approx(1.0)
    assert set(np.argsort(est.feature_relevance_)[-2:]) == {0, 1}
    grid_best = -est.cv_results_["mean_test_score"].max()
    assert -est.best_score_ < 0.8 * grid_best  # the widths improve on the best isotropic point
    kept = est.gradient_trace_["mse"].min() if rule == "min" else \
        est.gradient_trace_["mse"][est.gradient_selection_["chosen_index"]]
    assert kept == pytest.approx(-est.best_score_)
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
    (dict(basis="fvs"), "stays fixed while the widths move"),
    (dict(basis="greedy"), "stays fixed while the widths move"),
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


def _friedman(m, seed=0):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(m, n_features=20, noise=1.0, random_state=seed)  # inputs 0-4 matter, 3 and 4 linearly
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def test_feature_relevance_is_the_rms_derivative_of_the_fitted_model():
    from lssvm import SparseLSSVC, SparseLSSVR
    from lssvm.estimators.gradient_search import feature_relevance

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 4)) * np.array([1.0, 2.0, 0.5, 1.0])
    Y = np.c_[np.sin(X[:, 0]) + X[:, 1], X[:, 2] ** 2]
    gamma = np.array([0.3, 0.05, 1.0, 0.2])
    for model, targets in [(SparseLSSVR(kernel="ard", gamma=gamma, alpha=1e-2, basis="random", n_basis=25,
                                        random_state=0), Y),
                           (SparseLSSVC(kernel="ard", gamma=gamma, alpha=1e-2, basis="random", n_basis=25,
                                        random_state=0), np.digitize(X[:, 0], [-0.5, 0.5]))]:
        model.fit(X, targets)
        f = model.decision_function if hasattr(model, "decision_function") else model.predict
        h, sq = 1e-6, np.zeros(4)
        for j in range(4):  # central differences of the fitted outputs
            E = np.zeros(4)
            E[j] = h
            sq[j] = np.mean(np.sum(((f(X + E) - f(X - E)).reshape(80, -1) / (2 * h)) ** 2, axis=1))
        r = np.sqrt(sq) * X.std(axis=0)
        np.testing.assert_allclose(feature_relevance(model, X, block_size=7), r / r.sum(), rtol=1e-6)


def test_friedman_relevant_inputs_rank_first_linear_ones_included():
    # Friedman #1: 10 sin(pi x0 x1) + 20 (x2 - 1/2)^2 + 10 x3 + 5 x4, and 15 noise inputs.  The linear inputs
    # 3 and 4 get small widths (a wide kernel fits a line), so the widths alone rank noise inputs above them.
    X, y = _friedman(400)
    est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=80, random_state=0,
                        max_evaluations=40, n_restarts=0, gamma=1.0,
                        param_space={"gamma": 2.0 ** np.arange(-11, -1)}, alphas=np.logspace(-5, 1, 7)).fit(X, y)
    rel = est.feature_relevance_
    assert rel.shape == (20,) and rel.sum() == pytest.approx(1.0)
    assert set(np.argsort(rel)[::-1][:5]) == {0, 1, 2, 3, 4}
    assert rel[[3, 4]].min() > 3 * np.delete(rel, range(5)).max()  # a clear gap, not a near tie


def test_cawley_talbot_objective_and_its_gradient():
    from lssvm.estimators.gradient_search import search_objective
    from lssvm.selection import cv_error_and_gradient

    X, y = _data(m=60, d=3)
    rows = np.arange(0, 60, 3)

    def objective(theta, penalty):
        g = np.exp(theta[:3])
        value, grad = cv_error_and_gradient(X, y, rows, "ard", {"gamma": g}, float(np.exp(theta[-1])))
        return search_objective(value, grad, g, 60, penalty), value

    theta = np.log([0.3, 0.1, 0.05, 1e-2])
    for penalty in (False, True):
        (obj, gobj), value = objective(theta, penalty)
        omega = 0.5 * np.sum(np.exp(2 * theta[:3]))
        # (N/2) log PRESS + (p/2) log Omega, divided by N/2 = 30, up to a constant
        assert obj == pytest.approx(np.log(value) + penalty * (3 / 60) * np.log(omega), rel=1e-12)
        fd = [(objective(theta + h, penalty)[0][0] - objective(theta - h, penalty)[0][0]) / 2e-6
              for h in 1e-6 * np.eye(4)]
        np.testing.assert_allclose(gobj, fd, rtol=1e-5, atol=1e-9)


def test_relevance_is_set_without_refit():
    X, y = _data(m=80)
    est = _search(refit=False, n_restarts=0, max_evaluations=5).fit(X, y)
    assert not hasattr(est, "best_estimator_") and est.feature_relevance_.shape == (5,)
    assert est.feature_relevance_.sum() == pytest.approx(1.0)


def test_cawley_talbot_penalty_integrates_both_scales_out():
    """Cawley & Talbot (2007, §4): likelihood (zeta/2pi)^(N/2) exp(-zeta Q), Q = PRESS/2; prior on the widths
    (xi/2pi)^(p/2) exp(-xi Omega), Omega = sum(gamma^2)/2; Jeffreys priors 1/zeta, 1/xi.  Minus the log of the
    double integral, computed by quadrature, must change between two points as (N/2) times our objective."""
    from scipy.integrate import quad

    from lssvm.estimators.gradient_search import search_objective

    N = 12

    def minus_log_integral(mse, gamma):
        Q, omega, p = N * mse / 2, 0.5 * np.sum(gamma**2), gamma.size

        def log_scale_integral(k, s):  # log of int_0^inf (t/2pi)^(k/2) exp(-t s) dt / t, by quadrature
            t0 = k / (2 * s)  # the mode of the integrand, to scale it
            f = lambda t: np.exp((k / 2 - 1) * np.log(t / t0) - s * (t - t0))  # noqa: E731
            val, _ = quad(f, 0, np.inf, limit=200, epsabs=0, epsrel=1e-12)
            return np.log(val) + (k / 2 - 1) * np.log(t0) - s * t0 - (k / 2) * np.log(2 * np.pi)

        return -(log_scale_integral(N, Q) + log_scale_integral(p, omega))

    points = [(0.3, np.array([0.5, 0.02, 2.0])), (0.05, np.array([1e-3, 0.7, 0.1])), (1.7, np.array([3.0, 4.0, 1e-2]))]
    objs = [search_objective(mse, np.zeros(4), g, N, hyper_penalty=True)[0] for mse, g in points]
    ints = [minus_log_integral(mse, g) for mse, g in points]
    for k in (1, 2):
        assert (N / 2) * (objs[k] - objs[0]) == pytest.approx(ints[k] - ints[0], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("d, seed", [(8, 2), (16, 0)])
def test_alpha_refinement_leaves_no_better_alpha_at_the_chosen_widths(monkeypatch, d, seed):
    """L-BFGS-B can leave alpha on a plateau (its partial is O(alpha) far below the spectrum) or stop early at a
    singular K_BB; the alpha path at the chosen widths then restarts it.  At the end no alpha of the path is
    better (checked by the refitted model's exact LOO at each alpha), and the search beats the same search
    without the refinement."""
    import lssvm.estimators.gradient_search as gs

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, d))
    y = np.sin(2 * X[:, 0]) + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=300)
    alphas = np.logspace(-6, 4, 21)
    kw = dict(kernel="ard", search="gradient", basis="random", n_basis=40, random_state=0, max_evaluations=30,
              n_restarts=0, gamma=1.0, alphas=alphas, selection_rule="min")  # one-se keeps a point near the lowest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = SparseLSSVRCV(**kw).fit(X, y)
        monkeypatch.setattr(gs, "ALPHA_REFINEMENTS", 0)
        plain = SparseLSSVRCV(**kw).fit(X, y)
    path = [np.mean(est.best_estimator_.loo_residuals(a) ** 2) for a in alphas]
    assert min(path) >= (1 - gs.ALPHA_REFINE_RTOL) * -est.best_score_
    assert -est.best_score_ < 0.9 * -plain.best_score_


def test_cawley_talbot_collapse_to_the_width_bound_is_reported():
    """(p/2) log Omega falls without bound as every width shrinks: with few rows per width the penalised
    criterion is lowest at the lower width bound (lower than at the unpenalised optimum, where input 0
    matters), and the search says so instead of silently returning a nearly linear model."""
    from lssvm import SearchEdgeWarning
    from lssvm.estimators.gradient_search import search_objective
    from lssvm.selection import cv_error_and_gradient

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 12))
    y = np.sin(1.5 * X[:, 0]) + 0.3 * rng.normal(size=60)
    kw = dict(kernel="ard", search="gradient", basis="random", n_basis=15, random_state=0, max_evaluations=30,
              n_restarts=1, gamma=1.0)
    with pytest.warns(SearchEdgeWarning, match="every width ended more than 1000x below"):
        ct = SparseLSSVRCV(hyper_penalty=True, **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchEdgeWarning)
        plain = SparseLSSVRCV(**kw).fit(X, y)
    assert plain.gamma_[0] > 1e3 * ct.gamma_.max()

    def penalised(est):
        value, grad = cv_error_and_gradient(X, y, est.basis_rows_, "ard", {"gamma": est.gamma_}, est.alpha_,
                                            rcond=1e-14)
        return search_objective(value, grad, est.gamma_, 60, hyper_penalty=True)[0]

    assert penalised(ct) < penalised(plain)


def test_evidence_search_maximises_the_evidence():
    from lssvm.selection.gradient import evidence_and_gradient

    X, y = _data()
    est = _search(scoring="evidence").fit(X, y)
    assert est.scoring_ == "evidence" and set(np.argsort(est.feature_relevance_)[-2:]) == {0, 1}
    with warnings.catch_warnings():  # K_BB is singular at the default rcond: the gradient is approximate there
        warnings.simplefilter("ignore", NumericalWarning)
        value, _ = evidence_and_gradient(X, y, est.basis_rows_, "ard", {"gamma": est.gamma_}, est.alpha_,
                                         rcond=est.rcond)
    assert est.best_score_ == pytest.approx(-value * y.size, rel=1e-9)  # the total log evidence of the choice
    assert est.best_score_ == pytest.approx(est.best_estimator_.log_evidence(), rel=1e-9)  # of the refitted model
    assert est.best_score_ > est.cv_results_["mean_test_score"].max()  # better than the isotropic grid's best
    with pytest.raises(ValueError, match="without hyper_penalty"):
        _search(scoring="evidence", hyper_penalty=True).fit(X, y)
