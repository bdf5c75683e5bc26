import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics.pairwise import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)

from lssvm.kernels import RBF, Laplacian, Linear, Polynomial, make_kernel, squared_distances

from conftest import rel_err


@pytest.mark.parametrize(
    "kernel, reference",
    [
        (RBF(gamma=0.7), lambda X, Z: rbf_kernel(X, Z, gamma=0.7)),
        (Laplacian(gamma=0.3), lambda X, Z: laplacian_kernel(X, Z, gamma=0.3)),
        (Linear(), linear_kernel),
        (Polynomial(gamma=0.5, degree=3, coef0=2.0), lambda X, Z: polynomial_kernel(X, Z, degree=3, gamma=0.5, coef0=2.0)),
    ],
)
@pytest.mark.parametrize("block_size", [1, 7, 4096])
def test_kernels_match_scikit_learn(rng, kernel, reference, block_size):
    X = rng.standard_normal((23, 4))
    Z = rng.standard_normal((9, 4))
    K = kernel(X, Z, block_size=block_size)
    assert K.shape == (23, 9)
    assert rel_err(K, reference(X, Z)) < 1e-13
    assert rel_err(kernel.diag(X), np.diag(reference(X, X))) < 1e-13


def test_squared_distances_reused_across_widths(rng):
    X = rng.standard_normal((30, 3))
    Z = rng.standard_normal((11, 3))
    D = squared_distances(X, Z, block_size=8)
    for gamma in (0.01, 0.5, 10.0):
        assert rel_err(RBF(gamma).from_squared_distances(D), rbf_kernel(X, Z, gamma=gamma)) < 1e-13


def test_squared_distances_accurate_far_from_origin(rng):
    # the |x|^2 + |z|^2 - 2 x.z expansion loses every digit here without the shift
    X = 1e6 + rng.standard_normal((20, 3))
    Z = 1e6 + rng.standard_normal((5, 3))
    D = squared_distances(X, Z)
    assert rel_err(D, cdist(X, Z, "sqeuclidean")) < 1e-9
    assert np.all(D >= 0)


def test_make_kernel_validates():
    assert make_kernel("rbf", gamma=2.0) == RBF(2.0)
    assert make_kernel("poly", gamma=1.0, degree=2, coef0=0.0) == Polynomial(1.0, 2, 0.0)
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("sigmoid")
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        make_kernel("rbf", gamma=0.0)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        make_kernel("laplacian", gamma=float("nan"))
    with pytest.raises(ValueError, match="degree must be an integer"):
        make_kernel("poly", degree=0)
    with pytest.raises(ValueError, match="same number of columns"):
        RBF()(np.ones((2, 3)), np.ones((2, 2)))
