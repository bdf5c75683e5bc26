"""The one-standard-error rule of the ARD gradient search: the per-point LOO residuals
and evidence it reads, the rule on a constructed trace, and the search's ``selection_rule``."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators.gradient_select import one_se_choice
from lssvm.selection import cv_error_and_gradient
from lssvm.selection.gradient import evidence_and_gradient


def _data(m=150, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(1.5 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=m)  # inputs 0 and 1 matter
    return X, y


def _search(**kw):
    params = dict(kernel="ard", search="gradient", basis="random", n_basis=30, random_state=0, max_evaluations=15,
                  n_restarts=1, gamma=1.0, param_space={"gamma": 2.0 ** np.arange(-6, 2)}, alphas=np.logspace(-4, 1, 6))
    return SparseLSSVRCV(**{**params, **kw})


@pytest.mark.parametrize("v", [1, 2])
def test_details_are_the_models_loo_residuals_and_evidence(v):
    """Against a plain SparseLSSVR at the same point (fresh random data, one and two outputs)."""
    rng = np.random.default_rng(v)
    X = rng.normal(size=(120, 4))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] ** 2][:, :v] + 0.1 * rng.normal(size=(120, v))
    y = Y[:, 0] if v == 1 else Y
    rows = rng.choice(120, 25, replace=False)
    gamma, alpha = np.array([0.3, 0.2, 0.05, 0.01]), 1e-2
    model = SparseLSSVR(kernel="ard", gamma=gamma, alpha=alpha, basis=rows, rcond=1e-14).fit(X, y)
    loo = np.asarray(model.loo_residuals(alpha)).reshape(120, v)
    value, grad, det = cv_error_and_gradient(X, y, rows, "ard", {"gamma": gamma}, alpha, rcond=1e-14,
                                             return_details=True)
    np.testing.assert_allclose(det["residuals"], loo, rtol=1e-9, atol=1e-12)
    assert value == pytest.approx(np.mean(loo**2), rel=1e-12)
    assert det["log_evidence"] == pytest.approx(float(np.sum(model.log_evidence())), rel=1e-10)
    assert np.array_equal(grad, cv_error_and_gradient(X, y, rows, "ard", {"gamma": gamma}, alpha, rcond=1e-14)[1])
    ev, _, det_ev = evidence_and_gradient(X, y, rows, "ard", {"gamma": gamma}, alpha, rcond=1e-14,
                                          return_details=True)
    np.testing.assert_allclose(det_ev["residuals"], loo, rtol=1e-9, atol=1e-12)
    assert det_ev["log_evidence"] == pytest.approx(float(np.sum(model.log_evidence())), rel=1e-10)
    assert det_ev["log_evidence"] == pytest.approx(-ev * 120 * v, rel=1e-12)


def test_kfold_details_are_the_holdout_residuals():
    from sklearn.model_selection import KFold

    X, y = _data(m=90)
    rows = np.arange(0, 90, 4)
    gamma, alpha = np.array([0.4, 0.3, 0.01, 0.01, 0.01]), 1e-2
    value, _, det = cv_error_and_gradient(X, y, rows, "ard", {"gamma": gamma}, alpha, cv=3,
                                          basis_in_holdout="keep", return_details=True)
    assert det["log_evidence"] is None
    brute = np.empty(90)
    for train, test in KFold(3).split(X):  # explicit retraining on the same basis points ("keep")
        basis = X[rows]
        m = SparseLSSVR(kernel="ard", gamma=gamma, alpha=alpha, basis=basis, rcond=1e-14).fit(X[train], y[train])
        brute[test] = y[test] - m.predict(X[test])
    np.testing.assert_allclose(det["residuals"][:, 0], brute, rtol=1e-7, atol=1e-10)
    assert value == pytest.approx(np.mean(brute**2), rel=1e-8)


def test_rule_on_a_constructed_trace():
    """Five points of m = 400 residuals: the rule keeps the highest evidence among the points whose mean
    squared LOO residual is within sd(e_best^2) / sqrt(m) of the lowest."""
    rng = np.random.default_rng(0)
    base = rng.exponential(size=400)  # e_best^2: mean ~1, sd ~1, so se ~0.05
    se = base.std(ddof=1) / np.sqrt(400)
    shifts = [0.0, 0.5 * se, 0.9 * se, 1.1 * se, 3 * se]
    loo_sq = [base + s for s in shifts]
    evidence = [1.0, 2.0, 5.0, 9.0, 20.0]  # the highest evidence lies outside the band
    chosen, rec = one_se_choice(loo_sq, evidence, rtol=None)
    assert chosen == 2 and rec["best_index"] == 0 and rec["n_admissible"] == 3
    assert rec["se"] == pytest.approx(se) and rec["threshold"] == pytest.approx(base.mean() + se)
    assert rec["chosen_loo"] == pytest.approx(base.mean() + 0.9 * se)
    # z = 0 keeps the lowest; a wider band reaches further
    assert one_se_choice(loo_sq, evidence, z=0.0, rtol=None)[0] == 0
    assert one_se_choice(loo_sq, evidence, z=2.0, rtol=None)[0] == 3
    # the cap: at most rtol x the lowest LOO error (here 0.6 se), then 0.4 se (point 1 only)
    cap = 0.6 * se / base.mean()
    chosen, rec = one_se_choice(loo_sq, evidence, rtol=cap)
    assert chosen == 1 and rec["threshold"] == pytest.approx(base.mean() * (1 + cap))
    assert one_se_choice(loo_sq, evidence, rtol=0.4 * se / base.mean())[0] == 0
    # points without residuals or evidence are never chosen (the band then starts at the lowest point with
    # residuals, 0.5 se up, and reaches point 3); NaN evidence everywhere keeps the lowest
    assert one_se_choice([None, *loo_sq[1:]], evidence, rtol=None)[0] == 3
    assert one_se_choice(loo_sq, [1.0, 2.0, np.nan, 9.0, 20.0], rtol=None)[0] == 1
    assert one_se_choice(loo_sq, [np.nan] * 5, rtol=None)[0] == 0
    with pytest.raises(ValueError, match="no point has finite LOO residuals"):
        one_se_choice([None, np.full(3, np.inf)], [1.0, 2.0])


def test_search_keeps_the_rules_point_and_stores_why():
    X, y = _data()
    est = _search().fit(X, y)
    sel, tr = est.gradient_selection_, est.gradient_trace_
    assert sel["rule"] == "one-se" and 1 <= sel["n_admissible"] <= tr["mse"].size
    # the evidence search's points are in the trace (their "mse" is their LOO error), after the LOO starts'
    assert set(tr["search"]) == {"loo", "evidence"}
    assert np.all(np.flatnonzero(tr["search"] == "evidence") > np.flatnonzero(tr["search"] == "loo").max())
    assert sel["best_loo"] == pytest.approx(np.nanmin(tr["mse"]), rel=1e-12)
    admissible = tr["mse"] <= sel["threshold"]
    assert admissible.sum() == sel["n_admissible"]
    assert sel["chosen_log_evidence"] == pytest.approx(np.max(tr["log_evidence"][admissible]))
    i = sel["chosen_index"]
    np.testing.assert_allclose(est.gamma_, np.exp(tr["theta"][i][:-1]))
    assert est.alpha_ == pytest.approx(np.exp(tr["theta"][i][-1]))
    # best_score_ is the refitted model's exact LOO error, the kept point's
    loo = est.best_estimator_.loo_residuals(est.alpha_)
    assert -est.best_score_ == pytest.approx(np.mean(loo**2), rel=1e-6)
    assert -est.best_score_ == pytest.approx(sel["chosen_loo"], rel=1e-6)
    # the stored evidence is the refitted model's
    assert tr["log_evidence"][i] == pytest.approx(float(est.best_estimator_.log_evidence()), rel=1e-6)


def test_min_rule_is_the_old_search_and_one_se_is_reproducible():
    X, y = _data()
    low = _search(selection_rule="min").fit(X, y)
    assert low.gradient_selection_ is None and set(low.gradient_trace_["search"]) == {"loo"}
    assert -low.best_score_ == pytest.approx(low.gradient_trace_["mse"].min(), rel=1e-6)
    a, b = _search(random_state=3).fit(X, y), _search(random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.gamma_, b.gamma_)
    assert a.alpha_ == b.alpha_ and a.gradient_selection_ == b.gradient_selection_
    # the LOO starts are the same searches under both rules
    one = _search(selection_rule="one-se").fit(X, y)
    loo = one.gradient_trace_["search"] == "loo"
    np.testing.assert_array_equal(one.gradient_trace_["mse"][loo], low.gradient_trace_["mse"])


@pytest.mark.parametrize("kw", [dict(cv=4, basis_in_holdout="keep"), dict(scoring="evidence"),
                                dict(hyper_penalty=True)])
def test_rule_applies_to_exact_loo_only(kw):
    X, y = _data(m=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = _search(max_evaluations=8, **kw).fit(X, y)
    assert est.gradient_selection_ is None
    assert "evidence" not in set(est.gradient_trace_["search"]) or kw.get("scoring") == "evidence"


def test_bad_selection_rule_is_refused():
    X, y = _data(m=60)
    with pytest.raises(ValueError, match="selection_rule"):
        _search(selection_rule="lowest").fit(X, y)
    clf = SparseLSSVCCV(kernel="ard", search="gradient", basis="random", n_basis=20, random_state=0, gamma=1.0,
                        max_evaluations=6, n_restarts=0, param_space={"gamma": 2.0 ** np.arange(-4, 1)},
                        selection_rule="min").fit(X, y > 0)
    assert clf.gradient_selection_ is None
