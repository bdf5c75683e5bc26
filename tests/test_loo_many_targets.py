"""Leave-one-out sums of many targets by GEMMs over target batches
(:mod:`lssvm.solvers.loo_block`) against the residuals themselves."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from lssvm import SparseLSSVR
from lssvm.exceptions import NumericalWarning
from lssvm.solvers.loo_block import loo_sums_by_targets, targets_batch_size


def _many_targets(rng, m=150, d=3, v=60):
    X = rng.normal(size=(m, d))
    noise = np.geomspace(0.01, 3.0, v)
    Y = np.sin(X @ rng.normal(size=(d, v))) + noise * rng.normal(size=(m, v))
    return X, Y


@pytest.mark.parametrize("batch", [1, 7, "auto"])
def test_batched_loo_sums_equal_the_squared_residuals(batch):
    rng = np.random.default_rng(11)
    X, Y = _many_targets(rng)
    est = SparseLSSVR(gamma=0.4, basis=rng.choice(150, 40, replace=False)).fit(X, Y)
    alphas = np.geomspace(1e-4, 1e3, 9)
    sse, rows = loo_sums_by_targets(est.factorization_, alphas, batch)
    R = est.loo_residuals(alphas)
    np.testing.assert_allclose(sse, (R**2).sum(axis=1), rtol=1e-11)
    assert rows.size == 0
    np.testing.assert_allclose(est.press(alphas), sse, rtol=1e-13)


def test_batched_loo_sums_flag_rows_fitted_exactly():
    # every row a basis point and a tiny alpha: h_ii rounds to 1, the residuals are unreliable
    rng = np.random.default_rng(3)
    X, Y = _many_targets(rng, m=40, v=5)
    est = SparseLSSVR(gamma=2.0, basis=np.arange(40)).fit(X, Y)
    with pytest.warns(NumericalWarning, match="hat-matrix diagonal"):
        est.press(np.array([1e-14, 1.0]))
    _, rows = loo_sums_by_targets(est.factorization_, np.array([1e-14, 1.0]), 2)
    assert rows.size > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        est.press(np.array([1.0, 10.0]))


def test_targets_batch_size_rules():
    assert targets_batch_size(5, 100, 3) == 3
    assert targets_batch_size("auto", 1000, 10**6) >= 1
    assert targets_batch_size("auto", 1000, 10**6) * 1000 * 8 * 4 <= 1 << 29
    for bad in (0, -1, 2.5, "all", True):
        with pytest.raises(ValueError, match="n_targets_batch"):
            targets_batch_size(bad, 10, 10)


def _fold_refit_predictions(X, Y, basis_rows, gamma, alphas, train, test):
    """Explicit refit on ``train`` with the basis points not held out: predictions (A, |test|, v)."""
    keep = basis_rows[~np.isin(basis_rows, test)]
    est = SparseLSSVR(gamma=gamma, basis=X[keep]).fit(X[train], Y[train])
    a, b = est.factorization_.coef(alphas)  # (A, n, v), (A, v)
    K = est.kernel_(X[test], est.basis_vectors_)
    return np.einsum("hn,anv->ahv", K, a) + b[:, None, :]


@pytest.mark.parametrize("batch", [13, "auto"])
def test_many_target_folds_equal_explicit_refits(batch):
    # alphas x targets >= 4 x rank: each fold's path goes by the eigendecomposition of its normal matrix
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(5)
    X, Y = _many_targets(rng, m=120, v=80)
    basis_rows = rng.choice(120, 30, replace=False)
    groups = rng.integers(0, 5, 120)
    alphas = np.geomspace(1e-3, 1e2, 6)
    est = SparseLSSVR(gamma=0.4, basis=basis_rows).fit(X, Y)
    est._engine.n_targets_batch = batch
    F = est.cv_predict(GroupKFold(5), alphas, groups=groups)
    sse = np.zeros((alphas.size, Y.shape[1]))
    for train, test in GroupKFold(5).split(X, Y, groups):
        ref = _fold_refit_predictions(X, Y, basis_rows, 0.4, alphas, train, test)
        np.testing.assert_allclose(F[:, test], ref, rtol=1e-7, atol=1e-8 * np.abs(ref).max())
        sse += ((ref - Y[test]) ** 2).sum(axis=1)
    np.testing.assert_allclose(est.cv_error(GroupKFold(5), alphas, groups=groups), sse / 120, rtol=1e-7)
