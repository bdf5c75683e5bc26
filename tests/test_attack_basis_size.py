"""n_basis="auto" with one alpha per target, and with row weights."""

import numpy as np
import pytest

from lssvm import SparseLSSVR


def _data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 1])] + 0.1 * rng.normal(size=(40, 2))
    return X, Y, rng.normal(size=(10, 2))


def test_auto_basis_with_alpha_per_target_matches_fits_on_its_rows():
    X, Y, Xt = _data()
    alphas = np.array([0.1, 1.0])
    model = SparseLSSVR(gamma=0.5, n_basis="auto", alpha=alphas).fit(X, Y)
    P = model.predict(Xt)
    for t, a in enumerate(alphas):
        single = SparseLSSVR(gamma=0.5, basis=model.basis_indices_, alpha=a).fit(X, Y[:, t])
        np.testing.assert_allclose(P[:, t], single.predict(Xt), atol=1e-10)


def test_auto_basis_with_sample_weight_is_a_clear_error():
    X, Y, _ = _data()
    with pytest.raises(ValueError, match="n_basis='auto'.*sample_weight"):
        SparseLSSVR(n_basis="auto").fit(X, Y[:, 0], sample_weight=np.ones(40))
