"""search="gradient" at the library's defaults: the default basis
("auto": "random" for the gradient search, "pchol" otherwise), basis="pchol" under the gradient search
(the pivoted-Cholesky rows of the best isotropic grid point, then fixed) and the default evaluation budget
per L-BFGS-B start."""

import numpy as np
import pytest

import lssvm.estimators.gradient_search as gs
from lssvm import SparseLSSVCCV, SparseLSSVRCV
from lssvm.basis import default_basis_size, select_basis
from lssvm.kernels import make_kernel
from lssvm.selection import cv_error_and_gradient


def _data(m=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.sin(1.5 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=m)
    return X, y


@pytest.fixture
def caps(monkeypatch):
    """The ``maxfun`` of every L-BFGS-B run of the gradient search."""
    seen = []
    real = gs.minimize

    def spy(*args, **kw):
        seen.append(kw["options"]["maxfun"])
        return real(*args, **kw)

    monkeypatch.setattr(gs, "minimize", spy)
    return seen


def test_the_ard_search_at_the_defaults_fits_on_a_random_basis(caps):
    X, y = _data()
    est = SparseLSSVRCV(kernel="ard", search="gradient", random_state=0).fit(X, y)
    # parameters untouched (scikit-learn's rule); fitted attributes say what was used
    assert est.basis == "auto" and est.max_evaluations is None
    # n_basis=None: min(300, ceil(10 sqrt(m)), m) rows, 110 at m = 120
    assert est.gradient_basis_["basis"] == "random" and est.gradient_basis_["n_basis"] == 110
    # the default budget: max(60, 3 (d + 1)) per start, for every L-BFGS-B run
    assert est.max_evaluations_ == 60 and caps and set(caps) == {60}
    same = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=110, random_state=0,
                         max_evaluations=60).fit(X, y)
    np.testing.assert_array_equal(est.basis_rows_, same.basis_rows_)
    # the same widths; to rounding only: two BLAS threads sum in either order, and L-BFGS-B carries
    # that 1e-9 difference (8e-9 relative seen on the 2-core CI machine)
    np.testing.assert_allclose(est.gamma_, same.gamma_, rtol=1e-6)
    np.testing.assert_array_equal(est.best_estimator_.basis_indices_, est.basis_rows_)


def test_auto_is_pchol_for_the_grid():
    X, y = _data(m=80)
    grid = dict(param_space={"gamma": [0.1, 0.5]}, random_state=0)
    a, b = SparseLSSVRCV(**grid).fit(X, y), SparseLSSVRCV(basis="pchol", **grid).fit(X, y)
    assert a.basis == "auto"
    np.testing.assert_array_equal(a.best_estimator_.basis_indices_, b.best_estimator_.basis_indices_)
    assert a.best_params_ == b.best_params_


