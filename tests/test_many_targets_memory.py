"""The many-target LOO and k-fold error sums hold nothing of size m x v beyond
the targets (and the factorisation's centred copy of them): peak traced
allocations during ``press`` and ``cv_error`` stay below half of one m x v array."""

from __future__ import annotations

import tracemalloc

import numpy as np
from sklearn.model_selection import KFold

from lssvm import SparseLSSVR
from lssvm.cv import holdout as holdout_paths
from lssvm.solvers import loo_block


def _peak_bytes(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = call()
        return tracemalloc.get_traced_memory()[1] - base, result
    finally:
        tracemalloc.stop()


def test_loo_and_kfold_sums_hold_no_copy_of_the_targets(monkeypatch):
    monkeypatch.setattr(loo_block, "BLOCK_BYTES", 1 << 20, raising=False)
    monkeypatch.setattr(holdout_paths, "_SUMS_BLOCK_BYTES", 1 << 20, raising=False)
    rng = np.random.default_rng()
    m, v = 600, 4000
    X = rng.normal(size=(m, 3))
    Y = np.sin(X @ rng.normal(size=(3, v))) + 0.1 * rng.normal(size=(m, v))
    est = SparseLSSVR(gamma=0.5, basis=rng.choice(m, 40, replace=False), n_jobs=1).fit(X, Y)
    alphas = np.geomspace(1e-3, 1e2, 8)
    one_copy = 8 * m * v
    peak, press = _peak_bytes(lambda: est.press(alphas))
    assert peak < one_copy / 2, f"LOO sums peak {peak / one_copy:.2f} of an m x v array"
    peak, err = _peak_bytes(lambda: est.cv_error(KFold(8), alphas))
    assert peak < one_copy / 2, f"k-fold sums peak {peak / one_copy:.2f} of an m x v array"
    # the sums themselves are the brute-force ones (explicit residuals)
    R = est.loo_residuals(alphas)
    np.testing.assert_allclose(press, (R**2).sum(axis=1), rtol=1e-10)
    F = est.cv_predict(KFold(8), alphas)
    np.testing.assert_allclose(err, ((F - Y) ** 2).mean(axis=1), rtol=1e-9)
