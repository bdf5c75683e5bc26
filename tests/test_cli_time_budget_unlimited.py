"""``lssvm select --time-budget inf`` is the estimator's "no limit" (time_budget=None), not a refusal."""

import numpy as np
from click.testing import CliRunner

from lssvm.cli.main import cli


def test_infinite_time_budget_runs_without_a_limit(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    rows = "".join(f"{a},{b},{np.sin(a) + 0.1 * b}\n" for a, b in x)
    (tmp_path / "t.csv").write_text("a,b,y\n" + rows)
    result = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--time-budget", "inf", "--no-report",
                                      "--gammas", "0.5", "--output", str(tmp_path / "m.npz")])
    assert result.exit_code == 0, result.output
    assert "Got inf" not in result.output and "grown after the search\n" in result.output
