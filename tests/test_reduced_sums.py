"""press / loo_error_rate / cv_error reduce per row block
(or per fold) and say when the sums overflow."""

import tracemalloc
import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVC, SparseLSSVR


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    return X, y


def test_item10_blockwise_press_and_cv_error_equal_the_materialised_ones(data, monkeypatch):
    X, y = data
    alphas = np.geomspace(1e-3, 10, 7)
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(0, 300, 7)).fit(X, np.c_[y, y**2])
    np.testing.assert_allclose(est.press(alphas), (est.loo_residuals(alphas) ** 2).sum(axis=1), rtol=1e-12)
    tests = [np.array([i]) for i in range(20)] + [np.arange(20 + i, 300, 10) for i in range(10)]
    pairs = [(np.setdiff1d(np.arange(300), t), t) for t in tests]  # single rows (closed form) and folds
    for cv in (5, pairs):
        F = est.cv_predict(cv, alphas)
        np.testing.assert_allclose(est.cv_error(cv, alphas), ((F - np.c_[y, y**2]) ** 2).mean(axis=1), rtol=1e-12)
    labels = np.where(y > 0.3, "a", np.where(y < -0.3, "b", "c"))
    clf = SparseLSSVC(gamma=0.5, alpha=0.1, basis=np.arange(0, 300, 7)).fit(X, labels)
    F = clf.loo_decision_function(alphas)
    wrong = (clf.classes_[np.argmax(F, axis=-1)] != labels[None]).mean(axis=1)
    np.testing.assert_allclose(clf.loo_error_rate(alphas), wrong)
    F = clf.cv_decision_function(5, alphas)
    wrong = (clf.classes_[np.argmax(F, axis=-1)] != labels[None]).mean(axis=1)
    np.testing.assert_allclose(clf.cv_error(5, alphas), wrong)


def test_item10_press_overflow_warns(data):
    X, y = data
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(0, 300, 7)).fit(X, y * 1e160)
    with pytest.warns(NumericalWarning, match="overflow float64"):
        assert np.isinf(est.press())
    with pytest.warns(NumericalWarning, match="overflow float64"):
        assert np.isinf(est.cv_error(5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(0, 300, 7)).fit(X, y * 1e150).press())


@pytest.mark.parametrize("method", ["press", pytest.param("cv_error", marks=pytest.mark.slow), "loo_error_rate"])
def test_item10_reductions_never_hold_all_residuals(method):
    rng = np.random.default_rng(1)
    m, A = (8_000 if method == "cv_error" else 20_000), 400  # all residuals: A x m x 8 bytes (64 MB at 20k)
    X = rng.normal(size=(m, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=m)
    cls = SparseLSSVC if method == "loo_error_rate" else SparseLSSVR
    est = cls(gamma=0.5, alpha=0.1, basis=np.arange(0, m, m // 5)).fit(X, y > 0 if cls is SparseLSSVC else y)
    alphas = np.geomspace(1e-3, 1e3, A)
    call = {"press": lambda: est.press(alphas), "loo_error_rate": lambda: est.loo_error_rate(alphas),
            "cv_error": lambda: est.cv_error(10, alphas)}[method]
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # all residuals at once took 2-4x A*m*8 bytes; now row blocks of about 1 MiB (LOO), or the folds
    # being computed (a tenth of the rows each, on up to two threads, with their hold-out temporaries)
    assert peak < (0.75 if method == "cv_error" else 0.25) * A * m * 8, peak
