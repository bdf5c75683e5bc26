"""Platt's sigmoid as fitted by the calibration (Newton in reused buffers, sums of the terms linear in
``z`` formed once, a branch-free ``P(positive)``) against a plain reference: Newton's method with a
backtracking line search on the direct formulas (``logaddexp``, ``expit``, ``numpy.linalg.solve``),
iterated to a zero step, on 300 fresh random problems: overlapping, separable and one-class data,
weighted and unweighted, from 2 to 5,000 rows, decision values on scales from 1e-6 to 1e6."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

from lssvm.estimators._calibration import fit_platt
from lssvm.exceptions import NumericalWarning


def _direct(A, B, f, target, w):
    z = A * f + B
    p = expit(-z)
    loss = w @ (np.logaddexp(0.0, z) - (1.0 - target) * z)
    r, c = w * (target - p), w * p * (1.0 - p)
    return loss, np.array([r @ f, r.sum()]), np.array([[c @ (f * f), c @ f], [c @ f, c.sum()]])


def reference_platt(f, pos, w):
    """Platt's (A, B) by plain Newton with a line search on the direct formulas, in the centred and
    scaled variable until the Newton decrement is small, then full Newton steps while it falls; None where the
    map is flat (constant values or a maximiser with A >= 0)."""
    n_pos, n_neg = w[pos].sum(), w[~pos].sum()
    target = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    centre = w @ f / w.sum()
    spread = np.max(np.abs(f - centre))
    if not spread > 0.0:
        return None
    g = (f - centre) / spread
    x = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    loss, grad, hess = _direct(*x, g, target, w)
    for _ in range(500):
        step = -np.linalg.solve(hess + 1e-12 * np.eye(2), grad)
        if -(grad @ step) < 1e-6 * w.sum():  # near enough for full steps
            break
        t = 1.0
        while t > 1e-12:
            new = _direct(*(x + t * step), g, target, w)
            if new[0] <= loss - 1e-4 * t * (-(grad @ step)):
                break
            t /= 2.0
        if not t > 1e-12:
            break
        x = x + t * step
        loss, grad, hess = new
    # polish with full Newton steps while the Newton decrement falls (the loss's rounding ends the search first)
    decrement = -(grad @ np.linalg.solve(hess + 1e-12 * np.eye(2), -grad))
    for _ in range(20):
        step = -np.linalg.solve(hess + 1e-12 * np.eye(2), grad)
        _, new_grad, new_hess = _direct(*(x + step), g, target, w)
        new_decrement = new_grad @ np.linalg.solve(new_hess + 1e-12 * np.eye(2), new_grad)
        if not new_decrement < decrement:
            break
        x, grad, hess, decrement = x + step, new_grad, new_hess, new_decrement
    a, c = x
    if not a < 0.0:
        return None
    return a / spread, c - a * centre / spread


def random_problem(rng):
    m = int(rng.choice([2, 3, 10, 50, 300, 2000, 5000]))
    scale = 10.0 ** rng.uniform(-6, 6)
    shift = rng.normal() * scale * rng.choice([0.0, 1.0, 100.0])
    f = rng.standard_normal(m)
    kind = rng.choice(["overlap", "separable", "one class"], p=[0.6, 0.25, 0.15])
    if kind == "overlap":
        pos = rng.random(m) < expit(rng.uniform(0.0, 8.0) * f + rng.normal())
    elif kind == "separable":
        pos = f > rng.normal(scale=0.3)
    else:
        pos = np.full(m, bool(rng.integers(2)))
    if rng.random() < 0.1:  # ties: a few distinct values
        f = np.round(f)
    # positive weights (the calibration leaves rows of weight 0 out before the fit), integer or not
    w = rng.integers(1, 4, m) + rng.random(m) * rng.integers(0, 2) if rng.random() < 0.3 else None
    return f * scale + shift, pos, w, kind


@pytest.mark.parametrize("block", range(6))
def test_platt_equals_plain_newton_on_random_problems(block):
    rng = np.random.default_rng(block)
    kinds = set()
    for _ in range(50):
        f, pos, w, kind = random_problem(rng)
        kinds.add(kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            A, B = fit_platt(f, pos, w)
        want = reference_platt(f, pos, np.ones(f.size) if w is None else w)
        z = A * f + B
        if pos.all() or not pos.any():  # the maximiser has A = 0 exactly: its sign is rounding's, the map is not
            n = pos.size if w is None else w.sum()
            target = (n + 1.0) / (n + 2.0) if pos[0] else 1.0 / (n + 2.0)
            np.testing.assert_allclose(expit(-z), target, rtol=1e-10)
            continue
        assert (want is None) == (A == 0.0), (kind, f.size, A, want)
        if want is None:
            continue
        A0, B0 = want
        z0 = A0 * f + B0
        assert abs(A - A0) <= 1e-10 * abs(A0), (kind, f.size, A, A0)
        # the offset on the values' scale (B alone can be a difference of large terms)
        assert np.max(np.abs(z - z0)) <= 1e-10 * (1.0 + np.max(np.abs(z0))), (kind, f.size)
    assert kinds == {"overlap", "separable", "one class"}


def test_one_class_is_flat_or_a_tiny_slope():
    """One class only: the smoothed target is constant, the maximiser has A = 0 in exact arithmetic;
    the map is the class frequency either way (flat with a warning, or a slope at rounding)."""
    rng = np.random.default_rng(0)
    f = rng.standard_normal(400)
    for value in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            A, B = fit_platt(f, np.full(f.size, value))
        p = expit(-(A * f + B))
        want = 401.0 / 402.0 if value else 1.0 / 402.0
        np.testing.assert_allclose(p, want, rtol=1e-10)
