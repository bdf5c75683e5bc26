"""Hostile pass over the file and command-line paths: bad output paths,
special files, decompression bombs, edited model files and odd option
values.  Each case is classified as

* ``ok``: a valid input accepted (controls),
* ``clear``: refused with an error message (ValueError / OSError subclass in
  Python, exit code 1 or 2 with an ``Error:`` line and no traceback on the
  command line),
* ``silent``: a wrong answer without a warning (an edited file loaded, a
  special file replaced, a bad value accepted),
* ``warned``: a wrong answer with a warning,
* ``crash``: a traceback (another exception),
* ``hang``: no answer within the case's time limit (SIGALRM).

Run: ``PYTHONPATH=src python benchmarks/attack_files.py``; prints one row
per case, the counts and the peak memory (ru_maxrss) of the whole pass.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import resource
import signal
import socket
import stat
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import SavedModel, load_model, read_table, save_model
from lssvm.io.model_io import _checksum

#: Seconds a case may take before it counts as a hang.
CASE_SECONDS = 30
#: Table bound of the pass (LSSVM_MAX_TABLE_BYTES): bombs inflate to 8 to 64 times that.
BOUND = 4 << 20


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def _members(path):
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _edit(src, dst, meta_edit=None, **changes):
    """Copy a model file with members replaced (or metadata edited) and a
    fresh checksum: an edit the checksum cannot see."""
    arrays = _members(src)
    arrays.update({k: np.asarray(v) for k, v in changes.items()})
    meta = json.loads(str(arrays["metadata"]))
    if meta_edit:
        meta_edit(meta)
    meta["arrays"] = {k: [a.dtype.str, list(a.shape)] for k, a in arrays.items() if k not in ("metadata", "checksum")}
    arrays["metadata"] = np.array(json.dumps(meta))
    arrays.pop("checksum")
    arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(dst, **arrays)
    return dst


def _bomb(path, n_bytes):
    line = b"1.5,2.5,3.5,4.5\n" * 4096
    opener = {".gz": lambda p, m: gzip.open(p, m, compresslevel=1), ".bz2": lambda p, m: bz2.open(p, m, compresslevel=1),
              ".xz": lambda p, m: lzma.open(p, m, preset=0)}.get(path.suffix)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf, zf.open("t.csv", "w") as fh:
            fh.write(b"a,b,c,y\n")
            for _ in range(n_bytes // len(line)):
                fh.write(line)
    else:
        with opener(path, "wb") as fh:
            fh.write(b"a,b,c,y\n")
            for _ in range(n_bytes // len(line)):
                fh.write(line)
    return path


def _cli(args, expect_refusal=True, special=None):
    """Run the command; classify.  ``special``: a path that must still be a
    special file afterwards (else the case is a silent replacement)."""
    before = os.lstat(special).st_mode if special else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = CliRunner().invoke(cli, args)
    if special and os.lstat(special).st_mode != before:
        return "silent", "the special file was replaced"
    text = res.output.strip().splitlines()[-1] if res.output.strip() else ""
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        return "crash", f"{type(res.exception).__name__}: {res.exception}"[:160]
    if "Traceback" in res.output or any(w.category is RuntimeWarning for w in caught):
        return "crash", "traceback or raw NumPy warning"
    if res.exit_code == 0:
        return ("silent", "accepted: " + text[:120]) if expect_refusal else ("ok", text[:120])
    return "clear", text[:160]


def _py(call, expect_refusal=True):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
        except (ValueError, OSError) as exc:
            return "clear", f"{type(exc).__name__}: {exc}"[:160]
        except _Hang:
            raise
        except Exception as exc:  # noqa: BLE001 - what the pass is looking for
            return "crash", f"{type(exc).__name__}: {exc}"[:160]
    if not expect_refusal:
        return "ok", str(out)[:120]
    if caught:
        return "warned", str(caught[0].message)[:120]
    return "silent", f"accepted: {str(out)[:120]}"


def cases(tmp):
    """(name, thunk) pairs; each thunk returns (outcome, detail)."""
    tmp = Path(tmp)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 2))
    y = X[:, 0] + 0.3 * rng.standard_normal(80)
    reg = SavedModel(SparseLSSVR(gamma=0.5, alpha=0.1, n_basis=20).fit(X, y), np.zeros(2), np.ones(2), ["a", "b"], "t")
    clf = {c: SavedModel(SparseLSSVC(gamma=0.5, alpha=0.1, n_basis=20, calibration=c).fit(X, np.where(y > 0, "p", "n")),
                         np.zeros(2), np.ones(2), ["a", "b"], "t") for c in ("sigmoid", "isotonic")}
    lin = SavedModel(SparseLSSVR(kernel="linear", alpha=0.1).fit(X, y), np.zeros(2), np.ones(2), ["a", "b"], "t")
    poly = SavedModel(SparseLSSVR(kernel="poly", degree=2, alpha=0.1, n_basis=20).fit(X, y),
                      np.zeros(2), np.ones(2), ["a", "b"], "t")
    good = save_model(tmp / "good.npz", reg)
    iso = save_model(tmp / "iso.npz", clf["isotonic"])
    sig = save_model(tmp / "sig.npz", clf["sigmoid"])
    linp = save_model(tmp / "lin.npz", lin)
    polyp = save_model(tmp / "poly.npz", poly)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": y}).to_csv(tmp / "d.csv", index=False)
    out = []

    def add(name, thunk):
        out.append((name, thunk))

    # --- output paths
    os.mkfifo(tmp / "fifo.npz")
    (tmp / "dir.npz").mkdir()
    device = tmp / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (OSError, AttributeError):
        device = Path("/dev/null") if os.geteuid() != 0 else None
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp / "sock.npz"))
    (tmp / "link_fifo.npz").symlink_to(tmp / "fifo.npz")
    for label, path in (("fifo", tmp / "fifo.npz"), ("folder", tmp / "dir.npz"), ("device", device),
                        ("socket", tmp / "sock.npz"), ("link to fifo", tmp / "link_fifo.npz")):
        if path is None:
            continue
        add(f"save_model to a {label}", lambda p=path: _py(lambda: save_model(p, reg)))
        add(f"fit -o {label}", lambda p=path: _cli(["fit", str(tmp / "d.csv"), "-o", str(p)], special=p))
        add(f"select -o {label}", lambda p=path: _cli(["select", str(tmp / "d.csv"), "--no-report", "--gammas", "1",
                                                       "-o", str(p)], special=p))
        add(f"predict -o {label}", lambda p=path: _cli(["predict", str(good), str(tmp / "d.csv"), "-o", str(p)],
                                                       special=p))
    add("save_model to a missing folder", lambda: _py(lambda: save_model(tmp / "no" / "m.npz", reg)))
    mine = tmp / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep")
    add("select --report over a folder of other files",
        lambda: _cli(["select", str(tmp / "d.csv"), "--gammas", "1", "-o", str(tmp / "s.npz"), "--report", str(mine)]))
    add("select --report over a regular file",
        lambda: _cli(["select", str(tmp / "d.csv"), "--gammas", "1", "-o", str(tmp / "s.npz"), "--report",
                      str(tmp / "d.csv")]))
    add("control: fit -o new path", lambda: _cli(["fit", str(tmp / "d.csv"), "-o", str(tmp / "new.npz")], False))

    # --- tables
    for suffix, times in ((".csv.gz", 64), (".csv.bz2", 8), (".csv.xz", 8), (".zip", 8)):  # bz2, xz: slow to make
        bomb = _bomb(tmp / f"bomb{suffix}", times * BOUND)
        add(f"{suffix} bomb ({times * BOUND >> 20} MiB from {bomb.stat().st_size >> 10} KiB), fit",
            lambda b=bomb: _cli(["fit", str(b), "-o", str(tmp / "b.npz")]))
    with zipfile.ZipFile(tmp / "two.zip", "w") as zf:
        zf.writestr("a.csv", "a,b\n1,2\n")
        zf.writestr("b.csv", "a,b\n1,2\n")
    add("zip with two tables", lambda: _py(lambda: read_table(tmp / "two.zip")))
    text = "a,b\n" + "".join(f"{u},{v}\n" for u, v in rng.standard_normal((5000, 2)))
    packed = gzip.compress(text.encode())
    (tmp / "trunc.csv.gz").write_bytes(packed[:len(packed) // 2])
    add("truncated .csv.gz", lambda: _py(lambda: read_table(tmp / "trunc.csv.gz")))
    (tmp / "fake.csv.gz").write_bytes(b"a,b\n1,2\n")
    add("plain text named .csv.gz", lambda: _py(lambda: read_table(tmp / "fake.csv.gz")))
    (tmp / "big.csv").write_bytes(b"a,b\n" + b"1.0,2.0\n" * (BOUND // 8 + 10))
    add("plain .csv past the bound", lambda: _py(lambda: read_table(tmp / "big.csv")))
    (tmp / "garbage.csv").write_bytes(bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))
    add("binary garbage .csv", lambda: _py(lambda: read_table(tmp / "garbage.csv")))
    (tmp / "empty.csv").write_bytes(b"")
    add("empty .csv", lambda: _py(lambda: read_table(tmp / "empty.csv")))
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp / "zero.csv")
        add("/dev/zero as a .csv (endless)", lambda: _py(lambda: read_table(tmp / "zero.csv")))
    try:
        pd.DataFrame({"x": np.zeros(1 << 21), "y": np.ones(1 << 21)}).to_parquet(tmp / "rle.parquet")
        add("parquet of 32 MiB in a few KiB", lambda: _py(lambda: read_table(tmp / "rle.parquet")))
    except ImportError:
        pass
    add("data is a folder", lambda: _cli(["fit", str(tmp / "dir.npz"), "-o", str(tmp / "x.npz")]))

    # --- model files
    edits = {
        "isotonic map outside [0, 1]": (iso, lambda p: {"calibration_0": np.vstack([p["calibration_0"][0], np.linspace(
            -4.9, 5.9, p["calibration_0"].shape[1])])}),
        "isotonic map falling": (iso, lambda p: {"calibration_0": np.vstack([p["calibration_0"][0], np.linspace(
            1, 0, p["calibration_0"].shape[1])])}),
        "sigmoid slope rising": (sig, lambda p: {"calibration_0": np.array([1.0, 0.0])}),
        "classes repeated": (sig, lambda p: {"classes": np.array(["n", "n"])}),
        "dual_coef 1e308 (rbf)": (good, lambda p: {"dual_coef": np.full_like(p["dual_coef"], 1e308)}),
        "dual_coef 1e308 (linear)": (linp, lambda p: {"dual_coef": np.full_like(p["dual_coef"], 1e308)}),
        "dual_coef 1e308 (poly)": (polyp, lambda p: {"dual_coef": np.full_like(p["dual_coef"], 1e308)}),
        "x_scale negative": (good, lambda p: {"x_scale": np.array([1.0, -1.0])}),
        "basis vectors 1e308": (good, lambda p: {"basis_vectors": np.full_like(p["basis_vectors"], 1e308)}),
    }
    for name, (src, change) in edits.items():
        dst = _edit(src, tmp / f"edit_{len(out)}.npz", **change(_members(src)))
        add(f"model file: {name}", lambda d=dst: _py(lambda: load_model(d).predict(X[:5])))
    huge = _edit(good, tmp / "huge.npz", intercept=np.array([1.7e308]))
    add("control: model file with intercept 1.7e308 (finite: a model of huge targets)",
        lambda: _py(lambda: load_model(huge).predict(X[:2]), False))
    dst = _edit(good, tmp / "gamma.npz", meta_edit=lambda m: m["kernel"].update(gamma=-1.0))
    add("model file: kernel gamma -1", lambda: _py(lambda: load_model(dst).predict(X[:5])))
    add("model file is a FIFO (load_model)", lambda: _py(lambda: load_model(tmp / "fifo.npz")))
    add("model file is a FIFO (predict)", lambda: _cli(["predict", str(tmp / "fifo.npz"), str(tmp / "d.csv")]))
    if device is not None:
        add("model file is a device", lambda: _py(lambda: load_model(device)))
    add("model file is a folder", lambda: _py(lambda: load_model(tmp / "dir.npz")))
    add("control: model file as saved", lambda: _py(lambda: load_model(good).predict(X[:2]), False))

    # --- option values
    fit = ["fit", str(tmp / "d.csv"), "-o", str(tmp / "v.npz")]
    for args in (["--alphas", "1e-320,1e-315"], ["--alpha", "1e-320"], ["--alphas", "1e-300,1e-290", "--gamma", "1000"],
                 ["--kernel", "poly", "--degree", "1000000"], ["--kernel", "poly", "--degree", "0"],
                 ["--n-basis", "0.5"], ["--n-basis", "0"], ["--gamma", "nan"], ["--gamma", "-1"], ["--alpha", "inf"],
                 ["--alphas", "1:2:0"], ["--alphas", "1:2:100000"], ["--min-frequency", "0"]):
        add("fit " + " ".join(args), lambda a=args: _cli(fit + a))
    add("fit --alpha 1e-300 --kernel poly (valid, warned)",
        lambda: _cli(fit + ["--alpha", "1e-300", "--kernel", "poly"], False))
    return out


def run_cases():
    """[(name, outcome, detail, seconds)] for every case, and the peak memory (MiB)."""
    os.environ["LSSVM_MAX_TABLE_BYTES"] = str(BOUND)
    records = []
    old = signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory() as tmp:
        for name, thunk in cases(tmp):
            t0 = time.perf_counter()
            signal.alarm(CASE_SECONDS)
            try:
                outcome, detail = thunk()
            except _Hang:
                outcome, detail = "hang", f"no answer in {CASE_SECONDS} s"
            finally:
                signal.alarm(0)
            records.append((name, outcome, detail, time.perf_counter() - t0))
    signal.signal(signal.SIGALRM, old)
    return records, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    records, peak = run_cases()
    width = max(len(r[0]) for r in records)
    for name, outcome, detail, seconds in records:
        print(f"{name:<{width}}  {outcome:<6} {seconds:6.2f} s  {detail}")
    counts = {k: sum(r[1] == k for r in records) for k in ("ok", "clear", "silent", "warned", "crash", "hang")}
    print(f"\n{len(records)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"peak memory {peak:.0f} MiB (after imports {base:.0f} MiB); table bound {BOUND >> 20} MiB, "
          f"bombs of up to {64 * BOUND >> 20} MiB")
    return 1 if counts["silent"] + counts["crash"] + counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
