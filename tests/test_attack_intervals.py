"""Uncertainty attacked as a hostile user would: jackknife+ and CV+ against explicit refits
(duplicated basis rows, every basis mode, shuffled folds, extreme alphas, tiny training sets,
state left by earlier fits), calibrated probabilities and ``predict_std`` of the searches."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold
from test_intervals import brute_cv_plus

from lssvm import (
    FixedSizeLSSVRCV,
    NystromLSSVRCV,
    SearchEdgeWarning,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.cv.conformal import conformal_ranks
from lssvm.cv.folds import contiguous_folds


def _regression_data(m=40, d=2, seed=1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.sin(X[:, 0]) + 0.3 * r.normal(size=m), r.normal(size=(7, d))


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


def _rng_data(rng, m, d=3):
    X = rng.standard_normal((m, d))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m), rng.standard_normal((7, d))


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def _sparse(**kw):
    return SparseLSSVR(**{"gamma": 0.3, "alpha": 0.05, "basis": "random", "n_basis": 12, "random_state": 0, **kw})


@pytest.mark.filterwarnings("ignore")
def test_jackknife_plus_matches_explicit_loo_refits():
    X, y, Xt = _regression_data()
    m = len(y)
    model = SparseLSSVR(gamma=0.5, basis="random", n_basis=15, alpha=0.1, random_state=0).fit(X, y)
    got = model.predict_interval(Xt, 0.8, method="jackknife+")
    B = model.basis_vectors_
    R = np.empty(m)
    P = np.empty((m, len(Xt)))
    for i in range(m):
        keep = np.arange(m) != i
        fi = SparseLSSVR(gamma=0.5, basis=B, alpha=0.1).fit(X[keep], y[keep])
        R[i] = abs(y[i] - fi.predict(X[i:i + 1])[0])
        P[i] = fi.predict(Xt)
    a = 0.2  # Barber et al. 2021: floor(a (m+1))-th / ceil((1-a)(m+1))-th smallest
    lo = np.sort(P - R[:, None], axis=0)[int(np.floor(a * (m + 1))) - 1]
    hi = np.sort(P + R[:, None], axis=0)[int(np.ceil((1 - a) * (m + 1))) - 1]
    np.testing.assert_allclose(got[:, 0], lo, atol=1e-10)
    np.testing.assert_allclose(got[:, 1], hi, atol=1e-10)


@pytest.mark.filterwarnings("ignore")
def test_uncalibrated_predict_proba_says_why():
    X, y, Xt = _regression_data()
    clf = SparseLSSVC(calibration=None).fit(X, np.where(y > 0, "a", "b"))
    assert not hasattr(clf, "predict_proba")  # sklearn's convention is kept
    with pytest.raises(AttributeError) as info:
        clf.predict_proba(Xt)
    assert "default 'sigmoid'" in str(info.value)  # was: only "has no attribute 'predict_proba'"


@pytest.mark.filterwarnings("ignore")
def test_search_cv_regressor_has_predict_std():
    # was: AttributeError, though SparseLSSVRCV forwards predict_interval to best_estimator_
    X, y, Xt = _regression_data()
    cv = SparseLSSVRCV(n_basis=10).fit(X, y)
    np.testing.assert_allclose(cv.predict_std(Xt), cv.best_estimator_.predict_std(Xt))
    np.testing.assert_allclose(cv.predict_std(Xt, noise=False), cv.best_estimator_.predict_std(Xt, noise=False))


@pytest.mark.filterwarnings("ignore")
def test_cv_plus_keep_matches_explicit_fold_refits():
    from sklearn.model_selection import KFold

    X, y, Xt = _regression_data(seed=3)
    m = len(y)
    model = SparseLSSVR(gamma=0.5, basis="random", n_basis=15, alpha=0.1, random_state=0).fit(X, y)
    folds = list(KFold(5).split(X))
    got = model.predict_interval(Xt, 0.8, method="cv+", cv=folds, basis_in_holdout="keep")
    R = np.empty(m)
    P = np.empty((m, len(Xt)))
    for tr, te in folds:
        f = SparseLSSVR(gamma=0.5, basis=model.basis_vectors_, alpha=0.1).fit(X[tr], y[tr])
        R[te] = np.abs(y[te] - f.predict(X[te]))
        P[te] = f.predict(Xt)
    lo = np.sort(P - R[:, None], axis=0)[int(np.floor(0.2 * (m + 1))) - 1]
    hi = np.sort(P + R[:, None], axis=0)[int(np.ceil(0.8 * (m + 1))) - 1]
    np.testing.assert_allclose(got, np.c_[lo, hi], atol=1e-10)


@pytest.mark.filterwarnings("ignore")
def test_search_classifier_can_be_calibrated():
    from lssvm import SparseLSSVCCV

    X, y, Xt = _regression_data()
    clf = SparseLSSVCCV(calibration="sigmoid", n_basis=10).fit(X, np.where(y > 0, "a", "b"))
    np.testing.assert_allclose(clf.predict_proba(Xt).sum(axis=1), 1.0)


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


@pytest.mark.parametrize("search", [NystromLSSVRCV, FixedSizeLSSVRCV])
def test_family_search_interval_at_its_default_method(search):
    """The searches' ``predict_interval`` without ``method=`` is the best model's own default."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        s = search(basis="random", n_basis=15, random_state=3, param_space={"gamma": [0.5]}, alphas=[0.1]).fit(X, y)
    Xt = rng.normal(size=(4, 3))
    np.testing.assert_array_equal(s.predict_interval(Xt, 0.8, cv=4), s.best_estimator_.predict_interval(Xt, 0.8))
    np.testing.assert_array_equal(s.predict_interval(Xt, 0.8, method="cv+", cv=4),
                                  s.best_estimator_.predict_interval(Xt, 0.8, method="cv+", cv=4))


