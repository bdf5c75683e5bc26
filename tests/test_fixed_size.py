"""Fixed-size LS-SVM (paper 002): system assembly, fold downdates, fast CV
per model size, size rule, and the estimators -- each against brute force."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import GroupKFold, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR, NumericalWarning, SparseLSSVR, scdp
from lssvm.basis import renyi_entropy_selection
from lssvm.cv.fixed_size import fixed_size_cv_curves, stop_rule_met
from lssvm.kernels import make_kernel
from lssvm.selection.fixed_size import select_model_size
from lssvm.solvers.fixed_size import FixedSizeSystem, SCDPState, augmented_rows, solve_spd

from conftest import rel_err

EPS = np.finfo(float).eps


def rbf(X, Z, gamma):
    return np.exp(-gamma * cdist(X, Z, "sqeuclidean"))


def problem(rng, N=60, M=15, d=3, v=1, gamma=0.5):
    X = rng.standard_normal((N, d))
    Z = rng.standard_normal((M, d))  # prototypes need not be training rows
    Y = np.column_stack([np.sin(X[:, 0] + j) + 0.1 * rng.standard_normal(N) for j in range(v)])
    return X, Z, Y, rbf(X, Z, gamma), rbf(Z, Z, gamma)


def explicit_system(K, K_ZZ, Y, alpha, nu):
    """Eq. (34) written out block by block from the rows given."""
    N, M = K.shape
    A = np.zeros((M + 1, M + 1))
    A[:M, :M] = K.T @ K + alpha * K_ZZ
    A[:M, M] = A[M, :M] = K.sum(axis=0)
    A[M, M] = N + nu
    b = np.vstack([K.T @ Y, Y.sum(axis=0, keepdims=True)])
    return A, b


# ------------------------------------------------------------------ system
def test_system_matches_block_formula_and_is_positive_definite(rng):
    X, Z, Y, K, K_ZZ = problem(rng, v=2)
    sysm = FixedSizeSystem.from_kernel(K, K_ZZ, Y)
    A, b = explicit_system(K, K_ZZ, Y, 0.3, 1e-8)
    assert rel_err(sysm.matrix(0.3, 1e-8), A) < 1e-14
    assert rel_err(sysm.rhs, b) < 1e-14
    assert np.linalg.eigvalsh(A).min() > 0  # Theorem 2


def test_downdated_fold_systems_equal_systems_of_the_training_rows(rng):
    X, Z, Y, K, K_ZZ = problem(rng, N=50, v=2)
    full = FixedSizeSystem.from_kernel(K, K_ZZ, Y)
    for train, test in KFold(5, shuffle=True, random_state=1).split(X):
        down = full.without_rows(K[test], Y[test])  # eqs. (36)-(37)
        A, b = explicit_system(K[train], K_ZZ, Y[train], 0.7, 1e-8)
        assert down.n_samples == train.size
        # cancellation in G - G_v loses at most ~ ||G|| eps relative to the entries
        assert rel_err(down.matrix(0.7, 1e-8), A) < 1e-12
        assert rel_err(down.rhs, b) < 1e-12


def test_direct_solver_with_all_rows_equals_the_dense_ls_svm_dual(rng):
    N, gamma, alpha = 40, 1.0, 0.1
    X = rng.standard_normal((N, 3))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(N))
    # LS-SVM dual (paper 002 eq. 23) with 1/gamma_reg = alpha
    Kx = rbf(X, X, gamma)
    D = np.zeros((N + 1, N + 1))
    D[:N, :N] = Kx + alpha * np.eye(N)
    D[:N, N] = D[N, :N] = 1.0
    sol = np.linalg.solve(D, np.append(y, 0.0))
    Xt = rng.standard_normal((30, 3))
    f_dual = rbf(Xt, X, gamma) @ sol[:N] + sol[N]
    clf = FixedSizeLSSVC(gamma=gamma, alpha=alpha, basis="all", solver="direct", cv=None).fit(X, y)
    A, _ = explicit_system(Kx, Kx, y[:, None], alpha, 1e-8)
    # forward error of the normal equations ~ cond(A) eps; nu = 1e-8 perturbs b0 by ~1e-8/N
    tol = max(1e-9, 100 * np.linalg.cond(A) * EPS)
    assert rel_err(clf.decision_function(Xt), f_dual) < tol
    assert clf.n_support_ == N and clf.model_size_ == N + 1


def test_direct_solver_equals_sparse_lssvr_on_the_same_prototypes(rng):
    X, Z, Y, K, K_ZZ = problem(rng, N=80, M=12, v=2)
    fs = FixedSizeLSSVR(gamma=0.5, alpha=0.05, basis=Z, solver="direct", cv=None).fit(X, Y)
    sp = SparseLSSVR(gamma=0.5, alpha=0.05, basis=Z).fit(X, Y)
    Xt = rng.standard_normal((20, 3))
    assert rel_err(fs.predict(Xt), sp.predict(Xt)) < 1e-8


def test_solve_spd_falls_back_to_minimum_norm_on_singular_systems(rng):
    B = rng.standard_normal((6, 3))
    A = B @ B.T  # rank 3
    x_true = B @ rng.standard_normal(3)
    with pytest.warns(NumericalWarning, match="singular"):
        x = solve_spd(A, A @ x_true)
    assert rel_err(x, np.linalg.pinv(A) @ (A @ x_true)) < 1e-8


# ------------------------------------------------------------------- SCDP
def test_scdp_skips_numerically_dependent_coordinates(rng):
    G = rng.standard_normal((20, 5))
    G = np.hstack([G, G[:, :1]])  # column 5 duplicates column 0
    A, b = G.T @ G + 1e-14 * np.eye(6), rng.standard_normal(6)
    state = SCDPState(A, b)
    while state.step() is not None:
        pass
    assert state.k == 5 and len(state.skipped) == 1
    assert {0, 5} - set(state.order.tolist()) == set(state.skipped)


def test_scdp_reports_an_indefinite_matrix(rng):
    A = np.diag([1.0, -1.0, 2.0])
    with pytest.raises(ValueError, match="positive definite"):
        scdp(A, np.array([0.1, 1.0, 0.2]))


# --------------------------------------------------------- CV over sizes
@pytest.mark.parametrize("rho", [None, 4])
def test_cv_curves_equal_explicit_retraining_per_size(rng, rho):
    X, Z, Y, K, K_ZZ = problem(rng, N=48, M=10, v=2)
    folds = [t for _, t in KFold(4, shuffle=True, random_state=0).split(X)]
    alphas = [0.01, 0.5]
    curves = fixed_size_cv_curves(FixedSizeSystem.from_kernel(K, K_ZZ, Y), K, Y, folds, alphas,
                                  max_size=8, n_candidates=rho, seed=3, stop_tol=None)
    for a, alpha in enumerate(alphas):
        for j in range(2):
            for f, test in enumerate(folds):
                train = np.setdiff1d(np.arange(48), test)
                A, b = explicit_system(K[train], K_ZZ, Y[train], alpha, 1e-8)
                res = scdp(A, b[:, j], max_nonzero=8, n_candidates=rho, random_state=3)
                for k in range(1, 9):
                    e = Y[test, j] - augmented_rows(K[test]) @ res.coef(k)
                    assert curves.sse[a, j, f, k - 1] == pytest.approx(e @ e, rel=1e-9)
                    pred = augmented_rows(K[test]) @ res.coef(k)
                    assert curves.n_wrong[a, j, f, k - 1] == np.count_nonzero((pred > 0) != (Y[test, j] > 0))
    mean, std = curves.curve("mse")
    assert mean.shape == (2, 2, 8)
    np.testing.assert_allclose(mean, curves.sse.sum(axis=2) / 48)


def test_stop_rule_38():
    flat = [1.0, 0.5, 0.4, 0.41, 0.40, 0.405]
    assert not stop_rule_met(flat[:3], window=3, tol=0.05)  # not enough history
    assert stop_rule_met(flat, window=3, tol=0.05)  # |mean(.4,.41,.40) - .405| / .405 ~ 0.4 %
    assert not stop_rule_met(flat, window=3, tol=1e-3)
    assert not stop_rule_met(flat, window=3, tol=None)
    assert stop_rule_met([1.0, 0.5, 0.0], window=1, tol=1e-9)


def test_size_rule_picks_smallest_within_a_tenth_of_a_std():
    mean = np.array([1.0, 0.6, 0.52, 0.50, 0.49, 0.495])
    std = np.full(6, 0.2)
    assert select_model_size(mean, std) == 4  # 0.50 <= 0.49 + 0.02 < 0.52
    assert select_model_size(mean, std, fraction=0.0) == 5
    assert select_model_size(mean, std, fraction=1.0) == 2


def test_fit_keeps_the_cv_chosen_size_and_is_least_squares_on_it(rng):
    X = rng.uniform(-2, 2, (120, 2))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(120)
    est = FixedSizeLSSVR(gamma=1.0, alpha=1e-3, n_basis=40, cv=5, random_state=0, stop_tol=None,
                         max_size=30).fit(X, y)
    k = est.model_size_
    assert est.cv_curve_.shape == (30,)
    assert k == select_model_size(est.cv_curve_, est.cv_curve_std_)
    assert est.cv_score_ == est.cv_curve_[k - 1]
    # the final model is SCDP on the full system, stopped at k ...
    kern = make_kernel("rbf", gamma=1.0)
    Z = est.basis_vectors_
    A, b = explicit_system(kern(X, Z), kern(Z, Z), y[:, None], 1e-3, 1e-8)
    res = scdp(A, b[:, 0], max_nonzero=k)
    np.testing.assert_array_equal(res.order, est.selection_order_)
    # ... i.e. the least-squares solution on the chosen coordinates
    S = est.selection_order_
    w = np.linalg.solve(A[np.ix_(S, S)], b[S, 0])
    full = np.zeros(41)
    full[S] = w
    assert rel_err(est.coef_full_[:, 0], full) < 1e-8
    Xt = rng.uniform(-2, 2, (10, 2))
    assert rel_err(est.predict(Xt), augmented_rows(kern(Xt, Z)) @ full) < 1e-8
    assert est.n_support_ == np.count_nonzero(full[:40])


def test_scdpp_with_rho_at_least_d_equals_scdp(rng):
    X = rng.standard_normal((70, 2))
    y = np.sign(X[:, 0] * X[:, 1] + 0.1)
    a = FixedSizeLSSVC(gamma=1.0, alpha=0.1, n_basis=20, random_state=4).fit(X, y)
    b = FixedSizeLSSVC(gamma=1.0, alpha=0.1, n_basis=20, random_state=4, solver="scdpp",
                       n_candidates=21).fit(X, y)
    np.testing.assert_array_equal(a.selection_order_, b.selection_order_)
    np.testing.assert_allclose(a.cv_curve_, b.cv_curve_, rtol=1e-12)


def test_grouped_folds_and_multiclass(rng):
    X = rng.standard_normal((90, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    groups = np.arange(90) % 9
    clf = FixedSizeLSSVC(gamma=0.5, alpha=0.01, n_basis=30, cv=GroupKFold(3), random_state=0).fit(
        X, y, groups=groups)
    assert clf.model_size_.shape == (3,) and len(clf.selection_order_) == 3
    assert clf.cv_curve_.shape[0] == 3
    assert clf.decision_function(X).shape == (90, 3)
    assert np.mean(clf.predict(X) == y) > 0.9
    with pytest.raises(ValueError, match="two classes"):
        FixedSizeLSSVC(scoring="error_rate").fit(X, y)


def test_error_rate_scoring_for_binary(rng):
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, "pos", "neg")
    clf = FixedSizeLSSVC(gamma=0.5, alpha=0.1, n_basis=25, scoring="error_rate", random_state=0).fit(X, y)
    assert 0 <= clf.cv_score_ <= 0.2
    assert set(clf.predict(X)) <= {"pos", "neg"}


@pytest.mark.parametrize("kwargs, match", [
    ({"solver": "lasso"}, "solver"),
    ({"nu": 0.0}, "nu"),
    ({"alpha": -1.0}, "alpha"),
    ({"n_basis": 500}, "n_basis"),
    ({"n_basis": 1.5}, "n_basis"),
    ({"basis": "kmeans"}, "basis"),
    ({"max_size": 100, "n_basis": 10}, "max_size"),
    ({"stop_window": 0}, "stop_window"),
    ({"stop_tol": -1.0}, "stop_tol"),
    ({"size_rule": -0.1}, "size_rule"),
    ({"cv": 1}, "cv"),
    ({"basis": np.zeros((3, 5))}, "shape"),
])
def test_bad_parameters_raise_clear_errors(rng, kwargs, match):
    X = rng.standard_normal((30, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match=match):
        FixedSizeLSSVR(**kwargs).fit(X, y)


def test_bad_data_raises(rng):
    X = rng.standard_normal((30, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FixedSizeLSSVR().fit(X, X[:, 0])


# a random pool draws other rows from repeated rows than from integer weights
_DRAWN = {"check_sample_weight_equivalence_on_dense_data": "a random pool: repeated rows are other draws"}
# the classifiers calibrate by default: predict follows the calibrated probabilities
_CALIBRATED = {"check_classifiers_train": "predict follows the calibrated probabilities"}


# the k-fold size search with the default calibration (FixedSizeLSSVR(), FixedSizeLSSVC()) is checked in
# test_defaults.py: here the other solvers and a random pool
@parametrize_with_checks([FixedSizeLSSVR(solver="direct", cv=None),
                          FixedSizeLSSVC(solver="scdpp", basis="random", cv=None, max_size=5)],
                         expected_failed_checks=lambda est: {
                             **(_CALIBRATED if hasattr(est, "calibration") else {}),
                             **(_DRAWN if isinstance(est.basis, str) and est.basis == "random" else {})})
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


# ----------------------------------------------------------------- Rényi
def test_renyi_selection_raises_entropy_and_tracks_it_exactly(rng):
    X = np.vstack([rng.standard_normal((200, 2)) * 0.3, rng.standard_normal((20, 2)) + 3])
    kern = make_kernel("rbf", gamma=1.0)
    res = renyi_entropy_selection(X, 15, kern, n_iter=2000, random_state=0)
    assert np.all(np.diff(res.entropy_trace) > 0)
    Z = X[res.indices]
    direct = -np.log(kern(Z, Z).sum() / 15**2)
    assert res.entropy == pytest.approx(direct, rel=1e-10)  # O(n) updates match a recomputation
    assert np.unique(res.indices).size == 15
    # the entropy rises well above that of random draws and reaches the outlying cluster
    rand = [-np.log(kern(X[i], X[i]).sum() / 225) for i in
            (rng.choice(220, 15, replace=False) for _ in range(50))]
    assert res.entropy > max(rand)
    assert np.any(res.indices >= 200)


def test_renyi_prototypes_in_the_estimator(rng):
    X = rng.standard_normal((60, 2))
    est = FixedSizeLSSVR(basis="renyi", n_basis=10, cv=None, random_state=0).fit(X, X[:, 0])
    assert est.basis_vectors_.shape == (10, 2) and est.basis_indices_.size == 10


def test_renyi_and_kcenter_bases_for_the_sparse_estimators(rng):
    X = rng.standard_normal((80, 2))
    y = np.sin(X[:, 0])
    for basis in ("renyi", "kcenter"):
        est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=basis, n_basis=12, random_state=0).fit(X, y)
        assert est.basis_indices_.size == 12
        assert np.unique(est.basis_indices_).size == 12
