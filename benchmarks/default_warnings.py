"""Warnings a user sees from one default fit, per table.

Each table is fitted as a user would from Python: ``make_tabular_pipeline``
(imputation, one-hot encoding of text columns, standardisation) around
``SparseLSSVRCV()`` (numeric target) or ``SparseLSSVCCV()`` (two or a few
labels), all defaults; one ARD gradient search (``SparseLSSVRCV(kernel="ard",
search="gradient")``) on Boston in addition.  Every warning raised during
``fit`` is recorded (``warnings.catch_warnings(record=True)``, here in the
script, which owns the process) and counted by category; the first line of
each distinct message is printed so that one can judge whether a user could
act on it.

Tables: the bundled data sets (``lssvm.datasets``: motorcycle, Boston,
Ripley) and the tables in ``../shared/data`` (train files where there is a
split; the IDA sets' first realisation), each capped at ``--max-rows`` rows
(a seeded random subset) to keep the run short.

Run:  python benchmarks/default_warnings.py [--max-rows 3000] [--tables boston magic ...]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lssvm import SparseLSSVCCV, SparseLSSVRCV, make_tabular_pipeline  # noqa: E402
from lssvm.datasets import load_boston, load_motorcycle, load_ripley  # noqa: E402

DATA = Path(os.environ.get("LSSVM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data")

#: Tables in the data folder: file name (train part where split) and target column (None: the last).
FILES = {
    "ailerons": "ailerons_train.csv.gz",
    "elevators": "elevators_train.csv.gz",
    "pol": "pol_train.csv.gz",
    "puma32H": "puma32H.csv.gz",
    "magic": "magic.csv.gz",
    "adult": "adult_train.csv.gz",
}
IDA = ("banana", "breast_cancer", "diabetis", "german", "heart", "image", "ringnorm", "splice", "thyroid",
       "titanic", "twonorm", "waveform", "flare_solar")


def load_table(name, max_rows, seed=0):
    """(X frame, y array) of table ``name``, at most ``max_rows`` rows."""
    if name == "motorcycle":
        X, y = load_motorcycle(return_X_y=True, as_frame=True)
    elif name == "boston":
        X, y = load_boston(return_X_y=True, as_frame=True)
    elif name == "ripley":
        X, y = load_ripley(return_X_y=True, as_frame=True)
    elif name in FILES:
        df = pd.read_csv(DATA / FILES[name])
        X, y = df.iloc[:, :-1], df.iloc[:, -1]
    elif name in IDA:
        df = pd.read_csv(DATA / f"ida_{name}.csv.gz")
        path = DATA / f"ida_{name}_splits.csv.gz"
        splits = pd.read_csv(path if path.exists() else DATA / f"ida_{name}_substitute_splits.csv.gz")
        first = splits[(splits["realisation"] == splits["realisation"].min()) & (splits["set"] == "train")]
        df = df.iloc[first.sort_values("position")["row"].to_numpy()]
        X, y = df.iloc[:, :-1], df.iloc[:, -1]
    else:
        raise ValueError(f"unknown table {name!r}")
    if len(X) > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(len(X), max_rows, replace=False))
        X, y = X.iloc[keep], y.iloc[keep]
    y = y.to_numpy()
    return X.reset_index(drop=True), y


def is_classification(y):
    return y.dtype.kind in "OUSb" or np.unique(y).size <= 10


def fit_counting(model, X, y):
    """Fit ``model``; return (seconds, list of (category name, first line of message))."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return time.perf_counter() - t0, [(w.category.__name__, str(w.message).splitlines()[0][:150]) for w in caught]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-rows", type=int, default=3000)
    parser.add_argument("--tables", nargs="*",
                        default=["motorcycle", "boston", "ripley", *FILES, *IDA, "boston-ard"])
    args = parser.parse_args()
    rows, messages = [], collections.Counter()
    for name in args.tables:
        if name == "boston-ard":
            X, y = load_table("boston", args.max_rows)
            est = SparseLSSVRCV(kernel="ard", search="gradient", random_state=0)
        else:
            X, y = load_table(name, args.max_rows)
            est = SparseLSSVCCV() if is_classification(y) else SparseLSSVRCV()
        seconds, caught = fit_counting(make_tabular_pipeline(est), X, y)
        by_cat = collections.Counter(c for c, _ in caught)
        rows.append((name, X.shape[0], X.shape[1], type(est).__name__, seconds, len(caught),
                     ", ".join(f"{c} {k}" for c, k in sorted(by_cat.items()))))
        for c, msg in caught:
            messages[(name, c, msg)] += 1
        print(f"{name:14s} m={X.shape[0]:5d} d={X.shape[1]:3d} {type(est).__name__:14s} {seconds:7.1f} s  "
              f"warnings={len(caught)}  {rows[-1][-1]}", flush=True)
    print("\n| table | rows | inputs | estimator | fit s | warnings | by category |")
    print("|---|---:|---:|---|---:|---:|---|")
    for name, m, d, est, s, n, cats in rows:
        print(f"| {name} | {m} | {d} | {est} | {s:.1f} | {n} | {cats} |")
    print(f"\ntotal warnings: {sum(r[5] for r in rows)} over {len(rows)} fits; "
          f"fits with more than one: {sum(r[5] > 1 for r in rows)}")
    print("\nmessages (table, category, count, first line):")
    for (name, c, msg), k in messages.items():
        print(f"  {name}: {c} x{k}: {msg}")


if __name__ == "__main__":
    main()
