"""k-fold and grouped error sums of many targets in several batches of targets: each fold's
target-independent part (its normal matrix or kernel and their eigendecompositions) is formed by
the first batch and reused by the others; the sums, and the per-target alphas they choose, equal
explicit refits on each fold."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg
from sklearn.model_selection import GroupKFold, KFold
from test_kfold_sums_many_targets import _refit_sse  # the explicit refit of one fold

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.cv import fold_kernel
from lssvm.cv import holdout as holdout_paths


def _data(rng, m, v, d=3):
    X = rng.normal(size=(m, d))
    noise = rng.permutation(np.geomspace(0.02, 3.0, v))  # signal-to-noise spread widely over the targets
    Y = np.sin(X @ rng.normal(size=(d, v))) + 1.5 + noise * rng.normal(size=(m, v))
    return X, Y


def _dense_kernel_ridge_sse(K, Y, alphas, train, test):
    """Kernel ridge with an unpenalised intercept on rows ``train`` by a dense solve of its bordered
    system ``[K_RR + alpha I, 1; 1^T, 0]``; sums over ``test`` of the squared residuals (A, v)."""
    n, v = train.size, Y.shape[1]
    sse = np.empty((alphas.size, v))
    for i, alpha in enumerate(alphas):
        B = np.zeros((n + 1, n + 1))
        B[:n, :n] = K[np.ix_(train, train)] + alpha * np.eye(n)
        B[:n, n] = B[n, :n] = 1.0
        sol = linalg.solve(B, np.vstack([Y[train], np.zeros((1, v))]), assume_a="sym")
        sse[i] = ((K[np.ix_(test, train)] @ sol[:n] + sol[n] - Y[test]) ** 2).sum(axis=0)
    return sse


@pytest.fixture
def counted(monkeypatch):
    """How often each fold's target-independent part is formed, and how often a batch's sums are."""
    calls = {"band_side": 0, "kernel_side": 0, "band_sums": 0, "kernel_sums": 0}

    def wrap(owner, name, key, static=False):
        original = getattr(owner, name)

        def counting(*args, **kwargs):
            calls[key] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, classmethod(lambda cls, *a, **k: counting(*a, **k)) if static else counting)

    wrap(holdout_paths.BandKernelSide, "of", "band_side", static=True)
    wrap(fold_kernel.FoldKernelPath, "_kernel_of", "kernel_side", static=True)
    wrap(holdout_paths.BandPath, "_sums_by_eigen", "band_sums")
    wrap(fold_kernel.FoldKernelPath, "sums", "kernel_sums")
    return calls


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_batched_fold_sums_equal_explicit_refits(mode, counted):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v, batch = 300, 50, 16  # batches of 16, 16, 16 and 2 targets
    X, Y = _data(rng, m, v)
    basis_rows = rng.choice(m, 30, replace=False)
    gamma, alphas = 0.5, np.geomspace(1e-4, 1e2, 12)
    est = SparseLSSVR(gamma=gamma, basis=basis_rows, n_jobs=1).fit(X, Y)
    engine = est._fitted_engine()
    engine.n_targets_batch = batch
    folds = [test for _, test in KFold(4, shuffle=True, random_state=int(rng.integers(1000))).split(X)]
    sse = engine.cv_sums(folds, alphas, mode).sse
    ref = sum(_refit_sse(X, Y, basis_rows, gamma, alphas, test, mode) for test in folds)
    np.testing.assert_allclose(sse, ref, rtol=1e-8, err_msg=f"seed {seed}")
    n_batches = -(-v // batch)
    # each fold's normal matrix formed once, its sums by the cached route in every batch (the last
    # batch of 2 targets too, which alone would take the band solver)
    assert counted["band_side"] == len(folds), f"seed {seed}"
    assert counted["band_sums"] == len(folds) * n_batches, f"seed {seed}"


def test_batched_grouped_cv_chooses_each_targets_argmin_of_explicit_refits(counted):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v = 320, 70
    X, Y = _data(rng, m, v)
    basis_rows = rng.choice(m, 40, replace=False)
    groups = rng.integers(0, 5, m)
    gamma, alphas = 0.5, np.geomspace(1e-4, 1e3, 13)
    cv = GroupKFold(5)
    search = SparseLSSVRCV(alphas=alphas, param_space={}, gamma=gamma, cv=cv, basis=basis_rows,
                           alpha_per_target=True, store_cv_results=True, n_targets_batch=16, n_jobs=1)
    search.fit(X, Y, groups=groups)
    splits = list(cv.split(X, Y, groups))
    path = sum(_refit_sse(X, Y, basis_rows, gamma, alphas, test, "remove") for _, test in splits) / m
    np.testing.assert_allclose(search.cv_results_["per_target_test_mse"], path, rtol=1e-7, err_msg=f"seed {seed}")
    np.testing.assert_array_equal(search.alpha_, alphas[np.argmin(path, axis=0)], err_msg=f"seed {seed}")
    assert counted["band_side"] == len(splits), f"seed {seed}"
    assert counted["band_sums"] == len(splits) * -(-v // 16), f"seed {seed}"


def test_batched_fold_kernel_sums_equal_dense_solves(counted):
    """Every row in the basis (the fold-kernel route): each fold's kernel eigendecomposed once, the
    sums of every batch equal to dense solves of the fold's bordered kernel system."""
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v, batch = 120, 100, 40  # batches of 40, 40 and 20 targets
    X, Y = _data(rng, m, v, d=6)
    gamma, alphas = 0.2, np.geomspace(1e-6, 1e2, 15)
    est = SparseLSSVR(gamma=gamma, basis=np.arange(m), n_jobs=1).fit(X, Y)
    engine = est._fitted_engine()
    engine.n_targets_batch = batch
    folds = [test for _, test in KFold(5, shuffle=True, random_state=int(rng.integers(1000))).split(X)]
    sse = engine.cv_sums(folds, alphas, "remove").sse
    K = est.kernel_(X, X)
    ref = sum(_dense_kernel_ridge_sse(K, Y, alphas, np.setdiff1d(np.arange(m), test), test) for test in folds)
    np.testing.assert_allclose(sse, ref, rtol=1e-7, atol=1e-10 * ref.max(), err_msg=f"seed {seed}")
    np.testing.assert_array_equal(np.argmin(sse, axis=0), np.argmin(ref, axis=0), err_msg=f"seed {seed}")
    assert counted["kernel_side"] == len(folds), f"seed {seed}"
    assert counted["kernel_sums"] == len(folds) * -(-v // batch), f"seed {seed}"
