import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import NumericalWarning, SparseLSSVC, SparseLSSVR
from lssvm.datasets import load_ripley
from lssvm.exceptions import NotFittedError

from _reference import dense_solve
from conftest import rel_err

#: classifiers calibrate by default: predict follows the calibrated probabilities, so near the boundary it may
#: differ from the sign of decision_function (the calibration's leave-one-out takes one unit of a row's
#: weight out, so integer weights are repeated rows there too)
CALIBRATED_CHECKS = {
    "check_classifiers_train": "predict follows the calibrated probabilities, not the sign of decision_function",
}


@parametrize_with_checks(
    [SparseLSSVR(), SparseLSSVC(), SparseLSSVR(basis="random"), SparseLSSVC(kernel="poly", degree=2),
     SparseLSSVR(kernel="linear", basis="greedy", n_basis=5)],
    expected_failed_checks=lambda est: CALIBRATED_CHECKS if hasattr(est, "calibration") else {},
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("basis", ["fvs", "random"])
def test_fitted_coefficients_equal_dense_solve(rng, basis):
    X = rng.standard_normal((60, 4))
    Y = np.column_stack([np.cos(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((60, 2))
    est = SparseLSSVR(gamma=0.2, alpha=0.03, basis=basis, n_basis=12, random_state=0).fit(X, Y)
    Z = est.basis_vectors_
    np.testing.assert_array_equal(Z, X[est.basis_indices_])
    K_mn, K_BB = est.kernel_(X, Z), est.kernel_(Z, Z)
    a, b = dense_solve(K_mn, K_BB, Y, 0.03)
    assert est.dual_coef_.shape == (12, 2) and est.intercept_.shape == (2,)
    assert rel_err(est.dual_coef_, a) < 1e-7 and rel_err(est.intercept_, b) < 1e-7
    assert rel_err(est.predict(X), K_mn @ a + b) < 1e-9


def test_single_output_shapes(rng):
    X = rng.standard_normal((30, 2))
    y = X[:, 0] ** 2
    est = SparseLSSVR(gamma=0.5, alpha=0.1).fit(X, y)
    assert est.predict(X).shape == (30,)
    assert isinstance(est.intercept_, float)
    assert est.dual_coef_.shape == (est.n_basis_,)
    assert est.loo_residuals().shape == (30,)
    assert np.ndim(est.press()) == 0
    assert est.reconstruction_error_curve_.shape == (est.n_basis_ + 1,)
    assert est.score(X, y) > 0.9


def test_explicit_basis_array(rng):
    X = rng.standard_normal((30, 2))
    Z = rng.standard_normal((7, 2))
    est = SparseLSSVR(basis=Z).fit(X, X[:, 0])
    assert est.basis_indices_ is None and est.reconstruction_error_curve_ is None
    np.testing.assert_array_equal(est.basis_vectors_, Z)


def test_classifier_labels_and_decision(rng):
    X, y = load_ripley(return_X_y=True)
    clf = SparseLSSVC(gamma=2.0, alpha=0.1).fit(X, y)
    assert clf.decision_function(X).shape == (250,)
    np.testing.assert_array_equal(clf.predict(X), np.where(clf.decision_function(X) > 0, 1, 0))
    assert clf.score(X, y) > 0.85
    Xt, yt = load_ripley(subset="test", return_X_y=True)
    assert clf.score(Xt, yt) > 0.85  # Ripley's Bayes rate is 8%
    labels = np.array(["no", "yes"])[y]
    clf2 = SparseLSSVC(gamma=2.0, alpha=0.1).fit(X, labels)
    np.testing.assert_array_equal(clf2.predict(X), np.array(["no", "yes"])[clf.predict(X)])


def test_multiclass_one_vs_rest(rng):
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat([5, 7, 9], 20)
    X = centers[np.repeat([0, 1, 2], 20)] + 0.5 * rng.standard_normal((60, 2))
    clf = SparseLSSVC(gamma=0.5, alpha=0.01).fit(X, y)
    D = clf.decision_function(X)
    assert D.shape == (60, 3) and clf.dual_coef_.shape == (clf.n_basis_, 3)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(D, axis=1)])
    assert clf.score(X, y) > 0.95 and clf.loo_error_rate() < 0.1


def test_works_in_grid_search_and_pipeline(rng):
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    pipe = make_pipeline(StandardScaler(), SparseLSSVR(n_basis=20))
    gs = GridSearchCV(pipe, {"sparselssvr__gamma": [0.1, 1.0], "sparselssvr__alpha": [0.01, 1.0]}, cv=3)
    gs.fit(X, y)
    assert set(gs.best_params_) == {"sparselssvr__gamma", "sparselssvr__alpha"}


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), np.arange(3.0), "NaN"),
        (np.array([[1.0, np.inf], [2.0, 3.0], [0.0, 1.0]]), np.arange(3.0), "infinity"),
        (np.ones((3, 2)), np.array([1.0, np.nan, 2.0]), "NaN"),
        (np.ones((3, 2)), np.arange(4.0), "inconsistent numbers of samples"),
        (np.ones(3), np.arange(3.0), "Expected 2D array"),
        (np.ones((0, 2)), np.ones(0), "0 sample"),
        (np.ones((1, 2)), np.ones(1), "1 sample"),
        (np.array([["a", "b"], ["c", "d"]]), np.arange(2.0), "could not convert"),
    ],
)
def test_bad_data_raises_clear_value_error(X, y, match):
    with pytest.raises(ValueError, match=match):
        SparseLSSVR().fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(alpha=0.0), r"'alpha' parameter of SparseLSSV[RC] must be a float in the range \(0.0, inf\)"),
        (dict(alpha=-1.0), r"'alpha' parameter of SparseLSSV[RC] must be a float in the range \(0.0, inf\)"),
        (dict(alpha=[0.1, 1.0]), "single number"),
        (dict(gamma=0.0), "'gamma' parameter of"),
        (dict(gamma=-2.0), "'gamma' parameter of"),
        (dict(kernel="sigmoid"), "'kernel' parameter of .* among"),
        (dict(n_basis=50), "n_basis=50 is larger than the number of training samples"),
        (dict(n_basis=0), r"'n_basis' parameter of \w+ must be an int in the range \[1, inf\), a str among \{'auto'\} or None"),
        (dict(basis="kmeans"), "'basis' parameter of .* among"),
        (dict(basis=np.ones((3, 5))), r"shape \(n_basis, 2\)"),
        (dict(basis=np.array([[0.0, np.nan]])), "NaN"),
        (dict(basis_tol=2.0), "basis_tol"),
        (dict(rcond=0.0), "rcond"),
        (dict(n_candidates=0), "n_candidates"),
    ],
)
def test_bad_parameters_raise_clear_value_error(rng, params, match):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match=match):
        SparseLSSVR(**params).fit(X, X[:, 0])


