"""``lssvm select`` takes a quoted glob pattern for DATA in memory, as its
help says and as ``--chunk-rows`` does."""

import numpy as np
import pandas as pd
from click.testing import CliRunner

from lssvm.cli._inputs import expand_data
from lssvm.cli.main import cli


def _tables(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)})
    frame.iloc[:20].to_csv(tmp_path / "part1.csv", index=False)
    frame.iloc[20:].to_csv(tmp_path / "part2.csv", index=False)


def test_a_quoted_glob_pattern_selects_on_the_stacked_files(tmp_path):
    _tables(tmp_path)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "part*.csv"), "--no-report", "--alphas", "0.01,0.1",
                                   "--gammas", "0.5,1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "40 rows" in res.output
    assert out.exists()


def test_expand_data_keeps_names_files_and_unmatched_patterns(tmp_path):
    _tables(tmp_path)
    pattern = str(tmp_path / "part*.csv")
    assert expand_data([pattern]) == [str(tmp_path / "part1.csv"), str(tmp_path / "part2.csv")]
    assert expand_data(["boston", str(tmp_path / "part1.csv")]) == ["boston", str(tmp_path / "part1.csv")]
    assert expand_data([str(tmp_path / "none*.csv")]) == [str(tmp_path / "none*.csv")]
