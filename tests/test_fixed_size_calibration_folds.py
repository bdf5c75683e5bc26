"""A fixed-size classifier whose size is chosen by v-fold CV calibrates on the out-of-fold values of
that selection's fold models at the chosen size: checked against explicit refits of each fold model
(SCDP on the fold's training rows, the same prototype pool, grown to the chosen size) on fresh
random data, and Platt's map against :func:`fit_platt` on those values."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR
from lssvm.estimators._calibration import fit_platt


def _data(seed, m=90, k=2):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % k
    X = rng.standard_normal((m, 2)) + 1.2 * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
    return X, np.array(["b", "a", "c"])[y]


def _params(solver):
    return dict(gamma=0.5, alpha=1.0, basis="random", n_basis=20, random_state=0, solver=solver, nu=1e-8)


def _refit_held_out(est, X, y, folds, solver):
    """Each fold's model refitted on its training rows (coded one-vs-rest targets, as the fit codes them),
    at the fitted prototype pool and each output's chosen size; its values on the fold's rows."""
    codes = np.searchsorted(est.classes_, y)
    Y = (np.where(codes == 1, 1.0, -1.0)[:, None] if est.classes_.size == 2 else
         np.where(codes[:, None] == np.arange(est.classes_.size), 1.0, -1.0))
    sizes = np.atleast_1d(est.model_size_)
    F = np.empty(Y.shape)
    for _, test in folds:
        train = np.setdiff1d(np.arange(X.shape[0]), test)
        for j in range(Y.shape[1]):
            fold_model = FixedSizeLSSVR(**{**_params(solver), "basis": est.basis_vectors_, "n_basis": None},
                                        cv=None, max_size=int(sizes[j])).fit(X[train], Y[train, j])
            F[test, j] = fold_model.predict(X[test])
    return F


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("solver", ["scdp", "scdpp"])
def test_calibration_values_are_the_size_folds_out_of_fold_values(seed, k, solver):
    X, y = _data(seed, k=k)
    est = FixedSizeLSSVC(**_params(solver), cv=4).fit(X, y)
    folds = list(StratifiedKFold(4).split(X, y))  # an int cv: unshuffled stratified folds
    F, codes = est._held_out
    want = _refit_held_out(est, X, y, folds, solver)
    scale = np.abs(want).max()
    np.testing.assert_allclose(F, want, rtol=0, atol=1e-8 * scale)
    if k == 2:  # Platt's map on those values
        A, B = fit_platt(want[:, 0], codes == 1)
        np.testing.assert_allclose(est.calibrators_[0].params, [A, B], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)


def test_without_size_cv_the_support_models_loo_values():
    X, y = _data(0)
    est = FixedSizeLSSVC(**_params("scdp"), cv=None, max_size=10).fit(X, y)
    assert est._fold_decisions is None
    F = est._held_out[0]
    np.testing.assert_allclose(F, est.loo_decision_function()[:, None], rtol=1e-10, atol=1e-12)
    # an explicit calibration_cv is not the size selection's folds
    est = FixedSizeLSSVC(**_params("scdp"), cv=4, calibration_cv=3).fit(X, y)
    assert est._fold_decisions is None
