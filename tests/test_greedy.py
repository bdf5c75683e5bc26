import numpy as np
import pytest

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.basis import greedy_selection
from lssvm.cv import explicit_holdout_predict, explicit_loo_residuals
from lssvm.kernels import RBF
from lssvm.solvers import factorize_sparse_rls

from conftest import rel_err


def refit_sse(X, Y, kern, S, alpha):
    Z = X[S]
    fac = factorize_sparse_rls(kern(X, Z), kern(Z, Z), Y)
    return float(np.sum(fac.residuals(alpha) ** 2))


@pytest.mark.parametrize("v", [1, 2])
def test_exact_greedy_matches_brute_force_refits(rng, v):
    m = 35
    X = rng.standard_normal((m, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]), X[:, 1] ** 2])[:, :v] + 0.1 * rng.standard_normal((m, v))
    kern, alpha = RBF(0.7), 0.05
    res = greedy_selection(X, Y, kern, 8, alpha, n_candidates=m)
    S = list(res.indices)
    assert res.training_error[0] == pytest.approx(np.sum((Y - Y.mean(0)) ** 2))
    for k in range(1, len(S) + 1):
        assert res.training_error[k] == pytest.approx(refit_sse(X, Y, kern, S[:k], alpha), rel=1e-9)
        trial = {j: refit_sse(X, Y, kern, S[: k - 1] + [j], alpha) for j in range(m) if j not in S[: k - 1]}
        assert trial[S[k - 1]] <= min(trial.values()) * (1 + 1e-9)


def test_random_candidates_are_seeded_and_never_repeat(rng):
    X = rng.standard_normal((200, 3))
    y = np.sin(X[:, 0])[:, None]
    a = greedy_selection(X, y, RBF(0.5), 20, 0.1, random_state=4)
    b = greedy_selection(X, y, RBF(0.5), 20, 0.1, random_state=4)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert len(set(a.indices.tolist())) == 20
    assert a.training_error[-1] < a.training_error[0]


def test_duplicate_rows_are_skipped(rng):
    X = np.repeat(rng.standard_normal((4, 2)), 5, axis=0)
    res = greedy_selection(X, X[:, :1], RBF(1.0), 10, 0.1, n_candidates=100)
    assert len(res.indices) == 4 and res.stop_reason == "singular"


def test_greedy_basis_in_estimators_with_exact_cv(rng):
    X = rng.standard_normal((50, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(50)
    est = SparseLSSVR(gamma=0.5, alpha=0.05, basis="greedy", n_basis=10, random_state=0).fit(X, y)
    assert est.n_basis_ == 10 and est.greedy_training_error_.shape == (11,)
    assert rel_err(est.loo_residuals(), explicit_loo_residuals(est, X, y)) < 1e-8
    H = np.concatenate([est.basis_indices_[:2], [i for i in range(50) if i not in est.basis_indices_][:6]])
    assert rel_err(est.holdout_predict(H)[:, None], explicit_holdout_predict(est, X, H)) < 1e-8
    clf = SparseLSSVC(gamma=0.5, alpha=0.05, basis="greedy", n_basis=10, random_state=0).fit(X, y > 0)
    assert clf.n_basis_ == 10 and clf.score(X, y > 0) > 0.8


def test_dependent_candidate_draws_do_not_stop_the_search(rng):
    # 3 points repeated 60 times each plus 10 distinct ones: once the 3 are
    # chosen, most draws are dependent; the search must still find all 13
    X = np.vstack([np.repeat(rng.standard_normal((3, 2)), 60, axis=0), rng.standard_normal((10, 2))])
    y = np.sin(X[:, :1])
    res = greedy_selection(X, y, RBF(1.0), 13, 0.1, n_candidates=60, random_state=0)
    assert len(res.indices) == 13
    assert len(np.unique(X[res.indices], axis=0)) == 13
