"""evidence_and_gradient: value against log_evidence_path, gradient against central differences."""

import numpy as np
import pytest

from lssvm.selection.evidence import log_evidence_path
from lssvm.selection.gradient import evidence_and_gradient
from lssvm.solvers import factorize_sparse_rls


def _problem(seed=0, m=60, d=3, n=12, outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.1 * rng.normal(size=m)
    if outputs > 1:
        y = np.c_[y, np.cos(X[:, 2]) + 0.1 * rng.normal(size=m)]
    return X, y, rng.choice(m, n, replace=False)


@pytest.mark.parametrize("kernel, gamma", [("ard", [0.4, 0.05, 1.3]), ("rbf", 0.3)])
@pytest.mark.parametrize("outputs", [1, 2])
@pytest.mark.parametrize("alpha", [1e-3, 0.5])
def test_evidence_gradient_matches_central_differences(kernel, gamma, outputs, alpha):
    X, y, basis = _problem(outputs=outputs)
    value, grad = evidence_and_gradient(X, y, basis, kernel, {"gamma": gamma}, alpha)
    theta = np.append(np.log(np.atleast_1d(gamma)), np.log(alpha))

    def f(t):
        g = np.exp(t[:-1]) if kernel == "ard" else float(np.exp(t[0]))
        return evidence_and_gradient(X, y, basis, kernel, {"gamma": g}, float(np.exp(t[-1])))[0]

    h = 1e-5
    fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-9 * np.abs(fd).max())
    # the value is minus the evidence of the alpha path, per target value
    from lssvm.kernels import ARD

    K = ARD(np.broadcast_to(np.asarray(gamma, float), (3,)))(X, X[basis])
    fac = factorize_sparse_rls(K, K[basis], y.reshape(len(y), -1))
    expected = -log_evidence_path(fac, alpha).sum() / y.size
    assert value == pytest.approx(expected, rel=1e-12)


def test_evidence_gradient_is_not_trivially_zero():
    X, y, basis = _problem(seed=1)
    _, grad = evidence_and_gradient(X, y, basis, "ard", {"gamma": [0.4, 0.05, 1.3]}, 1e-2)
    assert np.all(np.abs(grad) > 1e-6)
