"""Row weights with one alpha per target: each column is the weighted fit at its own alpha."""

import numpy as np
import pytest

from lssvm import SparseLSSVR


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 2))
    Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 1])] + 0.1 * rng.normal(size=(50, 2))
    return X, Y, rng.uniform(0.0, 2.0, 50), rng.normal(size=(15, 2))


def test_weighted_alpha_per_target_matches_one_fit_per_target(data):
    X, Y, w, Xt = data
    alphas = np.array([0.1, 10.0])
    model = SparseLSSVR(basis=X[:12], gamma=0.5, alpha=alphas).fit(X, Y, sample_weight=w)
    P = model.predict(Xt)
    assert P.shape == (15, 2)
    for t, a in enumerate(alphas):
        single = SparseLSSVR(basis=X[:12], gamma=0.5, alpha=a).fit(X, Y[:, t], sample_weight=w)
        np.testing.assert_allclose(P[:, t], single.predict(Xt), atol=1e-10)


def test_weighted_alpha_per_target_loo_against_refits(data):
    X, Y, w, _ = data
    model = SparseLSSVR(basis=X[:12], gamma=0.5, alpha=np.array([0.1, 10.0])).fit(X, Y, sample_weight=w)
    R = np.asarray(model.loo_residuals())
    for t, a in enumerate([0.1, 10.0]):
        brute = []
        for i in range(X.shape[0]):
            keep = np.arange(X.shape[0]) != i
            fit = SparseLSSVR(basis=X[:12], gamma=0.5, alpha=a).fit(X[keep], Y[keep, t], sample_weight=w[keep])
            brute.append(Y[i, t] - fit.predict(X[i:i + 1])[0])
        np.testing.assert_allclose(R[:, t], brute, atol=1e-9)
