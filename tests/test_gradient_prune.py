"""Inputs switched off after the ARD gradient search (issue 20, session 27): gradient_prune.prune_inputs."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators import gradient_search as gs
from lssvm.estimators.gradient_prune import GAMMA_OFF, PRUNE_RTOL, loo_squared_residuals, prune_inputs


def _data(m=300, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 6))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + noise * rng.normal(size=m)  # inputs 0 and 1 matter
    return X, y


def test_loo_residuals_match_the_fitted_model():
    X, y = _data()
    rows = np.random.default_rng(1).choice(len(y), 40, replace=False)
    gamma = np.array([0.4, 0.3, 1e-3, 2e-3, 1e-9, 5e-4])
    r2 = loo_squared_residuals(X, y[:, None], rows, gamma, 1e-3, 1e-14)
    model = SparseLSSVR(kernel="ard", gamma=gamma, alpha=1e-3, basis=rows, rcond=1e-14).fit(X, y)
    np.testing.assert_allclose(r2, model.loo_residuals(1e-3) ** 2, rtol=1e-9, atol=1e-14)


def test_noise_inputs_are_switched_off_and_relevant_ones_kept():
    X, y = _data()
    rows = np.random.default_rng(1).choice(len(y), 25, replace=False)
    gamma = np.array([1.5, 1.0, 1e-3, 2e-3, 1e-4, 5e-4])  # small, non-zero noise widths, as LOO leaves them
    order = [5, 4, 3, 2, 1, 0]
    pruned, off, mse, alpha = prune_inputs(X, y[:, None], rows, gamma, 1e-3, order)
    assert alpha == 1e-3  # no alphas given: alpha stays
    assert sorted(off) == [2, 3, 4, 5]
    np.testing.assert_array_equal(pruned[2:], GAMMA_OFF)
    np.testing.assert_array_equal(pruned[:2], gamma[:2])
    # the rule: against the searched point, the paired rise of the squared LOO residuals is within PRUNE_Z
    # standard errors at the result, and switching off a relevant input would break it
    r0 = loo_squared_residuals(X, y[:, None], rows, gamma, 1e-3, 1e-14)
    r = loo_squared_residuals(X, y[:, None], rows, pruned, 1e-3, 1e-14)
    d = r - r0
    assert d.mean() <= gs_z() * d.std(ddof=1) / np.sqrt(d.size)
    assert d.mean() <= PRUNE_RTOL * r0.mean()
    assert mse == pytest.approx(r.mean(), rel=1e-12)
    worse = pruned.copy()
    worse[1] = GAMMA_OFF
    d = loo_squared_residuals(X, y[:, None], rows, worse, 1e-3, 1e-14) - r0
    assert d.mean() > gs_z() * d.std(ddof=1) / np.sqrt(d.size)


def gs_z():
    from lssvm.estimators.gradient_prune import PRUNE_Z

    return PRUNE_Z


def test_search_with_pruning_scores_the_pruned_model(monkeypatch):
    X, y = _data(noise=0.3)
    kw = dict(kernel="ard", search="gradient", basis="random", n_basis=25, random_state=0, max_evaluations=20,
              n_restarts=1, gamma=1.0, param_space={"gamma": 2.0 ** np.arange(-6, 2)}, alphas=np.logspace(-4, 1, 6),
              rcond=1e-14)
    plain = SparseLSSVRCV(**kw).fit(X, y)
    assert plain.pruned_features_ is None  # off by default
    monkeypatch.setattr(gs, "PRUNE", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = SparseLSSVRCV(**kw).fit(X, y)
    assert {0, 1}.isdisjoint(est.pruned_features_) and len(est.pruned_features_) > 0
    np.testing.assert_array_equal(est.gamma_[est.pruned_features_], GAMMA_OFF)
    assert np.any(est.gamma_ != plain.gamma_)  # a width moved: the pruned model was refitted
    loo = np.mean(est.best_estimator_.loo_residuals(est.alpha_) ** 2)
    assert -est.best_score_ == pytest.approx(loo, rel=1e-9)  # the refitted (pruned) model is the one scored
    # the same search, then the switches, then alpha re-chosen on the exact path: no worse than the searched alpha
    again = SparseLSSVR(kernel="ard", gamma=est.gamma_, alpha=plain.alpha_, basis=est.basis_rows_, rcond=1e-14)
    assert loo <= np.mean(again.fit(X, y).loo_residuals(plain.alpha_) ** 2) * (1 + 1e-12)


def test_alpha_is_rechosen_on_the_exact_path_after_switches():
    X, y = _data()
    rows = np.random.default_rng(1).choice(len(y), 25, replace=False)
    gamma = np.array([1.5, 1.0, 1e-3, 2e-3, 1e-4, 5e-4])
    alphas = np.logspace(-6, 1, 8)
    pruned, off, mse, alpha = prune_inputs(X, y[:, None], rows, gamma, 1e-3, [5, 4, 3, 2, 1, 0], alphas=alphas)
    # brute force: the LOO error of the fitted model at each alpha, the searched one included
    model = SparseLSSVR(kernel="ard", gamma=pruned, alpha=1e-3, basis=rows, rcond=1e-14).fit(X, y)
    path = [np.mean(model.loo_residuals(a) ** 2) for a in np.append(alphas, 1e-3)]
    assert mse == pytest.approx(min(path), rel=1e-9)
    assert alpha == np.append(alphas, 1e-3)[int(np.argmin(path))]
