"""Platt's objective as evaluated by the calibration (one exponential and one
``log1p`` per row, the sums of the terms linear in ``z`` formed once, a
branch-free ``P(positive)``, in reused buffers) against its direct formulas with
``logaddexp`` and ``expit``, on fresh random data: loss, gradient and Hessian
to rounding, weighted and unweighted, out to saturated sigmoids (``|z|``
past the exponential's overflow)."""

import numpy as np
import pytest
from scipy.special import expit

from lssvm.estimators._calibration import _platt_newton, _PlattObjective


def _direct(A, B, g, target, w):
    z = A * g + B
    p = expit(-z)
    loss = w @ (np.logaddexp(0.0, z) - (1.0 - target) * z)
    r, c = w * (target - p), w * p * (1.0 - p)
    return loss, np.array([r @ g, r.sum()]), np.array([[c @ (g * g), c @ g], [c @ g, c.sum()]])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weighted", [False, True])
def test_objective_equals_the_direct_formulas(seed, weighted):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 3000))
    g = rng.uniform(-1.0, 1.0, m)
    target = np.where(rng.random(m) < 0.4, 1.0 - 1.0 / (m + 2.0), 1.0 / (m + 2.0))
    w = rng.integers(1, 5, m).astype(float) if weighted else np.ones(m)
    objective = _PlattObjective(g, target, w if weighted else None)
    for A, B in [(0.0, rng.normal()), (-rng.uniform(0, 10), rng.normal()), (-2000.0, 3.0), (1500.0, -900.0)]:
        loss = objective.loss(A, B)
        grad, (haa, hab, hbb) = objective.derivatives()
        hess = np.array([[haa, hab], [hab, hbb]])
        want = _direct(A, B, g, target, w)
        scale = w.sum() * max(1.0, abs(A) + abs(B))
        assert abs(loss - want[0]) <= 1e-13 * scale
        np.testing.assert_allclose(grad, want[1], rtol=0, atol=1e-13 * w.sum())
        np.testing.assert_allclose(hess, want[2], rtol=1e-12, atol=1e-13 * w.sum())


@pytest.mark.parametrize("seed", range(6))
def test_newton_reaches_the_direct_objective_minimum(seed):
    """The minimiser found with the buffered objective has the direct formulas' gradient at rounding."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(20, 2000))
    g = rng.uniform(-1.0, 1.0, m)
    pos = rng.random(m) < expit(rng.uniform(1, 8) * g + rng.normal())
    n_pos, n_neg = pos.sum(), (~pos).sum()
    target = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    w = rng.integers(1, 4, m).astype(float)
    A, B = _platt_newton(g, target, float(np.log((n_neg + 1.0) / (n_pos + 1.0))), w)
    assert np.max(np.abs(_direct(A, B, g, target, w)[1])) < 1e-11 * w.sum()