def test_one_class_and_continuous_targets_rejected(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match="at least 2 classes"):
        SparseLSSVC().fit(X, np.zeros(10))
    with pytest.raises(ValueError, match="Unknown label type"):
        SparseLSSVC().fit(X, rng.standard_normal(10))


def test_loo_alpha_validated(rng):
    X = rng.standard_normal((20, 2))
    est = SparseLSSVR().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        est.loo_residuals([1.0, 0.0])
    with pytest.raises(NotFittedError):
        SparseLSSVR().loo_residuals()


def test_near_singular_kernel_warns_and_still_fits(rng):
    # a very wide RBF makes 100 random basis points numerically dependent
    X = rng.standard_normal((300, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(300)
    with pytest.warns(NumericalWarning, match="numerically singular"):
        est = SparseLSSVR(gamma=1e-3, alpha=1e-3, basis="random", n_basis=100, random_state=0).fit(X, y)
    assert est.rank_ < 100
    assert np.all(np.isfinite(est.loo_residuals()))
    assert est.score(X, y) > 0.95


def test_kernel_object_clones_and_round_trips(rng, tmp_path):
    from sklearn.base import clone

    from lssvm.io import SavedModel, load_model, save_model
    from lssvm.kernels import Polynomial

    X = rng.standard_normal((30, 2))
    y = X[:, 0] * X[:, 1]
    est = SparseLSSVR(kernel=Polynomial(gamma=0.5, degree=2, coef0=1.0), alpha=0.01)
    assert clone(est).kernel == est.kernel
    est.fit(X, y)
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"]))
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(X), est.predict(X), rtol=1e-12)
    assert loaded.estimator.kernel == est.kernel


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(kernel="poly", coef0=-1.0), "coef0 must be a finite number >= 0"),
        (dict(n_candidates=2.5), "'n_candidates' parameter of"),
        (dict(n_candidates="a"), "'n_candidates' parameter of"),
        (dict(alpha="1"), "'alpha' parameter of"),
    ],
)
def test_more_bad_parameters(rng, params, match):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match=match):
        SparseLSSVR(**params).fit(X, X[:, 0])


def test_missing_labels_rejected(rng):
    X = rng.standard_normal((30, 2))
    with pytest.raises(ValueError, match="class labels are missing .* in 15 row"):
        SparseLSSVC().fit(X, np.array(["a", None] * 15, dtype=object))