def test_blocks_follow_refits_on_other_data_pickling_and_set_params(rng):
    """No block Gram of an earlier fit survives a refit on other data (other m, not divisible by 10); a
    pickled model and one whose alpha was changed without a refit still equal brute force."""
    X, y, Xt = _rng_data(rng, 240)
    est = _sparse().fit(X, y)
    est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep")
    X2, y2, _ = _rng_data(rng, 253)
    est.fit(X2, y2)
    assert est.factorization_.block_grams.offsets[-1] == 253
    ref = brute_cv_plus(est, X2, y2, Xt, contiguous_folds(10, 253), "keep", 0.05, 0.8)[:, :, 0]
    for model in (est, pickle.loads(pickle.dumps(est))):
        assert _rel(model.predict_interval(Xt, 0.8, "cv+", cv=KFold(10), basis_in_holdout="keep"), ref) < 1e-10
    est.set_params(alpha=2.0)  # the fitted factorisation is alpha-free; the call's alpha is est.alpha
    ref = brute_cv_plus(est, X2, y2, Xt, contiguous_folds(10, 253), "keep", 2.0, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep"), ref) < 1e-10


@pytest.mark.parametrize("m, n_basis", [(10, 1), (19, 1), (29, 3), (31, 4)])
def test_tiny_m_and_the_memory_bound(rng, m, n_basis):
    """Folds of one or two rows; K r just above m keeps no blocks (the old route): both equal brute force."""
    X, y, Xt = _rng_data(rng, m)
    est = _sparse(n_basis=n_basis).fit(X, y)
    assert (est.factorization_.block_grams is not None) == (10 * n_basis <= m)
    ref = brute_cv_plus(est, X, y, Xt, contiguous_folds(10, m), "keep", 0.05, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep"), ref) < 1e-10


def test_shuffled_folds_and_extreme_alphas_equal_brute_force(rng):
    X, y, Xt = _rng_data(rng, 200)
    est = _sparse().fit(X.tolist(), y)  # a list: validated to float64 like an array
    cv = KFold(10, shuffle=True, random_state=0)
    ref = brute_cv_plus(est, X, y, Xt, [t for _, t in cv.split(X)], "keep", 0.05, 0.8)[:, :, 0]
    assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep"), ref) < 1e-10
    for alpha in (1e-8, 1e12):
        ref = brute_cv_plus(est, X, y, Xt, contiguous_folds(10, 200), "keep", alpha, 0.8)[:, :, 0]
        assert _rel(est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep", alpha=alpha), ref) < 1e-9
