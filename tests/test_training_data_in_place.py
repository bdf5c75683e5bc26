"""A fitted model holds its training X and targets without a copy; modifying them in place
after the fit makes its exact-CV methods raise a clear error instead of mixing the fitted
model with the new values (and a model fitted on a copy, or refitted, answers as before)."""

from __future__ import annotations

import numpy as np
import pytest

from lssvm import FixedSizeLSSVR, NystromLSSVR, SparseLSSVC, SparseLSSVR, SparseLSSVRCV


def _data(seed, v=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    shape = (80,) if v is None else (80, v)
    y = np.sin(X[:, :1]).reshape(-1, 1)[:, 0] if v is None else np.sin(X @ rng.normal(size=(3, v)))
    return X, y + 0.1 * rng.normal(size=shape)


@pytest.mark.parametrize("make", [lambda: SparseLSSVR(n_basis=20, alpha=0.1),
                                  lambda: NystromLSSVR(n_basis=20, alpha=0.1),
                                  lambda: FixedSizeLSSVR(n_basis=20, alpha=0.1, solver="direct")])
@pytest.mark.parametrize("v", [None, 3])
@pytest.mark.parametrize("order", ["C", "F"])
def test_targets_modified_after_fit_raise(make, v, order):
    X, y = _data(0, v)
    y = np.array(y, order=order)
    model = make().fit(X, y)
    press, saved = model.press(), y.copy()
    y *= 10.0
    with pytest.raises(ValueError, match="modified in place"):
        model.press()
    with pytest.raises(ValueError, match="modified in place"):
        model.loo_residuals()
    with pytest.raises(ValueError, match="modified in place"):
        model.cv_error(cv=4)
    with pytest.raises(ValueError, match="modified in place"):
        model.predict_interval(X[:2])
    # restoring the values restores the model's answers
    y[...] = saved
    np.testing.assert_allclose(model.press(), press, rtol=1e-12)


def test_rows_modified_after_fit_raise():
    X, y = _data(1)
    model = SparseLSSVC(n_basis=20).fit(X, y > 0)
    X[0, 0] += 1.0
    with pytest.raises(ValueError, match="modified in place"):
        model.loo_residuals()


def test_per_target_alphas_with_targets_modified_after_fit_raise():
    X, Y = _data(2, 4)
    search = SparseLSSVRCV(alpha_per_target=True, n_basis=20, ard=False, param_space={},
                           alphas=np.geomspace(1e-3, 10, 5)).fit(X, Y)
    model = search.best_estimator_
    expected = model.press()
    # the best model's per-target methods equal explicit refits on a copy of the targets
    np.testing.assert_allclose(expected, SparseLSSVR(**model.get_params()).fit(X, Y.copy()).press(), rtol=1e-8)
    Y[:] = 3.0 * Y + 5.0
    for method in (model.press, model.loo_residuals, lambda: model.cv_error(cv=4)):
        with pytest.raises(ValueError, match="modified in place"):
            method()


def test_model_fitted_on_a_copy_is_unaffected():
    X, y = _data(3)
    y_fit = y.copy()
    model = SparseLSSVR(n_basis=20, alpha=0.1).fit(X, y_fit)
    press = model.press()
    y *= 10.0  # the caller's array, not the one fitted
    np.testing.assert_allclose(model.press(), press, rtol=0)


@pytest.mark.parametrize("make", [lambda: SparseLSSVR(n_basis=20, alpha=0.1, random_state=0),
                                  lambda: NystromLSSVR(n_basis=20, alpha=0.1, random_state=0),
                                  lambda: FixedSizeLSSVR(n_basis=20, alpha=0.1, solver="direct", random_state=0)])
def test_sample_weight_modified_after_fit_leaves_the_fitted_model(make):
    """The weights are the fitted model's: changing the caller's array in place after the fit does
    not change its exact-CV values, which stay those of an explicit refit on the weights fitted."""
    X, y = _data(4)
    weights = np.random.default_rng(4).uniform(0.5, 2.0, y.size)
    model = make().fit(X, y, sample_weight=weights)
    reference = make().fit(X, y, sample_weight=weights.copy())
    weights[:] = 1.0
    np.testing.assert_allclose(model.loo_residuals(), reference.loo_residuals(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.cv_predict(4), reference.cv_predict(4), rtol=1e-10, atol=1e-12)
