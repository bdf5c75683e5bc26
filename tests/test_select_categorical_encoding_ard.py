"""``lssvm select --categorical-encoding`` after the default search's ARD stage: the kept model has one
width per one-hot column, and its ordinal refit takes one width per ordinal column (a level block's
mean), so that the comparison, the ordinal model file and ``lssvm predict`` work."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli._encoding_choice import ordinal_columns
from lssvm.cli.main import cli
from lssvm.io import load_model
from lssvm.io.tabular import TabularEncoding, make_tabular_preprocessor


def _frame(seed, m=200):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=m)
    c = rng.choice(["red", "green", "blue"], m)
    y = np.sin(x) + (c == "red") + 0.1 * rng.normal(size=m)
    return pd.DataFrame({"x": x, "c": c, "y": y})


def test_ordinal_columns_map_level_blocks():
    frame = _frame(0)
    ct = make_tabular_preprocessor(["c"], numeric=["x"])
    ct.fit(frame[["x", "c"]])
    encoding = TabularEncoding.from_fitted(ct)
    columns = ordinal_columns(encoding)
    assert [c.tolist() for c in columns] == [[0], [1, 2, 3]]
    assert len(columns) == encoding.to_ordinal(frame[["x", "c"]]).transform(frame).shape[1]


@pytest.mark.slow
@pytest.mark.parametrize("asked", ["ordinal", "auto"])
def test_encoding_choice_after_the_ard_stage(tmp_path, asked):
    frame = _frame(0)
    frame.to_csv(tmp_path / "t.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", "--time-budget", "20",
                                   "--categorical-encoding", asked, "--target-transform", "identity",
                                   "--no-report", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    assert "ARD: kept" in res.output  # the case under test: per-column widths on the one-hot columns
    line = next(t for t in res.output.splitlines() if t.startswith("encoding   categorical:"))
    model = load_model(tmp_path / "m.npz")
    chosen = model.preprocessing.categorical_encoding
    assert line.split(":", 1)[1].strip().startswith(chosen)
    width = 2 if chosen == "ordinal" else 4
    assert np.size(model.estimator.get_params()["gamma"]) == width
    new = pd.DataFrame({"x": [0.1, 0.2], "c": ["red", "purple"]})  # an unseen level
    new.to_csv(tmp_path / "new.csv", index=False)
    pred = CliRunner().invoke(cli, ["predict", str(tmp_path / "m.npz"), str(tmp_path / "new.csv")])
    assert pred.exit_code == 0, pred.output
    np.testing.assert_allclose(model.predict(new), [float(v) for v in pred.stdout.split()[-2:]], rtol=1e-12)
