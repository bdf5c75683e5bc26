"""Model files of a regressor with one alpha per target."""

import numpy as np
import pytest

from lssvm import SparseLSSVR
from lssvm.io import SavedModel, load_model, save_model


def _save_load(model, tmp_path):
    path = tmp_path / "m.npz"
    save_model(path, SavedModel(model, x_center=np.zeros(2), x_scale=np.ones(2), feature_names=["a", "b"],
                                target_name=None))
    return load_model(path)


def _data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2))
    return X, np.c_[np.sin(X[:, 0]), np.cos(X[:, 1])], rng.normal(size=(10, 2))


def test_alpha_per_target_model_file_predicts_as_the_model(tmp_path):
    X, Y, Xt = _data()
    model = SparseLSSVR(gamma=0.5, alpha=np.array([0.1, 10.0])).fit(X, Y)
    loaded = _save_load(model, tmp_path)
    np.testing.assert_allclose(loaded.predict(Xt), model.predict(Xt), atol=1e-12)
    with pytest.raises(Exception, match="fit"):  # no per-target LOO data in the file: a clear refusal
        loaded.predict_interval(Xt)


def test_one_element_alpha_model_file_keeps_intervals(tmp_path):
    X, Y, Xt = _data()
    model = SparseLSSVR(gamma=0.5, alpha=np.array([0.1])).fit(X, Y[:, 0])
    loaded = _save_load(model, tmp_path)
    np.testing.assert_allclose(loaded.predict(Xt), model.predict(Xt), atol=1e-12)
    np.testing.assert_allclose(np.asarray(loaded.predict_interval(Xt)),
                               np.asarray(model.predict_interval(Xt, method="jackknife+")), atol=1e-10)


def test_alpha_per_target_on_dask_input_is_refused_at_fit():
    da = pytest.importorskip("dask.array")
    X, Y, _ = _data()
    model = SparseLSSVR(gamma=0.5, basis="random", n_basis=10, random_state=0, alpha=np.array([0.1, 1.0]))
    with pytest.raises(ValueError, match="one alpha for all targets"):
        model.fit(da.from_array(X, chunks=10), da.from_array(Y, chunks=(10, 2)))
    assert not hasattr(model, "n_basis_")
