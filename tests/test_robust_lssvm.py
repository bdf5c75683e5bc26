"""RobustLSSVR against an explicit reweighting loop written here (dense
weighted solves, LS-SVMlab's weight functions and 1.483 MAD scale), and its
outlier resistance, convergence report and errors."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lssvm import RobustLSSVR, SparseLSSVR
from lssvm.kernels import make_kernel

GAMMA = 0.8


def _weights(r, name):
    """The four weight functions, written out (LS-SVMlab's weighting scheme, default constants)."""
    a = np.abs(r)
    if name == "huber":
        return np.where(a < 1.345, 1.0, 1.345 / np.maximum(a, 1e-300))
    if name == "hampel":
        return np.where(a <= 2.5, 1.0, np.where(a <= 3.0, (3.0 - a) / 0.5, 1e-7))
    if name == "logistic":
        return np.where(r == 0, 1.0, np.tanh(r) / np.where(r == 0, 1.0, r))
    K = 0.5 * (np.percentile(r, 75) - np.percentile(r, 25))
    return K**2 / (K**2 + r**2)


def _weighted_fit(K, K_BB, y, w, alpha):
    """Training outputs of ``min sum w (y - K a - b)^2 + alpha a^T K_BB a`` by a dense solve."""
    G = np.c_[K, np.ones(len(y))]
    A = G.T @ (w[:, None] * G)
    A[:-1, :-1] += alpha * K_BB
    return G @ np.linalg.solve(A, G.T @ (w * y))


def _explicit_robust(X, y, Z, alpha, name, tol=1e-4, max_iter=50):
    k = make_kernel("rbf", gamma=GAMMA)
    K, K_BB = k(X, Z), k(Z, Z)
    v = np.ones(len(y))
    f = _weighted_fit(K, K_BB, y, v, alpha)
    for _ in range(max_iter):
        e = y - f
        s = 1.483 * np.median(np.abs(e - np.median(e)))
        v_new = _weights(e / s, name)
        if np.max(np.abs(v_new - v)) <= tol:
            break
        v = v_new
        f = _weighted_fit(K, K_BB, y, v, alpha)
    return v, f


def _data(seed, m=120, share=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(m, 2))
    clean = np.sin(X[:, 0]) + 0.5 * np.cos(X[:, 1])
    y = clean + 0.1 * rng.normal(size=m)
    bad = rng.choice(m, int(share * m), replace=False)
    y[bad] -= np.sign(clean[bad]) * rng.uniform(5, 20, size=bad.size) * y.std()
    return X, y, clean, bad


@pytest.mark.parametrize("name", ["huber", "hampel", "logistic", "myriad"])
def test_matches_explicit_reweighting_loop(name):
    X, y, _, _ = _data(0)
    basis = np.arange(0, 120, 5)
    model = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis=basis, weight_function=name).fit(X, y)
    v, f = _explicit_robust(X, y, X[basis], 0.05, name)
    assert model.converged_
    np.testing.assert_allclose(model.weights_, v, atol=1e-8)
    np.testing.assert_allclose(model.predict(X), f, atol=1e-8)


def test_default_is_hampel():
    assert RobustLSSVR().weight_function == "hampel"


def test_lssvmlab_names_and_parameters():
    X, y, _, _ = _data(1)
    a = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis="random", n_basis=30, random_state=0, weight_function="whuber")
    b = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis="random", n_basis=30, random_state=0, weight_function="huber",
                    weight_parameter=1.345)
    np.testing.assert_allclose(a.fit(X, y).predict(X), b.fit(X, y).predict(X), atol=1e-12)
    c = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis="random", n_basis=30, random_state=0, weight_function="huber",
                    weight_parameter=3.0)
    assert np.abs(c.fit(X, y).predict(X) - a.predict(X)).max() > 1e-6  # the parameter reaches the weights


@pytest.mark.parametrize("name", ["huber", "hampel", "logistic", "myriad"])
def test_outliers_downweighted_and_fit_recovered(name):
    X, y, clean, bad = _data(2)
    kw = dict(gamma=GAMMA, alpha=0.05, basis="random", n_basis=40, random_state=0)
    robust = RobustLSSVR(weight_function=name, **kw).fit(X, y)
    plain = SparseLSSVR(**kw).fit(X, y)
    ok = np.setdiff1d(np.arange(len(y)), bad)
    assert robust.weights_[bad].max() < robust.weights_[ok].mean()
    err_robust = np.sqrt(np.mean((robust.predict(X) - clean) ** 2))
    err_plain = np.sqrt(np.mean((plain.predict(X) - clean) ** 2))
    assert err_robust < 0.3 * err_plain


def test_cv_of_final_weighted_model():
    X, y, _, _ = _data(3)
    basis = np.arange(0, 120, 4)
    model = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis=basis).fit(X, y)
    weighted = SparseLSSVR(gamma=GAMMA, alpha=0.05, basis=basis).fit(X, y, sample_weight=model.weights_)
    np.testing.assert_allclose(model.loo_residuals(), weighted.loo_residuals(), atol=1e-9)
    np.testing.assert_allclose(model.cv_error(cv=5), weighted.cv_error(cv=5), rtol=1e-9)


def test_prior_weights_multiply():
    X, y, _, _ = _data(4)
    w = np.random.default_rng(4).integers(0, 3, size=len(y)).astype(float)
    keep = w > 0
    basis_rows = np.flatnonzero(keep)[::4]
    a = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis=X[basis_rows], weight_function="huber").fit(X, y, sample_weight=w)
    b = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis=X[basis_rows], weight_function="huber").fit(np.repeat(X, w.astype(int), axis=0),
                                                                       np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-7)


def test_convergence_warning_and_errors():
    X, y, _, _ = _data(5)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis="random", n_basis=20, random_state=0, max_iter=1,
                        tol=1e-12).fit(X, y)
    assert not m.converged_ and m.n_iter_ == 1
    with pytest.raises(ValueError, match="weight_function"):
        RobustLSSVR(weight_function="tukey").fit(X, y)
    with pytest.raises(ValueError):
        RobustLSSVR().fit(X, np.c_[y, y])


def test_robust_cv_error_matches_refits_at_each_alpha():
    X, y, clean, bad = _data(6)
    basis = np.arange(0, 120, 4)
    model = RobustLSSVR(gamma=GAMMA, alpha=0.05, basis=basis).fit(X, y)
    alphas = np.array([0.005, 0.05, 0.5])
    med = model.robust_cv_error(alpha=alphas)
    for a, value in zip(alphas, med, strict=True):
        at_a = RobustLSSVR(gamma=GAMMA, alpha=a, basis=basis).fit(X, y)
        np.testing.assert_allclose(value, np.median(np.abs(at_a.loo_residuals())), rtol=1e-9)
    folds = model.robust_cv_error(cv=4, statistic="mae")
    F = model.cv_predict(cv=4)
    np.testing.assert_allclose(folds, np.mean(np.abs(y - F)), rtol=1e-9)
    trimmed = model.robust_cv_error(statistic="trimmed", trim=0.2)
    r = np.sort(np.abs(model.loo_residuals()))
    np.testing.assert_allclose(trimmed, r[: int(np.ceil(0.8 * r.size))].mean(), rtol=1e-9)
    with pytest.raises(ValueError, match="statistic"):
        model.robust_cv_error(statistic="mean")
