"""n_basis="auto": the exact CV error of every prefix size of a pivoted
Cholesky basis, checked against explicit refits, the size rule, and the
time budget of the searches."""

import time
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import SparseLSSVC, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.basis import pivoted_cholesky
from lssvm.cv.basis_size import (
    BasisSizeCurve,
    choose_basis_size,
    grow_basis,
    pivot_cholesky_factor,
    prefix_cv_sums,
)
from lssvm.kernels import make_kernel


def _data(seed, m=70, d=3, noise=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + noise * rng.normal(size=m)
    return X, y


def _explicit_errors(X, y, rows, alpha, gamma, folds, removed=False):
    """Mean squared out-of-fold error of the sparse LS-SVM solved afresh on each fold's training rows by a
    dense direct solve of its normal equations, its basis the points ``X[rows]``: kept whether or not they
    are held out, or (``removed``) without the held-out ones (``basis_in_holdout="remove"``)."""
    m = X.shape[0]
    sse = 0.0
    for test in folds:
        train = np.setdiff1d(np.arange(m), test)
        fold_rows = np.setdiff1d(rows, test) if removed else np.asarray(rows)
        K = np.exp(-gamma * ((X[:, None, :] - X[None, fold_rows, :]) ** 2).sum(axis=2))  # (m, n)
        K_BB = K[fold_rows]
        F = np.column_stack([K[train], np.ones(train.size)])
        P = np.zeros((len(fold_rows) + 1, len(fold_rows) + 1))
        P[:-1, :-1] = alpha * K_BB
        coef = np.linalg.lstsq(F.T @ F + P, F.T @ y[train], rcond=None)[0]
        sse += np.sum((y[test] - K[test] @ coef[:-1] - coef[-1]) ** 2)
    return sse / m


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("scheme", ["loo", "kfold"])
def test_every_prefix_size_equals_an_explicit_refit(seed, scheme):
    X, y = _data(seed, m=45)
    m = X.shape[0]
    gamma, alphas = 0.4, np.array([0.03, 1.0])
    kernel = make_kernel("rbf", gamma=gamma)
    pivots = pivoted_cholesky(X, kernel, 20, random_state=seed).indices
    G, L = pivot_cholesky_factor(X, kernel, pivots[:7])  # grown in two steps, as the growth does
    G, L = pivot_cholesky_factor(X, kernel, pivots, G, L)
    assert G.shape == (m, 20)
    if scheme == "loo":
        folds = [np.array([i]) for i in range(m)]
        sse, _ = prefix_cv_sums(G, y[:, None], alphas)
    else:
        folds = [t for _, t in KFold(5, shuffle=True, random_state=seed).split(X)]
        sse, _ = prefix_cv_sums(G, y[:, None], alphas, folds)
    for n in (1, 2, 9, 20):
        for a, alpha in enumerate(alphas):
            expected = _explicit_errors(X, y, pivots[:n], alpha, gamma, folds)
            np.testing.assert_allclose(sse[a, n] / m, expected, rtol=1e-6)


def test_prefix_sums_average_the_outputs():
    X, y = _data(3)
    Y = np.column_stack([y, -2 * y + 1, np.cos(X[:, 2])])
    kernel = make_kernel("rbf", gamma=0.5)
    G, _ = pivot_cholesky_factor(X, kernel, pivoted_cholesky(X, kernel, 12, random_state=0).indices)
    sse, _ = prefix_cv_sums(G, Y, [0.1])
    per_output = [prefix_cv_sums(G, Y[:, [j]], [0.1])[0] for j in range(3)]
    np.testing.assert_allclose(sse, np.mean(per_output, axis=0), rtol=1e-10)


def test_pivoted_cholesky_is_nested():
    X, _ = _data(4, m=300, d=4)
    kernel = make_kernel("rbf", gamma=0.3)
    long = pivoted_cholesky(X, kernel, 120, random_state=5).indices
    short = pivoted_cholesky(X, kernel, 40, random_state=5).indices
    np.testing.assert_array_equal(short, long[:40])


def test_size_rules():
    err = np.array([5.0, 3.0, 2.2, 2.05, 2.0, 2.1])
    se = np.full(6, 0.1)
    assert choose_basis_size(err) == 5  # the default: lowest CV error
    assert choose_basis_size(err, se, rule="one-se") == 4  # 2.05 <= 2.0 + 0.1; 2.2 is not
    assert choose_basis_size(err, np.full(6, 3.5), rule="one-se") == 1
    with pytest.raises(ValueError, match="no finite"):
        choose_basis_size(np.array([np.inf]), np.array([0.0]))
    with pytest.raises(ValueError, match="rule"):
        choose_basis_size(err, se, rule="max")


def test_the_estimator_keeps_the_size_of_lowest_loo_error():
    X, y = _data(6, m=400, d=3, noise=0.3)
    model = SparseLSSVR(gamma=0.5, alpha=1e-2, n_basis="auto", random_state=0).fit(X, y)
    curve = model.basis_curve_
    n = curve["n_chosen"]
    assert curve["stop_reason"] in ("plateau", "max_size", "singular")
    err = curve["cv_error"]
    assert n == int(np.argmin(err)) + 1
    np.testing.assert_array_equal(model.basis_indices_, model.basis_pivots_[:n])
    assert model.n_basis_ == n
    np.testing.assert_array_equal(curve["n_basis"], np.arange(1, model.basis_pivots_.size + 1))
    # the stored LOO error at the chosen size is the fitted model's exact LOO error
    np.testing.assert_allclose(err[n - 1], np.mean(model.loo_residuals() ** 2), rtol=1e-6)
    # and any prefix can be refitted: its LOO error is the curve's
    k = max(1, n // 3)
    prefix = SparseLSSVR(gamma=0.5, alpha=1e-2, basis=model.basis_pivots_[:k]).fit(X, y)
    np.testing.assert_allclose(err[k - 1], np.mean(prefix.loo_residuals() ** 2), rtol=1e-6)


def test_growth_curve_matches_explicit_kfold_at_every_stored_size():
    X, y = _data(7, m=90)
    kernel = make_kernel("rbf", gamma=0.6)
    folds = [t for _, t in KFold(4, shuffle=True, random_state=1).split(X)]
    curve = grow_basis(X, y[:, None], kernel, [0.05], folds, start=6, max_size=30, random_state=2)
    assert isinstance(curve, BasisSizeCurve)
    for n in (1, 6, curve.n_basis[-1]):
        expected = _explicit_errors(X, y, curve.pivots[:n], 0.05, 0.6, folds)
        np.testing.assert_allclose(curve.cv_error[n - 1], expected, rtol=1e-6)


@pytest.mark.parametrize("seed, m", [(8, 240), (14, 400), (3, 300)])
def test_search_with_kfold_reports_the_chosen_size_score(seed, m):
    X, y = _data(seed, m=m, noise=0.3)
    cv = KFold(4, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the growth of the isotropic model (after a kept ARD model: tests/test_ard_stage.py)
        plain = SparseLSSVRCV(param_space={"gamma": [0.25, 1.0]}, cv=cv, n_basis=None, ard=False,
                              random_state=0).fit(X, y)
        search = SparseLSSVRCV(param_space={"gamma": [0.25, 1.0]}, cv=cv, n_basis="auto", ard=False,
                               random_state=0).fit(X, y)
    curve = search.basis_curve_
    n = curve["n_chosen"]
    assert curve["n_basis"][-1] >= plain.best_estimator_.n_basis_  # the first stage has the search's size
    est = search.best_estimator_
    chosen = search.basis_pivots_[:n]
    if "cv_error_search_rule" in curve:  # the grown model scored as the search scores (basis removed)
        expected = _explicit_errors(X, y, chosen, curve["alpha"][n - 1], search.gamma_, search.cv_folds_,
                                    removed=True)
        np.testing.assert_allclose(curve["cv_error_search_rule"], expected, rtol=1e-6)
        assert curve["replaced"] == (expected < -plain.best_score_)
    else:  # the grown basis is the search's: nothing to compare
        np.testing.assert_array_equal(chosen, plain.best_estimator_.basis_indices_)
        assert not curve["replaced"]
    if not curve["replaced"]:  # the search's model and score stand
        assert est.n_basis_ == plain.best_estimator_.n_basis_ and search.best_score_ == plain.best_score_
        return
    np.testing.assert_array_equal(est.basis_indices_, chosen)
    assert search.alpha_ == est.alpha == curve["alpha"][n - 1]
    # one rule: the stored score is the search's (basis removed from the hold-outs), by brute force
    expected = _explicit_errors(X, y, chosen, search.alpha_, search.gamma_, search.cv_folds_, removed=True)
    np.testing.assert_allclose(-search.best_score_, expected, rtol=1e-6)
    # the search's own candidates are scored under that rule too
    i = search.best_index_
    searched = _explicit_errors(X, y, plain.best_estimator_.basis_indices_, plain.alpha_, plain.gamma_,
                                search.cv_folds_, removed=True)
    np.testing.assert_allclose(search.cv_results_["mean_test_mse"][i], searched, rtol=1e-6)


def test_classifier_and_its_search_take_auto():
    X, y = _data(9, m=200)
    labels = (y > np.median(y)).astype(int)
    clf = SparseLSSVC(gamma=0.5, alpha=0.1, n_basis="auto", random_state=0).fit(X, labels)
    assert clf.n_basis_ == clf.basis_curve_["n_chosen"]
    search = SparseLSSVCCV(param_space={"gamma": [0.5]}, n_basis="auto", calibration="sigmoid",
                           random_state=0).fit(X, labels)
    if search.basis_curve_["replaced"]:
        assert search.best_estimator_.n_basis_ == search.basis_curve_["n_chosen"]
    assert search.score(X, labels) > 0.8
    # the grown refit keeps the search's calibration
    assert search.best_estimator_.calibration == "sigmoid"
    proba = search.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"basis": "random"}, "needs basis='pchol'"),
])
def test_auto_refuses_other_bases(kwargs, match):
    X, y = _data(10)
    with pytest.raises(ValueError, match=match):
        SparseLSSVR(n_basis="auto", **kwargs).fit(X, y)


