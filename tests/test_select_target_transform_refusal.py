"""``lssvm select --target-transform log|box-cox`` on a target that is not positive is refused before the
search runs (not after its time is spent), with the same clear message."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli


@pytest.mark.parametrize("asked", ["log", "box-cox"])
def test_non_positive_target_refused_before_the_search(tmp_path, asked):
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    pd.DataFrame({"x": x, "y": np.sin(x) - 0.5}).to_csv(tmp_path / "t.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", "--target-transform", asked,
                                   "--no-report", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code != 0
    assert "needs a positive target" in res.output
    assert "evaluating" not in res.output and "search " not in res.output, res.output
    assert not (tmp_path / "m.npz").exists()
