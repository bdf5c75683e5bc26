"""The README's section on mixed tables, intervals, probabilities and saved models runs as
written: a mixed table fitted from Python, intervals and probabilities, and the shell commands
(``select --test`` / ``--test-size``, ``predict --proba`` / ``--interval``) followed by the saved
model's Python calls on a raw table."""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli

README = Path(__file__).resolve().parents[1] / "README.md"


def _section():
    text = README.read_text(encoding="utf-8")
    start = text.index("## Mixed tables, intervals, probabilities and saved models")
    return text[start : text.index("\n## ", start + 3)]


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", _section(), re.S)


def test_readme_shows_the_daily_use_calls():
    python = "\n".join(_blocks("python"))
    shell = "\n".join(_blocks("bash"))
    assert "make_tabular_pipeline(" in python and "pd.DataFrame" in python
    for call in ("predict_interval(", "predict_proba(", 'calibration="sigmoid"', "load_model("):
        assert call in python, call
    assert re.search(r"lssvm select .*--test \S+", shell)
    assert re.search(r"lssvm predict .*--proba", shell)
    assert re.search(r"lssvm predict .*--interval", shell)


def _income_tables(folder, rng):
    def table(m):
        age = rng.integers(18, 80, m).astype(float)
        job = rng.choice(["clerk", "manager", "nurse"], m)
        hours = rng.normal(40, 8, m)
        income = np.where((job == "manager") | (age > 55), ">50K", "<=50K")
        return pd.DataFrame({"age": age, "job": job, "hours": hours, "income": income})

    table(200).to_csv(folder / "train.csv", index=False)
    table(60).to_csv(folder / "test.csv", index=False)
    new = table(5).drop(columns="income")
    new.loc[0, "age"] = np.nan
    new.to_csv(folder / "new.csv", index=False)


@pytest.mark.slow
def test_readme_shell_commands_and_saved_model_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _income_tables(tmp_path, np.random.default_rng(0))
    runner = CliRunner()
    for line in _blocks("bash")[0].splitlines():
        args = shlex.split(line.split("#")[0])
        assert args[0] == "lssvm"
        res = runner.invoke(cli, args[1:] + (["--no-report"] if args[1] == "select" else []))
        assert res.exit_code == 0, (line, res.output)
        if "--interval" in args:
            assert "lower_medv" in res.output and "upper_medv" in res.output
    proba = pd.read_csv(tmp_path / "predictions.csv")
    assert {"proba_<=50K", "proba_>50K"} <= set(proba.columns)
    code = _blocks("python")[-1]  # the saved model from Python, on the raw table
    scope = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, "README", "exec"), scope)
        got = np.asarray(scope["m"].predict_proba(scope["new"]))
    np.testing.assert_allclose(got, proba.filter(like="proba_").to_numpy(), atol=1e-9)  # as `lssvm predict`
    assert any("age" in str(w.message) for w in caught)  # the missing age was filled in, and said so
