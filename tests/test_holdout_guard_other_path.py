"""A fold whose cheaper fast hold-out path fails its error estimate is recomputed by the other fast path
when that one's estimate passes, before the SVD: the same predictions as the stable route and as an
explicit refit, without the SVD."""

from __future__ import annotations

import warnings

import numpy as np

import lssvm.cv.holdout as holdout
from lssvm import SparseLSSVR
from lssvm.cv import MemorySparseEngine, resolve_folds
from lssvm.cv.fold_solver import GUARD_RTOL, stable_fold_predictions
from lssvm.cv.holdout import PATHS, FoldProblem, cheapest_path
from lssvm.kernels import make_kernel
from lssvm.solvers import factorize_sparse_rls


def _case(seed=5, gamma=0.03, m=400):
    """A numerically singular K_BB (wide kernel, 80 basis rows), where the h x h path's estimate fails
    at tiny alphas and the fold normal matrix's passes."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 4))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(m)
    kernel = make_kernel("rbf", gamma=gamma)
    rows = np.arange(0, m, 5)
    K = kernel(X, X[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fac = factorize_sparse_rls(K, K[rows], y[:, None])
    engine = MemorySparseEngine(fac, X, X[rows], rows, kernel).holdout_engine(holders=False)
    return X, y, kernel, rows, fac, engine


def test_other_fast_path_replaces_the_svd_and_matches_an_explicit_refit(monkeypatch):
    X, y, kernel, rows, fac, engine = _case()
    H = resolve_folds(5, X.shape[0])[0]
    p, E = np.arange(H.size), np.empty(0, dtype=np.intp)
    alphas = np.array([1e-7, 1e-6])
    chosen = cheapest_path(H.size, H.size, fac.rank, 0, alphas.size)
    other = next(side for side in PATHS if side != chosen)
    problem = FoldProblem(fac, engine.Y, H, p, E)
    assert np.all(PATHS[chosen].of(problem).predict(alphas)[1] > GUARD_RTOL)  # the first path fails...
    assert np.all(PATHS[other].of(problem).predict(alphas)[1] <= GUARD_RTOL)  # ...and the other passes

    svds = []
    original = holdout.stable_fold_predictions

    def counted(*args, **kwargs):
        svds.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(holdout, "stable_fold_predictions", counted)
    got = engine.predict(H, alphas, "keep")
    assert svds == []

    stable, err = stable_fold_predictions(fac, engine.Y, H, p, E, alphas)
    assert np.all(err <= GUARD_RTOL)
    scale = np.abs(stable).max()
    np.testing.assert_allclose(got, stable, rtol=0, atol=1e-7 * scale)
    train = np.setdiff1d(np.arange(X.shape[0]), H)
    for a, alpha in enumerate(alphas):  # brute force: the model refitted on the training rows, same basis
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = SparseLSSVR(gamma=0.03, alpha=alpha, basis=X[rows]).fit(X[train], y[train])
        np.testing.assert_allclose(got[a, :, 0], est.predict(X[H]), rtol=0, atol=1e-6 * scale)


def test_the_svd_still_runs_where_both_fast_paths_fail(monkeypatch):
    X, y, kernel, rows, fac, engine = _case()
    H = resolve_folds(5, X.shape[0])[0]
    p, E = np.arange(H.size), np.empty(0, dtype=np.intp)
    alphas = np.array([1e-7])
    calls = []

    def failing(*args, **kwargs):
        return np.zeros((1, H.size, 1)), np.array([np.inf])

    class Failing:
        @staticmethod
        def of(problem):
            return type("P", (), {"predict": staticmethod(failing)})

    monkeypatch.setattr(holdout, "PATHS", {side: Failing for side in PATHS})
    original = holdout.stable_fold_predictions

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(holdout, "stable_fold_predictions", counted)
    got = engine.predict(H, alphas, "keep")
    assert calls == [1]
    np.testing.assert_allclose(got, stable_fold_predictions(fac, engine.Y, H, p, E, alphas)[0])
