"""A fixed-size model file serves the jackknife+ intervals of the fitted
estimator: the sparse model on its supported prototypes, whose leave-one-out
data the file keeps as for the sparse family."""

import numpy as np
import pytest

from lssvm import FixedSizeLSSVR, FixedSizeLSSVRCV
from lssvm.io import SavedModel, load_model, save_model


def _data(m=80, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    return X, np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=m)


def _saved(tmp_path, est, d):
    return load_model(save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(d), np.ones(d),
                                                                [f"x{j}" for j in range(d)], "y")))


@pytest.mark.parametrize("make", [
    lambda: FixedSizeLSSVR(gamma=0.7, alpha=0.05, n_basis=30, random_state=0),
    lambda: FixedSizeLSSVRCV(param_space={"gamma": [0.5, 1.0]}, alphas=[0.01, 0.1], n_basis=25, random_state=0),
])
def test_loaded_fixed_size_model_gives_the_fitted_intervals(tmp_path, make):
    X, y = _data()
    est = make().fit(X, y)
    loaded = _saved(tmp_path, est, X.shape[1])
    X_new = np.random.default_rng(1).normal(size=(7, 2))
    np.testing.assert_allclose(loaded.predict(X_new), est.predict(X_new), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loaded.predict_interval(X_new, 0.8), est.predict_interval(X_new, 0.8),
                               rtol=1e-8, atol=1e-10)


def test_fixed_size_intervals_from_the_file_match_explicit_jackknife_plus(tmp_path):
    """Brute force: refit the sparse model on the supported prototypes without each row."""
    from lssvm import SparseLSSVR

    X, y = _data(m=40)
    est = FixedSizeLSSVR(gamma=0.7, alpha=0.05, n_basis=15, random_state=0).fit(X, y)
    loaded = _saved(tmp_path, est, 2)
    Z = est.support_vectors_
    X_new = np.random.default_rng(2).normal(size=(5, 2))
    lo_models, hi_models = [], []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        ref = SparseLSSVR(gamma=0.7, alpha=0.05, basis=Z).fit(X[keep], y[keep])
        r = abs(y[i] - ref.predict(X[i:i + 1])[0])
        f = ref.predict(X_new)
        lo_models.append(f - r)
        hi_models.append(f + r)
    lo_models, hi_models = np.array(lo_models), np.array(hi_models)
    m, coverage = len(y), 0.8
    k_hi = int(np.ceil(coverage * (m + 1)))
    k_lo = m + 1 - k_hi
    lower = np.sort(lo_models, axis=0)[k_lo - 1]
    upper = np.sort(hi_models, axis=0)[k_hi - 1]
    np.testing.assert_allclose(loaded.predict_interval(X_new, coverage), np.c_[lower, upper], rtol=1e-7, atol=1e-7)
