"""Model-selection criteria (exact dense and Nyström LS-SVM CV over an alpha
path) against explicit retraining, and the grid search over them."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import GroupKFold, KFold
from test_nystrom import dual_solve

from lssvm.selection import CVPath, DenseLSSVMCV, grid_search
from lssvm.selection.nystrom import NystromCV

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
    crit = NystromCV(X, y, cv=GroupKFold(3), groups=groups, classification=True, n_basis=20, rank=8,
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
    with pytest.raises(ValueError, match="at least one value"):
        grid_search(DenseLSSVMCV(X, Y), {"gamma": []})
    # no kernel parameter (linear kernel): one evaluation, the alpha path
    res = grid_search(DenseLSSVMCV(X, Y, kernel="linear"), {})
    assert res.n_evaluations == 1 and list(res.best_params) == ["alpha"]
    with pytest.raises(ValueError, match="rank"):
        NystromCV(X, Y, n_basis=10, rank=11)
    with pytest.raises(ValueError):
        DenseLSSVMCV(X[:, :1] * np.nan, Y)


# ------------------------------------------------ continuous searches, CSA
from lssvm.selection import coupled_simulated_annealing, csa_search, nelder_mead_search  # noqa: E402


def rastrigin(x):
    z = np.asarray(x) - 1.3  # minimum 0 at (1.3, 1.3), many local minima around
    return float(10 * z.size + np.sum(z**2 - 10 * np.cos(2 * np.pi * z)))


def test_csa_finds_the_global_minimum_of_a_multimodal_function():
    res = coupled_simulated_annealing(rastrigin, [(-5, 5), (-5, 5)], max_evaluations=3000, random_state=0)
    assert res.fun < 0.5  # local minima are >= 1 away in value
    assert np.allclose(res.x, 1.3, atol=0.1)
    assert res.n_evaluations == 3000 and res.history.shape == (3000, 3)
    H = res.history[:, :2]
    assert np.all((H >= -5) & (H <= 5))


def test_csa_is_reproducible_with_a_seed_and_varies_without():
    a = coupled_simulated_annealing(rastrigin, [(-5, 5)] * 2, max_evaluations=200, random_state=7)
    b = coupled_simulated_annealing(rastrigin, [(-5, 5)] * 2, max_evaluations=200, random_state=7)
    c = coupled_simulated_annealing(rastrigin, [(-5, 5)] * 2, max_evaluations=200, random_state=8)
    assert np.array_equal(a.history, b.history)
    assert not np.array_equal(a.history, c.history)


def test_csa_input_errors():
    with pytest.raises(ValueError, match="bounds"):
        coupled_simulated_annealing(rastrigin, [(1, 0)])
    with pytest.raises(ValueError, match="n_optimizers"):
        coupled_simulated_annealing(rastrigin, [(0, 1)], n_optimizers=1)
    with pytest.raises(ValueError, match="max_evaluations"):
        coupled_simulated_annealing(rastrigin, [(0, 1)], max_evaluations=3)


class Bowl:
    """Criterion over two kernel parameters with its minimum at gamma = 2^1.5,
    coef0 = 2^-2 and alpha = 2^-3 (on the path)."""

    alphas = 2.0 ** np.arange(-7.0, 2.0)

    def __init__(self):
        self.calls = 0

    def __call__(self, gamma, coef0):
        self.calls += 1
        mse = (np.log2(gamma) - 1.5) ** 2 + 2 * (np.log2(coef0) + 2) ** 2 + (np.log2(self.alphas) + 3) ** 2
        return CVPath(self.alphas, mse)


def test_nelder_mead_search_converges_on_a_smooth_criterion():
    crit = Bowl()
    res = nelder_mead_search(crit, {"gamma": (2**-4, 2**4), "coef0": (2**-6, 2**2)}, max_evaluations=80)
    assert np.log2(res.best_params["gamma"]) == pytest.approx(1.5, abs=0.05)
    assert np.log2(res.best_params["coef0"]) == pytest.approx(-2, abs=0.05)
    assert res.best_params["alpha"] == 2.0**-3
    assert res.n_evaluations == crit.calls <= 80
    assert res.cv_results["score"].size == res.n_evaluations * Bowl.alphas.size


def test_csa_search_finds_the_minimum_reproducibly():
    bounds = {"gamma": (2**-4, 2**4), "coef0": (2**-6, 2**2)}
    r1 = csa_search(Bowl(), bounds, max_evaluations=40, refine_evaluations=40, random_state=3)
    r2 = csa_search(Bowl(), bounds, max_evaluations=40, refine_evaluations=40, random_state=3)
    assert r1.best_params == r2.best_params
    assert np.log2(r1.best_params["gamma"]) == pytest.approx(1.5, abs=0.1)
    assert np.log2(r1.best_params["coef0"]) == pytest.approx(-2, abs=0.1)


def test_searches_on_a_real_criterion_agree_with_the_grid(data):
    X, Y = data
    # the shuffled partition an int cv=4 drew from random_state=0 before ints became unshuffled KFold
    folds = KFold(4, shuffle=True, random_state=np.random.RandomState(0).randint(2**31 - 1))
    crit = DenseLSSVMCV(X, Y, cv=folds)
    grid = grid_search(crit, {"gamma": 2.0 ** np.arange(-6.0, 3.0, 0.5)})
    nm = nelder_mead_search(crit, {"gamma": (2**-6, 2**2)}, max_evaluations=25)
    assert nm.best_score <= grid.best_score * 1.02
    with pytest.raises(ValueError, match="bounds"):
        nelder_mead_search(crit, {"gamma": (1.0, 0.5)})
