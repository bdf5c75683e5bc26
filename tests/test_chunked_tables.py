"""Streamed tables (``lssvm select --chunk-rows``) take what tables in memory take: categorical
columns and missing values (encoded from passes over the blocks), ``--test`` tables; the results
equal the in-memory ones where the draws are the same."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.io.tabular import TabularEncoding, make_tabular_preprocessor

dd = pytest.importorskip("dask.dataframe")


def _table(m=300, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=m), "b": rng.normal(size=m),
                       "c": rng.choice(["x", "y", "z", "w"], m, p=[0.5, 0.3, 0.19, 0.01]),
                       "d": rng.choice([1, 2, 3], m)})
    df["y"] = df.a ** 2 + (df.c == "x") * 1.0 + 0.3 * df.d + 0.1 * rng.normal(size=m)
    df.loc[rng.choice(m, 15, replace=False), "b"] = np.nan
    df.loc[rng.choice(m, 10, replace=False), "c"] = None
    return df


@pytest.mark.parametrize("scale", ["standard", "minmax", "none"])
def test_streamed_encoding_equals_the_in_memory_one(scale):
    from lssvm.io.tabular_stats import streamed_encoding

    df = _table()
    inputs = df.drop(columns="y")
    ct = make_tabular_preprocessor(["c", "d"], numeric=["a", "b"], scale=scale).fit(inputs)
    expect = TabularEncoding.from_fitted(ct)
    got, missing = streamed_encoding(dd.from_pandas(df, npartitions=1), ["c", "d"], ["a", "b"], scale=scale)
    assert missing == {"b": 15, "c": 10}
    assert got.feature_names == expect.feature_names
    assert (got.levels, got.rare_levels, got.fill) == (expect.levels, expect.rare_levels, expect.fill)
    assert (got.numeric_indicators, got.categorical_indicators) == (expect.numeric_indicators,
                                                                     expect.categorical_indicators)
    np.testing.assert_allclose(got.medians, expect.medians, rtol=1e-12)
    np.testing.assert_allclose(got.center, expect.center, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.scale, expect.scale, rtol=1e-10)
    np.testing.assert_allclose(got.transform(inputs), ct.transform(inputs), rtol=1e-9, atol=1e-9)


def test_streamed_encoding_of_several_blocks_sums_the_blocks():
    from lssvm.io.tabular_stats import streamed_encoding

    df = _table(600, seed=1)
    inputs = df.drop(columns="y")
    expect = TabularEncoding.from_fitted(make_tabular_preprocessor(["c", "d"], numeric=["a", "b"]).fit(inputs))
    got, _ = streamed_encoding(dd.from_pandas(df, npartitions=4), ["c", "d"], ["a", "b"])
    assert got.feature_names == expect.feature_names
    assert (got.levels, got.rare_levels, got.fill) == (expect.levels, expect.rare_levels, expect.fill)
    # the medians are Dask's approximate quantiles on several blocks: close, and the scaling follows them
    np.testing.assert_allclose(got.medians, expect.medians, atol=0.1)
    np.testing.assert_allclose(got.center, expect.center, atol=0.01)


def test_streamed_encoding_refuses_missing_values_without_imputation():
    from lssvm.io.tabular_stats import streamed_encoding

    with pytest.raises(ValueError, match="missing values in input column"):
        streamed_encoding(dd.from_pandas(_table(), npartitions=2), ["c"], ["a", "b", "d"], impute=False)


def _lines(output, *prefixes):
    return [ln for ln in output.splitlines() if ln.split(" ", 1)[0] in prefixes]


@pytest.mark.parametrize("model", ["sparse", "fixed-size"])
def test_select_chunk_rows_takes_categoricals_missing_values_and_test_rows(tmp_path, model):
    from lssvm.cli.main import cli

    df = _table()
    df.iloc[:220].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[220:].to_csv(tmp_path / "test.csv", index=False)
    common = [str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--no-report", "--model", model,
              "--gammas", "0.05,0.2", "--alphas", "1e-3:1:4", "--basis", "random", "--n-basis", "40"]
    if model == "fixed-size":
        common += ["--cv", "5"]
    runner = CliRunner()
    mem = runner.invoke(cli, ["select", *common, "-o", str(tmp_path / "m.npz")])
    assert mem.exit_code == 0, mem.output
    streamed = runner.invoke(cli, ["select", *common, "--chunk-rows", "100", "-o", str(tmp_path / "s.npz")])
    assert streamed.exit_code == 0, streamed.output
    shown = ("encoded", "best", "test", "imputed")
    assert _lines(streamed.output, *shown) == _lines(mem.output, *shown)
    assert any("categorical column" in ln for ln in _lines(streamed.output, "encoded"))
    from lssvm.io import load_model

    enc_s, enc_m = load_model(tmp_path / "s.npz").preprocessing, load_model(tmp_path / "m.npz").preprocessing
    assert enc_s.feature_names == enc_m.feature_names  # the sums over blocks agree to rounding
    np.testing.assert_allclose(enc_s.transform(df), enc_m.transform(df), rtol=1e-9, atol=1e-12)
    pred = load_model(tmp_path / "s.npz").predict(df.iloc[220:].drop(columns="y"))
    np.testing.assert_allclose(pred, load_model(tmp_path / "m.npz").predict(df.iloc[220:].drop(columns="y")),
                               rtol=1e-6, atol=1e-8)


def test_select_chunk_rows_default_basis_is_close_to_in_memory(tmp_path):
    """The default basis streamed: pivoted Cholesky among a row sample (here all rows, in another order)."""
    from lssvm.cli.main import cli

    df = _table(400, seed=2)
    df.iloc[:300].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[300:].to_csv(tmp_path / "test.csv", index=False)
    common = [str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--no-report",
              "--gammas", "0.05,0.2", "--alphas", "1e-3:1:4"]
    runner = CliRunner()
    rmse = []
    for extra in ([], ["--chunk-rows", "100"]):
        out = runner.invoke(cli, ["select", *common, *extra, "-o", str(tmp_path / f"m{len(extra)}.npz")])
        assert out.exit_code == 0, out.output
        rmse.append(float(re.search(r"^test .*RMSE ([0-9.eE+-]+)", out.output, re.M).group(1)))
    assert rmse[1] <= 1.05 * rmse[0]


def test_select_chunk_rows_refuses_test_size_with_a_clear_message(tmp_path):
    from lssvm.cli.main import cli

    _table().to_csv(tmp_path / "t.csv", index=False)
    out = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--chunk-rows", "100", "--test-size", "0.2"])
    assert out.exit_code != 0
    assert "--test" in out.output and "Traceback" not in out.output


def test_select_chunk_rows_names_text_columns_left_out_of_the_categoricals(tmp_path):
    from lssvm.cli.main import cli

    (tmp_path / "d.csv").write_text("a,b,y\n1,2,3\n3,x,4\n5,6,5\n7,8,6\n")
    out = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--chunk-rows", "2", "--categorical", "none",
                                   "--no-report", "-o", str(tmp_path / "m.npz")])
    assert out.exit_code == 1 and "non-numeric input column(s): b" in out.output, out.output
    assert "Traceback" not in out.output
