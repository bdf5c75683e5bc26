"""Conformal prediction intervals (jackknife+, jackknife, CV+) against
brute-force refits: m (or k) explicit trainings by a dense direct solve of
the smaller problem, the same basis, and order statistics taken by sorting.
"""

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold, KFold

from lssvm import NumericalWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.solvers import factorize_sparse_rls

from conftest import rel_err

TOL = 1e-8


def data(rng, m=40, d=3, v=1):
    X = rng.standard_normal((m, d))
    F = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])[:, :v]
    Y = F + 0.1 * rng.standard_normal((m, v))
    return X, (Y[:, 0] if v == 1 else Y), rng.standard_normal((9, d))


def refit_predict(est, X, Y, train, keep_basis, alpha, Xt):
    """A model trained from scratch on rows ``train`` with basis points ``keep_basis``."""
    Z = est.basis_vectors_[keep_basis]
    Y2 = Y.reshape(len(Y), -1)
    fac = factorize_sparse_rls(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y2[train], rcond=est.rcond)
    a, b = fac.coef(alpha)
    return est.kernel_(Xt, Z) @ a + b, est.kernel_(X, Z) @ a + b


def brute_bounds(centres, scores, coverage):
    """Order statistics by sorting, ranks from exact fractions."""
    from fractions import Fraction

    N = scores.shape[0]
    ac = 1 - Fraction(str(coverage))
    k_lo = int(np.floor(ac * (N + 1)))
    k_hi = int(-(-(1 - ac) * (N + 1) // 1))
    lo = np.sort(centres - scores[None], axis=1)[:, k_lo - 1]
    hi = np.sort(centres + scores[None], axis=1)[:, k_hi - 1]
    return np.stack([lo, hi], axis=1)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "poly"])
@pytest.mark.parametrize("alpha", [1e-3, 1.0])
@pytest.mark.parametrize("v", [1, 2])
def test_jackknife_plus_equals_brute_force(rng, kernel, alpha, v):
    X, Y, Xt = data(rng, v=v)
    est = SparseLSSVR(kernel=kernel, gamma=0.3, alpha=0.5, basis="random", n_basis=12, random_state=0).fit(X, Y)
    m = X.shape[0]
    Y2 = Y.reshape(m, -1)
    keep = np.ones(est.n_basis_, dtype=bool)
    cent, res = [], []
    for i in range(m):
        train = np.setdiff1d(np.arange(m), [i])
        ft, fx = refit_predict(est, X, Y, train, keep, alpha, Xt)
        cent.append(ft)
        res.append(Y2[i] - fx[i])
    cent = np.stack(cent, axis=1)  # (t, m, v)
    scores = np.abs(np.array(res))
    for coverage in (0.9, 0.75):
        fast = est.predict_interval(Xt, coverage, alpha=alpha)
        assert fast.shape == ((9, 2) if v == 1 else (9, 2, v))
        ref = brute_bounds(cent, scores, coverage)
        assert rel_err(fast, ref[:, :, 0] if v == 1 else ref) < TOL
    # plain jackknife: full model +- the LOO residual quantile
    full = refit_predict(est, X, Y, np.arange(m), keep, alpha, Xt)[0]
    k_hi = int(np.ceil(0.75 * (m + 1)))
    q = np.sort(scores, axis=0)[k_hi - 1]
    ref = np.stack([full - q, full + q], axis=1)
    fast = est.predict_interval(Xt, 0.75, "jackknife", alpha=alpha)
    assert rel_err(fast, ref[:, :, 0] if v == 1 else ref) < TOL


def brute_cv_plus(est, X, Y, Xt, folds, mode, alpha, coverage):
    m = X.shape[0]
    Y2 = Y.reshape(m, -1)
    rows = est.basis_indices_
    cent = np.empty((Xt.shape[0], m, Y2.shape[1]))
    scores = np.empty_like(Y2)
    for H in folds:
        held = np.isin(rows, H)
        keep = ~held if mode == "remove" else np.ones(rows.size, dtype=bool)
        train = np.ones(m, dtype=bool)
        train[H] = False
        if mode == "train":
            train[rows[held]] = True
        ft, fx = refit_predict(est, X, Y, np.flatnonzero(train), keep, alpha, Xt)
        cent[:, H] = ft[:, None]
        scores[H] = np.abs(Y2[H] - fx[H])
    return brute_bounds(cent, scores, coverage)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
@pytest.mark.parametrize("v", [1, 2])
def test_cv_plus_equals_brute_force(rng, mode, v):
    X, Y, Xt = data(rng, v=v)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    folds = [test for _, test in KFold(5, shuffle=True, random_state=1).split(X)]
    for alpha in (0.05, 2.0):
        fast = est.predict_interval(Xt, 0.8, "cv+", alpha=alpha, cv=KFold(5, shuffle=True, random_state=1),
                                    basis_in_holdout=mode)
        ref = brute_cv_plus(est, X, Y, Xt, folds, mode, alpha, 0.8)
        assert rel_err(fast, ref[:, :, 0] if v == 1 else ref) < TOL


def test_cv_plus_grouped_folds_equal_brute_force(rng):
    X, Y, Xt = data(rng)
    groups = rng.integers(0, 7, X.shape[0])
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    folds = [test for _, test in GroupKFold(4).split(X, Y, groups)]
    for mode in ("remove", "keep"):
        fast = est.predict_interval(Xt, 0.8, "cv+", cv=GroupKFold(4), groups=groups, basis_in_holdout=mode)
        ref = brute_cv_plus(est, X, Y, Xt, folds, mode, 0.05, 0.8)[:, :, 0]
        assert rel_err(fast, ref) < TOL


