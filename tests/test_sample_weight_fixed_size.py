"""sample_weight on the fixed-size LS-SVMs: the weighted normal equations (direct
and SCDP), the weighted size choice, and the exact weighted LOO / hold-out /
k-fold / grouped CV of the model at its support against explicit weighted
refits (dense solves written here); zero weights as removed rows, integer
weights as repeated rows, weighted calibration, clear errors, metadata routing."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, LeaveOneGroupOut
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR
from lssvm.kernels import make_kernel

GAMMA = 0.4


def _data(seed, m=70, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m)
    w = rng.uniform(0.0, 3.0, size=m)
    w[rng.choice(m, 6, replace=False)] = 0.0
    return X, y, w


def _weighted_refit(X, y, w, Z, alpha, rows, X_query, nu=0.0):
    """Outputs at ``X_query`` of ``argmin sum_i w_i (y_i - k(x_i, Z) a - b)^2 + alpha a^T K_ZZ a + nu b^2``
    over ``rows``: the normal equations solved densely."""
    k = make_kernel("rbf", gamma=GAMMA)
    G = np.c_[k(X[rows], Z), np.ones(len(rows))]
    wr = w[rows]
    A = G.T @ (wr[:, None] * G)
    A[:-1, :-1] += alpha * k(Z, Z)
    A[-1, -1] += nu
    theta = np.linalg.solve(A, G.T @ (wr * y[rows]))
    return k(X_query, Z) @ theta[:-1] + theta[-1]


POOL = np.arange(3, 21)  # 18 prototypes


def _scdp(X, y, w, alpha, **kw):
    params = dict(gamma=GAMMA, alpha=alpha, basis=POOL, cv=None, max_size=10) | kw
    return FixedSizeLSSVR(**params).fit(X, y, sample_weight=w)


def test_weighted_direct_fit_matches_dense_solve():
    X, y, w = _data(0)
    model = FixedSizeLSSVR(gamma=GAMMA, alpha=0.3, basis=POOL, solver="direct", cv=None, nu=1e-8).fit(
        X, y, sample_weight=w)
    ref = _weighted_refit(X, y, w, X[POOL], 0.3, np.arange(len(y)), X, nu=1e-8)
    np.testing.assert_allclose(model.predict(X), ref, atol=1e-9)
    plain = FixedSizeLSSVR(gamma=GAMMA, alpha=0.3, basis=POOL, solver="direct", cv=None).fit(X, y)
    assert np.abs(plain.predict(X) - ref).max() > 1e-3  # the weights matter here


def test_weighted_scdp_is_the_weighted_solution_on_its_support():
    X, y, w = _data(1)
    model = _scdp(X, y, w, 0.3)
    S = POOL[model.support_]
    assert 0 < S.size < POOL.size
    ref = _weighted_refit(X, y, w, X[S], 0.3, np.arange(len(y)), X, nu=1e-8)
    np.testing.assert_allclose(model.predict(X), ref, atol=1e-8)


def test_weighted_size_choice_scores_are_weighted_cv_errors():
    X, y, w = _data(2)
    folds = [t for _, t in KFold(5, shuffle=True, random_state=0).split(X)]
    model = FixedSizeLSSVR(gamma=GAMMA, alpha=0.3, basis=POOL, cv=[(np.setdiff1d(np.arange(len(y)), t), t)
                                                                   for t in folds], stop_tol=None).fit(
        X, y, sample_weight=w)
    # the curve at the chosen size: SCDP grown to that size on each fold's weighted system
    size = model.model_size_
    oof = np.empty(len(y))
    for t in folds:
        train = np.setdiff1d(np.arange(len(y)), t)
        fold = FixedSizeLSSVR(gamma=GAMMA, alpha=0.3, basis=X[POOL], cv=None, max_size=size).fit(
            X[train], y[train], sample_weight=w[train])
        oof[t] = fold.predict(X[t])
    np.testing.assert_allclose(model.cv_score_, np.sum(w * (y - oof) ** 2) / w.sum(), rtol=1e-8)


def test_weighted_fixed_size_loo_matches_refits():
    X, y, w = _data(3)
    model = _scdp(X, y, w, 0.3)
    S = POOL[model.support_]
    alphas = np.array([0.05, 1.0])
    R = model.loo_residuals(alphas)
    m = len(y)
    for a, alpha in enumerate(alphas):
        ref = np.array([y[i] - _weighted_refit(X, y, w, X[S], alpha, np.delete(np.arange(m), i), X[i:i + 1])[0]
                        for i in range(m)])
        np.testing.assert_allclose(R[a], ref, atol=1e-7)
    np.testing.assert_allclose(model.press(alphas), (w * R ** 2).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("mode", ["remove", "keep"])
def test_weighted_fixed_size_holdout_matches_refits(mode):
    X, y, w = _data(4)
    m = len(y)
    model = _scdp(X, y, w, 0.2)
    S = POOL[model.support_]
    H = np.r_[0, 1, S[:2], 40, 55]  # two rows hold supported prototypes
    F = model.holdout_predict(H, basis_in_holdout=mode)
    kept = S if mode == "keep" else np.setdiff1d(S, H[w[H] > 0])
    ref = _weighted_refit(X, y, w, X[kept], 0.2, np.delete(np.arange(m), H), X[H])
    np.testing.assert_allclose(F, ref, atol=1e-7)


@pytest.mark.parametrize("splitter", [KFold(5, shuffle=True, random_state=0), GroupKFold(4)])
def test_weighted_fixed_size_kfold_and_grouped_match_refits(splitter):
    X, y, w = _data(5)
    m = len(y)
    groups = np.arange(m) % 7 if isinstance(splitter, GroupKFold) else None
    model = _scdp(X, y, w, 0.5)
    S = POOL[model.support_]
    F = model.cv_predict(cv=splitter, groups=groups, basis_in_holdout="keep")
    ref = np.empty(m)
    for train, test in splitter.split(X, y, groups):
        ref[test] = _weighted_refit(X, y, w, X[S], 0.5, train, X[test])
    np.testing.assert_allclose(F, ref, atol=1e-7)
    np.testing.assert_allclose(model.cv_error(cv=splitter, groups=groups, basis_in_holdout="keep"),
                               np.sum(w * (y - ref) ** 2) / w.sum(), rtol=1e-8)


def test_weighted_fixed_size_zero_weights_are_removed_rows():
    X, y, w = _data(6)
    keep = w > 0
    groups = np.arange(len(y)) % 5  # one fold per group: the same folds without the zero-weight rows
    kw = dict(alpha=0.3, cv=LeaveOneGroupOut(), n_basis=20, random_state=0)
    a = FixedSizeLSSVR(**kw).fit(X, y, groups=groups, sample_weight=w)
    b = FixedSizeLSSVR(**kw).fit(X[keep], y[keep], groups=groups[keep], sample_weight=w[keep])
    np.testing.assert_allclose(a.basis_vectors_, b.basis_vectors_)
    assert a.model_size_ == b.model_size_
    np.testing.assert_allclose(a.cv_score_, b.cv_score_, rtol=1e-9)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)
    np.testing.assert_allclose(a.loo_residuals()[keep], b.loo_residuals(), atol=1e-8)
    labels = np.where(y > 0, "p", "n")
    c = FixedSizeLSSVC(calibration="sigmoid", **kw).fit(X, labels, groups=groups, sample_weight=w)
    d = FixedSizeLSSVC(calibration="sigmoid", **kw).fit(X[keep], labels[keep], groups=groups[keep],
                                                        sample_weight=w[keep])
    np.testing.assert_allclose(c.predict_proba(X), d.predict_proba(X), atol=1e-8)
    # the size chosen by the weighted error rate
    e = FixedSizeLSSVC(scoring="error_rate", stop_tol=None, **kw).fit(X, labels, groups=groups, sample_weight=w)
    f = FixedSizeLSSVC(scoring="error_rate", stop_tol=None, **kw).fit(X[keep], labels[keep], groups=groups[keep],
                                                                      sample_weight=w[keep])
    np.testing.assert_allclose(e.cv_curve_, f.cv_curve_, atol=1e-12)
    np.testing.assert_allclose(e.decision_function(X), f.decision_function(X), atol=1e-9)


def test_weighted_size_choice_error_rate_is_weighted():
    X, y, w = _data(12)
    labels = y > 0
    folds = [t for _, t in KFold(4, shuffle=True, random_state=1).split(X)]
    cv = [(np.setdiff1d(np.arange(len(y)), t), t) for t in folds]
    clf = FixedSizeLSSVC(gamma=GAMMA, alpha=0.3, basis=POOL, cv=cv, scoring="error_rate", stop_tol=None).fit(
        X, labels, sample_weight=w)
    for size in (3, 7):
        wrong = 0.0
        for train, test in cv:
            fold = FixedSizeLSSVC(gamma=GAMMA, alpha=0.3, basis=X[POOL], cv=None, max_size=size,
                                  calibration=None).fit(  # the size curve counts sign errors
                X[train], labels[train], sample_weight=w[train])
            wrong += w[test] @ (fold.predict(X[test]) != labels[test])
        np.testing.assert_allclose(clf.cv_curve_[size - 1], wrong / w.sum(), atol=1e-12)


def test_weighted_fixed_size_integer_weights_are_repeated_rows():
    X, y, _ = _data(7)
    reps = np.random.default_rng(7).integers(1, 4, size=len(y))
    Xr, yr = np.repeat(X, reps, axis=0), np.repeat(y, reps)
    kw = dict(gamma=GAMMA, alpha=0.3, basis=X[POOL], cv=None, max_size=8)
    a = FixedSizeLSSVR(**kw).fit(X, y, sample_weight=reps)
    b = FixedSizeLSSVR(**kw).fit(Xr, yr)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)


def test_weighted_fixed_size_classifier_error_rate():
    X, y, w = _data(8)
    labels = np.where(y > 0, "a", "b")
    clf = FixedSizeLSSVC(gamma=GAMMA, alpha=0.5, basis=POOL, cv=None, max_size=10).fit(X, labels, sample_weight=w)
    F = clf.loo_decision_function()
    t = np.where(labels == clf.classes_[1], 1.0, -1.0)
    np.testing.assert_allclose(clf.loo_error_rate(), np.sum(w * (np.sign(F) != t)) / w.sum(), rtol=1e-12)


def test_weighted_fixed_size_refuses_what_it_does_not_cover():
    X, y, w = _data(9)
    model = _scdp(X, y, w, 0.3)
    for call in (lambda: model.predict_interval(X[:3]), lambda: model.predict_std(X[:3]),
                 lambda: model.log_evidence()):
        with pytest.raises(ValueError, match="sample_weight"):
            call()
    clf = FixedSizeLSSVC(calibration="sigmoid", n_basis=15).fit(X, y > 0, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.predict_set(X[:3])
    for bad, match in ((-w, "(?i)negative"), (w[:-1], "sample"), (np.where(w > 1, np.nan, w), "NaN")):
        with pytest.raises(ValueError, match=match):
            FixedSizeLSSVR().fit(X, y, sample_weight=bad)


def test_weighted_fixed_size_dask_input_refused():
    da = pytest.importorskip("dask.array")
    X, y, w = _data(10)
    with pytest.raises(ValueError, match="Dask"):
        FixedSizeLSSVR(n_basis=10).fit(da.from_array(X, chunks=35), da.from_array(y, chunks=35), sample_weight=w)


def test_fixed_size_sklearn_sample_weight_equivalence():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    if not hasattr(checks, "check_sample_weight_equivalence_on_dense_data"):
        pytest.skip("this scikit-learn has no sample-weight equivalence check")
    # the size-selection folds of repeated rows are other folds: without CV the fit is the weighted SCDP run
    checks.check_sample_weight_equivalence_on_dense_data("FixedSizeLSSVR", FixedSizeLSSVR(cv=None))
    # uncalibrated: held-out calibration leaves a weighted row out whole, so a weight is not a repetition there
    checks.check_sample_weight_equivalence_on_dense_data("FixedSizeLSSVC", FixedSizeLSSVC(cv=None, calibration=None))


def test_fixed_size_weights_routed_through_pipeline_and_grid_search():
    X, y, w = _data(11)
    with sklearn.config_context(enable_metadata_routing=True):
        est = FixedSizeLSSVR(alpha=0.3, random_state=0).set_fit_request(sample_weight=True)
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), est).fit(X, y, sample_weight=w)
        Xs = StandardScaler().fit_transform(X)
        direct = FixedSizeLSSVR(alpha=0.3, random_state=0).fit(Xs, y, sample_weight=w)
        np.testing.assert_allclose(pipe.predict(X), direct.predict(Xs), atol=1e-9)
        grid = GridSearchCV(FixedSizeLSSVR(random_state=0).set_fit_request(sample_weight=True)
                            .set_score_request(sample_weight=True), {"alpha": [0.01, 1.0]}, cv=3)
        grid.fit(X, y, sample_weight=w)
        best = FixedSizeLSSVR(alpha=grid.best_params_["alpha"], random_state=0).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(grid.best_estimator_.predict(X), best.predict(X), atol=1e-9)


def test_weighted_multiclass_outputs_on_their_own_prototypes():
    # each one-vs-rest output grows its own SCDP run: one weighted engine per group of outputs
    rng = np.random.default_rng(13)
    X = rng.normal(size=(90, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=90), [-0.5, 0.5])
    w = rng.uniform(0.0, 2.0, size=90)
    clf = FixedSizeLSSVC(alpha=0.3, n_basis=20, random_state=0).fit(X, y, sample_weight=w)
    chosen = clf.coef_full_[:clf.n_basis_] != 0
    assert not np.all(chosen == chosen[:, :1])
    pred = clf.classes_[clf.loo_decision_function().argmax(axis=1)]
    np.testing.assert_allclose(clf.loo_error_rate(), np.sum(w * (pred != y)) / w.sum(), rtol=1e-12)
    F = clf.cv_decision_function(cv=5)
    sse = np.sum(w[:, None] * (F - np.where(y[:, None] == clf.classes_, 1.0, -1.0)) ** 2, axis=0)
    np.testing.assert_allclose(clf.cv_error(cv=5, scoring="press"), sse, rtol=1e-10)
