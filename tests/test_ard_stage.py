"""The ARD stage of the sparse searches: one width per input from the isotropic winner, kept only where its exact
CV error on the search's folds is lower; skipped with a reason where it cannot help or does not fit the budget."""

import time

import numpy as np
import pytest
import scipy.sparse as sp

from lssvm import SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators import ard_stage
from lssvm.estimators.ard_stage import ard_summary


def _few_inputs_matter(m, d, seed=0, noise=0.1):
    rng = np.random.RandomState(seed)
    X = rng.randn(m, d)
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + noise * rng.randn(m)
    return X, y


def test_kept_model_is_the_ard_model_scored_by_brute_force():
    # the recorded CV error of the kept model equals an explicit ARD fit's exact LOO MSE on the same rows
    X, y = _few_inputs_matter(300, 6)
    search = SparseLSSVRCV(n_basis=None, random_state=0).fit(X, y)  # the stage's model is the refit (no growth)
    stage = search.ard_stage_
    assert stage["ran"] and stage["kept"], stage
    assert stage["cv_ard"] < stage["cv_isotropic"]
    est = search.best_estimator_
    assert est.kernel == "ard" and np.allclose(est.gamma, stage["gamma"])
    explicit = SparseLSSVR(kernel="ard", gamma=stage["gamma"], alpha=stage["alpha"],
                           basis=np.asarray(est.basis_indices_)).fit(X, y)
    loo_mse = float(np.mean(explicit.loo_residuals() ** 2))
    assert np.isclose(stage["cv_ard"], loo_mse, rtol=1e-6)
    assert np.isclose(-search.best_score_, loo_mse, rtol=1e-6)
    assert search.best_index_ is None and search.best_params_["alpha"] == stage["alpha"]
    assert search.feature_relevance_.shape == (6,) and np.argmax(search.feature_relevance_) == 0
    assert ard_summary(stage).startswith("ARD: kept (CV ")


def test_kfold_stage_scores_on_the_searchs_folds():
    X, y = _few_inputs_matter(240, 5, seed=1)
    search = SparseLSSVRCV(cv=4, n_basis=None, random_state=0).fit(X, y)
    stage = search.ard_stage_
    assert stage["ran"]
    # brute force: refit the ARD model without each fold on the stage's basis rows
    rows = np.asarray(search.best_estimator_.basis_indices_) if stage["kept"] else None
    if rows is not None:
        sq = []
        for test in search.cv_folds_:
            train = np.setdiff1d(np.arange(X.shape[0]), test)
            keep = np.flatnonzero(np.isin(train, rows))
            basis_in_train = keep  # positions of the basis rows inside the training rows
            fit = SparseLSSVR(kernel="ard", gamma=stage["gamma"], alpha=stage["alpha"],
                              basis=basis_in_train).fit(X[train], y[train])
            sq.append((fit.predict(X[test]) - y[test]) ** 2)
        assert np.isclose(stage["cv_ard"], np.mean(np.concatenate(sq)), rtol=1e-6)


def test_declined_stage_keeps_the_isotropic_model(monkeypatch):
    # a stage whose candidate cannot be lower (its criterion forced above) leaves every fitted attribute alone
    X, y = _few_inputs_matter(200, 4)
    iso = SparseLSSVRCV(ard=False, n_basis=None, random_state=0).fit(X, y)
    calls = []

    def isotropic_then_worse(mse, error_rate, scoring):  # the isotropic key first, then the ARD candidate's
        calls.append(mse)
        return (float(mse),) if len(calls) == 1 else (np.inf,)

    monkeypatch.setattr(ard_stage, "_criterion_value", isotropic_then_worse)
    search = SparseLSSVRCV(n_basis=None, random_state=0).fit(X, y)
    stage = search.ard_stage_
    assert stage["ran"] and not stage["kept"] and stage["reason"] == "its CV error is not lower"
    assert search.best_estimator_.kernel == "rbf" and search.best_index_ == iso.best_index_
    assert search.best_params_ == iso.best_params_ and search.best_score_ == iso.best_score_
    assert ard_summary(stage).startswith("ARD: declined (CV ")


def test_skipped_where_it_cannot_help():
    rng = np.random.RandomState(0)
    X1 = rng.randn(100, 1)
    y1 = np.sin(X1[:, 0])
    assert "one input" in SparseLSSVRCV().fit(X1, y1).ard_stage_["reason"]
    X, y = _few_inputs_matter(40, 8)  # 40 rows, 9 hyper-parameters
    stage = SparseLSSVRCV().fit(X, y).ard_stage_
    assert not stage["ran"] and "per hyper-parameter" in stage["reason"]
    assert SparseLSSVRCV(ard=False).fit(X, y).ard_stage_["reason"] == "ard=False"
    assert "kernel='rbf'" in SparseLSSVRCV(kernel="laplacian").fit(X, y).ard_stage_["reason"]


