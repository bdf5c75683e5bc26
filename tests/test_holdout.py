"""Exact hold-out / k-fold / grouped CV (paper 001) against explicit retraining.

Problems are well conditioned (moderate RBF width, alpha >= 1e-3, cond(K_BB)
< 1e6); there the formulas and refits agree to ~1e-12, and we demand 1e-8.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut, LeaveOneOut, ShuffleSplit

from lssvm import NumericalWarning, SparseLSSVC, SparseLSSVR
from lssvm.cv import explicit_holdout_predict

from conftest import rel_err

TOL = 1e-8
MODES = ["remove", "keep", "train"]
ALPHAS = [1e-3, 0.1, 10.0]


def data(rng, m=60, d=3, v=2):
    X = rng.standard_normal((m, d))
    F = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2], np.cos(X[:, 2])])[:, :v]
    return X, F + 0.1 * rng.standard_normal((m, v))


def fitted(rng, basis="random", n_basis=15, v=2, m=60):
    X, Y = data(rng, m=m, v=v)
    Y = Y[:, 0] if v == 1 else Y
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis=basis, n_basis=n_basis, random_state=0).fit(X, Y)
    return est, X, Y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("with_basis", [True, False], ids=["basis-in-H", "no-basis-in-H"])
def test_holdout_equals_explicit_retraining(rng, mode, with_basis):
    est, X, Y = fitted(rng)
    basis_rows = est.basis_indices_
    others = np.setdiff1d(np.arange(60), basis_rows)
    H = rng.choice(others, 10, replace=False)
    if with_basis:
        H = np.concatenate([rng.choice(basis_rows, 4, replace=False), H[:6]])
    assert (np.isin(est.basis_indices_, H).sum() > 0) == with_basis
    fast = est.holdout_predict(H, ALPHAS, basis_in_holdout=mode)
    assert fast.shape == (3, H.size, 2)
    assert rel_err(fast, explicit_holdout_predict(est, X, H, ALPHAS, mode)) < TOL


def test_reference_equals_a_refit_estimator(rng):
    # the solver-level reference is itself a plain refit of the estimator
    est, X, Y = fitted(rng)
    H = np.concatenate([est.basis_indices_[:3], [i for i in range(60) if i not in est.basis_indices_][:5]])
    keep = ~np.isin(est.basis_indices_, H)
    train = np.setdiff1d(np.arange(60), H)
    refit = SparseLSSVR(gamma=0.3, alpha=0.05, basis=est.basis_vectors_[keep]).fit(X[train], Y[train])
    assert rel_err(est.holdout_predict(H), refit.predict(X[H])) < TOL
    assert rel_err(explicit_holdout_predict(est, X, H), refit.predict(X[H])) < TOL


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(12, 40),
    n=st.integers(2, 10),
    h=st.integers(1, 10),
    v=st.integers(1, 3),
    mode=st.sampled_from(MODES),
    side=st.sampled_from(["h", "refactor", None]),
    log_alpha=st.floats(-2, 1),
    seed=st.integers(0, 2**31),
)
def test_holdout_property(m, n, h, v, mode, side, log_alpha, seed):
    rng = np.random.default_rng(seed)
    X, Y = data(rng, m=m, v=v)
    n = min(n, m - 1)
    est = SparseLSSVR(gamma=0.3, alpha=10.0**log_alpha, basis="random", n_basis=n, random_state=seed % 1000).fit(X, Y)
    H = rng.choice(m, min(h, m - 1), replace=False)
    if mode == "remove" and np.isin(est.basis_indices_, H).all():
        with pytest.raises(ValueError, match="holds every basis vector"):
            est._holdout_engine().predict(H, est.alpha, mode, _side=side)
        return
    fast = est._holdout_engine().predict(H, est.alpha, mode, _side=side)
    assert rel_err(fast, explicit_holdout_predict(est, X, H, None, mode)) < TOL


def test_whole_basis_removed_is_an_error_but_the_reference_leaves_the_intercept(rng):
    est, X, Y = fitted(rng, n_basis=4)
    H = np.concatenate([est.basis_indices_, [i for i in range(60) if i not in est.basis_indices_][:3]])
    train = np.setdiff1d(np.arange(60), H)
    with pytest.raises(ValueError, match="holds every basis vector"):
        est.holdout_predict(H)
    np.testing.assert_allclose(explicit_holdout_predict(est, X, H), np.broadcast_to(Y[train].mean(axis=0), (H.size, 2)),
                               rtol=1e-8)


def test_explicit_basis_array_is_identified_with_equal_rows(rng):
    """Points equal to training rows behave as those rows' indices."""
    X, Y = data(rng)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis=X[:10] + 0.0).fit(X, Y)  # points equal to rows, but an array
    by_rows = SparseLSSVR(gamma=0.3, alpha=0.05, basis=np.arange(10)).fit(X, Y)
    H = np.arange(8)
    for mode in MODES:
        np.testing.assert_allclose(est.holdout_predict(H, basis_in_holdout=mode),
                                   by_rows.holdout_predict(H, basis_in_holdout=mode), rtol=1e-9, atol=1e-12)
    assert not np.allclose(est.holdout_predict(H, basis_in_holdout="remove"),
                           est.holdout_predict(H, basis_in_holdout="keep"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "cv_kind", ["kfold", "int", "groupkfold", "logo", "explicit"],
)
def test_cv_predict_equals_per_fold_retraining(rng, mode, cv_kind):
    est, X, Y = fitted(rng)
    groups = rng.integers(0, 7, 60)
    cv, grp = {
        "kfold": (KFold(5, shuffle=True, random_state=0), None),
        "int": (4, None),
        "groupkfold": (GroupKFold(3), groups),
        "logo": (LeaveOneGroupOut(), groups),
        "explicit": ([(None, np.arange(0, 60, 2)), (None, np.arange(1, 60, 2))], None),
    }[cv_kind]
    fast = est.cv_predict(cv, alpha=ALPHAS, groups=grp, basis_in_holdout=mode)
    assert fast.shape == (3, 60, 2)
    folds = cv if cv_kind == "explicit" else list((KFold(cv) if isinstance(cv, int) else cv).split(X, Y, grp))
    ref = np.empty_like(fast)
    for _, test in folds:
        ref[:, test] = explicit_holdout_predict(est, X, test, ALPHAS, mode)
    assert rel_err(fast, ref) < TOL
    mse = est.cv_error(cv, alpha=ALPHAS, groups=grp, basis_in_holdout=mode)
    np.testing.assert_allclose(mse, ((ref - Y[None]) ** 2).mean(axis=1), rtol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_leave_one_out_folds(rng, mode):
    est, X, Y = fitted(rng, m=30, n_basis=8)
    fast = est.cv_predict(LeaveOneOut(), alpha=ALPHAS, basis_in_holdout=mode)
    ref = np.stack([explicit_holdout_predict(est, X, [i], ALPHAS, mode)[:, 0] for i in range(30)], axis=1)
    assert rel_err(fast, ref) < TOL
    if mode == "keep":  # the closed-form LOO of paper 000
        np.testing.assert_allclose(fast, Y[None] - est.loo_residuals(ALPHAS), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_holdout_and_cv(rng, n_classes):
    m = 60
    X = rng.standard_normal((m, 2))
    labels = np.array(["a", "b", "c"])[:n_classes]
    y = labels[np.arange(m) % n_classes]
    X[:, 0] += 1.2 * (np.arange(m) % n_classes)
    clf = SparseLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=15, random_state=0).fit(X, y)
    H = np.concatenate([clf.basis_indices_[:3], [i for i in range(m) if i not in clf.basis_indices_][:7]])
    D = clf.holdout_decision_function(H, ALPHAS)
    ref = explicit_holdout_predict(clf, X, H, ALPHAS, "remove")
    assert rel_err(D, ref[..., 0] if n_classes == 2 else ref) < TOL
    labels_pred = clf.holdout_predict(H, ALPHAS)
    assert labels_pred.shape == (3, H.size)
    F = clf.cv_decision_function(5, alpha=ALPHAS)
    rate = clf.cv_error(5, alpha=ALPHAS)
    pred = clf.cv_predict(5, alpha=ALPHAS)
    np.testing.assert_allclose(rate, (pred != y[None]).mean(axis=1))
    assert F.shape == ((3, m) if n_classes == 2 else (3, m, n_classes))
    press = clf.cv_error(5, alpha=0.1, scoring="press")
    assert np.all(np.asarray(press) > 0)


@pytest.mark.parametrize(
    "H, exc, match",
    [
        ([1, 1, 2], ValueError, "duplicate"),
        ([70], ValueError, "outside"),
        ([-1], ValueError, "outside"),
        ([], ValueError, "non-empty"),
        ([0.5], ValueError, "integer"),
        (np.arange(60), ValueError, "at least one must remain"),
    ],
)
def test_bad_holdout_indices(rng, H, exc, match):
    est, _, _ = fitted(rng)
    with pytest.raises(exc, match=match):
        est.holdout_predict(H)


def test_bad_cv_arguments(rng):
    est, _, _ = fitted(rng)
    with pytest.raises(ValueError, match="partition"):
        est.cv_predict(ShuffleSplit(3, test_size=0.2, random_state=0))
    with pytest.raises(ValueError, match="basis_in_holdout"):
        est.cv_predict(5, basis_in_holdout="drop")
    with pytest.raises(ValueError, match="cv=1"):
        est.cv_predict(1)
    with pytest.raises(ValueError, match="cv must be"):
        est.cv_predict(2.5)
    with pytest.raises(ValueError, match="groups must be a 1-D array"):
        est.cv_predict(GroupKFold(2), groups=[0, 1])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("h", [3, 25])
def test_all_holdout_algorithms_agree(rng, mode, h):
    # h rows against rank 10: the h-side and band formulas must agree, and
    # equal retraining, whichever is larger
    est, X, Y = fitted(rng, n_basis=10)
    H = np.concatenate([est.basis_indices_[:3], np.setdiff1d(np.arange(60), est.basis_indices_)[: h - 3]])
    engine = est._holdout_engine()
    ref = explicit_holdout_predict(est, X, H, ALPHAS, mode)
    for side in ("h", "refactor"):
        assert rel_err(engine.predict(H, ALPHAS, mode, _side=side), ref) < TOL, side


def test_basis_as_row_indices_enables_removal(rng):
    X, Y = data(rng)
    rows = np.array([3, 10, 22, 41, 57])
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis=rows).fit(X, Y)
    np.testing.assert_array_equal(est.basis_indices_, rows)
    np.testing.assert_array_equal(est.basis_vectors_, X[rows])
    H = np.array([3, 4, 5, 10])
    assert rel_err(est.holdout_predict(H), explicit_holdout_predict(est, X, H)) < TOL
    with pytest.warns(NumericalWarning, match="dropped 1 of 3 basis points"):
        np.testing.assert_array_equal(SparseLSSVR(basis=np.array([1, 1, 2])).fit(X, Y).basis_indices_, [1, 2])
    with pytest.raises(ValueError, match=r"must be in \[0, 60\); got 1 indices from 100 to 100"):
        SparseLSSVR(basis=np.array([100])).fit(X, Y)
    with pytest.raises(ValueError, match="integer row indices"):
        SparseLSSVR(basis=np.array([0.5, 1.5])).fit(X, Y)


def test_removal_on_a_singular_basis_matrix(rng):
    """A very wide kernel: K_BB is numerically singular and the model lives on
    its range; "without these basis points" is then a different truncation,
    so the engine refits the fold (with a warning) and equals retraining."""
    X, Y = data(rng, m=50)
    with pytest.warns(NumericalWarning):
        est = SparseLSSVR(gamma=1e-4, alpha=1e-2, basis="random", n_basis=20, random_state=0).fit(X, Y)
    assert est.factorization_.method == "eigh"
    H = np.concatenate([est.basis_indices_[:4], np.setdiff1d(np.arange(50), est.basis_indices_)[:6]])
    with pytest.warns(NumericalWarning, match="refits the fold"):
        fast = est.holdout_predict(H, ALPHAS)
    with pytest.warns(NumericalWarning):
        ref = explicit_holdout_predict(est, X, H, ALPHAS)
    assert rel_err(fast, ref) < TOL


def test_integer_cv_stratifies_classifiers(rng):
    X = rng.standard_normal((60, 2))
    y = np.repeat([0, 1, 2], 20)  # sorted labels: plain KFold would hold out whole classes
    X[:, 0] += y
    clf = SparseLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=15, random_state=0).fit(X, y)
    # stratified folds: near the LOO error (~0.4-0.6 on these overlapping classes); unstratified: every row wrong
    assert clf.cv_error(3) < min(0.7, clf.loo_error_rate() + 0.15)
    assert clf.cv_error(KFold(3)) == 1.0
    with pytest.warns(UserWarning, match="groups is ignored"):
        clf.cv_predict(3, groups=np.arange(60) % 4)


def test_blas_thread_limits_survive_concurrent_calls(rng):
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_info

    before = [p["num_threads"] for p in threadpool_info()]
    est, _, _ = fitted(rng, m=60)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda _: est.cv_predict(10, alpha=ALPHAS), range(4)))
    assert [p["num_threads"] for p in threadpool_info()] == before


@pytest.mark.parametrize("side", ["h", "refactor"])
def test_removal_accurate_on_an_ill_conditioned_basis(side):
    """cond(K_BB) ~ 4e9 (an FVS basis at its invertibility limit) and small
    alpha: forming Q_E D Q_E^T lost up to 3e-2 here; every path must keep
    1e-8 of a refit."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (200, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
    est = SparseLSSVR(gamma=1.0, alpha=1e-3, basis="fvs", n_basis=40).fit(X, y)
    Z = est.basis_vectors_
    assert np.linalg.cond(est.kernel_(Z, Z)) > 1e9
    engine = est._holdout_engine()
    for H in (np.arange(190, 195), est.basis_indices_[:5], np.arange(0, 200, 10)):
        ref = explicit_holdout_predict(est, X, H, [1e-4, 1e-3])
        assert rel_err(engine.predict(H, [1e-4, 1e-3], "remove", _side=side), ref) < TOL
