"""The GP contender's objective in ``benchmarks/ard_gp.py`` against scikit-learn.

``GPObjective`` replaces scikit-learn's m x m x d gradient tensor by one ``P @ X``; the benchmark's fairness rests
on it being the same objective, so it is checked here on fresh random problems, not only by ``--part check``.
"""

import importlib
import os
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


@pytest.fixture(scope="module")
def ard_gp():
    sys.path.insert(0, BENCH)
    try:
        yield importlib.import_module("ard_gp")
    finally:
        sys.path.remove(BENCH)


@pytest.mark.parametrize("d", [1, 3, 7])
def test_value_and_gradient_equal_scikit_learn(ard_gp, rng, d):
    m = 80
    X = rng.standard_normal((m, d)) * rng.uniform(0.2, 3.0, d)
    y = np.sin(X[:, 0]) + 0.3 * rng.standard_normal(m) + 5.0  # an offset: normalize_y must remove it
    kernel = ard_gp.make_kernel(d)
    gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=None).fit(X, y)
    objective = ard_gp.GPObjective(X, y)
    bounds = kernel.bounds
    for theta in [kernel.theta] + [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(4)]:
        lml, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
        value, g = objective(theta)
        assert value == pytest.approx(-lml, rel=1e-10)
        K = kernel.clone_with_theta(theta)(X) + 1e-10 * np.eye(m)
        scale = max(1e-9, 1e-15 * np.linalg.cond(K))  # both sides round K^-1: errors grow with cond(K)
        np.testing.assert_allclose(g, -grad, rtol=1e-7, atol=scale * np.max(np.abs(grad)))
    assert objective.evaluations == 5


def test_gradient_matches_central_differences(ard_gp, rng):
    m, d = 60, 4
    X = rng.standard_normal((m, d))
    y = X[:, 0] * X[:, 1] + 0.1 * rng.standard_normal(m)
    objective = ard_gp.GPObjective(X, y)
    theta = np.log(np.r_[1.5, 0.8, 1.2, 3.0, 20.0, 0.05])
    _, g = objective(theta)
    h = 1e-5
    fd = [(objective(theta + h * e)[0] - objective(theta - h * e)[0]) / (2 * h) for e in np.eye(theta.size)]
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_not_positive_definite_gives_inf_like_scikit_learn(ard_gp):
    # identical rows, c = e^40, s = exp(-800) = 0: K = c 1 1^T + 1e-10 I is singular in floating point
    X, y = np.zeros((5, 2)), np.arange(5.0)
    theta = np.array([40.0, 0.0, 0.0, -800.0])
    gp = GaussianProcessRegressor(ard_gp.make_kernel(2), normalize_y=True, optimizer=None).fit(X, y)
    assert gp.log_marginal_likelihood(theta) == -np.inf
    value, g = ard_gp.GPObjective(X, y)(theta)
    assert value == np.inf and not g.any()