def test_ard_true_where_it_cannot_run_is_a_clear_error():
    X, y = _few_inputs_matter(60, 3)
    with pytest.raises(ValueError, match="ard=True cannot run here: the gradient needs a dense X"):
        SparseLSSVRCV(ard=True).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="ard=True cannot run here: search='gradient'"):
        SparseLSSVRCV(ard=True, search="gradient").fit(X, y)
    with pytest.raises(ValueError, match="ard"):
        SparseLSSVRCV(ard="yes").fit(X, y)


def test_classifier_stage_compares_error_rates():
    X, y = _few_inputs_matter(300, 5, seed=2)
    search = SparseLSSVCCV(n_basis=None, random_state=0).fit(X, y > 0)
    stage = search.ard_stage_
    assert stage["ran"]
    iso_err = stage["cv_isotropic"]
    assert 0 <= stage["cv_ard"] <= 1 and 0 <= iso_err <= 1
    if stage["kept"]:
        assert (stage["cv_ard"], stage["cv_mse_ard"]) < (iso_err, stage["cv_mse_isotropic"])
        assert np.isclose(search.best_score_, 1 - stage["cv_ard"])
        assert search.best_estimator_.kernel == "ard"
        assert search.predict(X).shape == (300,)


@pytest.mark.slow
def test_time_budget_is_respected_by_the_stage():
    # the budget leaves the stage a quarter of what its 20 evaluations take here: without the cost model and the
    # deadline the fit overruns it by far more than 1.5x
    X, y = _few_inputs_matter(2000, 30, seed=3)
    params = dict(n_basis=300, random_state=0)
    t0 = time.perf_counter()
    SparseLSSVRCV(ard=False, **params).fit(X, y)
    isotropic = time.perf_counter() - t0
    t0 = time.perf_counter()
    full = SparseLSSVRCV(ard=True, time_budget=None, **params).fit(X, y)
    unbounded = time.perf_counter() - t0
    budget = isotropic + (unbounded - isotropic) / 4
    t0 = time.perf_counter()
    search = SparseLSSVRCV(time_budget=budget, **params).fit(X, y)
    elapsed = time.perf_counter() - t0
    assert unbounded > 2 * budget
    assert elapsed <= 1.5 * budget, (elapsed, budget, search.ard_stage_)
    stage = search.ard_stage_
    assert (not stage["ran"] and stage["reason"].startswith("predicted")) or \
        stage["n_evaluations"] < full.ard_stage_["n_evaluations"]


def test_basis_grows_at_the_kept_ard_kernel():
    # n_basis="auto" after a kept ARD model grows the basis at the ARD widths; a grown model replaces it only with
    # a lower CV error, and then is the explicit ARD fit on the first n pivots
    X, y = _few_inputs_matter(300, 5, seed=4, noise=0.05)
    search = SparseLSSVRCV(n_basis="auto", random_state=0).fit(X, y)
    stage, curve = search.ard_stage_, search.basis_curve_
    assert stage["kept"]
    est = search.best_estimator_
    assert est.kernel == "ard" and np.allclose(est.gamma, stage["gamma"])
    if curve["replaced"]:
        n = curve["n_chosen"]
        np.testing.assert_array_equal(est.basis_indices_, search.basis_pivots_[:n])
        explicit = SparseLSSVR(kernel="ard", gamma=stage["gamma"], alpha=search.alpha_,
                               basis=search.basis_pivots_[:n]).fit(X, y)
        loo_mse = float(np.mean(explicit.loo_residuals() ** 2))
        np.testing.assert_allclose(-search.best_score_, loo_mse, rtol=1e-6)
        assert loo_mse < stage["cv_ard"]
    else:
        assert -search.best_score_ == stage["cv_ard"]


def test_auto_keeps_an_explicit_width_grid_and_true_runs_on_it():
    X, y = _few_inputs_matter(200, 4)
    grid = {"gamma": [0.1, 0.5]}
    stage = SparseLSSVRCV(param_space=grid).fit(X, y).ard_stage_
    assert not stage["ran"] and stage["reason"].startswith("param_space given")
    assert SparseLSSVRCV(param_space=grid, ard=True).fit(X, y).ard_stage_["ran"]


@pytest.mark.parametrize("cv", ["loo", 5])
def test_kept_classifier_score_describes_the_refit(cv):
    # best_score_ of a kept ARD classifier is the exact CV accuracy recomputed on best_estimator_ (same folds)
    X, y = _few_inputs_matter(300, 5, seed=2)
    search = SparseLSSVCCV(cv=cv, ard=True, n_basis=None, random_state=0).fit(X, y > 0)
    stage = search.ard_stage_
    assert stage["ran"]
    model = search.best_estimator_ if stage["kept"] else None
    if model is None:
        assert search.best_estimator_.kernel == "rbf"
        return
    folds = "loo" if search.cv_folds_ is None else [(np.setdiff1d(np.arange(300), f), f) for f in search.cv_folds_]
    kw = {"basis_in_holdout": "keep"} if folds == "loo" else {}
    assert search.best_score_ == pytest.approx(1.0 - float(model.cv_error(cv=folds, **kw)), rel=1e-10)
