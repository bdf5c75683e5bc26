"""Hostile-user checks of session 26's merged changes (review26).

Each test pins a defect found by attacking the new code, or a case the
attack showed right that no other test covered: CV+ with duplicated rows
of basis points (the old CV+ removed such a point although a duplicate
stayed in training; brute force: explicit refits), a search's reused
factorisation against a fresh fit after refitting on other data, and the
small defects fixed here (an empty third of the report's interval table,
the gradient search on constant targets, the evidence of a constant
output column).
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import ConstantTargetWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.cli._report_uncertainty import interval_calibration
from lssvm.cv.conformal import conformal_ranks
from lssvm.selection.gradient import evidence_and_gradient


def _cv_plus_brute(X, y, Xt, Z, folds, mode, alpha, gamma, coverage):
    """CV+ bounds (t, 2) from explicit SparseLSSVR refits of every fold; a basis
    point leaves a fold's basis ("remove") only when every row equal to it is held out."""
    m = X.shape[0]
    holders = [np.flatnonzero(np.all(X == z, axis=1)) for z in Z]
    lo, hi = [], []
    for test in folds:
        train = np.setdiff1d(np.arange(m), test)
        basis = Z
        if mode == "remove":
            basis = Z[[j for j, h in enumerate(holders) if not np.isin(h, test).all()]]
        elif mode == "train":
            train = np.union1d(train, np.intersect1d(test, np.concatenate(holders)))
        f = SparseLSSVR(gamma=gamma, alpha=alpha, basis=basis).fit(X[train], y[train])
        r = np.abs(y[test] - f.predict(X[test]))
        ft = f.predict(Xt)
        lo.append(ft[:, None] - r[None])
        hi.append(ft[:, None] + r[None])
    k_lo, k_hi = conformal_ranks(coverage, m)
    return np.stack([np.sort(np.hstack(lo), axis=1)[:, k_lo - 1], np.sort(np.hstack(hi), axis=1)[:, k_hi - 1]], axis=1)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_cv_plus_with_duplicated_basis_rows_equals_refits(mode):
    rng = np.random.default_rng(0)
    m = 200
    X = rng.normal(size=(m, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=m)
    X[150:], y[150:] = X[:50], y[:50]  # rows 150.. duplicate rows 0..49, basis points among them
    basis = np.arange(0, m, 9)
    Xt = rng.normal(size=(6, 3))
    est = SparseLSSVR(gamma=0.5, alpha=0.01, basis=basis).fit(X, y)
    folds = [t for _, t in KFold(5).split(X)]
    got = est.predict_interval(Xt, coverage=0.9, method="cv+", cv=KFold(5), basis_in_holdout=mode)
    ref = _cv_plus_brute(X, y, Xt, X[basis], folds, mode, 0.01, 0.5, 0.9)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore::lssvm.SearchEdgeWarning")
def test_search_refit_on_new_data_equals_a_fresh_fit():
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(120, 3)), rng.normal(size=(120, 3))
    y1, y2 = np.sin(X1[:, 0]), np.cos(X2[:, 1])
    Xt = rng.normal(size=(10, 3))
    search = SparseLSSVRCV(gamma=0.5, n_basis=20, basis="pchol", random_state=0, param_space={"gamma": [0.2, 0.5]},
                           alphas=[1e-3, 1e-1])
    for X, y in [(X1, y1), (X2, y2), (X1, y2)]:  # the kept factorisation must be the last fit's
        search.fit(X, y)
        best = search.best_estimator_
        fresh = SparseLSSVR(kernel="rbf", gamma=search.gamma_, alpha=search.alpha_, basis=best.basis_indices_,
                            n_basis=20).fit(X, y)
        np.testing.assert_allclose(search.predict(Xt), fresh.predict(Xt), rtol=1e-10, atol=1e-10)
        assert "_kept_factorization" not in vars(best)
        assert b"KeptFactorization" not in pickle.dumps(search)


def test_interval_calibration_leaves_out_empty_thirds():
    # two rows: one third holds no row; it was a NaN row and a "mean of empty slice" warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = interval_calibration(np.array([0.3, -1.0]), np.array([0.0, 1.0]))
    assert len(table) and np.all(table["rows"] > 0)
    assert np.all(np.isfinite(table[["coverage", "width"]].to_numpy()))


@pytest.mark.parametrize("scoring", ["mse", "evidence"])
def test_gradient_search_on_constant_targets(scoring):
    # every CV error is 0: log MSE and the evidence gradient were inf/NaN, fed to L-BFGS-B
    X = np.random.default_rng(2).normal(size=(60, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = SparseLSSVRCV(search="gradient", kernel="ard", scoring=scoring, gamma=1.0, basis="kcenter",
                               n_basis=10, random_state=0, param_space={"gamma": [0.1, 1.0]},
                               alphas=[1e-2, 1.0]).fit(X, np.full(60, 2.0))
    names = {w.category.__name__ for w in caught}
    assert "ConstantTargetWarning" in names
    from_search = [w for w in caught if w.filename.endswith(("gradient.py", "gradient_search.py"))
                   and issubclass(w.category, RuntimeWarning)]
    assert not from_search, [str(w.message) for w in from_search]
    np.testing.assert_allclose(search.predict(X[:5]), 2.0, atol=1e-10)
    assert np.all(np.isfinite(search.gamma_))


def test_evidence_with_a_constant_output_column_is_finite():
    # S = 0 made the profile noise precision overflow: log_evidence_path was inf * 0 = NaN for every candidate
    # (an arbitrary pick), and evidence_and_gradient NaN; the constant column now adds a finite constant
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    Y = np.c_[np.sin(X[:, 0]) + 0.1 * rng.normal(size=60), np.full(60, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantTargetWarning)
        warnings.simplefilter("error", RuntimeWarning)
        search = SparseLSSVRCV(scoring="evidence", gamma=1.0, basis="random", n_basis=10, random_state=0,
                               param_space={"gamma": [0.3, 1.0]}, alphas=[1e-2, 1.0]).fit(X, Y)
        assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
        # the gradient of the evidence with that column, against central differences
        basis = np.arange(0, 60, 6)

        def f(t):
            return evidence_and_gradient(X, Y, basis, "ard", {"gamma": np.exp(t[:-1])}, float(np.exp(t[-1])))

        t0 = np.log([0.5, 0.3, 0.05])
        value, grad = f(t0)
        h = 1e-5
        fd = np.array([(f(t0 + e)[0] - f(t0 - e)[0]) / (2 * h) for e in np.eye(3) * h])
    assert np.isfinite(value)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())


def test_predict_std_of_a_constant_output_column_is_zero_without_overflow():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2))
    Y = np.c_[np.sin(X[:, 0]), np.full(50, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantTargetWarning)
        warnings.simplefilter("error", RuntimeWarning)  # the noise precision overflowed to inf with a warning
        std = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(0, 50, 5)).fit(X, Y).predict_std(X[:4])
    assert np.all(std[:, 0] > 0) and np.all(std[:, 1] == 0)
