"""Estimator-level exact LOO against explicit retraining (lssvm.cv.explicit_loo_residuals).

Problems are kept well conditioned (moderate RBF width, alpha >= 1e-3, basis
kernel matrices with cond < 1e8); there the fast and explicit residual vectors
agree to about 1e-12, and the test demands 1e-8 (the accuracy promised).
"""

import numpy as np
import pytest

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cv import explicit_loo_residuals

from conftest import rel_err

TOL = 1e-8


def regression_data(rng, m=45, d=3, v=None):
    X = rng.standard_normal((m, d))
    f = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2
    y = f + 0.2 * rng.standard_normal(m)
    if v:
        y = np.column_stack([y] + [f * k + rng.standard_normal(m) for k in range(1, v)])
    return X, y


@pytest.mark.parametrize(
    "basis_kw",
    [
        dict(basis="fvs", n_basis=15),
        dict(basis="fvs"),  # stops by tolerance / invertibility
        dict(basis="random", n_basis=12, random_state=0),
        "array",
    ],
    ids=["fvs-capped", "fvs-auto", "random", "array"],
)
@pytest.mark.parametrize("v", [None, 3], ids=["1-output", "3-outputs"])
def test_regression_loo_equals_explicit(rng, basis_kw, v):
    X, y = regression_data(rng, v=v)
    if basis_kw == "array":
        basis_kw = dict(basis=rng.standard_normal((10, 3)))
    est = SparseLSSVR(gamma=0.3, alpha=0.05, **basis_kw).fit(X, y)
    assert np.linalg.cond(est.kernel_(est.basis_vectors_, est.basis_vectors_)) < 1e8
    fast = est.loo_residuals()
    assert fast.shape == y.shape
    assert rel_err(fast, explicit_loo_residuals(est, X, y)) < TOL


def test_loo_for_an_alpha_path_equals_explicit(rng):
    X, y = regression_data(rng, m=30, v=2)
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis="random", n_basis=10, random_state=1).fit(X, y)
    alphas = [1e-3, 0.1, 10.0]
    fast = est.loo_residuals(alphas)
    assert fast.shape == (3, 30, 2)
    assert rel_err(fast, explicit_loo_residuals(est, X, y, alpha=alphas)) < TOL
    press = est.press(alphas)
    np.testing.assert_allclose(press, (fast**2).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(est.loo_predict(alphas), y[None] - fast, rtol=1e-12)


def test_unfitted_estimator_is_fitted_by_the_reference(rng):
    X, y = regression_data(rng, m=25)
    est = SparseLSSVR(gamma=0.4, alpha=0.1, basis="fvs", n_basis=8)
    ref = explicit_loo_residuals(est, X, y)
    assert rel_err(est.fit(X, y).loo_residuals(), ref) < TOL


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("basis", ["fvs", "random"])
def test_classification_loo_equals_explicit(rng, n_classes, basis):
    m = 48
    X = rng.standard_normal((m, 2))
    labels = np.array(["ant", "bee", "cat"])[:n_classes]
    y = labels[(np.arange(m) % n_classes)]
    X[:, 0] += 1.5 * (np.arange(m) % n_classes)
    clf = SparseLSSVC(gamma=0.5, alpha=0.1, basis=basis, n_basis=14, random_state=0).fit(X, y)
    fast = clf.loo_residuals()
    ref = explicit_loo_residuals(clf, X, y)
    assert fast.shape == ((m,) if n_classes == 2 else (m, n_classes))
    assert rel_err(fast, ref) < TOL
    # misclassification rate from the explicit LOO outputs
    coded = np.where(y == labels[1], 1.0, -1.0) if n_classes == 2 else np.where(y[:, None] == labels, 1.0, -1.0)
    F = coded - ref
    pred = labels[(F > 0).astype(int)] if n_classes == 2 else labels[np.argmax(F, axis=1)]
    assert clf.loo_error_rate() == pytest.approx(np.mean(pred != y), abs=1e-15)
    np.testing.assert_allclose(clf.loo_decision_function(), F, rtol=1e-8, atol=1e-10)


def test_classification_loo_path_shapes(rng):
    X = rng.standard_normal((30, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = SparseLSSVC(gamma=1.0, alpha=0.1, n_basis=10).fit(X, y)
    rates = clf.loo_error_rate([0.01, 0.1, 1.0])
    assert rates.shape == (3,)
    assert rates[1] == pytest.approx(clf.loo_error_rate(0.1))
    assert clf.press([0.01, 0.1]).shape == (2,)


def test_explicit_reference_detects_a_lost_class(rng):
    X = rng.standard_normal((10, 2))
    y = np.array([0] * 9 + [1])
    clf = SparseLSSVC(gamma=1.0, alpha=1.0, n_basis=5).fit(X, y)
    with pytest.raises(ValueError, match="removes class"):
        explicit_loo_residuals(clf, X, y)
