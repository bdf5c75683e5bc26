"""The fixed-size defaults: a pivoted-Cholesky pool (on Dask input chosen among a row sample), the
width and alpha searched on the whole-pool model, and the whole pool kept where SCDP cannot reach its
score.  Each fast path is checked against explicit fits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.model_selection import KFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVCCV, FixedSizeLSSVR, FixedSizeLSSVRCV
from lssvm.basis import pivoted_cholesky, sampled_pivoted_cholesky
from lssvm.kernels import make_kernel

da = pytest.importorskip("dask.array")


def _data(m, seed=0):
    X, y = make_friedman1(m, noise=1.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("cls", [FixedSizeLSSVR, FixedSizeLSSVRCV, FixedSizeLSSVC, FixedSizeLSSVCCV])
def test_defaults_fit_dask_input(cls):
    X, y = _data(300)
    if cls in (FixedSizeLSSVC, FixedSizeLSSVCCV):
        y = np.where(y > np.median(y), "a", "b")
    Xd, yd = da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(random_state=0).fit(Xd, yd)
    pred = np.asarray(est.predict(X))
    assert pred.shape == (300,)
    if cls in (FixedSizeLSSVC, FixedSizeLSSVCCV):
        assert np.mean(pred == y) > 0.7
    else:
        assert np.mean((pred - y) ** 2) < np.var(y) / 2


def test_sampled_pchol_is_pchol_on_the_random_sample():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    kern = make_kernel("rbf", gamma=0.5)
    Z, rows = sampled_pivoted_cholesky(500, 3, lambda r: X[r], lambda s: kern, 10, 7, sample_factor=5)
    # the sample is the random basis draw of 50 rows with the same seed; pchol then picks among them
    from lssvm.basis import draw_basis_rows

    rs = np.random.RandomState(7)
    Zs, sample = draw_basis_rows(500, 3, lambda r: X[r], "random", 50, rs)
    expect = sample[pivoted_cholesky(Zs, kern, 10, random_state=rs).indices]
    np.testing.assert_array_equal(rows, expect)
    np.testing.assert_array_equal(Z, X[rows])


def test_dask_pool_equals_the_sampled_pool_of_the_same_rows():
    from lssvm.backends.dask import as_row_data
    from lssvm.backends.dask.fixed_size import prototype_pool

    X, y = _data(400)
    kern = make_kernel("rbf", gamma=0.1)
    data = as_row_data(da.from_array(X, chunks=(90, -1)), da.from_array(y, chunks=90))
    Zd, rows_d = prototype_pool(data, kern, "pchol", 15, np.random.RandomState(3))
    Zn, rows_n = sampled_pivoted_cholesky(400, X.shape[1], lambda r: X[r], lambda s: kern, 15, np.random.RandomState(3))
    np.testing.assert_array_equal(rows_d, rows_n)
    np.testing.assert_array_equal(Zd, Zn)


def test_whole_pool_fold_scores_equal_direct_solves():
    from lssvm.selection.fixed_size import whole_pool_fold_scores

    X, y = _data(240, seed=2)
    rows = np.arange(0, 240, 6)
    folds = [te for _, te in KFold(5).split(X)]
    kernel = make_kernel("rbf", gamma=0.05)
    K = kernel(X, X[rows])
    for alpha in (1e-3, 1.0):
        got, W = whole_pool_fold_scores(X, y[:, None], K, rows, folds, kernel, alpha, "mse")
        sse = 0.0
        for tr, te in KFold(5).split(X):  # brute force: one explicit fit per fold, prototypes kept
            est = FixedSizeLSSVR(gamma=0.05, alpha=alpha, basis=X[rows], solver="direct", cv=None, nu=1e-12)
            sse += np.sum((est.fit(X[tr], y[tr]).predict(X[te]) - y[te]) ** 2)
        np.testing.assert_allclose(got, sse / 240, rtol=1e-6)
        full = FixedSizeLSSVR(gamma=0.05, alpha=alpha, basis=X[rows], solver="direct", cv=None, nu=1e-12).fit(X, y)
        np.testing.assert_allclose(W[:, 0], full.coef_full_[:, 0], rtol=1e-6, atol=1e-6 * np.abs(W).max())


@pytest.mark.slow
def test_whole_pool_kept_where_scdp_stops_short():
    """A wide kernel at a tiny alpha: SCDP's coordinates become numerically dependent long before the
    pool is used up, and its best size scores far worse than the whole pool does."""
    X, y = _data(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FixedSizeLSSVR(gamma=0.0015, alpha=1e-6, n_basis=300, random_state=0).fit(X, y)
    D = est.n_basis_ + 1
    assert len(est.cv_curve_) < D - 1  # SCDP stopped short
    assert est.model_size_ == D
    assert est.cv_score_ < 0.8 * est.cv_curve_.min()
    brute = FixedSizeLSSVR(gamma=0.0015, alpha=1e-6, basis=est.basis_indices_, solver="direct").fit(X, y)
    np.testing.assert_allclose(est.predict(X[:50]), brute.predict(X[:50]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(est.cv_score_, brute.cv_score_, rtol=1e-5)


def test_refit_search_scores_the_whole_pool_model_by_exact_loo():
    X, y = _data(80, seed=3)
    space = {"gamma": [0.05, 0.2]}
    alphas = [1e-2, 1.0]
    est = FixedSizeLSSVRCV(param_space=space, alphas=alphas, n_basis=20, random_state=0).fit(X, y)
    rows = est.best_estimator_.basis_indices_
    table = est.cv_results_
    for g in space["gamma"]:
        for a in alphas:
            i = np.flatnonzero((table["param_gamma"] == g) & (table["param_alpha"] == a))[0]
            res = []
            for k in range(80):  # leave one out, the prototypes kept as points
                keep = np.arange(80) != k
                m = FixedSizeLSSVR(gamma=g, alpha=a, basis=X[rows], solver="direct", cv=None, nu=1e-12)
                res.append(m.fit(X[keep], y[keep]).predict(X[k:k + 1])[0] - y[k])
            np.testing.assert_allclose(table["mean_test_mse"][i], np.mean(np.square(res)), rtol=1e-6)
    assert est.best_estimator_.alpha == est.alpha_
    assert est.best_estimator_.cv_score_ is not None  # the size picked by SCDP's own CV


def test_candidates_search_keeps_the_paper_procedure():
    X, y = _data(150, seed=4)
    kw = dict(param_space={"gamma": [0.1]}, alphas=[0.1, 1.0], n_basis=30, random_state=0)
    est = FixedSizeLSSVRCV(size_search="candidates", **kw).fit(X, y)
    assert "model_size" in est.cv_results_
    assert -est.best_score_ == pytest.approx(est.best_estimator_.cv_score_, rel=1e-9)


@pytest.mark.slow
def test_whole_pool_on_dask_equals_in_memory():
    X, y = _data(1000)
    kw = dict(gamma=0.0015, alpha=1e-6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = FixedSizeLSSVR(n_basis=300, **kw).fit(X, y)
        on_dask = FixedSizeLSSVR(basis=mem.basis_indices_, **kw).fit(da.from_array(X, chunks=(300, -1)),
                                                                     da.from_array(y, chunks=300))
    assert on_dask.model_size_ == mem.model_size_ == mem.n_basis_ + 1
    np.testing.assert_allclose(on_dask.cv_score_, mem.cv_score_, rtol=1e-6)
    np.testing.assert_allclose(on_dask.predict(X[:50]), mem.predict(X[:50]), rtol=1e-5, atol=1e-6)


def test_sampled_pchol_takes_every_row_of_a_small_table_with_repeats():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    X[30:40] = X[:10]  # repeated rows: fewer distinct rows than the sample would hold
    kern = make_kernel("rbf", gamma=0.5)
    Z, rows = sampled_pivoted_cholesky(60, 2, lambda r: X[r], lambda s: kern, 5, 0)
    expect = pivoted_cholesky(X, kern, 5, random_state=np.random.RandomState(0)).indices
    np.testing.assert_array_equal(rows, expect)
