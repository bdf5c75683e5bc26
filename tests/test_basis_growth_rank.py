"""The growing basis of n_basis="auto" stops at the numerical rank the fit supports (K_BB's condition at
``rcond``), not at pivoted Cholesky's default relative-residual tolerance, which at wide kernel widths
stopped first; the fit at the grown size raises no numerical warning and reproduces the curve."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVR
from lssvm.basis import pivoted_cholesky
from lssvm.cv.basis_size import grow_basis
from lssvm.kernels import make_kernel


@pytest.mark.parametrize("gamma", [0.02, 0.05])
def test_growth_reaches_the_rank_the_fit_supports(gamma):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    kernel = make_kernel("rbf", gamma=gamma)
    default_tol = pivoted_cholesky(X, kernel, 300, random_state=0)
    at_rcond = pivoted_cholesky(X, kernel, 300, pivot_tol=1e-10, rcond=1e-10, random_state=0)
    assert default_tol.stop_reason == at_rcond.stop_reason == "singular"
    assert at_rcond.indices.size > default_tol.indices.size  # wide kernel: the residual floor binds first
    alpha = 1e-4
    curve = grow_basis(X, y, kernel, [alpha], random_state=0)
    assert curve.stop_reason == "singular"
    assert curve.pivots.size > default_tol.indices.size
    assert abs(curve.pivots.size - at_rcond.indices.size) <= 2
    # the fit on every grown pivot keeps them all (no range dropped, no warning) and its LOO error is the
    # curve's at that size
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        model = SparseLSSVR(kernel="rbf", gamma=gamma, alpha=alpha, basis=curve.pivots).fit(X, y)
    assert model.n_basis_ == curve.pivots.size
    np.testing.assert_allclose(np.mean(model.loo_residuals() ** 2), curve.cv_error[-1], rtol=1e-6)
