"""``gamma="scale"`` on inputs whose variance is too small for a finite
width in float64: a clear error that names the rule, never a silent
constant kernel or a complaint about a width the user did not give."""

import numpy as np
import pytest
import scipy.sparse as sp

from lssvm import SparseLSSVR
from lssvm.kernels import gamma_scale


def _rows(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(30, 3)), rng.normal(size=30)


@pytest.mark.parametrize("factor", [1e-155, 1e-200])
def test_inputs_too_small_for_the_scale_rule_are_refused_clearly(factor):
    X, y = _rows()
    with pytest.raises(ValueError, match="gamma='scale'.*too small"):
        gamma_scale(X * factor)
    with pytest.raises(ValueError, match="gamma='scale'.*rescale the inputs"):
        SparseLSSVR().fit(X * factor, y)


def test_scale_rule_is_unchanged_on_ordinary_and_constant_inputs():
    X, _ = _rows()
    assert gamma_scale(X) == pytest.approx(1.0 / (3 * X.var()), rel=1e-15)
    assert gamma_scale(X * 1e-100) == pytest.approx(1e200 / (3 * X.var()), rel=1e-12)
    assert gamma_scale(np.full((5, 2), 7.0)) == 1.0
    assert gamma_scale(sp.csr_matrix((4, 3))) == 1.0
    weights = np.r_[np.ones(4), np.zeros(3)]  # the rows that vary carry no weight: constant inputs
    assert gamma_scale(np.r_[np.ones((4, 2)), np.arange(6.0).reshape(3, 2)], weights) == 1.0


def test_a_given_width_still_fits_tiny_inputs():
    X, y = _rows()
    scaled = SparseLSSVR(gamma=1.0 / (3 * X.var())).fit(X, y)
    tiny = SparseLSSVR(gamma=1.0 / (3 * X.var()) * 1e40).fit(X * 1e-20, y)
    np.testing.assert_allclose(tiny.loo_residuals(), scaled.loo_residuals(), rtol=1e-8, atol=1e-10)
