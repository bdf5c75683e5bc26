"""Tables are read into memory only up to a bound (decompression bombs).

A small ``.csv.gz`` can inflate to gigabytes; ``read_table`` counts the
decompressed bytes as it reads and refuses past ``LSSVM_MAX_TABLE_BYTES``
(default a quarter of the available memory) with an error naming
``--chunk-rows``, holding about the bound in memory, never the whole table.
"""

import bz2
import gzip
import lzma
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli
from lssvm.io import read_table
from lssvm.io.tables import MAX_TABLE_BYTES_ENV, TableTooLargeError, max_table_bytes

LINE = b"1.5,2.5,3.5,4.5\n"


def _text(n_lines):
    return b"a,b,c,y\n" + LINE * n_lines


def _write(path, data):
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("table.csv", data)
    elif opener is not None:
        with opener(path, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.xz", ".zip"])
def test_a_compressed_table_past_the_bound_is_refused(tmp_path, monkeypatch, suffix):
    path = _write(tmp_path / f"t{suffix}", _text(50_000))  # 800 KB of text, a few KB compressed
    assert path.stat().st_size < 200_000
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "100000")
    with pytest.raises(TableTooLargeError, match="--chunk-rows") as info:
        read_table(path)
    assert "inflates to more than 100,000 bytes" in str(info.value) and MAX_TABLE_BYTES_ENV in str(info.value)
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "1e8")  # within the bound: read as before
    frame = read_table(path)
    assert frame.shape == (50_000, 4) and frame["y"].iloc[-1] == 4.5


def test_a_plain_table_past_the_bound_is_refused_before_reading(tmp_path, monkeypatch):
    path = _write(tmp_path / "t.csv", _text(10_000))
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "1000")

    def never(*args, **kwargs):
        raise AssertionError("read although too large")

    monkeypatch.setattr(pd, "read_csv", never)
    with pytest.raises(TableTooLargeError, match="the table holds more than 1,000 bytes"):
        read_table(path)


def test_parquet_bound_from_its_metadata(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    pd.DataFrame({"x": np.zeros(1_000_000), "y": np.ones(1_000_000)}).to_parquet(path)
    assert path.stat().st_size < 100_000  # 16 MB of columns, run-length encoded
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "1e6")
    with pytest.raises(TableTooLargeError, match="its columns take more than 1,000,000 bytes"):
        read_table(path)
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "1e8")
    assert read_table(path).shape == (1_000_000, 2)


def test_default_bound_and_a_bad_setting(monkeypatch):
    monkeypatch.delenv(MAX_TABLE_BYTES_ENV, raising=False)
    bound = max_table_bytes()
    assert bound is None or bound > 0
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "lots")
    with pytest.raises(ValueError, match="LSSVM_MAX_TABLE_BYTES='lots'"):
        max_table_bytes()


def test_cli_refuses_a_gzip_bomb_with_one_line(tmp_path, monkeypatch):
    path = _write(tmp_path / "bomb.csv.gz", _text(200_000))
    monkeypatch.setenv(MAX_TABLE_BYTES_ENV, "100000")
    for command in (["fit"], ["select", "--no-report"]):
        res = CliRunner().invoke(cli, [*command, str(path), "-o", str(tmp_path / "m.npz")])
        assert res.exit_code == 1 and "--chunk-rows" in res.output and "Traceback" not in res.output, res.output
        assert not (tmp_path / "m.npz").exists()


_PEAK = textwrap.dedent("""
    import gzip, resource, sys
    from lssvm.io import read_table
    path, action = sys.argv[1], sys.argv[2]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        read_table(path)
        outcome = "read"
    except ValueError as exc:
        outcome = type(exc).__name__
    print(outcome, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB")
def test_refusing_a_bomb_holds_about_the_bound_in_memory(tmp_path):
    """64 MiB of text from a 300 KB file, bound 8 MB: the refusal adds tens
    of MiB to the process's peak (measured: about 20 MiB), where reading it
    whole took about 300 MiB more (128 MiB: 640 MiB)."""
    path = tmp_path / "bomb.csv.gz"
    block = LINE * 65536
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b"a,b,c,y\n")
        for _ in range(64):
            fh.write(block)
    env = {**os.environ, MAX_TABLE_BYTES_ENV: "8e6", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path), "read"], env=env, capture_output=True,
                         text=True, timeout=120)
    outcome, peak_mib = out.stdout.split()
    assert outcome == "TableTooLargeError", out.stdout + out.stderr
    assert float(peak_mib) < 80
