"""``predict_std`` is the Gaussian-process posterior of the model's kernel.

With every training row in the basis the sparse regressor is the full GP with
kernel ``k / mu``, noise ``1 / zeta`` and a flat prior on the intercept, so its
predictive standard deviation must equal

* the closed-form universal-kriging posterior (flat prior on the intercept),
* scikit-learn's ``GaussianProcessRegressor`` with a large constant kernel for
  the intercept, ``k / mu`` and a white-noise kernel, all fixed,

near the data and far from it (where the subset-of-regressors variance falls
to the intercept's spread alone), to 1e-6.  With a smaller basis the
variance is the deterministic-training-conditional one: the subset-of-regressors
variance plus the kernel's residual outside the basis, checked densely.
"""

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as SkRBF
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.exceptions import NumericalWarning
from lssvm.selection.evidence import noise_precision

TOL = 1e-6


def rel_err(a, b):
    return float(np.max(np.abs(a - b) / np.abs(b)))


def _friedman(rng, m=40, d=3):
    X = rng.uniform(-1.0, 1.0, size=(m, d))
    y = np.sin(np.pi * X[:, 0] * X[:, 1]) + 0.5 * X[:, 2] ** 2 + 0.1 * rng.standard_normal(m)
    return X, y


def _test_points(rng, X):
    near = X[:5] + 0.05 * rng.standard_normal((5, X.shape[1]))
    far = 6.0 + rng.standard_normal((5, X.shape[1]))  # kernel values ~ exp(-0.5 * 100): far from every row
    return near, far


def _kriging_std(X, y, T, gamma, mu, zeta, noise):
    """Universal kriging: GP ``k / mu`` plus noise ``1 / zeta``, intercept with a flat prior."""
    C = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1)) / mu + np.eye(len(X)) / zeta
    Kx = np.exp(-gamma * ((T[:, None] - X[None]) ** 2).sum(-1)) / mu  # (t, m)
    cf = linalg.cho_factor(C)
    CiK = linalg.cho_solve(cf, Kx.T)  # (m, t)
    Ci1 = linalg.cho_solve(cf, np.ones(len(X)))
    R = 1.0 - CiK.sum(axis=0)  # 1 - 1^T C^-1 k_x
    var = 1.0 / mu - np.einsum("mt,tm->t", CiK, Kx) + R**2 / Ci1.sum()
    return np.sqrt(var + (1.0 / zeta if noise else 0.0))


def _fit_full_basis(rng, gamma=0.7, alpha=0.05):
    X, y = _friedman(rng)
    est = SparseLSSVR(gamma=gamma, alpha=alpha, basis=np.arange(len(X))).fit(X, y)
    assert est.rank_ == len(X)  # the full GP: no range truncation
    zeta = float(noise_precision(est.factorization_, alpha)[0, 0])
    return est, X, y, alpha * zeta, zeta


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("noise", [True, False])
def test_full_basis_equals_universal_kriging_near_and_far(seed, noise):
    rng = np.random.default_rng(seed)
    est, X, y, mu, zeta = _fit_full_basis(rng)
    for T in _test_points(rng, X):
        want = _kriging_std(X, y, T, est.gamma, mu, zeta, noise)
        assert rel_err(est.predict_std(T, noise=noise), want) < TOL


@pytest.mark.parametrize("seed", [0, 1])
def test_full_basis_equals_scikit_learn_gaussian_process(seed):
    rng = np.random.default_rng(seed)
    est, X, y, mu, zeta = _fit_full_basis(rng)
    length = np.sqrt(0.5 / est.gamma)  # exp(-gamma r^2) = exp(-r^2 / (2 l^2))
    kernel = (ConstantKernel(1e6, "fixed") + ConstantKernel(1.0 / mu, "fixed") * SkRBF(length, "fixed")
              + WhiteKernel(1.0 / zeta, "fixed"))
    gp = GaussianProcessRegressor(kernel, alpha=0.0, optimizer=None).fit(X, y)
    for T in _test_points(rng, X):
        _, sk_std = gp.predict(T, return_std=True)  # the white kernel is in its diagonal: noise included
        assert rel_err(est.predict_std(T), sk_std) < TOL


def test_far_from_data_the_spread_returns_to_the_prior():
    rng = np.random.default_rng(3)
    est, X, y, mu, zeta = _fit_full_basis(rng)
    _, far = _test_points(rng, X)
    std = est.predict_std(far, noise=False)
    sor = est.predict_std(far, noise=False, basis_residual=False)
    # k(x, Z) = 0 there: the finite-weight posterior keeps the intercept's spread only, the same at every
    # far point, and the kernel's whole prior variance k(x, x) / mu = 1 / mu comes back on top of it
    assert np.ptp(sor) < 1e-12
    assert rel_err(std**2 - sor**2, np.full(len(far), 1.0 / mu)) < TOL
    assert np.all(std > 2.0 * sor)