def test_cv_plus_singular_basis_refits_folds(rng):
    # a very wide kernel makes K_BB numerically singular: removing basis points refits the fold
    X, Y, Xt = data(rng, m=50)
    with pytest.warns(NumericalWarning):
        est = SparseLSSVR(gamma=1e-4, alpha=1e-2, basis="random", n_basis=20, random_state=0).fit(X, Y)
    assert est.factorization_.method == "eigh"
    folds = [test for _, test in KFold(4).split(X)]
    with pytest.warns(NumericalWarning):
        fast = est.predict_interval(Xt, 0.8, "cv+", cv=4)
        ref = brute_cv_plus(est, X, Y, Xt, folds, "remove", 1e-2, 0.8)[:, :, 0]
    assert rel_err(fast, ref) < TOL


def test_intervals_contain_the_prediction_and_widen_with_coverage(rng):
    X, Y, Xt = data(rng, m=80)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    narrow = est.predict_interval(Xt, 0.5)
    wide = est.predict_interval(Xt, 0.9)
    assert np.all(wide[:, 0] <= narrow[:, 0]) and np.all(wide[:, 1] >= narrow[:, 1])
    jk = est.predict_interval(Xt, 0.9, "jackknife")
    f = est.predict(Xt)
    assert np.all(jk[:, 0] <= f) and np.all(f <= jk[:, 1])


def test_search_cv_offers_intervals_of_its_best_estimator(rng):
    X, Y, Xt = data(rng, m=50)
    search = SparseLSSVRCV(param_space={"gamma": [0.3]}, alphas=[0.1, 1.0], basis="random", n_basis=10,
                           random_state=0).fit(X, Y)
    assert np.array_equal(search.predict_interval(Xt, 0.8), search.best_estimator_.predict_interval(Xt, 0.8))


@pytest.mark.parametrize("coverage", [0.0, 1.0, -0.1, 1.5, np.nan, "0.9", True])
def test_bad_coverage_is_refused(rng, coverage):
    X, Y, Xt = data(rng)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="coverage must be a number strictly between 0 and 1"):
        est.predict_interval(Xt, coverage)


def test_too_few_rows_says_how_many_are_needed(rng):
    X, Y, Xt = data(rng, m=15)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=5, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match=r"15 training rows are too few for 0.95 coverage.*m >= 19"):
        est.predict_interval(Xt, 0.95)
    assert np.all(np.isfinite(est.predict_interval(Xt, 0.85)))


def test_unknown_method_and_array_alpha_are_refused(rng):
    X, Y, Xt = data(rng)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="method must be one of"):
        est.predict_interval(Xt, 0.8, method="jackknife+-after-bootstrap")
    with pytest.raises(ValueError, match="one alpha"):
        est.predict_interval(Xt, 0.8, alpha=[0.1, 1.0])


@pytest.mark.parametrize("family", ["fixed-size", "nystrom"])
def test_families_cv_plus_is_the_refitted_folds_at_the_fitted_basis(rng, family):
    """CV+ of the fixed-size and Nystrom regressors: each fold model is ridge with an unpenalised
    intercept refitted on the fold's training rows at the fitted basis (the supported prototypes, or the
    rank-k map of the sampled columns), by a dense solve."""
    from lssvm import FixedSizeLSSVR, NystromLSSVR

    X, Y, Xt = data(rng, m=40, v=2)
    Z = rng.normal(size=(10, X.shape[1]))  # points: no fold removes a basis point
    est = (FixedSizeLSSVR(gamma=0.3, alpha=0.1, basis=Z, solver="direct", cv=None) if family == "fixed-size"
           else NystromLSSVR(gamma=0.3, alpha=0.1, basis=Z, rank=10)).fit(X, Y)
    K = est.kernel_(Z, Z)
    if family == "fixed-size":
        F, Ft, pen = est.kernel_(X, Z), est.kernel_(Xt, Z), 0.1 * K
    else:
        lam, U = np.linalg.eigh(K)
        W = U / np.sqrt(lam)
        F, Ft, pen = est.kernel_(X, Z) @ W, est.kernel_(Xt, Z) @ W, 0.1 * np.eye(10)
    cent = np.empty((Xt.shape[0], 40, 2))
    scores = np.empty((40, 2))
    for _, H in KFold(4).split(X):
        train = np.setdiff1d(np.arange(40), H)
        A = np.column_stack([F[train], np.ones(train.size)])
        P = A.T @ A
        P[:-1, :-1] += pen
        w = np.linalg.solve(P, A.T @ Y[train])
        cent[:, H] = (np.column_stack([Ft, np.ones(len(Xt))]) @ w)[:, None]
        scores[H] = np.abs(Y[H] - np.column_stack([F[H], np.ones(H.size)]) @ w)
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=KFold(4))
    assert rel_err(fast, brute_bounds(cent, scores, 0.8)) < 1e-8


def test_a_saved_model_keeps_its_jackknife_plus_intervals(rng, tmp_path):
    from lssvm.io import SavedModel, load_model, save_model

    X, Y, Xt = data(rng, v=2)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    saved = SavedModel(estimator=est, x_center=np.zeros(3), x_scale=np.ones(3), feature_names=["a", "b", "c"])
    loaded = load_model(save_model(tmp_path / "m.npz", saved)).estimator
    for method in ("jackknife+", "jackknife"):
        assert rel_err(loaded.predict_interval(Xt, 0.8, method), est.predict_interval(Xt, 0.8, method)) < 1e-12
    with pytest.raises(ValueError, match="method must be one of"):
        loaded.predict_interval(Xt, 0.8, "cv+")
    with pytest.raises(ValueError, match="fitted alpha"):
        loaded.predict_interval(Xt, 0.8, alpha=1.0)
