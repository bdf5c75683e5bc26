"""sample_weight on the sparse LS-SVMs: the weighted fit and its exact weighted
CV against explicit weighted refits (a dense solve written here), zero weights
as removed rows, integer weights as repeated rows, clear errors, and
scikit-learn's metadata routing."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.kernels import make_kernel

GAMMA = 0.4


def _data(seed, m=70, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m)
    w = rng.uniform(0.0, 3.0, size=m)
    w[rng.choice(m, 6, replace=False)] = 0.0
    return X, y, w


def _weighted_refit(X, y, w, Z, alpha, rows, X_query):
    """Outputs at ``X_query`` of the weighted model on ``rows``, basis points ``Z``: the normal equations
    ``[K^T W K + alpha K_BB, K^T W 1; 1^T W K, 1^T W 1] [a; b] = [K^T W y; 1^T W y]`` solved densely."""
    k = make_kernel("rbf", gamma=GAMMA)
    G = np.c_[k(X[rows], Z), np.ones(len(rows))]
    wr = w[rows]
    A = G.T @ (wr[:, None] * G)
    A[:-1, :-1] += alpha * k(Z, Z)
    theta = np.linalg.solve(A, G.T @ (wr * y[rows]))
    return k(X_query, Z) @ theta[:-1] + theta[-1]


def _fit(X, y, w, basis, alpha):
    return SparseLSSVR(gamma=GAMMA, alpha=alpha, basis=basis).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_fit_matches_dense_solve(seed):
    X, y, w = _data(seed)
    basis = np.arange(5, 20)
    model = _fit(X, y, w, basis, 0.3)
    ref = _weighted_refit(X, y, w, X[basis], 0.3, np.arange(len(y)), X)
    np.testing.assert_allclose(model.predict(X), ref, atol=1e-10)


@pytest.mark.parametrize("seed", [2, 3])
def test_weighted_loo_matches_refits(seed):
    X, y, w = _data(seed)
    basis = np.arange(5, 20)
    alphas = np.array([0.05, 1.0])
    model = _fit(X, y, w, basis, 0.3)
    R = model.loo_residuals(alphas)
    m = len(y)
    for a, alpha in enumerate(alphas):
        ref = np.array([y[i] - _weighted_refit(X, y, w, X[basis], alpha, np.delete(np.arange(m), i), X[i:i + 1])[0]
                        for i in range(m)])
        np.testing.assert_allclose(R[a], ref, atol=1e-9)
    # a zero-weight row's LOO residual is its training residual
    zero = np.flatnonzero(w == 0)
    np.testing.assert_allclose(R[1][zero], (y - model.set_params(alpha=1.0).fit(X, y, sample_weight=w).predict(X))[zero],
                               atol=1e-10)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_weighted_holdout_matches_refits(mode):
    X, y, w = _data(4)
    m = len(y)
    basis = np.arange(5, 20)
    model = _fit(X, y, w, basis, 0.2)
    H = np.array([0, 3, 7, 8, 30, 41, 60])  # rows 7 and 8 hold basis points 2 and 3
    F = model.holdout_predict(H, basis_in_holdout=mode)
    in_basis = np.isin(H, basis) & (w[H] > 0)
    removed_rows = H if mode != "train" else H[~in_basis]
    keep_cols = basis if mode != "remove" else np.setdiff1d(basis, H[in_basis])
    ref = _weighted_refit(X, y, w, X[keep_cols], 0.2, np.setdiff1d(np.arange(m), removed_rows), X[H])
    np.testing.assert_allclose(F, ref, atol=1e-9)


@pytest.mark.parametrize("splitter", ["kfold", "group"])
def test_weighted_kfold_and_grouped_match_refits(splitter):
    X, y, w = _data(5)
    m = len(y)
    basis = np.arange(0, 60, 4)
    model = _fit(X, y, w, basis, 0.5)
    groups = np.arange(m) % 9
    cv = KFold(5, shuffle=True, random_state=0) if splitter == "kfold" else GroupKFold(4)
    groups = None if splitter == "kfold" else groups
    F = model.cv_predict(cv=cv, groups=groups)
    ref = np.empty(m)
    for train, test in cv.split(X, y, groups):
        cols = np.setdiff1d(basis, test[w[test] > 0])
        ref[test] = _weighted_refit(X, y, w, X[cols], 0.5, train, X[test])
    np.testing.assert_allclose(F, ref, atol=1e-9)
    # the error is the weighted mean of the squared out-of-fold residuals
    np.testing.assert_allclose(model.cv_error(cv=cv, groups=groups), np.sum(w * (y - ref) ** 2) / w.sum(), rtol=1e-10)


def test_weighted_press_is_weighted_sum():
    X, y, w = _data(6)
    model = _fit(X, y, w, np.arange(12), 0.3)
    np.testing.assert_allclose(model.press(), np.sum(w * model.loo_residuals() ** 2), rtol=1e-12)


def test_zero_weights_are_removed_rows():
    X, y, w = _data(7)
    keep = w > 0
    for basis in ("pchol", "random", "kcenter"):
        a = SparseLSSVR(alpha=0.3, basis=basis, n_basis=15, random_state=0).fit(X, y, sample_weight=w)
        b = SparseLSSVR(alpha=0.3, basis=basis, n_basis=15, random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
        np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-10)
        # k-fold with the zero-weight rows in their own fold: the same held-out outputs for the others
        folds_a = [np.flatnonzero(~keep)] + [np.flatnonzero(keep)[i::3] for i in range(3)]
        folds_b = [np.arange(keep.sum())[i::3] for i in range(3)]
        Fa = a.cv_predict(cv=[(np.setdiff1d(np.arange(len(y)), t), t) for t in folds_a])
        Fb = b.cv_predict(cv=[(np.setdiff1d(np.arange(keep.sum()), t), t) for t in folds_b])
        np.testing.assert_allclose(Fa[keep], Fb, atol=1e-9)


def test_integer_weights_are_repeated_rows():
    X, y, _ = _data(8)
    counts = np.random.default_rng(8).integers(0, 4, size=len(y))
    Xr, yr = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    a = SparseLSSVR(alpha=0.2, random_state=0).fit(X, y, sample_weight=counts)
    b = SparseLSSVR(alpha=0.2, random_state=0).fit(Xr, yr)
    np.testing.assert_allclose(a.gamma_, b.gamma_, rtol=1e-12)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9)
    # grouped CV with every copy of a row in one group equals the weighted hold-out of that row's group
    groups = np.arange(len(y)) % 5
    Fa = a.cv_predict(cv=GroupKFold(5), groups=groups, basis_in_holdout="keep")
    Fb = b.cv_predict(cv=GroupKFold(5), groups=np.repeat(groups, counts), basis_in_holdout="keep")
    np.testing.assert_allclose(np.repeat(Fa, counts), Fb, atol=1e-8)


def test_classifier_weighted_error_rate():
    X, y, w = _data(9)
    labels = (y > 0).astype(int)
    model = SparseLSSVC(gamma=GAMMA, alpha=0.3, basis=np.arange(15)).fit(X, labels, sample_weight=w)
    F = model.loo_decision_function()
    wrong = (F > 0).astype(int) != labels
    np.testing.assert_allclose(model.loo_error_rate(), np.sum(w * wrong) / w.sum(), rtol=1e-12)
    # against refits of the coded targets
    Yc = np.where(labels == 1, 1.0, -1.0)
    ref = np.array([_weighted_refit(X, Yc, w, X[np.arange(15)], 0.3, np.delete(np.arange(len(y)), i), X[i:i + 1])[0]
                    for i in range(len(y))])
    np.testing.assert_allclose(F, ref, atol=1e-9)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_calibration_zero_weights_are_removed_rows(method):
    X, y, w = _data(19)
    labels = y > 0.3
    keep = w > 0
    kw = dict(gamma=GAMMA, alpha=0.3, basis="random", n_basis=15, random_state=0, calibration=method)
    a = SparseLSSVC(**kw).fit(X, labels, sample_weight=w)
    b = SparseLSSVC(**kw).fit(X[keep], labels[keep], sample_weight=w[keep])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-8)
    # and the weights reach the calibration: unit weights on the kept rows give other probabilities
    c = SparseLSSVC(**kw).fit(X[keep], labels[keep], sample_weight=np.ones(keep.sum()))
    assert np.abs(c.predict_proba(X) - b.predict_proba(X)).max() > 1e-4


def test_platt_weights_are_repetitions():
    from lssvm.estimators._calibration import fit_platt

    rng = np.random.default_rng(20)
    f, t = rng.normal(size=40), rng.random(40) > 0.5
    counts = rng.integers(0, 4, size=40)
    np.testing.assert_allclose(fit_platt(f, t, weights=counts), fit_platt(np.repeat(f, counts), np.repeat(t, counts)),
                               rtol=1e-5)


def test_unit_weights_equal_unweighted():
    X, y, _ = _data(10)
    # a well-conditioned basis: the two factorisations then agree to rounding
    a = SparseLSSVR(alpha=0.3, basis="random", n_basis=15, random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    b = SparseLSSVR(alpha=0.3, basis="random", n_basis=15, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-10)
    np.testing.assert_allclose(a.loo_residuals(), b.loo_residuals(), atol=1e-9)
    np.testing.assert_allclose(a.cv_error(cv=5), b.cv_error(cv=5), rtol=1e-9)


@pytest.mark.parametrize("bad, match", [
    (np.ones(5), "shape"),
    (-np.ones(70), "Negative"),
    (np.full(70, np.nan), "NaN"),
    (np.full(70, np.inf), "infinity"),
    (np.zeros(70), "non-zero"),
])
def test_bad_weights_clear_errors(bad, match):
    X, y, _ = _data(11)
    with pytest.raises(ValueError, match=match):
        SparseLSSVR().fit(X, y, sample_weight=bad)


def test_weighted_fit_refuses_what_it_does_not_cover():
    X, y, w = _data(12)
    model = SparseLSSVR(alpha=0.3).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight"):
        model.predict_interval(X[:3])
    calibrated = SparseLSSVC(calibration="sigmoid").fit(X, y > 0, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight"):
        calibrated.predict_set(X[:3])


def test_sklearn_sample_weight_equivalence():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    if not hasattr(checks, "check_sample_weight_equivalence_on_dense_data"):
        pytest.skip("this scikit-learn has no sample-weight equivalence check")
    checks.check_sample_weight_equivalence_on_dense_data("SparseLSSVR", SparseLSSVR())
    # without calibration: the held-out values calibrated on leave a weighted row out whole
    checks.check_sample_weight_equivalence_on_dense_data("SparseLSSVC", SparseLSSVC(calibration=None))
    if hasattr(checks, "check_sample_weight_equivalence_on_sparse_data"):  # CSR input: the dot-product kernels
        checks.check_sample_weight_equivalence_on_sparse_data("SparseLSSVR", SparseLSSVR(kernel="linear"))
        checks.check_sample_weight_equivalence_on_sparse_data("SparseLSSVC", SparseLSSVC(kernel="poly",
                                                                                         calibration=None))


def test_routing_through_pipeline_and_grid_search():
    X, y, w = _data(13)
    with sklearn.config_context(enable_metadata_routing=True):
        est = SparseLSSVR(alpha=0.3, random_state=0).set_fit_request(sample_weight=True)
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), est)
        pipe.fit(X, y, sample_weight=w)
        Xs = StandardScaler().fit_transform(X)
        direct = SparseLSSVR(alpha=0.3, random_state=0).fit(Xs, y, sample_weight=w)
        np.testing.assert_allclose(pipe.predict(X), direct.predict(Xs), atol=1e-9)
        unweighted = SparseLSSVR(alpha=0.3, random_state=0).fit(Xs, y)
        assert np.abs(unweighted.predict(Xs) - direct.predict(Xs)).max() > 1e-3  # the weights matter here
        grid = GridSearchCV(SparseLSSVR(random_state=0).set_fit_request(sample_weight=True).set_score_request(sample_weight=True),
                            {"alpha": [0.01, 1.0]}, cv=3).fit(X, y, sample_weight=w)
        assert grid.best_estimator_.factorization_.weights is not None
        np.testing.assert_allclose(grid.best_estimator_.predict(X),
                                   SparseLSSVR(alpha=grid.best_params_["alpha"], random_state=0).fit(X, y, sample_weight=w).predict(X),
                                   atol=1e-9)


# ------------------------------------------------------------------ searches
@pytest.mark.parametrize("cv", ["loo", 5])
def test_search_scores_are_weighted_cv_errors(cv):
    from lssvm import SparseLSSVRCV

    X, y, w = _data(14)
    search = SparseLSSVRCV(cv=cv, basis="random", n_basis=20, random_state=0,
                           param_space={"gamma": [0.1, 0.4]}).fit(X, y, sample_weight=w)
    best = search.best_estimator_
    assert best.factorization_.weights is not None
    expected = best.press() / w.sum() if cv == "loo" else best.cv_error(cv=5)
    np.testing.assert_allclose(-search.best_score_, expected, rtol=1e-9)
    # the weighted choice can differ from the unweighted one, and its score is not the unweighted score
    plain = SparseLSSVR(gamma=search.best_params_["gamma"], alpha=search.alpha_, basis=best.basis_indices_).fit(X, y)
    plain_error = np.mean(plain.loo_residuals() ** 2) if cv == "loo" else plain.cv_error(cv=5)
    assert abs(plain_error - expected) > 1e-6 * expected


def test_search_zero_weights_are_removed_rows():
    from lssvm import SparseLSSVCCV, SparseLSSVRCV

    X, y, w = _data(15)
    keep = w > 0
    a = SparseLSSVRCV(cv="loo", random_state=0).fit(X, y, sample_weight=w)
    b = SparseLSSVRCV(cv="loo", random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
    assert a.best_params_ == pytest.approx(b.best_params_, rel=1e-12)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)
    labels = y > 0
    c = SparseLSSVCCV(cv="loo", random_state=0).fit(X, labels, sample_weight=w)
    d = SparseLSSVCCV(cv="loo", random_state=0).fit(X[keep], labels[keep], sample_weight=w[keep])
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(X), atol=1e-8)


def test_search_refuses_weights_it_cannot_use():
    from lssvm import SparseLSSVRCV

    X, y, w = _data(16)
    with pytest.raises(ValueError, match="gradient"):
        SparseLSSVRCV(search="gradient").fit(X, y, sample_weight=w)


def test_dask_input_with_weights_refused():
    da = pytest.importorskip("dask.array")
    X, y, w = _data(17)
    with pytest.raises(ValueError, match="Dask"):
        SparseLSSVR(basis="random", n_basis=10).fit(da.from_array(X, chunks=35), da.from_array(y, chunks=35),
                                                     sample_weight=w)


def test_weighted_model_pickles():
    import pickle

    X, y, w = _data(18)
    model = SparseLSSVR(alpha=0.3, basis="random", n_basis=15, random_state=0).fit(X, y, sample_weight=w)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_allclose(again.cv_error(cv=4), model.cv_error(cv=4), rtol=1e-12)
