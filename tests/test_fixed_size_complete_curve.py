"""The fixed-size size rule on SCDP's curve completed by the whole pool: the smallest size within
``size_rule`` fold standard deviations of the best, the whole pool counted as the curve's last size
with its own score and spread.  Checked against the rule applied to the appended curve and against
explicit per-fold fits of the whole-pool model."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.model_selection import KFold, StratifiedKFold

from lssvm import FixedSizeLSSVR
from lssvm.kernels import make_kernel
from lssvm.selection.fixed_size import (
    complete_curve_sizes,
    select_model_size,
    whole_pool_fold_scores,
    whole_pool_outputs,
)


def _data(m, seed=0):
    X, y = make_friedman1(m, noise=1.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def test_complete_curve_sizes_are_the_size_rule_on_the_appended_curve():
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(300):
        v, K = int(rng.integers(1, 4)), int(rng.integers(1, 40))
        mean = 1 + np.cumsum(rng.normal(-0.02, 0.05, size=(v, K)), axis=1) ** 2
        std = rng.uniform(0.0, 2.0, size=(v, K))
        whole = mean.min(axis=1) + rng.normal(0, 0.1, size=v)
        spread = rng.uniform(0.0, 2.0, size=v)
        rule = float(rng.choice([0.0, 0.1, 0.5]))
        chosen, sizes = complete_curve_sizes(mean, std, whole, spread, rule)
        for j in range(v):
            brute = select_model_size(np.append(mean[j], whole[j]), np.append(std[j], spread[j]), rule)
            assert chosen[j] == (brute == K + 1)
            if not chosen[j]:
                assert sizes[j] == brute
            kinds.add("whole" if chosen[j] else ("scdp best" if whole[j] >= mean[j].min() else "within"))
    assert kinds == {"whole", "scdp best", "within"}  # every branch was exercised


def test_whole_pool_kept_when_its_score_is_best_by_less_than_a_spread():
    """The elevators case: SCDP's best size scores 5.448e-6 (fold spread 2.945e-6), the whole pool
    5.171e-6 (spread 2.721e-6).  The whole pool is the best of the complete curve and no SCDP size is
    within 0.1 of its spread, so it is kept (a margin below SCDP's best kept 106 prototypes instead)."""
    sizes = np.arange(1, 228)
    mean = 5.448e-6 + 2e-6 * np.maximum(0, 217 - sizes) / 217 + 1e-9 * np.maximum(0, sizes - 217)
    std = np.full(mean.size, 2.945e-6)
    est = SimpleNamespace(alpha=0.01, nu=1e-8, size_rule=0.1, _scoring="mse")
    W = np.ones((501, 1))
    full = whole_pool_outputs(est, None, None, mean[None], std[None], "test",
                              lambda alpha: (np.array([5.171e-6]), W, np.array([2.721e-6])))
    assert full is not None and full[0][0]
    np.testing.assert_array_equal(full[1], W)
    # a wider whole-pool spread: SCDP's best size is within the threshold and the smallest such size wins
    full = whole_pool_outputs(est, None, None, mean[None], std[None], "test",
                              lambda alpha: (np.array([5.171e-6]), W, np.array([3.5e-6])))
    assert not full[0][0]
    assert full[3][0] == select_model_size(np.append(mean, 5.171e-6), np.append(std, 3.5e-6), 0.1)
    # SCDP's best beats the whole pool: nothing changes
    assert whole_pool_outputs(est, None, None, mean[None], std[None], "test",
                              lambda alpha: (np.array([6e-6]), W, np.array([1e-7]))) is None


def _explicit_fold_scores(X, y, rows, folds, gamma, alpha, classify):
    per_fold = []
    for te in folds:
        tr = np.setdiff1d(np.arange(len(y)), te)
        est = FixedSizeLSSVR(gamma=gamma, alpha=alpha, basis=X[rows], solver="direct", cv=None, nu=1e-12)
        pred = est.fit(X[tr], y[tr]).predict(X[te])
        per_fold.append(np.mean((pred > 0) != (y[te] > 0)) if classify else np.mean((pred - y[te]) ** 2))
    return np.array(per_fold)


def test_whole_pool_spread_equals_explicit_fold_fits():
    X, y = _data(240, seed=5)
    rows = np.arange(0, 240, 6)
    folds = [te for _, te in KFold(6).split(X)]
    kernel = make_kernel("rbf", gamma=0.05)
    K = kernel(X, X[rows])
    codes = np.where(y > np.median(y), 1.0, -1.0)
    for scoring, target in (("mse", y), ("error_rate", codes)):
        for alpha in (1e-3, 1.0):
            score, _, spread = whole_pool_fold_scores(X, target[:, None], K, rows, folds, kernel, alpha, scoring,
                                                      fold_spread=True)
            per_fold = _explicit_fold_scores(X, target, rows, folds, 0.05, alpha, scoring == "error_rate")
            np.testing.assert_allclose(score, per_fold.mean(), rtol=1e-6)  # equal folds: the pooled score
            np.testing.assert_allclose(spread, per_fold.std(ddof=1), rtol=1e-5, atol=1e-12)
            plain, _ = whole_pool_fold_scores(X, target[:, None], K, rows, folds, kernel, alpha, scoring)
            np.testing.assert_allclose(plain, score, rtol=1e-9)


@pytest.mark.parametrize("n_basis", [120, 200])
def test_fit_picks_the_size_rule_of_the_complete_curve(n_basis):
    """A wide kernel at a tiny alpha: SCDP stops short of the pool; the fitted size is the size rule on
    its curve with the whole pool appended, scored by explicit per-fold fits (pool 120: an SCDP size
    is picked; pool 200: the whole pool)."""
    X, y = _data(400, seed=1)
    gamma, alpha = 0.0015, 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FixedSizeLSSVR(gamma=gamma, alpha=alpha, n_basis=n_basis, cv=5, random_state=0).fit(X, y)
    D = est.n_basis_ + 1
    K = len(est.cv_curve_)
    assert K < D  # SCDP stopped short: the whole pool was scored
    folds = [te for _, te in KFold(5).split(X)]
    per_fold = _explicit_fold_scores(X, y, est.basis_indices_, folds, gamma, alpha, False)
    brute = select_model_size(np.append(est.cv_curve_, per_fold.mean()),
                              np.append(est.cv_curve_std_, per_fold.std(ddof=1)), est.size_rule)
    assert est.model_size_ == (D if brute == K + 1 else brute)


@pytest.mark.parametrize("classify", [False, True])
def test_dask_whole_pool_scores_and_spread_equal_in_memory(classify):
    da = pytest.importorskip("dask.array")
    from lssvm.backends.dask import as_row_data, resolve_dask_cv
    from lssvm.backends.dask.fixed_size import dask_whole_pool_cv

    X, y = _data(240, seed=6)
    rows = np.arange(0, 240, 6)
    kernel = make_kernel("rbf", gamma=0.05)
    labels = np.where(y > np.median(y), "b", "a")
    target = labels if classify else y
    data = as_row_data(da.from_array(X, chunks=(70, -1)), da.from_array(target, chunks=70), numeric_y=not classify)
    folds = resolve_dask_cv(6, data, classify)
    scoring = "error_rate" if classify else "mse"
    classes = np.array(["a", "b"]) if classify else None
    score, W, spread = dask_whole_pool_cv(data, X[rows], rows, kernel, folds, classes, scoring)(0.01)
    codes = np.where(labels == "b", 1.0, -1.0) if classify else y
    cv = StratifiedKFold(6) if classify else KFold(6)
    mem_folds = [te for _, te in cv.split(X, codes)]
    K = kernel(X, X[rows])
    ref_score, ref_W, ref_spread = whole_pool_fold_scores(X, codes[:, None], K, rows, mem_folds, kernel, 0.01, scoring,
                                                          fold_spread=True)
    np.testing.assert_allclose(score, ref_score, rtol=1e-7)
    np.testing.assert_allclose(spread, ref_spread, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(W, ref_W, rtol=1e-6, atol=1e-8 * np.abs(ref_W).max())
    per_fold = _explicit_fold_scores(X, codes, rows, mem_folds, 0.05, 0.01, classify)
    np.testing.assert_allclose(spread, per_fold.std(ddof=1), rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("search", ["FixedSizeLSSVRCV", "FixedSizeLSSVCCV"])
def test_search_defaults_keep_the_lowest_cv_size(search):
    """The searches' refit keeps the size of lowest CV score on the complete curve (``size_rule=0``);
    the plain estimators keep the paper's 0.1."""
    import lssvm

    X, y = _data(200, seed=7)
    if search.endswith("CCV"):
        y = np.where(y > np.median(y), "a", "b")
    est = getattr(lssvm, search)(param_space={"gamma": [0.05]}, alphas=[1e-3, 1e-1], n_basis=40, random_state=0)
    assert est.size_rule == 0.0 and FixedSizeLSSVR().size_rule == 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = est.fit(X, y).best_estimator_
    assert best.size_rule == 0.0
    curve = np.asarray(best.cv_curve_)
    if best.model_size_ == best.n_basis_ + 1 and len(curve) < best.n_basis_ + 1:  # the whole pool
        assert best.cv_score_ < curve.min()
    else:
        assert best.model_size_ == int(np.argmin(curve)) + 1
