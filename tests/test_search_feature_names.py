"""A search fitted on a DataFrame predicts as scikit-learn's searches do: the same columns give the refitted
model's predictions without a warning, and columns in another order are refused (they would silently be
read as the fitted ones), in every method that passes X on to the refitted model."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from lssvm import FixedSizeLSSVRCV, NystromLSSVRCV, SparseLSSVCCV, SparseLSSVRCV

_GAMMAS = {"gamma": [0.1, 1.0]}


def _frame(seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    return X, X["a"].to_numpy() + 0.1 * rng.normal(size=40)


@pytest.mark.parametrize("make", [lambda: SparseLSSVRCV(param_space=_GAMMAS, n_basis=20, ard=False),
                                  lambda: SparseLSSVRCV(n_basis=20, time_budget=5),
                                  lambda: NystromLSSVRCV(param_space=_GAMMAS, n_basis=20),
                                  lambda: FixedSizeLSSVRCV(param_space=_GAMMAS, cv=3, alphas=[0.1, 1.0])])
def test_regressor_search_checks_the_columns_it_was_fitted_on(make):
    X, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = make().fit(X, y)
    expected = search.best_estimator_.kernel_expansion()(X.to_numpy())[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no warning that the model has no feature names
        np.testing.assert_allclose(search.predict(X), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="feature names"):
        search.predict(X[["c", "b", "a"]])


def test_classifier_search_checks_the_columns_it_was_fitted_on():
    X, y = _frame(1)
    labels = np.where(y > 0, "up", "down")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVCCV(param_space=_GAMMAS, n_basis=20, ard=False).fit(X, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        search.predict(X)
        search.decision_function(X)
        search.predict_proba(X)
    for method in (search.predict, search.decision_function, search.predict_proba):
        with pytest.raises(ValueError, match="feature names"):
            method(X[["b", "a", "c"]])
