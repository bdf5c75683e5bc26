"""Degenerate numbers attacked as a hostile user would: a single row, constant inputs and
targets, constant output columns and extreme target scales give finite, correct answers
or a clear error; the one-standard-error rule is scale-free and keeps finite points only."""

import warnings

import numpy as np
import pytest

from lssvm import ConstantTargetWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators.gradient_select import one_se_choice
from lssvm.selection import cv_error_and_gradient
from lssvm.selection.gradient import evidence_and_gradient


@pytest.mark.filterwarnings("ignore")
def test_cv_error_and_gradient_refuses_a_single_row():
    # was: (nan, [nan, nan]) returned silently
    with pytest.raises(ValueError, match="at least 2 rows"):
        cv_error_and_gradient(np.ones((1, 3)), np.ones(1), [0], "rbf", {"gamma": 1.0}, 0.1)
    with pytest.raises(ValueError, match="2-D"):
        cv_error_and_gradient(np.ones(5), np.ones(5), [0], "rbf", {"gamma": 1.0}, 0.1)


@pytest.mark.filterwarnings("ignore")
def test_cv_error_and_gradient_constant_data_is_finite():
    value, grad = cv_error_and_gradient(np.ones((10, 3)), np.ones(10), [0, 1, 2], "ard", {"gamma": [1.0] * 3}, 0.1)
    assert value == 0.0 and np.all(np.isfinite(grad))


@pytest.mark.parametrize("scoring", ["mse", "evidence"])
def test_gradient_search_on_constant_targets(scoring):
    # every CV error is 0: log MSE and the evidence gradient were inf/NaN, fed to L-BFGS-B
    X = np.random.default_rng(2).normal(size=(60, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = SparseLSSVRCV(search="gradient", kernel="ard", scoring=scoring, gamma=1.0, basis="kcenter",
                               n_basis=10, random_state=0, param_space={"gamma": [0.1, 1.0]},
                               alphas=[1e-2, 1.0]).fit(X, np.full(60, 2.0))
    names = {w.category.__name__ for w in caught}
    assert "ConstantTargetWarning" in names
    from_search = [w for w in caught if w.filename.endswith(("gradient.py", "gradient_search.py"))
                   and issubclass(w.category, RuntimeWarning)]
    assert not from_search, [str(w.message) for w in from_search]
    np.testing.assert_allclose(search.predict(X[:5]), 2.0, atol=1e-10)
    assert np.all(np.isfinite(search.gamma_))


def test_evidence_with_a_constant_output_column_is_finite():
    # S = 0 made the profile noise precision overflow: log_evidence_path was inf * 0 = NaN for every candidate
    # (an arbitrary pick), and evidence_and_gradient NaN; the constant column now adds a finite constant
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    Y = np.c_[np.sin(X[:, 0]) + 0.1 * rng.normal(size=60), np.full(60, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantTargetWarning)
        warnings.simplefilter("error", RuntimeWarning)
        search = SparseLSSVRCV(scoring="evidence", gamma=1.0, basis="random", n_basis=10, random_state=0,
                               param_space={"gamma": [0.3, 1.0]}, alphas=[1e-2, 1.0]).fit(X, Y)
        assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
        # the gradient of the evidence with that column, against central differences
        basis = np.arange(0, 60, 6)

        def f(t):
            return evidence_and_gradient(X, Y, basis, "ard", {"gamma": np.exp(t[:-1])}, float(np.exp(t[-1])))

        t0 = np.log([0.5, 0.3, 0.05])
        value, grad = f(t0)
        h = 1e-5
        fd = np.array([(f(t0 + e)[0] - f(t0 - e)[0]) / (2 * h) for e in np.eye(3) * h])
    assert np.isfinite(value)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())


def test_predict_std_of_a_constant_output_column_is_zero_without_overflow():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2))
    Y = np.c_[np.sin(X[:, 0]), np.full(50, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantTargetWarning)
        warnings.simplefilter("error", RuntimeWarning)  # the noise precision overflowed to inf with a warning
        std = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(0, 50, 5)).fit(X, Y).predict_std(X[:4])
    assert np.all(std[:, 0] > 0) and np.all(std[:, 1] == 0)


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
