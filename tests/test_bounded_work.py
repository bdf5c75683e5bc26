"""Searches stop on their tolerances and every amount of
work a caller can ask for is bounded with a clear error."""

import time

import numpy as np
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVRCV
from lssvm.cli.main import cli
from lssvm.selection import MAX_EVALUATIONS, CVPath, nelder_mead_search


def _quadratic(**params):
    z = np.log2(params["gamma"])
    alphas = np.array([0.1, 1.0])
    return CVPath(alphas, mse=np.array([1.0 + (z - 1.3) ** 2, 2.0 + (z - 1.3) ** 2]))


def test_item6_nelder_mead_stops_on_its_tolerances():
    res = nelder_mead_search(_quadratic, {"gamma": (2.0**-10, 2.0**6)}, max_evaluations=MAX_EVALUATIONS)
    assert res.n_evaluations < 30  # fatol=0 (the old setting) takes 59 here
    assert abs(np.log2(res.best_params["gamma"]) - 1.3) < 0.05
    coarse = nelder_mead_search(_quadratic, {"gamma": (2.0**-10, 2.0**6)}, max_evaluations=MAX_EVALUATIONS,
                                xatol=0.5, fatol=0.1)
    assert coarse.n_evaluations < res.n_evaluations


def test_item6_search_with_the_largest_budget_ends_quickly():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)
    t0 = time.perf_counter()
    est = SparseLSSVRCV(kernel="rbf", basis=np.arange(0, 40, 3), search="nelder-mead",
                        max_evaluations=MAX_EVALUATIONS, alphas=[1e-2, 1e-1, 1.0]).fit(X, y)
    assert est.n_evaluations_ < 100 and time.perf_counter() - t0 < 10


@pytest.mark.parametrize("value", [2**63, MAX_EVALUATIONS + 1])
def test_item6_max_evaluations_is_bounded(value):
    X = np.random.default_rng(1).normal(size=(20, 2))
    with pytest.raises(ValueError, match=rf"'max_evaluations' parameter of SparseLSSVRCV must be an int in the range "
                                         rf"\[2, {MAX_EVALUATIONS}\]"):
        SparseLSSVRCV(kernel="rbf", basis=np.arange(5), search="nelder-mead", max_evaluations=value).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="more than the"):
        nelder_mead_search(_quadratic, {"gamma": (0.1, 10.0)}, max_evaluations=value)


@pytest.mark.parametrize("args, message", [
    (["fit", "motorcycle", "--alphas", "1e-3:1:1000000000000"], "NUM must be between 1 and 10000"),
    (["fit", "motorcycle", "--alphas", "1e-3:1:-5"], "NUM must be between 1 and 10000"),
    (["select", "motorcycle", "--gammas", "1e-3:1:100000", "--no-report"], "NUM must be between 1 and 1000"),
    (["select", "motorcycle", "--search", "nelder-mead", "--max-evaluations", str(2**63), "--no-report"],
     "must be between 2 and 10000"),
])
def test_item6_cli_bounds_num_and_evaluations(tmp_path, args, message):
    res = CliRunner().invoke(cli, args + ["-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "m.npz").exists()
