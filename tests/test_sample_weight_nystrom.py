"""sample_weight on the Nyström LS-SVMs: the weighted rank-k model and its exact
weighted LOO / hold-out / k-fold / grouped CV against explicit weighted refits
(a dense solve on the rank-k features written here), zero weights as removed
rows, integer weights as repeated rows, clear errors, metadata routing."""

import numpy as np
import pytest
import sklearn
from scipy.linalg import eigh
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lssvm import NystromLSSVC, NystromLSSVR
from lssvm.kernels import make_kernel

GAMMA = 0.4


def _data(seed, m=60, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m)
    w = rng.uniform(0.0, 3.0, size=m)
    w[rng.choice(m, 5, replace=False)] = 0.0
    return X, y, w


def _features(Z, rank):
    """The rank-k Nyström map of the columns ``Z``, ``x -> k(x, Z) U_k L_k^(-1/2)``, written out."""
    k = make_kernel("rbf", gamma=GAMMA)
    lam, U = eigh(k(Z, Z))
    lam, U = lam[::-1][:rank], U[:, ::-1][:, :rank]
    P = U / np.sqrt(lam)
    return lambda X: k(X, Z) @ P


def _weighted_refit(X, y, w, Z, rank, alpha, rows, X_query):
    """Outputs at ``X_query`` of the weighted ridge on the rank-k features of ``Z`` fitted on ``rows``:
    ``[F^T W F + alpha I, F^T W 1; 1^T W F, 1^T W 1] [beta; b] = [F^T W y; 1^T W y]`` solved densely."""
    phi = _features(Z, rank)
    G = np.c_[phi(X[rows]), np.ones(len(rows))]
    wr = w[rows]
    A = G.T @ (wr[:, None] * G)
    A[:-1, :-1] += alpha * np.eye(G.shape[1] - 1)
    theta = np.linalg.solve(A, G.T @ (wr * y[rows]))
    return phi(X_query) @ theta[:-1] + theta[-1]


BASIS = np.arange(4, 16)  # 12 sampled columns
RANK = 8


def _fit(X, y, w, alpha, basis=BASIS, rank=RANK):
    return NystromLSSVR(gamma=GAMMA, alpha=alpha, basis=basis, rank=rank, rcond=1e-13).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_nystrom_fit_matches_dense_solve(seed):
    X, y, w = _data(seed)
    model = _fit(X, y, w, 0.3)
    ref = _weighted_refit(X, y, w, X[BASIS], RANK, 0.3, np.arange(len(y)), X)
    np.testing.assert_allclose(model.predict(X), ref, atol=1e-9)
    # the dual coefficients of the weighted model: a_i = w_i (y_i - f(x_i)) / alpha
    np.testing.assert_allclose(model.dual_coef_, w * (y - ref) / 0.3, atol=1e-8)
    unweighted = NystromLSSVR(gamma=GAMMA, alpha=0.3, basis=BASIS, rank=RANK, rcond=1e-13).fit(X, y)
    assert np.abs(unweighted.predict(X) - ref).max() > 1e-3  # the weights matter here


