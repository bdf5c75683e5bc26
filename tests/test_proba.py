"""Calibrated class probabilities from the exact LOO / k-fold decision values."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import SparseLSSVC
from lssvm.estimators._calibration import fit_platt


def blobs(rng, m=90, k=2):
    y = np.arange(m) % k
    X = rng.standard_normal((m, 2)) + 1.5 * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
    labels = np.array(["a", "b", "c", "d"])[y]
    return X, labels


def clf(**kw):
    kw.setdefault("calibration", "sigmoid")
    return SparseLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=20, random_state=0, **kw)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("calibration_cv", [None, 4])
def test_rows_sum_to_one_and_follow_classes_order(rng, k, calibration, calibration_cv):
    X, y = blobs(rng, k=k)
    est = clf(calibration=calibration, calibration_cv=calibration_cv).fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (X.shape[0], k)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((P >= 0) & (P <= 1))
    # the column of each class is largest, on average, on its own rows
    for j, c in enumerate(est.classes_):
        assert P[y == c, j].mean() > P[y != c, j].mean()
    assert log_loss(y, P, labels=est.classes_) < log_loss(y, np.full_like(P, 1.0 / k))


def test_binary_probability_is_monotone_in_the_decision_value(rng):
    X, y = blobs(rng)
    T = rng.standard_normal((200, 2)) * 3
    for calibration, strict in (("sigmoid", True), ("isotonic", False)):
        est = clf(calibration=calibration).fit(X, y)
        d = est.decision_function(T)
        order = np.argsort(d)
        p = est.predict_proba(T)[order, 1]
        steps = np.diff(p)
        assert np.all(steps >= 0)
        if strict:  # strictly increasing wherever the sigmoid has not saturated in float64
            inner = (p[1:] < 1 - 1e-6) & (p[:-1] > 1e-6) & (np.diff(d[order]) > 1e-6)
            assert inner.sum() > 150 and np.all(steps[inner] > 0)


def test_calibrators_are_fitted_on_the_loo_decision_values(rng):
    X, y = blobs(rng, k=3)
    F = clf(calibration=None).fit(X, y).loo_decision_function()
    est = clf(calibration="isotonic").fit(X, y)
    T = rng.standard_normal((30, 2)) * 2
    D = est.decision_function(T)
    raw = np.column_stack([
        IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(F[:, j], y == c).predict(D[:, j])
        for j, c in enumerate(est.classes_)
    ])
    expected = raw / raw.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(est.predict_proba(T), expected, atol=1e-12)
    # k-fold calibration uses the exact out-of-fold values instead
    est5 = clf(calibration="isotonic", calibration_cv=5).fit(X, y)
    F5 = est5.cv_decision_function(5)
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(F5[:, 0], y == est.classes_[0])
    assert np.allclose(est5.calibrators_[0](D[:, 0]), iso.predict(D[:, 0]))


def test_platt_is_the_maximum_likelihood_sigmoid(rng):
    f = rng.standard_normal(300)
    t = rng.random(300) < expit(2.0 * f - 0.5)
    A, B = fit_platt(f, t)
    # the same smoothed-target likelihood, maximised by a generic logistic fit of two columns
    n_pos, n_neg = t.sum(), (~t).sum()
    target = np.where(t, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    Xd = np.r_[f, f][:, None]
    lr = LogisticRegression(C=1e12, tol=1e-12, max_iter=10000).fit(
        Xd, np.r_[np.ones(300), np.zeros(300)], sample_weight=np.r_[target, 1 - target])
    np.testing.assert_allclose([-A, -B], [lr.coef_[0, 0], lr.intercept_[0]], rtol=1e-4, atol=1e-5)


def test_works_inside_calibrated_classifier_cv_and_log_loss(rng):
    X, y = blobs(rng, k=3)
    cal = CalibratedClassifierCV(clf(), cv=3).fit(X, y)
    P = cal.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.isfinite(log_loss(y, clf().fit(X, y).predict_proba(X)))


def test_bad_calibration_is_refused(rng):
    X, y = blobs(rng)
    with pytest.raises(ValueError, match="'calibration' parameter of SparseLSSVC must be a str among"):
        clf(calibration="platt").fit(X, y)


def test_no_predict_proba_without_calibration(rng):
    X, y = blobs(rng)
    est = clf(calibration=None).fit(X, y)
    assert not hasattr(est, "predict_proba") and not hasattr(SparseLSSVC(calibration=None), "predict_log_proba")
    assert est.calibrators_ is None


# calibrated probabilities need not peak where the decision values do (as SVC(probability=True))
_ARGMAX = {"check_classifiers_train": "predict follows the calibrated probabilities: near the boundary it may differ from "
           "the sign (argmax) of decision_function",
           # the held-out values calibrated on leave a weighted row out whole, a repeated row one copy at a time
           "check_sample_weight_equivalence_on_dense_data": "held-out calibration: a weight is not a repetition"}


# SparseLSSVC(calibration="sigmoid") is SparseLSSVC(), checked in test_estimators.py
@pytest.mark.slow
@parametrize_with_checks([SparseLSSVC(calibration="isotonic", calibration_cv=3)],
                         expected_failed_checks=lambda est: _ARGMAX)
def test_isotonic_kfold_calibration_passes_scikit_learn_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_a_saved_classifier_keeps_its_probabilities(rng, tmp_path, calibration):
    from lssvm.io import SavedModel, load_model, save_model

    X, y = blobs(rng, k=3)
    est = clf(calibration=calibration).fit(X, y)
    saved = SavedModel(estimator=est, x_center=np.zeros(2), x_scale=np.ones(2), feature_names=["u", "v"])
    loaded = load_model(save_model(tmp_path / "c.npz", saved)).estimator
    T = rng.standard_normal((20, 2))
    np.testing.assert_allclose(loaded.predict_proba(T), est.predict_proba(T), rtol=1e-12)
