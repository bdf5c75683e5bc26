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


def _explicit_cv_paths(X, Y, basis_rows, gamma, alphas, splits):
    """Per-target CV MSE (A, v) from explicit refits on each fold, the basis points of held-out rows removed."""
    sse = np.zeros((alphas.size, Y.shape[1]))
    for train, test in splits:
        keep = basis_rows[~np.isin(basis_rows, test)]
        est = SparseLSSVR(gamma=gamma, basis=X[keep]).fit(X[train], Y[train])
        a, b = est.factorization_.coef(alphas)  # (A, n, v), (A, v): the fold's fit at every alpha
        F = np.einsum("hn,anv->ahv", est.kernel_(X[test], est.basis_vectors_), a) + b[:, None, :]
        sse += ((F - Y[test]) ** 2).sum(axis=1)
    return sse / X.shape[0]


@pytest.mark.parametrize("splitter", ["kfold", "group_kfold", "leave_one_group_out"])
def test_alpha_per_target_is_each_targets_argmin_of_explicit_refits(splitter):
    from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut

    from lssvm import SparseLSSVRCV

    rng = np.random.default_rng({"kfold": 1, "group_kfold": 2, "leave_one_group_out": 3}[splitter])
    X, Y = _targets(rng, 90, 60)
    groups = rng.integers(0, 4, 90)
    cv = {"kfold": KFold(5, shuffle=True, random_state=0), "group_kfold": GroupKFold(4),
          "leave_one_group_out": LeaveOneGroupOut()}[splitter]
    basis_rows = np.sort(rng.choice(90, 25, replace=False))
    alphas = np.geomspace(1e-3, 1e2, 7)
    gammas = [0.2, 1.0]
    search = SparseLSSVRCV(alphas=alphas, param_space={"gamma": gammas}, cv=cv, basis=basis_rows,
                           alpha_per_target=True, store_cv_results=True, n_targets_batch=17)
    with pytest.warns(UserWarning):  # the best gamma on an edge of the two-point grid
        search.fit(X, Y, groups=groups)
    splits = list(cv.split(X, Y, groups))
    paths = {g: _explicit_cv_paths(X, Y, basis_rows, g, alphas, splits) for g in gammas}
    means = {g: p.min(axis=0).mean() for g, p in paths.items()}
    best_gamma = min(means, key=means.get)
    assert search.best_params_["gamma"] == best_gamma
    path = paths[best_gamma]
    np.testing.assert_array_equal(search.alpha_, alphas[np.argmin(path, axis=0)])
    np.testing.assert_allclose(search.best_score_per_target_, -path.min(axis=0), rtol=1e-7)
    np.testing.assert_allclose(search.best_score_, -means[best_gamma], rtol=1e-7)
    stored = search.cv_results_["per_target_test_mse"]
    rows = search.cv_results_["param_gamma"] == best_gamma
    np.testing.assert_allclose(stored[rows], path, rtol=1e-7)
    # the refitted model predicts as one fit per target at that target's alpha
    X_new = rng.normal(size=(12, 3))
    F = search.predict(X_new)
    for t in range(0, Y.shape[1], 7):
        single = SparseLSSVR(gamma=best_gamma, alpha=search.alpha_[t], basis=basis_rows).fit(X, Y[:, t])
        np.testing.assert_allclose(F[:, t], single.predict(X_new), rtol=1e-8, atol=1e-10)


def test_alpha_per_target_with_every_row_in_the_basis_equals_ridge_cv():
    # K = Phi Phi^T: the sparse LS-SVM with every row in the basis is ridge regression on Phi with an
    # unpenalised intercept, and its exact LOO is RidgeCV's (which refits the intercept too)
    from sklearn.linear_model import RidgeCV

    from lssvm import SparseLSSVRCV

    rng = np.random.default_rng(8)
    X, Y = _targets(rng, 70, 120)
    gamma, alphas = 1.0, np.geomspace(1e-3, 1e2, 11)
    search = SparseLSSVRCV(alphas=alphas, param_space={}, gamma=gamma, cv="loo", basis=np.arange(70),
                           alpha_per_target=True).fit(X, Y)
    K = search.best_estimator_.kernel_(X, X)
    s, U = np.linalg.eigh(K)
    Phi = U * np.sqrt(np.maximum(s, 0.0))
    ridge = RidgeCV(alphas=alphas, alpha_per_target=True, fit_intercept=True).fit(Phi, Y)
    np.testing.assert_array_equal(search.alpha_, ridge.alpha_)
    np.testing.assert_allclose(search.predict(X), ridge.predict(Phi), rtol=1e-7, atol=1e-8)


def test_alpha_per_target_refuses_what_it_cannot_do():
    from lssvm import SparseLSSVCCV, SparseLSSVRCV

    rng = np.random.default_rng(4)
    X, Y = _targets(rng, 40, 3)
    with pytest.raises(ValueError, match="scoring must be 'mse'"):
        SparseLSSVRCV(alpha_per_target=True, scoring="gcv", param_space={}).fit(X, Y)
    with pytest.raises(ValueError, match="not 'gradient'"):
        SparseLSSVRCV(alpha_per_target=True, search="gradient").fit(X, Y)
    with pytest.raises(ValueError, match="for regression"):
        SparseLSSVCCV(alpha_per_target=True, param_space={}).fit(X, Y[:, 0] > 0)