def test_weighted_nystrom_loo_matches_refits():
    X, y, w = _data(2)
    alphas = np.array([0.05, 1.0])
    model = _fit(X, y, w, 0.3)
    R = model.loo_residuals(alphas)
    m = len(y)
    for a, alpha in enumerate(alphas):
        ref = np.array([y[i] - _weighted_refit(X, y, w, X[BASIS], RANK, alpha, np.delete(np.arange(m), i),
                                               X[i:i + 1])[0] for i in range(m)])
        np.testing.assert_allclose(R[a], ref, atol=1e-8)
    np.testing.assert_allclose(model.press(alphas), (w * R ** 2).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("mode", ["keep", "remove"])
def test_weighted_nystrom_holdout_matches_refits(mode):
    X, y, w = _data(4)
    m = len(y)
    model = _fit(X, y, w, 0.2)
    H = np.array([0, 3, 7, 8, 30, 41, 55])  # rows 7 and 8 are sampled columns 3 and 4
    F = model.holdout_predict(H, basis_in_holdout=mode)
    rows = np.delete(np.arange(m), H)
    # "keep": the fitted rank-k map stays; "remove": the columns held out leave, the map of the rest re-derived
    Z = X[BASIS] if mode == "keep" else X[np.setdiff1d(BASIS, H[w[H] > 0])]
    ref = _weighted_refit(X, y, w, Z, RANK, 0.2, rows, X[H])
    np.testing.assert_allclose(F, ref, atol=1e-8)


@pytest.mark.parametrize("splitter", [KFold(5, shuffle=True, random_state=0), GroupKFold(4)])
def test_weighted_nystrom_kfold_and_grouped_match_refits(splitter):
    X, y, w = _data(5)
    m = len(y)
    groups = np.arange(m) % 7 if isinstance(splitter, GroupKFold) else None
    model = _fit(X, y, w, 0.5)
    F = model.cv_predict(cv=splitter, groups=groups, basis_in_holdout="keep")
    ref = np.empty(m)
    for train, test in splitter.split(X, y, groups):
        ref[test] = _weighted_refit(X, y, w, X[BASIS], RANK, 0.5, train, X[test])
    np.testing.assert_allclose(F, ref, atol=1e-8)
    err = model.cv_error(cv=splitter, groups=groups, basis_in_holdout="keep")
    np.testing.assert_allclose(err, np.sum(w * (y - ref) ** 2) / w.sum(), rtol=1e-10)


def test_weighted_nystrom_zero_weights_are_removed_rows():
    X, y, w = _data(6)
    keep = w > 0
    kw = dict(gamma=GAMMA, alpha=0.3, basis="random", n_basis=15, random_state=0)
    a = NystromLSSVR(**kw).fit(X, y, sample_weight=w)
    b = NystromLSSVR(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_allclose(a.basis_vectors_, b.basis_vectors_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)
    np.testing.assert_allclose(a.loo_residuals()[keep], b.loo_residuals(), atol=1e-9)
    # gamma="scale" resolved on the weighted rows: zero-weight rows do not move it
    c = NystromLSSVR(alpha=0.3, basis="random", n_basis=15, random_state=0).fit(X, y, sample_weight=w)
    d = NystromLSSVR(alpha=0.3, basis="random", n_basis=15, random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
    assert c.gamma_ == pytest.approx(d.gamma_, rel=1e-12)


def test_weighted_nystrom_integer_weights_are_repeated_rows():
    X, y, _ = _data(7)
    reps = np.random.default_rng(7).integers(1, 4, size=len(y))
    Xr, yr = np.repeat(X, reps, axis=0), np.repeat(y, reps)
    a = NystromLSSVR(alpha=0.3, basis=X[BASIS], rank=RANK).fit(X, y, sample_weight=reps)
    b = NystromLSSVR(alpha=0.3, basis=X[BASIS], rank=RANK).fit(Xr, yr)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)
    # grouped CV with every copy of a row in one group is the same as well
    groups, groups_r = np.arange(len(y)) % 5, np.repeat(np.arange(len(y)) % 5, reps)
    np.testing.assert_allclose(a.cv_error(cv=GroupKFold(5), groups=groups),
                               b.cv_error(cv=GroupKFold(5), groups=groups_r), rtol=1e-9)


def test_weighted_nystrom_classifier_error_rate_and_calibration():
    X, y, w = _data(8)
    labels = np.where(y > 0, "a", "b")
    clf = NystromLSSVC(gamma=GAMMA, alpha=0.5, basis=BASIS, rank=RANK, calibration="sigmoid").fit(
        X, labels, sample_weight=w)
    F = clf.loo_decision_function()
    t = np.where(labels == clf.classes_[1], 1.0, -1.0)
    wrong = np.sign(F) != t
    np.testing.assert_allclose(clf.loo_error_rate(), np.sum(w * wrong) / w.sum(), rtol=1e-12)
    # the decision function is the weighted ridge on the coded labels
    ref = _weighted_refit(X, t, w, X[BASIS], RANK, 0.5, np.arange(len(y)), X)
    np.testing.assert_allclose(clf.decision_function(X), ref, atol=1e-9)
    keep = w > 0
    same = NystromLSSVC(gamma=GAMMA, alpha=0.5, basis=X[BASIS], rank=RANK, calibration="sigmoid").fit(
        X[keep], labels[keep], sample_weight=w[keep])
    np.testing.assert_allclose(clf.predict_proba(X), same.predict_proba(X), atol=1e-8)


def test_weighted_nystrom_refuses_what_it_does_not_cover():
    X, y, w = _data(9)
    model = _fit(X, y, w, 0.3)
    for call in (lambda: model.predict_interval(X[:3]), lambda: model.predict_std(X[:3]),
                 lambda: model.log_evidence(), lambda: model.approximation_bound()):
        with pytest.raises(ValueError, match="sample_weight"):
            call()
    with pytest.raises(ValueError, match="sample_weight"):
        NystromLSSVR(predictor="exact").fit(X, y, sample_weight=w)
    clf = NystromLSSVC(calibration="sigmoid").fit(X, y > 0, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.predict_set(X[:3])
    for bad, match in ((-w, "(?i)negative"), (w[:-1], "sample"), (np.where(w > 1, np.nan, w), "NaN")):
        with pytest.raises(ValueError, match=match):
            NystromLSSVR().fit(X, y, sample_weight=bad)


def test_weighted_nystrom_dask_input_refused():
    da = pytest.importorskip("dask.array")
    X, y, w = _data(10)
    with pytest.raises(ValueError, match="Dask"):
        NystromLSSVR(n_basis=10).fit(da.from_array(X, chunks=30), da.from_array(y, chunks=30), sample_weight=w)


def test_nystrom_sklearn_sample_weight_equivalence():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    if not hasattr(checks, "check_sample_weight_equivalence_on_dense_data"):
        pytest.skip("this scikit-learn has no sample-weight equivalence check")
    checks.check_sample_weight_equivalence_on_dense_data("NystromLSSVR", NystromLSSVR())
    # uncalibrated: held-out calibration leaves a weighted row out whole, so a weight is not a repetition there
    checks.check_sample_weight_equivalence_on_dense_data("NystromLSSVC", NystromLSSVC(calibration=None))


def test_nystrom_weights_routed_through_pipeline_and_grid_search():
    X, y, w = _data(11)
    with sklearn.config_context(enable_metadata_routing=True):
        est = NystromLSSVR(alpha=0.3, random_state=0).set_fit_request(sample_weight=True)
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), est).fit(X, y, sample_weight=w)
        Xs = StandardScaler().fit_transform(X)
        direct = NystromLSSVR(alpha=0.3, random_state=0).fit(Xs, y, sample_weight=w)
        np.testing.assert_allclose(pipe.predict(X), direct.predict(Xs), atol=1e-9)
        grid = GridSearchCV(NystromLSSVR(random_state=0).set_fit_request(sample_weight=True)
                            .set_score_request(sample_weight=True), {"alpha": [0.01, 1.0]}, cv=3)
        grid.fit(X, y, sample_weight=w)
        best = NystromLSSVR(alpha=grid.best_params_["alpha"], random_state=0).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(grid.best_estimator_.predict(X), best.predict(X), atol=1e-9)
