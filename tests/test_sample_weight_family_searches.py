"""sample_weight on the Nyström and fixed-size ``*CV`` searches: every candidate
scored by the weighted mean of its exact weighted out-of-fold errors, the best
refitted with the weights; zero weights as removed rows; clear errors."""

import numpy as np
import pytest

from lssvm import FixedSizeLSSVCCV, FixedSizeLSSVRCV, NystromLSSVCCV, NystromLSSVRCV


def _data(seed, m=70, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m)
    w = rng.uniform(0.0, 3.0, size=m)
    w[rng.choice(m, 6, replace=False)] = 0.0
    return X, y, w


GRID = {"gamma": [0.1, 0.4]}


@pytest.mark.parametrize("cv", ["loo", 5])
def test_nystrom_search_scores_are_weighted_cv_errors(cv):
    X, y, w = _data(0)
    search = NystromLSSVRCV(cv=cv, n_basis=20, random_state=0, param_space=GRID).fit(X, y, sample_weight=w)
    best = search.best_estimator_
    assert best.factorization_.weights is not None
    expected = best.press() / w.sum() if cv == "loo" else best.cv_error(cv=5)
    np.testing.assert_allclose(-search.best_score_, expected, rtol=1e-9)
    # the unweighted model on the same columns scores otherwise
    plain = type(best)(**best.get_params()).fit(X, y)
    plain_error = np.mean(plain.loo_residuals() ** 2) if cv == "loo" else plain.cv_error(cv=5)
    assert abs(plain_error - expected) > 1e-6 * expected


def test_nystrom_search_zero_weights_are_removed_rows():
    X, y, w = _data(1)
    keep = w > 0
    a = NystromLSSVRCV(n_basis=20, random_state=0, param_space=GRID).fit(X, y, sample_weight=w)
    b = NystromLSSVRCV(n_basis=20, random_state=0, param_space=GRID).fit(X[keep], y[keep], sample_weight=w[keep])
    assert a.best_params_ == pytest.approx(b.best_params_, rel=1e-12)
    np.testing.assert_allclose(a.best_score_, b.best_score_, rtol=1e-9)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)
    labels = np.where(y > 0, "p", "n")
    c = NystromLSSVCCV(n_basis=20, random_state=0, param_space=GRID).fit(X, labels, sample_weight=w)
    d = NystromLSSVCCV(n_basis=20, random_state=0, param_space=GRID).fit(X[keep], labels[keep], sample_weight=w[keep])
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(X), atol=1e-8)
    np.testing.assert_allclose(c.best_estimator_.loo_error_rate(), d.best_estimator_.loo_error_rate(), rtol=1e-12)


@pytest.mark.parametrize("basis", ["pchol", "kcenter"])
def test_fixed_size_search_zero_weights_are_removed_rows(basis):
    X, y, w = _data(2)
    keep = w > 0
    kw = dict(cv=5, basis=basis, n_basis=20, random_state=0, param_space=GRID)
    a = FixedSizeLSSVRCV(**kw).fit(X, y, sample_weight=w)
    b = FixedSizeLSSVRCV(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    assert a.best_estimator_._fit_weights is not None
    assert a.best_params_ == pytest.approx(b.best_params_, rel=1e-12)
    np.testing.assert_allclose(a.best_score_, b.best_score_, rtol=1e-9)
    np.testing.assert_allclose(a.best_estimator_.basis_vectors_, b.best_estimator_.basis_vectors_)


def test_fixed_size_search_scores_are_the_weighted_pool_model_loo():
    X, y, w = _data(3)
    search = FixedSizeLSSVRCV(cv=5, n_basis=20, random_state=0, param_space=GRID).fit(X, y, sample_weight=w)
    best = search.best_estimator_
    # the candidates are scored by the weighted exact LOO of the model on the whole pool (prototypes kept)
    from lssvm import SparseLSSVR

    pool = SparseLSSVR(gamma=search.best_params_["gamma"], alpha=search.alpha_, basis=best.basis_vectors_).fit(
        X, y, sample_weight=w)
    np.testing.assert_allclose(-search.best_score_, pool.press() / w.sum(), rtol=1e-8)
    labels = y > 0
    clf = FixedSizeLSSVCCV(cv=5, n_basis=20, random_state=0, param_space=GRID).fit(X, labels, sample_weight=w)
    assert clf.best_estimator_._fit_weights is not None


def test_fixed_size_candidates_search_refuses_weights():
    X, y, w = _data(4)
    with pytest.raises(ValueError, match="size_search='refit'"):
        FixedSizeLSSVRCV(size_search="candidates", n_basis=10, param_space=GRID).fit(X, y, sample_weight=w)
