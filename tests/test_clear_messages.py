"""Unclear messages made clear."""

import gzip
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from lssvm import FixedSizeLSSVC, NumericalWarning, NystromLSSVR, SparseLSSVC
from lssvm.cli.main import cli
from lssvm.io import read_table


def test_item10_truncated_gzip_is_reported_by_name(tmp_path):
    data = b"a,b,y\n" + b"".join(f"{i},{2 * i},{i % 3}\n".encode() for i in range(5000))
    blob = gzip.compress(data)
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="cut.csv.gz: the compressed file is truncated or corrupt"):
        read_table(path)
    res = CliRunner().invoke(cli, ["fit", str(path), "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 1 and "cut.csv.gz" in res.output and "truncated" in res.output
    assert "Aborted" not in res.output


def test_item10_nystrom_rank_above_distinct_columns():
    X = np.tile([[1.0, 2.0]], (20, 1))
    X[10:] += 1.0  # two distinct rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        with pytest.raises(ValueError, match=r"rank=3 is more than the \d distinct column\(s\) sampled"):
            NystromLSSVR(gamma=0.5, alpha=1.0, n_basis=5, rank=3, random_state=0).fit(X, np.arange(20.0))


@pytest.mark.parametrize("make", [
    lambda: SparseLSSVC(gamma=0.5, alpha=1.0, basis=np.arange(5)),
    lambda: FixedSizeLSSVC(gamma=0.5, alpha=1.0, n_basis=5),
])
def test_item10_mixed_int_and_str_labels(make):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.array([1, "a"] * 10, dtype=object)
    with pytest.raises(ValueError, match=r"class labels mix strings with other types \(int, str\)"):
        make().fit(X, y)


@pytest.mark.parametrize("label, shown", [(0.0, "(0.0)"), (3, "(3)"), ("a", "('a')")])
def test_one_class_message_shows_the_label_as_written(label, shown):
    # the label as the user wrote it, not NumPy's scalar repr (np.float64(0.0))
    with pytest.raises(ValueError, match=r"got 1 class " + shown.replace("(", r"\(").replace(")", r"\)") + "$"):
        SparseLSSVC(n_basis=3).fit(np.arange(12.0).reshape(6, 2), np.full(6, label))


def test_constant_target_column_message_shows_the_value_as_written(tmp_path):
    path = tmp_path / "const.csv"
    path.write_text("x,y\n" + "".join(f"{i},3.0\n" for i in range(6)))
    result = CliRunner().invoke(cli, ["select", str(path), "--no-report"])
    assert result.exit_code != 0
    assert "every value is 3.0)" in result.output and "np." not in result.output


def test_missing_class_labels_are_named_as_missing():
    # not "a mix of types": the labels are strings, one is None
    y = np.array(["a", "b"] * 5, dtype=object)
    y[3] = None
    with pytest.raises(ValueError, match=r"class labels are missing \(None / NaN\) in 1 row\(s\), the first at row 3"):
        SparseLSSVC(n_basis=3).fit(np.arange(20.0).reshape(10, 2), y)