@pytest.mark.parametrize("seed", [0, 1])
def test_small_basis_adds_the_dense_residual_to_the_dense_weight_posterior(seed):
    rng = np.random.default_rng(seed)
    X, y = _friedman(rng, m=60)
    est = SparseLSSVR(gamma=0.7, alpha=0.05, basis="random", n_basis=12, random_state=seed).fit(X, y)
    T = np.vstack(_test_points(rng, X))
    zeta = float(noise_precision(est.factorization_, est.alpha)[0, 0])
    mu = est.alpha * zeta
    Z = est.basis_vectors_
    Zaug = np.hstack([est.kernel_(X, Z), np.ones((len(X), 1))])
    Taug = np.hstack([est.kernel_(T, Z), np.ones((len(T), 1))])
    prec = zeta * Zaug.T @ Zaug
    prec[:-1, :-1] += mu * est.kernel_(Z, Z)
    sor = np.einsum("ti,it->t", Taug, linalg.solve(prec, Taug.T))
    Kt = est.kernel_(T, Z)
    residual = 1.0 - np.einsum("ti,it->t", Kt, linalg.solve(est.kernel_(Z, Z), Kt.T))
    assert rel_err(est.predict_std(T, noise=False), np.sqrt(sor + residual / mu)) < TOL
    assert rel_err(est.predict_std(T), np.sqrt(sor + residual / mu + 1.0 / zeta)) < TOL
    assert rel_err(est.predict_std(T, basis_residual=False), np.sqrt(sor + 1.0 / zeta)) < TOL


@pytest.mark.filterwarnings("ignore::lssvm.exceptions.SearchEdgeWarning")
def test_search_forwards_basis_residual():
    rng = np.random.default_rng(5)
    X, y = _friedman(rng)
    search = SparseLSSVRCV(param_space={"gamma": [0.7]}, alphas=[0.05, 0.5], basis="random", n_basis=10,
                           random_state=0).fit(X, y)
    T = np.vstack(_test_points(rng, X))
    for flag in (True, False):
        np.testing.assert_array_equal(search.predict_std(T, basis_residual=flag),
                                      search.best_estimator_.predict_std(T, basis_residual=flag))


def test_basis_residual_must_be_bool():
    rng = np.random.default_rng(6)
    X, y = _friedman(rng)
    est = SparseLSSVR(n_basis=10).fit(X, y)
    with pytest.raises(TypeError, match="basis_residual"):
        est.predict_std(X[:2], basis_residual="no")


def test_alpha_within_rounding_of_the_eigenvalues_warns():
    # every row in the basis: one centred direction has lambda = 0 exactly, computed as ~eps lambda_max,
    # so 1 / (lambda + alpha) is off by eps lambda_max / alpha (3e-4 measured against 50-digit arithmetic)
    rng = np.random.default_rng(7)
    X, y = _friedman(rng, m=8)
    T = np.vstack(_test_points(rng, X))
    with pytest.warns(NumericalWarning, match="accurate to about"):
        SparseLSSVR(gamma=0.5, alpha=1e-12, basis=np.arange(8)).fit(X, y).predict_std(T)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        SparseLSSVR(gamma=0.5, alpha=1e-3, basis=np.arange(8)).fit(X, y).predict_std(T)


def test_a_nearly_interpolating_fit_warns_about_its_noise_variance():
    # two rows, one basis point: the fit interpolates up to alpha, so S(alpha) = ||Yc||^2 - z^2 / (lambda + alpha)
    # is a difference of two equal numbers (4e-4 off against 34-digit arithmetic at alpha = 1e-12)
    X = np.array([[-0.42388896, -2.1104852, 0.93530501], [1.67470082, -0.12264699, -2.13102401]])
    y = np.array([-1.01521169, -0.37237288])
    with pytest.warns(NumericalWarning, match="accurate to about"):
        SparseLSSVR(kernel="linear", alpha=1e-12, basis=np.array([0])).fit(X, y).predict_std(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        SparseLSSVR(kernel="linear", alpha=1.0, basis=np.array([0])).fit(X, y).predict_std(X)


def test_the_basis_residual_magnified_by_a_tiny_alpha_warns():
    # at a basis point k(x, x) - ||k_B(x) W||^2 is 0 up to ~n eps, which 1 / mu = 1 / (alpha zeta) magnifies
    # (9e-5 off against 34-digit arithmetic at alpha = 1e-12 on duplicated rows)
    rng = np.random.default_rng(8)
    X, y = _friedman(rng, m=20)
    with pytest.warns(NumericalWarning, match="accurate to about"):
        SparseLSSVR(gamma=0.5, alpha=1e-12, basis=np.arange(5)).fit(X, y).predict_std(X[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        SparseLSSVR(gamma=0.5, alpha=1e-2, basis=np.arange(5)).fit(X, y).predict_std(X[:2])
