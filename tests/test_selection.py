"""Model-selection criteria (exact dense and Nyström LS-SVM CV over an alpha
path) against explicit retraining, and the grid search over them."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import GroupKFold
from test_nystrom import dual_solve

from lssvm.selection import CVPath, DenseLSSVMCV, NystromCV, grid_search

from conftest import rel_err


def explicit_cv(K, Y, folds, alpha):
    """Out-of-fold residuals by retraining the dual LS-SVM on each fold."""
    R = np.empty_like(Y)
    n = K.shape[0]
    for T in folds:
        tr = np.setdiff1d(np.arange(n), T)
        for j in range(Y.shape[1]):
            a, b = dual_solve(K[np.ix_(tr, tr)], Y[tr, j], alpha)
            R[T, j] = Y[T, j] - (K[np.ix_(T, tr)] @ a + b)
    return R


@pytest.fixture
def data(rng):
    X = rng.standard_normal((48, 3))
    y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((48, 2))
    return X, y


@pytest.mark.parametrize("cv", [4, "loo"])
def test_dense_criterion_equals_explicit_retraining(data, cv):
    X, Y = data
    alphas = [1e-2, 0.3, 5.0]
    crit = DenseLSSVMCV(X, Y, cv=cv, alphas=alphas, random_state=0)
    folds = crit.folds if cv != "loo" else [np.array([i]) for i in range(48)]
    for gamma in (0.1, 1.0):
        path = crit(gamma=gamma)
        K = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
        ref = [np.mean(explicit_cv(K, Y, folds, a) ** 2) for a in alphas]
        assert rel_err(path.mse, np.array(ref)) < 1e-8
    assert crit.n_evaluations == 2


def test_nystrom_criterion_equals_explicit_retraining_of_the_approximate_model(rng):
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    groups = np.repeat(np.arange(6), 10)
    crit = NystromCV(X, y, cv=GroupKFold(3), groups=groups, classification=True, n_components=20, rank=8,
                     alphas=[0.05, 1.0], random_state=1)
    assert crit.columns.size == 20 and crit.rank == 8
    gamma = 0.7
    path = crit(gamma=gamma)
    C = np.exp(-gamma * cdist(X, X[crit.columns], "sqeuclidean"))
    W = C[crit.columns]
    lam, U = np.linalg.eigh(W)
    lam, U = lam[::-1][:8], U[:, ::-1][:, :8]
    V = C @ (U / np.sqrt(lam))
    Kt = V @ V.T
    Y = np.where(y == "b", 1.0, -1.0)[:, None]
    for i, a in enumerate([0.05, 1.0]):
        R = explicit_cv(Kt, Y, crit.folds, a)
        assert path.mse[i] == pytest.approx(np.mean(R**2), rel=1e-8)
        assert path.error_rate[i] == np.mean(np.sign(Y - R)[:, 0] != Y[:, 0])


def test_criteria_fix_their_partition_and_columns(data):
    X, Y = data
    c1, c2 = NystromCV(X, Y, random_state=3), NystromCV(X, Y, random_state=3)
    assert np.array_equal(c1.columns, c2.columns)
    assert all(np.array_equal(a, b) for a, b in zip(c1.folds, c2.folds, strict=True))
    assert np.array_equal(c1(gamma=0.5).mse, c1(gamma=0.5).mse)


class Quadratic:
    """Synthetic criterion with its minimum at log2 gamma = 1, alpha = 2^-3,
    and a flat error rate, so ties must go to the lower MSE."""

    alphas = 2.0 ** np.arange(-7.0, 2.0)

    def __call__(self, gamma):
        mse = (np.log2(gamma) - 1) ** 2 + (np.log2(self.alphas) + 3) ** 2
        return CVPath(self.alphas, mse, np.round(mse / 100))


def test_grid_search_finds_the_minimum_and_breaks_ties_by_mse():
    res = grid_search(Quadratic(), {"gamma": 2.0 ** np.arange(-3.0, 4.0)}, scoring="error_rate")
    assert res.best_params == {"gamma": 2.0, "alpha": 2.0**-3}
    assert res.n_evaluations == 7
    cv = res.cv_results
    assert cv["score"].size == 7 * 9 and cv["rank"].min() == 1
    best = np.flatnonzero(cv["rank"] == 1)[0]
    assert cv["param_gamma"][best] == 2.0 and cv["param_alpha"][best] == 2.0**-3
    assert sorted(cv["rank"]) == list(range(1, 64))


def test_grid_search_results_are_the_criterion_values(data):
    X, Y = data
    crit = DenseLSSVMCV(X, Y, cv=3, random_state=0)
    res = grid_search(crit, {"gamma": [0.1, 1.0]})
    assert np.array_equal(res.cv_results["mse"][: crit.alphas.size], crit(gamma=0.1).mse)
    assert "error_rate" not in res.cv_results
    i = int(np.argmin(res.cv_results["mse"]))
    assert res.best_score == res.cv_results["mse"][i]


def test_selection_input_errors(data):
    X, Y = data
    with pytest.raises(ValueError, match="classification"):
        DenseLSSVMCV(X, Y, cv=3)(gamma=1.0).score("error_rate")
    with pytest.raises(ValueError, match="cv must be"):
        DenseLSSVMCV(X, Y, cv="five")
    with pytest.raises(ValueError, match="param_grid"):
        grid_search(DenseLSSVMCV(X, Y), {})
    with pytest.raises(ValueError, match="rank"):
        NystromCV(X, Y, n_components=10, rank=11)
    with pytest.raises(ValueError):
        DenseLSSVMCV(X[:, :1] * np.nan, Y)
