"""Hostile model files are refused cheaply and cleanly.

A decompression bomb is refused from the ZIP directory alone (within 1 s
and 100 MB), deeply nested metadata JSON gives ModelFileError, members that
disagree with the shapes the metadata declares are refused before their
data is read, and ``lssvm predict`` on any bad file prints ModelFileError's
message, never a traceback.
"""

import json
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import ModelFileError, SavedModel, load_model, save_model
from lssvm.io._archive import MAX_JSON_DEPTH
from lssvm.io.model_io import _checksum


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(10)).fit(X, X[:, 0])
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], "y"))
    return path


def _members(path):
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _npy_bytes(a):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(a), allow_pickle=False)
    return buf.getvalue()


def _write_bomb(path, members, bomb_name, n_rows, d):
    """An archive whose member ``bomb_name`` is a deflated (n_rows, d) array
    of zeros (8 * n_rows * d bytes from a tiny file), and whose metadata
    declares exactly that."""
    header = _npy_bytes(np.zeros((0, d)))  # header of the same length class as the bomb's
    header = header.replace(b"(0, ", f"({n_rows}, ".encode())
    header = np.lib.format.magic(1, 0) + header[8:]
    hlen = len(header) - 10
    pad = (64 - (10 + hlen) % 64) % 64
    body = header[10:].rstrip(b"\n") + b" " * pad + b"\n"
    header = np.lib.format.magic(1, 0) + len(body).to_bytes(2, "little") + body
    size = len(header) + 8 * n_rows * d
    comp = zlib.compressobj(1, zlib.DEFLATED, -15)
    chunks = [comp.compress(header)]
    zero = bytes(1 << 24)
    left = size - len(header)
    crc = zlib.crc32(header)
    while left:
        part = zero[: min(left, len(zero))]
        chunks.append(comp.compress(part))
        crc = zlib.crc32(part, crc)
        left -= len(part)
    chunks.append(comp.flush())
    data = b"".join(chunks)
    with zipfile.ZipFile(path, "w") as zf:
        for name, a in members.items():
            zf.writestr(name + ".npy", _npy_bytes(a))
        info = zipfile.ZipInfo(bomb_name + ".npy")  # the raw deflate stream, entered by hand
        info.header_offset = zf.fp.tell()
        info.compress_size, info.file_size, info.CRC = len(data), size, crc
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.fp.write(info.FileHeader(zip64=size > 0xFFFFFFFF))
        zf.fp.write(data)
        zf.start_dir = zf.fp.tell()
        zf.filelist.append(info)
        zf.NameToInfo[info.filename] = info
    return size


def test_item5_zip_bomb_refused_within_1s_and_100MB(saved, tmp_path):
    members = _members(saved)
    meta = json.loads(str(members["metadata"]))
    n_rows, d = 10_000_000, 3  # 240 MB of zeros in a file of about 1 MB
    meta["arrays"]["basis_vectors"] = ["<f8", [n_rows, d]]
    members["metadata"] = np.array(json.dumps(meta))
    members.pop("basis_vectors")
    members["checksum"] = np.array(_checksum(members))
    bomb = tmp_path / "bomb.npz"
    size = _write_bomb(bomb, members, "basis_vectors", n_rows, d)
    assert bomb.stat().st_size < 2 << 20 and size > 200e6
    with zipfile.ZipFile(bomb) as zf:  # it is a real bomb: the standard reader would inflate it
        assert zf.getinfo("basis_vectors.npy").file_size == size
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ModelFileError, match="'basis_vectors' is compressed"):
        load_model(bomb)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 1.0 and peak < 100e6


def test_item5_member_larger_than_declared_is_refused_before_reading(saved):
    members = _members(saved)
    members["basis_vectors"] = np.zeros((1000, 3))  # data for 1000 rows, metadata declares 10
    with zipfile.ZipFile(saved, "w") as zf:
        for name, a in members.items():
            zf.writestr(name + ".npy", _npy_bytes(a))
    with pytest.raises(ModelFileError, match=r"'basis_vectors' is <f8 \(1000, 3\), but the metadata declares"):
        load_model(saved)


def test_item5_directory_claiming_more_than_the_file_holds(saved):
    blob = bytearray(saved.read_bytes())
    # the central directory entry of the last member: bump its sizes (stored: both equal)
    with zipfile.ZipFile(saved) as zf:
        info = zf.infolist()[-1]
    pos = blob.rfind(b"PK\x01\x02")
    for off in (20, 24):  # compressed and uncompressed size fields
        blob[pos + off: pos + off + 4] = (info.file_size + (1 << 30)).to_bytes(4, "little")
    saved.write_bytes(bytes(blob))
    with pytest.raises(ModelFileError, match="declares more data than it holds|truncated or damaged"):
        load_model(saved)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_item5_deep_json_gives_model_file_error(saved, depth):
    members = _members(saved)
    meta = json.loads(str(members["metadata"]))
    text = json.dumps(meta)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    members["metadata"] = np.array(text)
    members["checksum"] = np.array(_checksum(members))
    np.savez(saved, **members)
    with pytest.raises(ModelFileError, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        load_model(saved)


def test_item5_brackets_inside_strings_do_not_count(saved):
    model = load_model(saved)
    model.metadata["note"] = "[" * 1000 + '\\"{' * 500
    path = save_model(saved.with_name("n.npz"), model)
    assert load_model(path).metadata["note"] == model.metadata["note"]


def _bad_files(saved, tmp_path):
    members = _members(saved)
    blob = saved.read_bytes()
    files = {}
    files["truncated"] = blob[: len(blob) // 2]
    files["garbage"] = b"PK\x03\x04" + bytes(range(256)) * 4
    files["npy"] = _npy_bytes(np.zeros(3))
    deep = dict(members)
    deep["metadata"] = np.array("[" * 100_000 + "]" * 100_000)
    files["deep"] = deep
    odd = dict(members)
    odd["../evil"] = np.zeros(2)
    files["odd_member"] = odd
    no_meta = dict(members)
    no_meta.pop("metadata")
    files["no_metadata"] = no_meta
    obj = dict(members)
    obj["dual_coef"] = np.array([None, 1], dtype=object)
    files["object"] = obj
    out = {}
    for name, content in files.items():
        p = tmp_path / f"{name}.npz"
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            with zipfile.ZipFile(p, "w") as zf:
                for k, a in content.items():
                    zf.writestr(k + ".npy", _npy_bytes(a) if a.dtype != object else
                                b"\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (2,), }" +
                                b" " * 50 + b"\n")
        out[name] = p
    comp = tmp_path / "compressed.npz"
    np.savez_compressed(comp, **members)
    out["compressed"] = comp
    return out


def test_item5_cli_predict_on_bad_files_prints_the_error_never_a_traceback(saved, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a,b,c\n1,2,3\n")
    runner = CliRunner()
    for name, path in _bad_files(saved, tmp_path).items():
        with pytest.raises(ModelFileError):
            load_model(path)
        res = runner.invoke(cli, ["predict", str(path), str(data)])
        assert res.exit_code == 1, (name, res.output, res.exception)
        assert "Error:" in res.output and "Traceback" not in res.output, (name, res.output)
        assert str(path) in res.output
