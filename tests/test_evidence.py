"""GCV, evidence and posterior standard deviations against dense computations."""

import numpy as np
import pytest
from scipy import linalg

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.selection.evidence import log_evidence_path, noise_precision

from conftest import rel_err

ALPHAS = np.array([1e-3, 0.05, 1.0, 30.0])


def fitted(rng, v=1, m=35, kernel="rbf"):
    X = rng.standard_normal((m, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])[:, :v] + 0.2 * rng.standard_normal((m, v))
    Y = Y[:, 0] if v == 1 else Y
    est = SparseLSSVR(kernel=kernel, gamma=0.3, alpha=0.1, basis="random", n_basis=10, random_state=0).fit(X, Y)
    return est, X, Y.reshape(m, -1)


def dense_hat(est, X, alpha):
    """The m x m hat matrix of the augmented least-squares problem, by a dense solve."""
    K = est.kernel_(X, est.basis_vectors_)
    Z = np.hstack([K, np.ones((X.shape[0], 1))])
    P = Z.T @ Z
    P[:-1, :-1] += alpha * est.kernel_(est.basis_vectors_, est.basis_vectors_)
    return Z @ linalg.solve(P, Z.T)


@pytest.mark.parametrize("v", [1, 2])
def test_gcv_equals_a_direct_computation(rng, v):
    est, X, Y = fitted(rng, v=v)
    fast = est.gcv(ALPHAS).reshape(ALPHAS.size, -1)
    m = X.shape[0]
    for k, a in enumerate(ALPHAS):
        H = dense_hat(est, X, a)
        e = Y - H @ Y
        ref = (e**2).mean(axis=0) / (1 - np.trace(H) / m) ** 2
        assert rel_err(fast[k], ref) < 1e-8


def dense_log_evidence(est, X, y, alpha, zeta):
    """log p(y) of the GP with SoR kernel k_B^T K_BB^-1 k_B / mu, noise 1/zeta, flat prior on b (m x m)."""
    m = X.shape[0]
    mu = alpha * zeta
    K = est.kernel_(X, est.basis_vectors_)
    K_BB = est.kernel_(est.basis_vectors_, est.basis_vectors_)
    C = K @ linalg.solve(K_BB, K.T, assume_a="pos") / mu + np.eye(m) / zeta
    cf = linalg.cho_factor(C)
    one = np.ones(m)
    Ci1, Ciy = linalg.cho_solve(cf, one), linalg.cho_solve(cf, y)
    quad = y @ Ciy - (one @ Ciy) ** 2 / (one @ Ci1)
    logdet = 2 * np.log(np.diag(cf[0])).sum()
    return -0.5 * ((m - 1) * np.log(2 * np.pi) + logdet + np.log(one @ Ci1) + quad)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_evidence_equals_the_dense_gaussian_process_likelihood(rng, kernel):
    est, X, Y = fitted(rng, v=2, kernel=kernel)
    fac = est.factorization_
    for zeta in (0.5, 20.0):
        fast = log_evidence_path(fac, ALPHAS, zeta=zeta)
        for k, a in enumerate(ALPHAS):
            for j in range(2):
                ref = dense_log_evidence(est, X, Y[:, j], a, zeta)
                assert abs(fast[k, j] - ref) < 1e-8 * abs(ref)
    # the default noise precision maximises the evidence at each alpha
    best = log_evidence_path(fac, ALPHAS)
    zeta = noise_precision(fac, ALPHAS)
    for s in (0.9, 1.1):
        assert np.all(log_evidence_path(fac, ALPHAS, zeta=zeta * s) < best)
    np.testing.assert_allclose(est.log_evidence(ALPHAS), best)


def test_predict_std_equals_the_dense_posterior(rng):
    est, X, Y = fitted(rng, v=2)
    T = rng.standard_normal((8, 3))
    a = est.alpha
    zeta = noise_precision(est.factorization_, a)[0]
    Zb = est.basis_vectors_
    K = est.kernel_(X, Zb)
    Zaug = np.hstack([K, np.ones((X.shape[0], 1))])
    Taug = np.hstack([est.kernel_(T, Zb), np.ones((8, 1))])
    for j in range(2):
        # posterior precision of [a, b]: zeta Z^T Z + mu blockdiag(K_BB, 0), mu = alpha zeta
        prec = zeta[j] * Zaug.T @ Zaug
        prec[:-1, :-1] += a * zeta[j] * est.kernel_(Zb, Zb)
        var_f = np.einsum("ti,ti->t", Taug, linalg.solve(prec, Taug.T).T)
        sor = dict(basis_residual=False)  # the weights' posterior alone (tests/test_predict_std_gp.py: the rest)
        assert rel_err(est.predict_std(T, noise=False, **sor)[:, j], np.sqrt(var_f)) < 1e-8
        assert rel_err(est.predict_std(T, **sor)[:, j], np.sqrt(var_f + 1 / zeta[j])) < 1e-8


@pytest.mark.parametrize("scoring", ["gcv", "evidence"])
def test_search_scores_the_alpha_path_by_gcv_or_evidence(rng, scoring):
    est, X, Y = fitted(rng, m=60)
    y = Y[:, 0]
    search = SparseLSSVRCV(param_space={"gamma": [0.3]}, alphas=ALPHAS, basis="random", n_basis=10,
                           random_state=0, scoring=scoring).fit(X, y)
    best = search.best_estimator_
    crit = best.gcv(ALPHAS) if scoring == "gcv" else -best.log_evidence(ALPHAS)
    assert best.alpha == ALPHAS[np.argmin(crit)]
    assert search.scoring_ == scoring
