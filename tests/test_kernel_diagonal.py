"""Squared distances exact on identical rows, so the RBF
and Laplacian kernels give k(x, x) = 1 at any width."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVR
from lssvm.kernels import RBF, Laplacian, squared_distances


def _brute_sq(X, Z):
    return ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)


@pytest.mark.parametrize("offset", [0.0, 5.0, 1e4])
def test_item9_squared_distances_exact_zero_and_never_negative(offset):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4)) * 3 + offset
    Z = np.vstack([X[:7], X[3:5] + 1e-9, rng.normal(size=(5, 4)) + offset])
    D = squared_distances(X, Z)
    assert np.all(D >= 0)
    for j in range(7):
        assert D[j, j] == 0.0
    # near-duplicates get their true tiny distance, not round-off
    np.testing.assert_allclose(D[3:5, 7:9].diagonal(), 4e-18, rtol=1e-3)
    np.testing.assert_allclose(D, _brute_sq(X, Z), rtol=1e-10, atol=1e-9 * (1 + offset**2) * 1e-3)


@pytest.mark.parametrize("kernel", [RBF(1e14), RBF(1e16), Laplacian(1e14)])
def test_item9_kernel_diagonal_is_one_for_huge_gamma(kernel):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) * 2 + 3
    K = kernel(X, X)
    assert np.all(np.diag(K) == 1.0)
    assert np.all(kernel(X[5:9], X)[np.arange(4), np.arange(5, 9)] == 1.0)


def test_item9_no_spurious_rank_warning_for_huge_gamma():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2)) * 100
    y = rng.normal(size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        model = SparseLSSVR(kernel="rbf", gamma=1e14, alpha=1.0, basis=np.arange(10)).fit(X, y)
    assert model.rank_ == 10
