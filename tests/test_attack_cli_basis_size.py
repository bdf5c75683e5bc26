"""``lssvm select --chunk-rows`` with ``--n-basis auto``: refused before any table is read."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli


def test_chunked_select_refuses_auto_basis_before_reading(tmp_path):
    pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": np.sin(X[:, 0])})
    frame.to_csv(tmp_path / "train.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "train.csv"), "--target", "t", "--chunk-rows", "20",
                                   "--n-basis", "auto", "-o", str(tmp_path / "m.npz"), "--no-report"])
    assert res.exit_code == 2, res.output
    assert "--n-basis" in res.output and "--chunk-rows" in res.output
    assert "grown after the search" not in res.output
    assert not (tmp_path / "m.npz").exists()