@pytest.mark.parametrize("kwargs, fit_kw, reason", [
    ({"search": "gradient", "max_evaluations": 3, "n_restarts": 0}, {}, "search='gradient'"),
    ({"basis": "random"}, {}, "basis='random'"),
    ({"refit": False}, {}, "refit=False"),
    ({}, {"sample_weight": True}, "sample_weight"),
    ({"alpha_per_target": True}, {"targets": 2}, "alpha_per_target=True"),
])
def test_search_auto_falls_back_to_the_fixed_rule(kwargs, fit_kw, reason):
    # "auto" is the default: where it cannot grow the basis, the fit is the fixed size rule's, and says why
    X, y = _data(11)
    if fit_kw.get("targets"):
        y = np.column_stack([y, -y])
    weights = {"sample_weight": np.ones(X.shape[0])} if fit_kw.get("sample_weight") else {}
    common = {"param_space": {"gamma": [0.5]}, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = SparseLSSVRCV(**common, **kwargs).fit(X, y, **weights)
        fixed = SparseLSSVRCV(**common, **kwargs, n_basis=None).fit(X, y, **weights)
    assert auto.get_params()["n_basis"] == "auto"
    assert auto.basis_curve_["stop_reason"] == f"not applicable: {reason}"
    assert auto.basis_curve_["n_chosen"] is None and auto.basis_curve_["n_basis"].size == 0
    np.testing.assert_array_equal(auto.best_score_, fixed.best_score_)
    assert auto.best_params_.keys() == fixed.best_params_.keys()
    for key in auto.best_params_:
        np.testing.assert_array_equal(auto.best_params_[key], fixed.best_params_[key])
    if auto.refit:
        np.testing.assert_array_equal(auto.predict(X), fixed.predict(X))
        np.testing.assert_array_equal(auto.basis_pivots_, fixed.best_estimator_.basis_indices_)


def test_search_defaults_grow_the_basis_within_a_budget():
    search = SparseLSSVRCV()
    assert search.n_basis == "auto" and search.time_budget == 60.0


def test_bad_time_budget_is_a_clear_error():
    X, y = _data(12)
    with pytest.raises(ValueError, match="time_budget"):
        SparseLSSVRCV(n_basis="auto", time_budget=0).fit(X, y)


@pytest.mark.slow
def test_time_budget_is_respected():
    # a smooth, nearly noise-free target in 6 inputs keeps improving up to the cap of 2,000 points, whose
    # growth on 12,000 rows costs many times the search; the budget is the search's own time (measured
    # here, so that the test holds on a busy or an idle machine) plus a few seconds
    rng = np.random.default_rng(13)
    m, d = 12000, 6
    X = rng.uniform(-2, 2, size=(m, d))
    y = np.sin(X).sum(axis=1) + 0.01 * rng.normal(size=m)
    t0 = time.perf_counter()
    SparseLSSVRCV(param_space={"gamma": [0.3]}, n_basis=None, random_state=0).fit(X, y)
    budget = 2 * (time.perf_counter() - t0) + 4.0
    t0 = time.perf_counter()
    search = SparseLSSVRCV(param_space={"gamma": [0.3]}, n_basis="auto", time_budget=budget,
                           random_state=0).fit(X, y)
    elapsed = time.perf_counter() - t0
    assert search.basis_curve_["stop_reason"] == "time_budget"
    assert search.basis_curve_["stages"]  # it grew, then stopped for the budget
    assert search.basis_pivots_.size < 2000
    assert elapsed <= 1.5 * budget, (elapsed, budget, search.basis_curve_["stages"])


@pytest.mark.slow
def test_select_command_grows_the_basis(tmp_path):
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    out = tmp_path / "m.npz"
    runner = CliRunner()
    res = runner.invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "0.25:16:4", "--n-basis", "auto",
                              "--time-budget", "60", "--no-report", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "basis      auto: grown after the search within 60 s" in res.output
    line = next(t for t in res.output.splitlines() if t.startswith("basis ") and "points;" in t)
    assert "grown" in line and "lowest CV error at" in line
    assert load_model(out) is not None
    res = runner.invoke(cli, ["select", "motorcycle", "--target", "accel", "--model", "nystrom", "--n-basis", "auto",
                              "--no-report", "-o", str(out)])
    assert res.exit_code != 0 and "--model sparse" in res.output


def test_loo_search_rechooses_alpha_at_the_grown_size():
    X, y = _data(15, m=400, noise=0.02)  # small noise: the grown model wins by more than one SE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(param_space={"gamma": [0.5]}, n_basis="auto", ard=False, random_state=0).fit(X, y)
    est = search.best_estimator_
    assert search.basis_curve_["replaced"]
    assert search.alpha_ == est.alpha
    loo = est.loo_residuals()
    np.testing.assert_allclose(-search.best_score_, np.mean(loo**2), rtol=1e-8)
    # the lowest LOO error on the path at that size, and no higher than the curve's at the search's alpha
    path_mse = np.mean(est.loo_residuals(alpha=np.logspace(-6, 4, 21)) ** 2, axis=1)
    np.testing.assert_allclose(-search.best_score_, path_mse.min(), rtol=1e-8)
    assert -search.best_score_ <= search.basis_curve_["cv_error"][search.basis_curve_["n_chosen"] - 1] + 1e-12
    # the refitted coefficients are those of a fresh fit at that alpha
    fresh = SparseLSSVR(gamma=0.5, alpha=est.alpha, basis=est.basis_indices_).fit(X, y)
    np.testing.assert_allclose(est.predict(X), fresh.predict(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("seed", [1, 4])
def test_grown_basis_refit_takes_the_searched_integer_parameters(seed):
    # a searched grid keeps its values as floats (degree 3.0); the grown basis's refit must take the
    # fitted model's integer degree, which the estimator's constraints require (these seeds grow and replace)
    X = np.random.default_rng(seed).normal(size=(60, 2))
    search = SparseLSSVRCV(kernel="poly", param_space={"degree": [2, 3]}, alphas=[1e-3, 1e-1],
                           random_state=0).fit(X, X[:, 0] ** 2)
    assert isinstance(search.best_estimator_.degree, (int, np.integer))
