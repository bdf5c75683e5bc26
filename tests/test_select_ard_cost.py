"""``lssvm select``'s cost line counts the ARD stage that runs after the
isotropic search, within what the search leaves of the time budget."""

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVRCV
from lssvm.cli._ard_cost import ard_stage_cost
from lssvm.cli._cost import MachineRates, estimate_cost
from lssvm.cli.main import cli
from lssvm.estimators.ard_stage import ARD_EVALUATIONS, ard_stage_seconds


def _rows(seed, m=200, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=m)


def _cost(m, d):
    return estimate_cost("sparse", m, d, 12, 21, rate=MachineRates.single(1e9), classification=False)


def test_the_stage_is_priced_by_its_own_cost_model():
    X, _ = _rows(0)
    cost = _cost(*X.shape)
    per_iso = cost.part_seconds("evaluations") / cost.evaluations
    line, seconds = ard_stage_cost(SparseLSSVRCV(time_budget=None), X, cost)
    stage, per_eval = ard_stage_seconds(per_iso, cost.size)
    assert seconds == pytest.approx(stage) and stage == pytest.approx((ARD_EVALUATIONS + 3) * per_eval)
    assert line.startswith("ard        then the ARD stage")
    # with a budget: what the search leaves of it, at most the stage
    _, within = ard_stage_cost(SparseLSSVRCV(time_budget=cost.seconds + 0.5 * stage), X, cost)
    assert within == pytest.approx(0.5 * stage)
    # none where the search is predicted to take the budget ("auto"); at least 5 evaluations where forced
    line, none = ard_stage_cost(SparseLSSVRCV(time_budget=cost.seconds), X, cost)
    assert none == 0.0 and "skipped" in line
    _, forced = ard_stage_cost(SparseLSSVRCV(time_budget=cost.seconds, ard=True), X, cost)
    assert forced == pytest.approx(5 * per_eval)


@pytest.mark.parametrize("est", [SparseLSSVRCV(ard=False), SparseLSSVRCV(kernel="laplacian"),
                                 SparseLSSVRCV(param_space={"gamma": [0.5, 1.0]}),
                                 SparseLSSVRCV(search="gradient")])
def test_no_stage_no_line(est):
    X, _ = _rows(1)
    assert ard_stage_cost(est, X, _cost(*X.shape)) == (None, 0.0)


def test_one_input_or_few_rows_no_line():
    X, _ = _rows(2, m=30, d=4)  # 30 rows for 5 hyper-parameters
    assert ard_stage_cost(SparseLSSVRCV(), X, _cost(*X.shape)) == (None, 0.0)
    X1, _ = _rows(2, m=200, d=1)
    assert ard_stage_cost(SparseLSSVRCV(), X1, _cost(*X1.shape)) == (None, 0.0)


def test_select_prints_the_stage_and_counts_it(tmp_path):
    X, y = _rows(3, m=150)
    path = tmp_path / "t.csv"
    pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(y=y).to_csv(path, index=False)
    res = CliRunner().invoke(cli, ["select", str(path), "--no-report", "--n-basis", "40", "-o",
                                   str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    assert re.search(r"^ard\s+then the ARD stage", res.output, re.M), res.output
    assert re.search(r"^ard\s+ARD: ", res.output, re.M)  # and what it did
