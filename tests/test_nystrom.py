"""Nyström LS-SVM solver (paper 003 Alg. 1): Woodbury solves, LOO and
hold-out against dense solves and explicit retraining of the same
approximate model."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import KFold

from lssvm.solvers.nystrom import dense_factorize, nystrom_factorize

from conftest import rel_err


def dual_solve(K, y, delta):
    """Dense LS-SVM dual [K + delta I, 1; 1^T, 0][a; b] = [y; 0]."""
    n = K.shape[0]
    D = np.zeros((n + 1, n + 1))
    D[:n, :n] = K + delta * np.eye(n)
    D[:n, n] = D[n, :n] = 1.0
    sol = np.linalg.solve(D, np.append(y, 0.0))
    return sol[:n], sol[n]


def setup(rng, n=60, c=25, k=12, gamma=0.5):
    X = rng.standard_normal((n, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    K = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
    S = rng.choice(n, c, replace=False)
    return K, y, nystrom_factorize(K[:, S], K[np.ix_(S, S)], y[:, None], rank=k)


def test_nystrom_kernel_is_c_w_plus_c(rng):
    K, y, fac = setup(rng, k=25)
    n = K.shape[0]
    S = rng.choice(n, 25, replace=False)
    fac = nystrom_factorize(K[:, S], K[np.ix_(S, S)], y[:, None])
    ref = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], rcond=1e-10, hermitian=True) @ K[S]
    assert rel_err(fac.kernel(), ref) < 1e-8


@pytest.mark.parametrize("delta", [1e-3, 0.1, 10.0])
def test_woodbury_solve_equals_dense_dual(rng, delta):
    K, y, fac = setup(rng)
    a, b, _ = fac.solve(delta)
    a_ref, b_ref = dual_solve(fac.kernel(), y, delta)
    # cond(K~ + delta I) <= (||K~|| + delta) / delta; dense and Woodbury both backward stable
    tol = max(1e-10, 1e2 * np.finfo(float).eps * (fac.s2.max() + delta) / delta)
    assert rel_err(a[:, 0], a_ref) < tol
    assert abs(b[0] - b_ref) < tol * max(1.0, abs(b_ref))


def test_full_rank_nystrom_equals_the_exact_ls_svm(rng):
    K, y, _ = setup(rng)
    n = K.shape[0]
    fac = nystrom_factorize(K, K, y[:, None], rank=n, rcond=1e-14)
    a, b, _ = fac.solve(0.1)
    a_ref, b_ref = dual_solve(K, y, 0.1)
    assert rel_err(K @ a[:, 0] + b[0], K @ a_ref + b_ref) < 1e-8


def test_loo_and_holdout_equal_explicit_retraining_of_the_approximate_model(rng):
    K, y, fac = setup(rng, n=40, c=15, k=8)
    Kt, n = fac.kernel(), 40
    deltas = [0.01, 1.0]
    loo = fac.loo_residuals(deltas)
    T = rng.choice(n, 7, replace=False)
    hold = fac.holdout_residuals(T, deltas)
    for i, d in enumerate(deltas):
        ex = np.empty(n)
        for j in range(n):
            tr = np.setdiff1d(np.arange(n), [j])
            a, b = dual_solve(Kt[np.ix_(tr, tr)], y[tr], d)
            ex[j] = y[j] - (Kt[j, tr] @ a + b)
        assert rel_err(loo[i, :, 0], ex) < 1e-9
        tr = np.setdiff1d(np.arange(n), T)
        a, b = dual_solve(Kt[np.ix_(tr, tr)], y[tr], d)
        assert rel_err(hold[i, :, 0], y[T] - (Kt[np.ix_(T, tr)] @ a + b)) < 1e-9


@pytest.mark.parametrize("k", [4, 30])  # k < fold size (k-space Woodbury) and k >= fold size (h x h solve)
def test_kfold_equals_explicit_retraining_for_both_fold_solvers(rng, k):
    n, v = 60, 2
    X = rng.standard_normal((n, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((n, v))
    K = np.exp(-0.4 * cdist(X, X, "sqeuclidean"))
    S = rng.choice(n, 30, replace=False)
    fac = nystrom_factorize(K[:, S], K[np.ix_(S, S)], Y, rank=k)
    Kt = fac.kernel()
    folds = np.array_split(rng.permutation(n), 4)  # folds of 15
    deltas = [1e-3, 0.1, 10.0]
    R = fac.cv_residuals(folds, deltas)
    for i, d in enumerate(deltas):
        for T in folds:
            tr = np.setdiff1d(np.arange(n), T)
            for j in range(v):
                a, b = dual_solve(Kt[np.ix_(tr, tr)], Y[tr, j], d)
                ref = Y[T, j] - (Kt[np.ix_(T, tr)] @ a + b)
                # cond of the fold's dual grows like ||K~|| / delta
                assert rel_err(R[i, T, j], ref) < max(1e-9, 1e-13 * (fac.s2.max() + d) / d)


def test_dense_factorisation_is_the_exact_ls_svm_with_exact_cv(rng):
    n = 50
    X = rng.standard_normal((n, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    K = np.exp(-0.8 * cdist(X, X, "sqeuclidean"))
    fac = dense_factorize(K, y[:, None])
    folds = np.array_split(rng.permutation(n), 5)
    R = fac.cv_residuals(folds, [0.05])[0, :, 0]
    loo = fac.loo_residuals([0.05])[0, :, 0]
    a, b, _ = fac.solve(0.05)
    a_ref, b_ref = dual_solve(K, y, 0.05)
    assert rel_err(K @ a[:, 0] + b[0], K @ a_ref + b_ref) < 1e-9
    for T in folds:
        tr = np.setdiff1d(np.arange(n), T)
        a, b = dual_solve(K[np.ix_(tr, tr)], y[tr], 0.05)
        assert rel_err(R[T], y[T] - (K[np.ix_(T, tr)] @ a + b)) < 1e-8
    for j in (0, 17, 49):
        tr = np.setdiff1d(np.arange(n), [j])
        a, b = dual_solve(K[np.ix_(tr, tr)], y[tr], 0.05)
        assert abs(loo[j] - (y[j] - K[j, tr] @ a - b)) < 1e-8 * (1 + abs(loo[j]))


def test_rank_must_fit_the_sample(rng):
    K, y, _ = setup(rng)
    with pytest.raises(ValueError, match="rank"):
        nystrom_factorize(K[:, :5], K[:5, :5], y[:, None], rank=6)


# ------------------------------------------------------------- estimators
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from lssvm import NystromLSSVC, NystromLSSVR  # noqa: E402


def test_estimator_with_c_equal_n_equals_the_exact_ls_svm(rng):
    X = rng.standard_normal((50, 2))
    y = np.sign(X[:, 0] * X[:, 1] + 0.1)
    clf = NystromLSSVC(gamma=0.7, alpha=0.1, n_basis=50, rank=50).fit(X, y)
    K = np.exp(-0.7 * cdist(X, X, "sqeuclidean"))
    a, b = dual_solve(K, y, 0.1)
    Xt = rng.standard_normal((20, 2))
    f = np.exp(-0.7 * cdist(Xt, X, "sqeuclidean")) @ a + b
    # K~ = C W^+ C^T = K up to eigenvalues of K below 1e-10 max: cond-limited
    assert rel_err(clf.decision_function(Xt), f) < 1e-7


def test_estimator_cv_matches_the_factorisation_and_low_rank_predictor(rng):
    X = rng.standard_normal((80, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(80)
    reg = NystromLSSVR(gamma=0.3, alpha=0.05, random_state=0, predictor="low-rank", n_basis=30,
                       rank=20).fit(X, y)
    C = reg.kernel_(X, reg.basis_vectors_)
    woodbury = nystrom_factorize(C, C[reg.basis_indices_], y[:, None], rank=20)
    Kt = woodbury.kernel()
    # the low-rank predictor on the training rows is K~ a + b
    assert rel_err(reg.predict(X), Kt @ reg.dual_coef_ + reg.intercept_) < 1e-9
    loo = reg.loo_residuals(alpha=[0.01, 0.05])
    assert loo.shape == (2, 80)
    # the sparse factorisation on the rank-k map against the dual's Woodbury identity
    assert rel_err(loo[1], woodbury.loo_residuals([0.05])[0, :, 0]) < 1e-9
    k5 = y - reg.cv_predict(5, basis_in_holdout="keep")  # the fitted rank-k kernel held fixed
    assert k5.shape == (80,) and np.all(np.isfinite(k5))
    assert rel_err(k5, woodbury.cv_residuals([t for _, t in KFold(5).split(X)],
                                             [0.05])[0, :, 0]) < 1e-9
    assert reg.cv_error(5, basis_in_holdout="keep") == pytest.approx(np.mean(k5**2))


# the check sets alpha = 0.01, where the exact-kernel predictor amplifies the
# approximation error (paper 003 Thm. 3 scales as 1/alpha^2): check the low-rank one
# n_basis=0.5 samples half of the rows: repeated rows are more rows and another draw, so integer weights
# equal repeated rows only for given columns or all of them (tests/test_sample_weight_nystrom.py)
_DRAW = {"check_sample_weight_equivalence_on_dense_data": "a fraction of the rows is drawn: repetition draws more"}


#: the classifier calibrates by default: predict follows the calibrated probabilities, which near the
#: boundary may differ from the sign of decision_function
_CALIBRATED = {"check_classifiers_train": "predict follows the calibrated probabilities, not the sign of "
                                          "decision_function"}


@parametrize_with_checks([NystromLSSVR(n_basis=0.5, gamma=0.1, predictor="low-rank"),
                          NystromLSSVC(n_basis=0.5)],
                         expected_failed_checks=lambda est: {**_DRAW, **(_CALIBRATED if hasattr(est, "calibration")
                                                                         else {})})
def test_scikit_learn_compatible(estimator, check):
    check(estimator)
