"""Review 28: session 28's merged changes attacked as a hostile user would.

The CV+ block route (the fit's block Grams, ``block_cv_plus``) against brute
force (explicit refits per fold with the same basis, ``np.sort`` order
statistics, ``test_intervals.brute_cv_plus``) on states a user reaches
between fits; the one-standard-error rule of the ARD gradient search
(``selection_rule="one-se"``) at extreme target scales.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold
from test_intervals import brute_cv_plus

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.cv.contiguous import contiguous_folds
from lssvm.estimators.gradient_select import one_se_choice


def _data(rng, m, d=3):
    X = rng.standard_normal((m, d))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m), rng.standard_normal((7, d))


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def _sparse(**kw):
    return SparseLSSVR(**{"gamma": 0.3, "alpha": 0.05, "basis": "random", "n_basis": 12, "random_state": 0, **kw})


# ------------------------------------------------------------------ CV+ on the fit's blocks
def test_blocks_follow_refits_on_other_data_pickling_and_set_params(rng):
    """No block Gram of an earlier fit survives a refit on other data (other m, not divisible by 10); a
    pickled model and one whose alpha was changed without a refit still equal brute force."""
    X, y, Xt = _data(rng, 240)
    est = _sparse().fit(X, y)
    est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep")
    X2, y2, _ = _data(rng, 253)
    est.fit(X2, y2)
    assert est.factorization_.block_grams.offsets[-1] == 253
    ref = brute_cv_plus(est, X2, y2, Xt, contiguous_folds(10, 253), "keep", 0.05, 0.8)[:, :, 0]
    for model in (est, pickle.loads(pickle.dumps(est))):
        assert _rel(model.predict_interval(Xt, 0.8, "cv+", cv=KFold(10), basis_in_holdout="keep"), ref) < 1e-10
    est.set_params(alpha=2.0)  # the fitted factorisation is alpha-free; the call's alpha is est.alpha
    ref = brute_cv_plus(est, X2, y2, Xt, contiguous_folds(10, 253), "keep", 2.0, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep"), ref) < 1e-10


@pytest.mark.parametrize("m, n_basis", [(10, 1), (19, 1), (29, 3), (31, 4)])
def test_tiny_m_and_the_memory_bound(rng, m, n_basis):
    """Folds of one or two rows; K r just above m keeps no blocks (the old route): both equal brute force."""
    X, y, Xt = _data(rng, m)
    est = _sparse(n_basis=n_basis).fit(X, y)
    assert (est.factorization_.block_grams is not None) == (10 * n_basis <= m)
    ref = brute_cv_plus(est, X, y, Xt, contiguous_folds(10, m), "keep", 0.05, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep"), ref) < 1e-10


def test_shuffled_folds_and_extreme_alphas_equal_brute_force(rng):
    X, y, Xt = _data(rng, 200)
    est = _sparse().fit(X.tolist(), y)  # a list: validated to float64 like an array
    cv = KFold(10, shuffle=True, random_state=0)
    ref = brute_cv_plus(est, X, y, Xt, [t for _, t in cv.split(X)], "keep", 0.05, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep"), ref) < 1e-10
    for alpha in (1e-8, 1e12):
        ref = brute_cv_plus(est, X, y, Xt, contiguous_folds(10, 200), "keep", alpha, 0.8)[:, :, 0]
        assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep", alpha=alpha), ref) < 1e-9


# ------------------------------------------------------------------ the one-standard-error rule
@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_one_se_rule_does_not_depend_on_the_targets_scale(rng, scale):
    """The rule's band is a standard error of squared residuals: sd(e^2) squares them again, which under-
    (|y| ~ 1e-100: se = 0, no band) or overflows (1e100: inf, a RuntimeWarning).  Scaling the targets by s
    scales every e^2 by s^2 and adds one constant to every log evidence: the same point must be kept."""
    e2 = rng.standard_normal(200) ** 2
    loo_sq = [e2 * f for f in (1.0, 1.003, 1.006, 1.009, 1.05, 1.1)]  # the first four within 2 %
    evidence = rng.standard_normal(6)
    chosen, record = one_se_choice(loo_sq, evidence)
    assert record["n_admissible"] > 1  # the band matters here
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen_s, record_s = one_se_choice([e * scale**2 for e in loo_sq], evidence + 600.0 * np.log(scale))
    assert chosen_s == chosen and record_s["n_admissible"] == record["n_admissible"]
    assert record_s["se"] == pytest.approx(record["se"] * scale**2, rel=1e-12)


def test_one_se_search_keeps_the_same_point_at_tiny_target_scale():
    """The whole search: targets 1e-100 times smaller give the same widths (the "min" rule already did)."""
    rng = np.random.default_rng(1)  # a problem whose band admits several points
    X = rng.standard_normal((100, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(100)
    fits = [SparseLSSVRCV(kernel="ard", search="gradient", gamma=1.0, basis="random", n_basis=15, random_state=0,
                          max_evaluations=10).fit(X, y * s) for s in (1.0, 1e-100)]
    assert fits[0].gradient_selection_["n_admissible"] > 1
    assert fits[1].gradient_selection_["chosen_index"] == fits[0].gradient_selection_["chosen_index"]
    np.testing.assert_allclose(fits[1].gamma_, fits[0].gamma_, rtol=1e-5)
    assert fits[1].best_score_ / 1e-200 == pytest.approx(fits[0].best_score_, rel=1e-6)


def test_one_se_rule_never_keeps_non_finite_evidence_or_residuals(rng):
    e2 = rng.standard_normal(100) ** 2
    loo_sq = [e2, e2 * 1.001, e2 * 1.002, np.r_[e2[:-1], np.nan], e2 * 1.003]
    chosen, record = one_se_choice(loo_sq, [0.0, np.inf, np.nan, 9.0, -np.inf])
    assert chosen == 0 and record["n_admissible"] == 4  # +inf, NaN, -inf evidence and NaN residuals: not kept
    chosen, record = one_se_choice(loo_sq, [np.nan] * 5)  # no finite evidence: the lowest LOO error
    assert chosen == 0 and np.isnan(record["chosen_log_evidence"])
    with pytest.raises(ValueError, match="no point has finite LOO residuals"):
        one_se_choice([None, np.full(3, np.inf)], [0.0, 0.0])


def test_one_se_best_score_is_the_kept_models_brute_force_loo():
    """best_score_ is minus the LOO MSE of the refitted model, by m explicit refits on the same basis."""
    m, rng = 60, np.random.default_rng(0)  # a problem where the kept point is not the lowest LOO (1.3 % above)
    X = rng.standard_normal((m, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # edge-of-range warnings of the isotropic grid
        s = SparseLSSVRCV(kernel="ard", search="gradient", gamma=1.0, basis="random", n_basis=10, random_state=0,
                          max_evaluations=10).fit(X, y)
    chosen = s.gradient_selection_["chosen_index"]
    assert chosen != s.gradient_selection_["best_index"]
    np.testing.assert_allclose(np.exp(s.gradient_trace_["theta"][chosen]), np.r_[s.gamma_, s.alpha_], rtol=1e-12)
    Z = X[s.basis_rows_]
    e = [y[i] - SparseLSSVR(kernel="ard", gamma=s.gamma_, alpha=s.alpha_, basis=Z).fit(
        np.delete(X, i, 0), np.delete(y, i)).predict(X[i:i + 1])[0] for i in range(m)]
    assert -s.best_score_ == pytest.approx(np.mean(np.square(e)), rel=1e-8)


@pytest.mark.parametrize("search", ["grid", "gradient"])
def test_a_refit_false_fit_does_not_predict_with_the_previous_fits_model(rng, search):
    """fit(refit=True), then set_params(refit=False).fit on other targets: predict used the first fit's
    best_estimator_ (the other targets' model was never fitted) without a word.  As scikit-learn's searches
    do, refit=False has nothing to predict with."""
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # edge-of-range warnings of the small searches
        s = SparseLSSVRCV(kernel="rbf", search=search, gamma=1.0, basis="random", n_basis=10, random_state=0,
                          max_evaluations=8).fit(X, y)
        s.set_params(refit=False).fit(X, -10.0 * y)
    for call in (lambda: s.predict(X[:2]), s.kernel_expansion, lambda: s.predict_interval(X[:2], 0.8, method="cv+")):
        with pytest.raises(AttributeError, match="refit=False"):
            call()


def test_save_model_does_not_write_an_earlier_fits_model_after_a_refit_false_fit(rng, tmp_path):
    from lssvm.io.model_io import SavedModel, save_model

    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = SparseLSSVRCV(kernel="rbf", gamma=1.0, basis="random", n_basis=10, random_state=0).fit(X, y)
        s.set_params(refit=False).fit(X, -10.0 * y)
    model = SavedModel(estimator=s, x_center=np.zeros(3), x_scale=np.ones(3), feature_names=["a", "b", "c"])
    with pytest.raises(AttributeError, match="refit=False"):
        save_model(tmp_path / "m.lssvm", model)
    assert not list(tmp_path.iterdir())  # nothing written


def test_save_model_with_a_bare_estimator_or_swapped_arguments_says_what_it_takes(rng, tmp_path):
    from lssvm.io.model_io import save_model

    X = rng.standard_normal((30, 2))
    est = _sparse(n_basis=5).fit(X, X[:, 0])
    for args in ((tmp_path / "m.lssvm", est), (est, tmp_path / "m.lssvm")):
        with pytest.raises(TypeError, match="SavedModel"):
            save_model(*args)
    assert not list(tmp_path.iterdir())


def test_explicit_pairs_whose_train_is_not_the_complement_are_refused():
    """The exact CV trains each fold's model on all rows outside its test fold; a (train, test) pair with
    fewer (or other) training rows used to be accepted and its train indices silently ignored."""
    rng = np.random.default_rng(28)
    X = rng.standard_normal((120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis="random", n_basis=20, random_state=0).fit(X, y)
    good = list(KFold(10).split(X))
    as_masks = [(np.isin(np.arange(120), tr), te) for tr, te in good]
    short = [(tr[5:], te) for tr, te in good]
    swapped = [(np.r_[tr[:-1], te[0]], te) for tr, te in good]  # right count, a test row trained on
    ref = est.predict_interval(X[:7], 0.8, method="cv+", cv=10, basis_in_holdout="keep")
    np.testing.assert_array_equal(est.predict_interval(X[:7], 0.8, method="cv+", cv=good, basis_in_holdout="keep"),
                                  ref)
    np.testing.assert_array_equal(est.predict_interval(X[:7], 0.8, method="cv+", cv=as_masks,
                                                       basis_in_holdout="keep"), ref)
    for bad in (short, swapped):
        for mode in ("keep", "remove"):
            with pytest.raises(ValueError, match="training rows must be all rows outside"):
                est.predict_interval(X[:7], 0.8, method="cv+", cv=bad, basis_in_holdout=mode)
        with pytest.raises(ValueError, match="training rows must be all rows outside"):
            est.cv_predict(bad)


def test_dask_explicit_pairs_whose_train_is_not_the_complement_are_refused():
    """The Dask engine's explicit (train, test) pairs get the in-memory check of the train rows."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(29)
    X = rng.standard_normal((120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis="random", n_basis=20, random_state=0).fit(
        da.from_array(X, chunks=40), da.from_array(y, chunks=40))
    good = list(KFold(5).split(X))
    np.testing.assert_allclose(np.asarray(est.cv_predict(good)), np.asarray(est.cv_predict(5)), rtol=1e-12)
    with pytest.raises(ValueError, match="training rows must be all rows outside"):
        est.cv_predict([(tr[3:], te) for tr, te in good])


def test_gradient_search_does_not_pass_on_its_start_grids_edge_warning():
    """The isotropic grid only starts L-BFGS-B (widths and alpha range over the search's own bounds), so its
    best point on the grid's edge is no advice for the user; the grid search itself still warns."""
    from lssvm import SearchEdgeWarning

    rng = np.random.default_rng(30)
    X = rng.standard_normal((150, 8))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(150)
    space = {"gamma": [4.0, 8.0, 16.0]}  # every width too large for 7 noise inputs: best on the lower edge
    with pytest.warns(SearchEdgeWarning, match="lower edge"):
        SparseLSSVRCV(param_space=space, basis="random", n_basis=30, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SparseLSSVRCV(kernel="ard", search="gradient", param_space=space, basis="random", n_basis=30,
                            random_state=0, max_evaluations=15, n_restarts=0).fit(X, y)
    assert est.grid_best_params_["gamma"] == 4.0
    assert not [w for w in caught if issubclass(w.category, SearchEdgeWarning)]
