"""One alpha per target: ``SparseLSSVR(alpha=array)`` against one fit per target,
and ``SparseLSSVRCV(alpha_per_target=True)`` against explicit refits on each fold
and scikit-learn's ``RidgeCV(alpha_per_target=True)``."""

from __future__ import annotations

import numpy as np
import pytest

from lssvm import SparseLSSVR


def _targets(rng, m, v, d=3):
    X = rng.normal(size=(m, d))
    noise = rng.permutation(np.geomspace(0.02, 3.0, v))  # signal-to-noise spread widely over the targets
    Y = np.sin(X @ rng.normal(size=(d, v))) + noise * rng.normal(size=(m, v))
    return X, Y


METHODS = [
    ("predict", lambda X: (X,)),
    ("predict_std", lambda X: (X,)),
    ("predict_interval", lambda X: (X,)),
    ("loo_residuals", lambda X: ()),
    ("press", lambda X: ()),
    ("cv_predict", lambda X: (4,)),
    ("cv_error", lambda X: (4,)),
    ("holdout_predict", lambda X: (np.arange(10),)),
    ("gcv", lambda X: ()),
    ("log_evidence", lambda X: ()),
]


def test_alpha_array_equals_one_fit_per_target():
    rng = np.random.default_rng(21)
    X, Y = _targets(rng, 120, 9)
    basis = rng.choice(120, 35, replace=False)
    alpha = rng.choice(np.geomspace(1e-3, 1e2, 5), 9)  # repeated values: groups of targets share an alpha
    model = SparseLSSVR(gamma=0.5, alpha=alpha, basis=basis).fit(X, Y)
    X_new = rng.normal(size=(15, 3))
    for t in range(Y.shape[1]):
        single = SparseLSSVR(gamma=0.5, alpha=alpha[t], basis=basis).fit(X, Y[:, t])
        np.testing.assert_allclose(model.dual_coef_[:, t], single.dual_coef_, rtol=1e-9, atol=1e-10)
        for name, args in METHODS:
            got = np.asarray(getattr(model, name)(*args(X_new)))[..., t]
            want = getattr(single, name)(*args(X_new))
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10, err_msg=name)
    # an alpha given to a method is a path for every target, as with a scalar fitted alpha
    assert model.press(np.array([0.1, 1.0])).shape == (2, 9)


def test_alpha_array_must_match_the_targets():
    rng = np.random.default_rng(2)
    X, Y = _targets(rng, 40, 3)
    with pytest.raises(ValueError, match="alpha holds 2 values but y has 3 target"):
        SparseLSSVR(alpha=[1.0, 2.0]).fit(X, Y)
    with pytest.raises(ValueError, match="finite values > 0"):
        SparseLSSVR(alpha=[1.0, -2.0, 1.0]).fit(X, Y)
    with pytest.raises(ValueError, match="single number"):
        SparseLSSVR(alpha=np.ones((3, 1))).fit(X, Y)