def test_pchol_is_drawn_at_the_best_grid_point_then_fixed(caps):
    X, y = _data()
    est = SparseLSSVRCV(kernel="ard", search="gradient", basis="pchol", n_basis=None, random_state=0,
                        param_space={"gamma": 2.0 ** np.arange(-5, 1)}, max_evaluations=20, n_restarts=1).fit(X, y)
    g0 = est.grid_best_params_["gamma"]
    seed = est.gradient_basis_["random_state"]
    assert est.gradient_basis_ == {"basis": "pchol", "gamma": g0, "n_basis": est.basis_rows_.size, "random_state": seed}
    expected = select_basis(X, make_kernel("rbf", gamma=g0), "pchol", default_basis_size("pchol", None, 120, False),
                            tol=est.basis_tol, pivot_tol=est.pivot_tol, rcond=est.rcond, random_state=seed).indices
    np.testing.assert_array_equal(est.basis_rows_, expected)
    np.testing.assert_array_equal(est.best_estimator_.basis_indices_, expected)
    assert est.max_evaluations_ == 20 and set(caps) == {20}
    # the rows stay fixed: every LOO point of the trace is the exact LOO error on those rows
    tr = est.gradient_trace_
    loo = np.flatnonzero(tr["search"] == "loo")
    assert loo.size > 5
    for i in loo[[0, loo.size // 2, -1]]:
        theta = tr["theta"][i]
        value, _ = cv_error_and_gradient(X, y, expected, "ard", {"gamma": np.exp(theta[:-1])}, float(np.exp(theta[-1])),
                                         rcond=gs.SEARCH_RCOND)
        assert tr["mse"][i] == pytest.approx(value, rel=1e-9)


def test_the_classifier_default_call_uses_the_same_basis_rule():
    X, y = _data(m=100)
    clf = SparseLSSVCCV(kernel="ard", search="gradient", basis="pchol", n_basis=40, random_state=0,
                        param_space={"gamma": 2.0 ** np.arange(-4, 1)}, max_evaluations=8).fit(X, y > 0)
    g0 = clf.grid_best_params_["gamma"]
    expected = select_basis(X, make_kernel("rbf", gamma=g0), "pchol", 40, tol=clf.basis_tol, pivot_tol=clf.pivot_tol,
                            rcond=clf.rcond, random_state=clf.gradient_basis_["random_state"]).indices
    np.testing.assert_array_equal(clf.basis_rows_, expected)
    assert clf.max_evaluations_ == 8 and clf.score(X, y > 0) > 0.8
    auto = SparseLSSVCCV(kernel="ard", search="gradient", random_state=0, param_space={"gamma": [0.1, 0.5]},
                         max_evaluations=5, n_restarts=0).fit(X, y > 0)
    assert auto.basis == "auto" and auto.gradient_basis_["basis"] == "random" and auto.basis_rows_.size == 100


def test_the_budget_rule_and_an_explicit_budget(caps):
    assert gs.gradient_evaluations(None, 1) == 60
    assert gs.gradient_evaluations(None, 19) == 60
    assert gs.gradient_evaluations(None, 20) == 63
    assert gs.gradient_evaluations(None, 32) == 99
    assert gs.gradient_evaluations(7, 32) == 7
    from lssvm.estimators.gradient_search import auto_basis

    assert [auto_basis("auto", None, m)[1] for m in (120, 2000, 4000)] == [110, 300, 300]
    assert auto_basis("auto", 50, 2000) == ("random", 50) and auto_basis("kcenter", None, 2000) == ("kcenter", None)
    X, y = _data(m=80, d=25)
    X[:, 3] = 1.0  # a constant column has no width to tune: 24 widths, so 3 (24 + 1)
    params = dict(kernel="ard", search="gradient", basis="random", n_basis=20, random_state=0, n_restarts=0,
                  param_space={"gamma": [0.05, 0.2]}, alphas=np.logspace(-3, 0, 4))
    est = SparseLSSVRCV(**params).fit(X, y)
    assert est.max_evaluations_ == 75 and set(caps) == {75}
    caps.clear()
    est = SparseLSSVRCV(**params, max_evaluations=7).fit(X, y)
    assert est.max_evaluations_ == 7 and set(caps) == {7}
    assert np.sum(est.gradient_trace_["start"] == 0) <= 7 * (gs.ALPHA_REFINEMENTS + 1) + 1


def test_nelder_mead_default_budget_stays_30(monkeypatch):
    import lssvm.estimators.search_cv as scv

    seen = []
    real = scv.nelder_mead_search

    def spy(*args, **kw):
        seen.append(kw["max_evaluations"])
        return real(*args, **kw)

    monkeypatch.setattr(scv, "nelder_mead_search", spy)
    X, y = _data(m=60)
    SparseLSSVRCV(search="nelder-mead", basis="random", n_basis=20, random_state=0,
                  param_space={"gamma": [0.01, 1.0]}).fit(X, y)
    SparseLSSVRCV(search="nelder-mead", basis="random", n_basis=20, random_state=0, max_evaluations=5,
                  param_space={"gamma": [0.01, 1.0]}).fit(X, y)
    assert seen == [30, 5]


def test_cli_gradient_default_is_the_python_default(tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    X, y = _data(m=100, d=3)
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "t"]).to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--search", "gradient", "--kernel", "ard",
                                   "--gammas", "0.05:1:3", "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "at most 60 evaluations per start (3 widths + alpha)" in res.output
    est = SparseLSSVRCV(kernel="ard", search="gradient", random_state=0,
                        param_space={"gamma": np.logspace(np.log10(0.05), 0, 3)})
    est.fit((X - X.mean(0)) / X.std(0), y)
    saved = load_model(out).estimator
    np.testing.assert_allclose(saved.kernel_.gamma, est.gamma_, rtol=1e-6)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--search", "gradient", "--kernel", "ard",
                                   "--gammas", "0.05:1:3", "--max-evaluations", "5", "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "at most 5 evaluations per start" in res.output
