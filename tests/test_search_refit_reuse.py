"""The search's refit reuses the factorisation it scored at the chosen parameters
instead of factorising again; the model is the one a fresh fit gives, and anything that does not match
(data, targets, kernel, rows) is fitted afresh."""

import warnings

import numpy as np
import pytest

import lssvm.estimators._base as base
from lssvm import NumericalWarning, SearchEdgeWarning, SparseLSSVC, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.selection import SparseLSSVMCV


@pytest.fixture
def count_factorisations(monkeypatch):
    calls = []
    real = base.factorize_sparse_rls

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(base, "factorize_sparse_rls", counted)
    return calls


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore", SearchEdgeWarning)
    warnings.simplefilter("ignore", NumericalWarning)
    return w


def _data(rng, m=300):
    X = rng.standard_normal((m, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    return X, y


def test_refit_reuses_the_scored_factorisation_and_equals_a_fresh_fit(rng, count_factorisations):
    X, y = _data(rng)
    w = _quiet()
    try:
        est = SparseLSSVRCV(gamma="scale", basis="pchol", n_basis=60, ard=False, random_state=0).fit(X, y)
        assert count_factorisations == []  # the refit factorised nothing
        best = est.best_estimator_
        fresh = SparseLSSVR(gamma=est.gamma_, alpha=est.alpha_, basis=best.basis_indices_).fit(X, y)
    finally:
        w.__exit__(None, None, None)
    assert len(count_factorisations) == 1  # the fresh fit did
    np.testing.assert_array_equal(best.basis_indices_, fresh.basis_indices_)
    scale = np.abs(fresh.predict(X)).max()
    np.testing.assert_allclose(best.predict(X), fresh.predict(X), rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(best.loo_residuals(), fresh.loo_residuals(), rtol=0, atol=1e-8 * scale)
    # and the model is the one whose CV score is best_score_
    assert -np.mean(best.loo_residuals() ** 2) == pytest.approx(est.best_score_, rel=1e-10)


def test_classifier_refit_reuses_the_factorisation(rng, count_factorisations):
    X, y = _data(rng, 240)
    labels = np.where(y > 0, "up", "down")
    w = _quiet()
    try:
        est = SparseLSSVCCV(gamma="scale", basis="pchol", n_basis=50, ard=False, random_state=0).fit(X, labels)
        assert count_factorisations == []
        fresh = SparseLSSVC(gamma=est.gamma_, alpha=est.alpha_, basis=est.best_estimator_.basis_indices_).fit(X, labels)
    finally:
        w.__exit__(None, None, None)
    np.testing.assert_allclose(est.decision_function(X), fresh.decision_function(X), rtol=0, atol=1e-9)
    assert np.array_equal(est.predict(X), fresh.predict(X))


def test_no_refit_and_explicit_grids_keep_working(rng, count_factorisations):
    X, y = _data(rng, 150)
    w = _quiet()
    try:
        SparseLSSVRCV(gamma="scale", basis="random", n_basis=30, random_state=0, refit=False).fit(X, y)
        est = SparseLSSVRCV(gamma="scale", basis="random", n_basis=30, random_state=0,
                            param_space={"gamma": [0.1, 0.3, 1.0]}).fit(X, y)
    finally:
        w.__exit__(None, None, None)
    assert count_factorisations == []
    assert est.best_estimator_.n_basis_ == 30


def test_kept_factorisation_is_only_the_best_and_only_where_it_matches(rng, count_factorisations):
    X, y = _data(rng, 200)
    crit = SparseLSSVMCV(X, y, basis="random", n_basis=40, random_state=0, keep_best="mse",
                         alphas=np.logspace(-4, 1, 6))
    scores = {g: crit(gamma=g).mse.min() for g in (0.05, 0.5, 5.0)}
    best = min(scores, key=scores.get)
    assert all(crit.kept_factorization(gamma=g) is None for g in scores if g != best)
    kept = crit.kept_factorization(gamma=best)
    assert kept is not None and SparseLSSVMCV(X, y, basis="random", n_basis=40).kept_factorization(gamma=best) is None
    rows = kept.rows
    # a model that differs in targets, kernel or rows does not take it: it factorises its own problem
    for y_fit, gamma, basis in ((y + 1.0, best, rows), (y, 2 * best, rows), (y, best, rows[:-1])):
        before = len(count_factorisations)
        est = SparseLSSVR(gamma=gamma, alpha=0.01, basis=basis)
        est._kept_factorization = kept
        est.fit(X, y_fit)
        assert len(count_factorisations) == before + 1
        ref = SparseLSSVR(gamma=gamma, alpha=0.01, basis=basis).fit(X, y_fit)
        np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-12, atol=1e-12)
    est = SparseLSSVR(gamma=best, alpha=0.01, basis=rows)
    est._kept_factorization = kept
    est.fit(X, y)
    assert est.factorization_ is kept.fac and not hasattr(est, "_kept_factorization")


def test_default_basis_size_is_smaller_for_the_sparse_regressors(rng):
    """The sparse regressors' default pchol basis is capped at 500, the classifiers'
    (and every other family's) at 700; an explicit n_basis or another method is left alone."""
    from lssvm.basis import DEFAULT_REGRESSION_BASIS_CAP, default_basis_size, default_n_basis
    from lssvm.cli._cost import estimate_cost

    assert DEFAULT_REGRESSION_BASIS_CAP == 500
    assert [default_basis_size("pchol", None, m, False) for m in (1000, 2500, 3000, 10**6)] == [317, 500, 500, 500]
    assert default_basis_size("pchol", None, 10**6, True) is None  # pchol's own default, default_n_basis
    assert [default_n_basis(m) for m in (1000, 3000, 10**6)] == [317, 548, 700]
    assert default_basis_size("pchol", 650, 10**6, False) == 650 and default_basis_size("random", None, 10**6, False) is None
    assert default_n_basis(10**6) == 700
    m = 3000
    X = rng.standard_normal((m, 8))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.standard_normal(m)
    assert SparseLSSVR(gamma="scale", basis="pchol").fit(X, y).n_basis_ == 500
    assert SparseLSSVMCV(X, y, basis="pchol", random_state=0)._fixed.size == 500
    assert SparseLSSVMCV(X, y > 0, basis="pchol", random_state=0, classification=True)._fixed.size == 548
    assert estimate_cost("sparse", 20_000, 8, 5, 21, rate=1e10, classification=False).size == 500
    assert estimate_cost("sparse", 20_000, 8, 5, 21, rate=1e10, classification=True).size == 700
