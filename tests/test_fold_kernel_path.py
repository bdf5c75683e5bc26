"""k-fold error sums from a fold's own kernel matrix (``FoldKernelPath``, every
row in the basis) against explicit refits, and the guard on its accuracy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.metrics.pairwise import rbf_kernel

from lssvm import SparseLSSVR
from lssvm.cv import holdout
from lssvm.cv.fold_kernel import FoldKernelPath, fold_kernel_applies
from lssvm.exceptions import NumericalWarning

ALPHAS = np.geomspace(1e-9, 1e4, 14)


def _data(rng, m, v, d):
    X = rng.normal(size=(m, d))
    noise = np.geomspace(0.03, 3.0, v)
    Y = np.tanh(X @ rng.normal(size=(d, v)) / np.sqrt(d)) + 1.5 + noise * rng.normal(size=(m, v))
    return X, Y


def _refit_sse(X, Y, gamma, alphas, test, mode):
    """Explicit refit of one fold, every row in the basis: ridge with an intercept on the features
    ``k(x, B) L^-T`` (K_BB = L L^T) by a least-squares solve of the stacked system
    ``[Phi_c; sqrt(alpha) I] u = [y_c; 0]`` (never the normal equations).  Returns the sums over the
    test rows of the squared residuals, (A, v)."""
    m = X.shape[0]
    held = np.isin(np.arange(m), test)
    train = ~held if mode != "train" else np.ones(m, dtype=bool)  # "train": held-out basis rows stay
    basis = X[train] if mode == "remove" else X
    L = linalg.cholesky(rbf_kernel(basis, basis, gamma=gamma), lower=True)

    def features(rows):
        return linalg.solve_triangular(L, rbf_kernel(rows, basis, gamma=gamma).T, lower=True).T

    Phi = features(X[train])
    phi_mean, y_mean = Phi.mean(axis=0), Y[train].mean(axis=0)
    Phi_c, Y_c = Phi - phi_mean, Y[train] - y_mean
    F_test = features(X[test]) - phi_mean
    sse = np.empty((alphas.size, Y.shape[1]))
    k = Phi.shape[1]
    for i, a in enumerate(alphas):
        stacked = np.vstack([Phi_c, np.sqrt(a) * np.eye(k)])
        u = linalg.lstsq(stacked, np.vstack([Y_c, np.zeros((k, Y.shape[1]))]), check_finite=False)[0]
        sse[i] = ((F_test @ u + y_mean - Y[test]) ** 2).sum(axis=0)
    return sse


@pytest.fixture
def stable_calls(monkeypatch):
    """Alphas sent to the stable SVD route of the hold-out guard."""
    calls = []
    original = holdout.stable_fold_predictions

    def counted(fac, Y, H, p, E, alphas):
        calls.append(np.array(alphas))
        return original(fac, Y, H, p, E, alphas)

    monkeypatch.setattr(holdout, "stable_fold_predictions", counted)
    return calls


@pytest.fixture
def kernel_path_calls(monkeypatch):
    calls = []
    original = FoldKernelPath.sums

    def counted(self, alphas, Y_H):
        calls.append(alphas.size)
        return original(self, alphas, Y_H)

    monkeypatch.setattr(FoldKernelPath, "sums", counted)
    return calls


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_every_row_in_the_basis_equals_refits_without_the_svd(mode, stable_calls, kernel_path_calls):
    """Every row in the basis, alphas down to 1e-9: the fold-kernel route is taken, needs no SVD
    refit (the primal route's centred normal matrix has a null direction there, so its estimate
    passes the guard's threshold at the smallest alphas), and equals explicit refits."""
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v, gamma = 150, 60, 0.1
    X, Y = _data(rng, m, v, d=10)
    est = SparseLSSVR(gamma=gamma, basis=np.arange(m)).fit(X, Y)
    engine = est._fitted_engine().holdout_engine()
    test = np.sort(rng.choice(m, 30, replace=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        sse = engine.sums(test, ALPHAS, mode)
    ref = _refit_sse(X, Y, gamma, ALPHAS, test, mode)
    np.testing.assert_allclose(sse, ref, rtol=1e-8, atol=1e-10 * ref.max(), err_msg=f"seed {seed}")
    assert not stable_calls, f"the guard refitted alphas {stable_calls} by the SVD (seed {seed})"
    assert kernel_path_calls, f"the fold-kernel route was not taken (seed {seed})"


def test_kernel_path_predictions_equal_its_sums():
    rng = np.random.default_rng(3)
    m, v = 100, 50
    X, Y = _data(rng, m, v, d=6)
    est = SparseLSSVR(gamma=0.15, basis=np.arange(m)).fit(X, Y)
    engine = est._fitted_engine().holdout_engine()
    fac = est.factorization_
    H = np.arange(20, 45)
    prob = holdout.FoldProblem(fac, engine._rows, H, np.arange(H.size), engine.removed_points(H))
    path = FoldKernelPath.of(prob)
    F, est_pred = path.predict(ALPHAS)
    sse, est_sums = path.sums(ALPHAS, Y[H].copy())
    np.testing.assert_allclose(sse, ((F - Y[H]) ** 2).sum(axis=1), rtol=1e-10)
    np.testing.assert_array_equal(est_pred, est_sums)
    np.testing.assert_allclose(sse, _refit_sse(X, Y, 0.15, ALPHAS, H, "remove"), rtol=1e-8)


def test_applies_only_with_no_more_rows_than_directions():
    assert fold_kernel_applies(2000, 400, 2000, 400)
    assert fold_kernel_applies(2000, 400, 2000, 0)
    assert not fold_kernel_applies(2000, 400, 448, 90)
    assert not fold_kernel_applies(2000, 400, 1999, 400)
    assert not fold_kernel_applies(10, 10, 10, 0)


def test_ill_conditioned_fold_kernel_is_caught_by_the_guard(stable_calls, kernel_path_calls):
    """A narrow-enough RBF on two inputs: K_BB is positive definite (Cholesky) but the fold kernel's
    smallest eigenvalue is near 1e-7, so at alphas below about 1e-8 its estimate passes the
    threshold: those alphas (and only those) go to the stable route, and the result equals explicit
    refits to the accuracy the conditioning allows, or a NumericalWarning says it does not."""
    rng = np.random.default_rng(0)
    m, v, gamma = 120, 40, 2.0
    X = rng.normal(size=(m, 2))
    Y = np.sin(X @ rng.normal(size=(2, v))) + 0.1 * rng.normal(size=(m, v))
    alphas = np.geomspace(1e-11, 1e1, 13)
    est = SparseLSSVR(gamma=gamma, basis=np.arange(m)).fit(X, Y)
    assert est.factorization_.method == "cholesky"
    engine = est._fitted_engine().holdout_engine()
    test = np.arange(0, m, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sse = engine.sums(test, alphas, "remove")
    warned = any(issubclass(w.category, NumericalWarning) for w in caught)
    assert kernel_path_calls
    assert len(stable_calls) == 1
    tripped = stable_calls[0]
    assert 0 < tripped.size < alphas.size, tripped
    np.testing.assert_array_equal(tripped, alphas[: tripped.size])  # the smallest alphas, and only they
    ref = _refit_sse(X, Y, gamma, alphas, test, "remove")
    rel = np.abs(sse - ref).max(axis=1) / ref.max(axis=1)
    assert warned or rel.max() < 1e-6, rel
    assert rel[tripped.size:].max() < 1e-7, rel


def test_predictions_of_many_targets_take_the_kernel_path(stable_calls, monkeypatch):
    """``HoldoutEngine.predict`` with many alphas x targets, every row in the basis: the fold-kernel
    route, no SVD refit, the predictions of explicit refits (their residual sums)."""
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v, gamma = 120, 50, 0.1
    X, Y = _data(rng, m, v, d=8)
    est = SparseLSSVR(gamma=gamma, basis=np.arange(m)).fit(X, Y)
    engine = est._fitted_engine().holdout_engine()
    calls = []
    original = FoldKernelPath.predict
    monkeypatch.setattr(FoldKernelPath, "predict", lambda self, a: calls.append(1) or original(self, a))
    test = np.sort(rng.choice(m, 24, replace=False))
    F = engine.predict(test, ALPHAS, "remove")
    assert calls and not stable_calls, f"seed {seed}"
    ref = _refit_sse(X, Y, gamma, ALPHAS, test, "remove")
    np.testing.assert_allclose(((F - Y[test]) ** 2).sum(axis=1), ref, rtol=1e-8, atol=1e-10 * ref.max(),
                               err_msg=f"seed {seed}")
