"""The ARD kernel: one width per feature."""

import numpy as np
import pytest

from lssvm import SparseLSSVR
from lssvm.io import SavedModel, load_model, save_model
from lssvm.kernels import ARD, RBF, kernel_from_dict, make_kernel


def test_equal_widths_equal_rbf():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    np.testing.assert_allclose(ARD(gamma=[0.3] * 4)(X, Z), RBF(0.3)(X, Z), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(make_kernel("ard", gamma=0.3)(X, Z), RBF(0.3)(X, Z), rtol=1e-12, atol=1e-14)


def test_widths_weight_each_feature_against_brute_force():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(50, 3)), rng.normal(size=(7, 3))
    g = np.array([0.1, 2.0, 0.01])
    brute = np.exp(-(((X[:, None, :] - Z[None, :, :]) ** 2) * g).sum(axis=2))
    np.testing.assert_allclose(ARD(g)(X, Z), brute, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("gamma", [0.0, -1.0, np.nan, np.inf, [1.0, -2.0], [], [[1.0]], "wide", True])
def test_bad_widths_are_refused(gamma):
    with pytest.raises(ValueError, match="gamma of the 'ard' kernel"):
        make_kernel("ard", gamma=gamma)


def test_wrong_number_of_widths_is_refused_at_fit():
    X = np.random.default_rng(2).normal(size=(30, 3))
    with pytest.raises(ValueError, match="has 2 widths but the data have 3 features"):
        SparseLSSVR(kernel="ard", gamma=[1.0, 2.0], basis="random", n_basis=10, random_state=0).fit(X, X[:, 0])


def test_dict_round_trip_and_model_file(tmp_path):
    k = ARD([0.5, 2.0])
    assert kernel_from_dict(k.to_dict()) == k
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0])
    est = SparseLSSVR(kernel="ard", gamma=np.array([0.5, 0.01]), alpha=0.1, basis="random", n_basis=20,
                      random_state=0).fit(X, y)
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "y"))
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.estimator.kernel_.gamma, [0.5, 0.01])
    np.testing.assert_allclose(loaded.estimator.predict(X), est.predict(X), rtol=1e-12)
