"""A search with one alpha per target, its refit and ``predict`` hold nothing of size
m x v beyond the targets: the factorisation keeps ``Y`` uncentred and forms its
centred columns by batches of targets, the grouped-CV sums and the per-target
coefficients go by batches.  Peak traced allocations stay below 0.6 of one
m x v array, and the results equal those of one batch of all targets."""

from __future__ import annotations

import tracemalloc

import numpy as np
from sklearn.model_selection import GroupKFold

from lssvm import SparseLSSVRCV
from lssvm.cv import holdout as holdout_paths
from lssvm.solvers import loo_block, sparse_rls

ALPHAS = np.geomspace(1e-3, 1e2, 8)


def _data(rng, m, v, d=3):
    X = rng.normal(size=(m, d))
    noise = rng.permutation(np.geomspace(0.05, 2.0, v))  # signal-to-noise spread over the targets
    Y = np.sin(X @ rng.normal(size=(d, v))) + noise * rng.normal(size=(m, v))
    return X, Y, np.repeat(np.arange(5), m // 5)


def _search(n_targets_batch, basis):
    return SparseLSSVRCV(alphas=ALPHAS, param_space={}, gamma=0.5, basis=basis, cv=GroupKFold(5),
                         alpha_per_target=True, n_targets_batch=n_targets_batch, n_jobs=1)


def _fit_and_predict(model, X, Y, groups, X_new):
    model.fit(X, Y, groups=groups)
    return model.predict(X_new)


def test_search_refit_and_predict_hold_no_copy_of_the_targets(monkeypatch):
    # small workspaces, so that several batches of targets run on a moderate problem
    monkeypatch.setattr(sparse_rls, "TARGET_BATCH_BYTES", 1 << 18, raising=False)
    monkeypatch.setattr(loo_block, "BLOCK_BYTES", 1 << 20)
    monkeypatch.setattr(holdout_paths, "_SUMS_BLOCK_BYTES", 1 << 20)
    rng = np.random.default_rng()
    m, v, n = 600, 3000, 60
    X, Y, groups = _data(rng, m, v)
    X_new = rng.normal(size=(50, 3))
    basis = rng.choice(m, n, replace=False)
    model = _search(300, basis)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        pred = _fit_and_predict(model, X, Y, groups, X_new)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    one_copy = Y.nbytes
    # what is of size v: z and the coefficients (n x v each, 0.1 of Y here), the predictions and their
    # assembly (0.08 of Y each), the per-target CV paths (A x v); plus the batches' workspaces (at most
    # 1 MiB each here): about 0.46 of Y.  A centred copy of the targets alone is one Y
    assert peak < 0.6 * one_copy, f"search + refit + predict peak {peak / one_copy:.2f} of an m x v array"
    # the same results as one batch of all targets (bitwise up to the order of the products)
    whole = _search("auto", basis)
    pred_whole = _fit_and_predict(whole, X, Y, groups, X_new)
    np.testing.assert_array_equal(model.alpha_, whole.alpha_)
    np.testing.assert_allclose(model.best_score_per_target_, whole.best_score_per_target_, rtol=1e-12)
    np.testing.assert_allclose(pred, pred_whole, rtol=1e-10, atol=1e-12)
    # and the per-target alphas are each target's argmin of its grouped CV error along the path
    est = whole.best_estimator_
    err = est.set_params(alpha=1.0).fit(X, Y).cv_error(GroupKFold(5), ALPHAS, groups=groups)  # (A, v)
    np.testing.assert_array_equal(model.alpha_, ALPHAS[np.argmin(err, axis=0)])
