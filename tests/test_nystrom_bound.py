"""Paper 003's model-approximation error bound (Theorem 3, re-derived a
posteriori in lssvm.solvers.nystrom): it must hold for every fit against the
dense LS-SVM on the full kernel matrix, and ||K - K~|| must be measured right."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from test_nystrom import dual_solve

from lssvm import NystromLSSVC, NystromLSSVR
from lssvm.solvers.nystrom import model_error_bound, nystrom_factorize, nystrom_kernel_error

# Slack for rounding only: the quantities compared are O(1) to O(1/delta^2)
# and are computed by backward-stable solves in double precision.
SLACK = 1e-8


def problem(seed, n, c, k, gamma):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(n)
    K = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
    S = rng.choice(n, c, replace=False)
    fac = nystrom_factorize(K[:, S], K[np.ix_(S, S)], y[:, None], rank=k)
    return K, y, fac


@pytest.mark.parametrize("seed", range(3))
def test_kernel_error_trace_and_lanczos_match_dense_norms(seed):
    K, _, fac = problem(seed, 80, 20, 10, 0.7)
    E = K - fac.kernel()
    spectral = nystrom_kernel_error(fac, np.diag(K), lambda v: K @ v, method="spectral")
    trace = nystrom_kernel_error(fac, np.diag(K), method="trace")
    assert abs(trace - np.trace(E)) < 1e-10 * np.trace(K)
    true = np.linalg.norm(E, 2)
    assert true <= spectral * (1 + 1e-9)
    assert spectral < true * (1 + 1e-6)
    assert spectral <= trace


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(15, 70), cfrac=st.floats(0.1, 1.0), kfrac=st.floats(0.2, 1.0),
       log_gamma=st.floats(-3, 1), log_delta=st.floats(-4, 2))
def test_coefficient_bounds_hold_against_the_dense_ls_svm(seed, n, cfrac, kfrac, log_gamma, log_delta):
    c = max(1, int(cfrac * n))
    k = max(1, int(kfrac * c))
    K, y, fac = problem(seed, n, c, k, 10.0**log_gamma)
    delta = 10.0**log_delta
    eps = nystrom_kernel_error(fac, np.diag(K), method="trace")
    da, db = model_error_bound(fac, delta, eps)
    a_t, b_t, _ = fac.solve(delta)
    a, b = dual_solve(K, y, delta)
    scale = 1 + np.linalg.norm(a) + abs(b)
    assert np.linalg.norm(a - a_t[:, 0]) <= da[0] + SLACK * scale
    assert abs(b - b_t[0]) <= db[0] + SLACK * scale


@pytest.mark.parametrize("predictor", ["exact", "low-rank"])
@pytest.mark.parametrize("kernel_error", ["trace", "spectral"])
@pytest.mark.parametrize("alpha", [1e-2, 1.0])
def test_estimator_bound_holds_at_points_and_uniformly(rng, predictor, kernel_error, alpha):
    n = 90
    X = rng.uniform(-2, 2, (n, 2))
    y = np.column_stack([np.sin(2 * X[:, 0]), X[:, 1] ** 2]) + 0.1 * rng.standard_normal((n, 2))
    Xt = rng.uniform(-3, 3, (40, 2))
    est = NystromLSSVR(gamma=1.5, alpha=alpha, n_basis=25, rank=15, predictor=predictor,
                       random_state=0).fit(X, y)
    K = np.exp(-1.5 * cdist(X, X, "sqeuclidean"))
    Kt = np.exp(-1.5 * cdist(Xt, X, "sqeuclidean"))
    exact = np.column_stack([Kt @ a + b for a, b in (dual_solve(K, y[:, j], alpha) for j in range(2))])
    gap = np.abs(est.predict(Xt) - exact)
    pointwise = est.approximation_bound(Xt, kernel_error=kernel_error)
    uniform = est.approximation_bound(kernel_error=kernel_error)
    assert pointwise.shape == (40, 2) and uniform.shape == (2,)
    assert np.all(gap <= pointwise + SLACK)
    assert np.all(pointwise <= uniform * (1 + 1e-12))
    assert np.all(gap.max(axis=0) <= uniform)


def test_bound_vanishes_when_nothing_is_approximated(rng):
    X = rng.standard_normal((40, 2))
    y = np.sign(X[:, 0])
    est = NystromLSSVC(gamma=0.5, alpha=0.1, n_basis=40, rank=40, random_state=0).fit(X, y)
    assert est.kernel_error("spectral") < 1e-8
    assert est.approximation_bound(kernel_error="spectral") < 1e-5


def test_bound_grows_with_the_kernel_error(rng):
    X = rng.standard_normal((100, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(100)
    bounds = [NystromLSSVR(gamma=0.5, alpha=0.1, n_basis=c, rank=c, random_state=0).fit(X, y)
              .approximation_bound(kernel_error="spectral") for c in (5, 60)]
    assert bounds[1] < bounds[0]


def test_bound_input_errors(rng):
    X = rng.standard_normal((30, 2))
    y = X[:, 0]
    est = NystromLSSVR(kernel="linear", alpha=0.1, n_basis=10).fit(X, y)
    with pytest.raises(ValueError, match="unbounded"):
        est.approximation_bound()
    assert est.approximation_bound(X[:3]).shape == (3,)
    with pytest.raises(ValueError, match="kernel_error"):
        est.approximation_bound(X[:3], kernel_error=-1.0)
    with pytest.raises(ValueError, match="method"):
        est.kernel_error("frobenius")
