"""Mixed tables: ``lssvm select`` on raw tables against a
scikit-learn Pipeline and neo-ls-svm.

Data (``--data``, default ``../shared/data``):

* adult: the official train/test files, then up to ``--splits`` random
  splits of the union with the official sizes (32561 / 16281), as long as
  ``--budget`` seconds allow;
* elevators: the official train/test files with 5 % of the input values
  removed completely at random (seed 0), a regression table with missing
  values.

Contenders, each timed from the raw table to test predictions:

* ``lssvm select`` through the command line on the raw CSV files (a
  subprocess, ``--timeout`` seconds), with its defaults and with each
  ``--lssvm`` argument string (e.g. ``"--basis random --n-basis 1000"``);
* scikit-learn: the same ``ColumnTransformer`` (:func:`lssvm.io.tabular.
  make_tabular_preprocessor`) into ``SVC`` / ``KernelRidge``, tuned by
  ``GridSearchCV`` (3 folds) over ``--C``/``--gamma`` (``alpha`` = 1/C for
  KernelRidge);
* neo-ls-svm: ``NeoLSSVM()`` with its defaults on the same encoded matrix
  (``--no-neo`` leaves it out);
* with ``--chunk-rows N``: every lssvm configuration again on the streamed
  table (``lssvm select --chunk-rows N``: the encoding from passes over the
  blocks, the basis by pivoted Cholesky among a row sample), so that the
  streamed and in-memory test errors and times sit side by side.

``--max-train M`` keeps a random M training rows (a small table for a quick run).

Prints one table (test error rate or RMSE, seconds, seconds relative to
lssvm's defaults) and the load average: the machine may be shared.

Run: ``python benchmarks/tabular.py --splits 5 --budget 3000``.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from lssvm.io.tabular import make_tabular_preprocessor  # noqa: E402


def run_lssvm(train_csv, test_csv, target, extra, timeout):
    """Seconds and the test metric line of ``lssvm select`` (None on timeout)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "lssvm.cli", "select", str(train_csv), "--target", target, "--test",
               str(test_csv), "--no-report", "-o", os.path.join(tmp, "m.npz"), *extra.split()]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        t0 = time.perf_counter()
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return None, f"timeout > {timeout} s"
        seconds = time.perf_counter() - t0
    if res.returncode != 0:
        return None, "failed: " + res.stderr.strip().splitlines()[-1]
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("test       ") and "rows from" not in ln)
    best = next(ln for ln in res.stdout.splitlines() if ln.startswith("best       "))
    return seconds, line[11:] + " | " + best[11:]


def metric(line, task):
    key = r"error rate ([0-9.e-]+)" if task == "classification" else r"RMSE ([0-9.e+-]+)"
    m = re.search(key, line or "")
    return float(m.group(1)) if m else np.nan


def run_sklearn(train, test, target, task, Cs, gammas):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.svm import SVC

    t0 = time.perf_counter()
    X, y = train.drop(columns=[target]), train[target].to_numpy()
    if task == "classification":
        model, grid = SVC(kernel="rbf"), {"model__C": Cs, "model__gamma": gammas}
    else:
        model, grid = KernelRidge(kernel="rbf"), {"model__alpha": [1 / c for c in Cs], "model__gamma": gammas}
    pipe = Pipeline([("encode", make_tabular_preprocessor()), ("model", model)])
    search = GridSearchCV(pipe, grid, cv=3, n_jobs=1).fit(X, y)
    pred = search.predict(test.drop(columns=[target]))
    seconds = time.perf_counter() - t0
    return seconds, _score(test[target].to_numpy(), pred, task), search.best_params_


def run_neo(train, test, target, task):
    from neo_ls_svm import NeoLSSVM

    t0 = time.perf_counter()
    enc = make_tabular_preprocessor().fit(train.drop(columns=[target]))
    X, Xt = enc.transform(train.drop(columns=[target])), enc.transform(test.drop(columns=[target]))
    y = train[target].to_numpy()
    if task == "classification":
        classes = np.unique(y)
        model = NeoLSSVM(estimator_type="classifier").fit(X, (y == classes[1]).astype(int))
        pred = np.where(np.asarray(model.predict(Xt)).ravel() > 0.5, classes[1], classes[0])
    else:
        pred = NeoLSSVM(estimator_type="regressor").fit(X, y).predict(Xt)
    seconds = time.perf_counter() - t0
    return seconds, _score(test[target].to_numpy(), pred, task)


def _score(y, pred, task):
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.sqrt(np.mean((np.asarray(pred, float) - y) ** 2)))


def with_missing(frame, target, rate, seed):
    """``rate`` of the input values set to NaN completely at random."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    cols = [c for c in frame.columns if c != target]
    mask = rng.random((len(frame), len(cols))) < rate
    out[cols] = out[cols].mask(mask)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--splits", type=int, default=5, help="random adult splits beside the official one")
    ap.add_argument("--budget", type=float, default=3000, help="seconds; no new split starts after this")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per lssvm run")
    ap.add_argument("--default-timeout", type=float, default=600, help="seconds for lssvm with its defaults")
    ap.add_argument("--lssvm", action="append", default=None,
                    help="extra lssvm select arguments, one configuration per use ('' = defaults)")
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--gamma", type=float, nargs="+", default=[0.01, 0.05])
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--only-random", type=int, nargs="+", default=None, metavar="SEED",
                    help="run only these random adult splits (seeds), not the official one")
    ap.add_argument("--sets", nargs="+", default=["adult", "elevators"])
    ap.add_argument("--chunk-rows", type=int, default=None, help="also run each lssvm configuration streamed")
    ap.add_argument("--max-train", type=int, default=None, help="keep this many random training rows")
    ap.add_argument("--no-neo", action="store_true")
    args = ap.parse_args()
    configs = args.lssvm if args.lssvm is not None else ["", "--basis random --n-basis 1000"]
    data = Path(args.data)
    rows, t_start = [], time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="lssvm-tabular-"))

    def record(dataset, split, method, seconds, value, note=""):
        rows.append(dict(data=dataset, split=split, method=method, seconds=seconds, value=value, note=note))
        print(f"{dataset:9s} {split:9s} {method:38s} {value:8.4g} {seconds if seconds else np.nan:8.1f} s  "
              f"{note}", flush=True)

    def compare(dataset, split, train, test, target, task):
        if args.max_train is not None and len(train) > args.max_train:
            train = train.sample(args.max_train, random_state=0)
        tr, te = tmp / f"{dataset}-{split}-train.csv", tmp / f"{dataset}-{split}-test.csv"
        train.to_csv(tr, index=False)
        test.to_csv(te, index=False)
        streamed = [] if args.chunk_rows is None else [f"--chunk-rows {args.chunk_rows}"]
        for extra in configs:
            for more in ["", *streamed]:
                arg = f"{extra} {more}".strip()
                seconds, line = run_lssvm(tr, te, target, arg, args.timeout if extra else args.default_timeout)
                record(dataset, split, f"lssvm select {arg or '(defaults)'}", seconds, metric(line, task), line)
        if not args.no_sklearn:
            seconds, value, best = run_sklearn(train, test, target, task, args.C, args.gamma)
            name = "SVC" if task == "classification" else "KernelRidge"
            record(dataset, split, f"sklearn Pipeline + {name} GridSearchCV", seconds, value, str(best))
        if not args.no_neo:
            seconds, value = run_neo(train, test, target, task)
            record(dataset, split, "neo-ls-svm NeoLSSVM()", seconds, value)

    if "adult" in args.sets:
        train = pd.read_csv(data / "adult_train.csv.gz")
        test = pd.read_csv(data / "adult_test.csv.gz")
        if args.only_random is None:
            compare("adult", "official", train, test, "income", "classification")
        union = pd.concat([train, test], ignore_index=True)
        for s in (range(args.splits) if args.only_random is None else args.only_random):
            if time.perf_counter() - t_start > args.budget:
                print(f"budget of {args.budget:g} s spent: {s} random split(s) run", flush=True)
                break
            perm = np.random.default_rng(s).permutation(len(union))
            compare("adult", f"random-{s}", union.iloc[perm[:len(train)]], union.iloc[perm[len(train):]],
                    "income", "classification")
    if "elevators" in args.sets:
        train = with_missing(pd.read_csv(data / "elevators_train.csv.gz"), "Goal", 0.05, 0)
        test = with_missing(pd.read_csv(data / "elevators_test.csv.gz"), "Goal", 0.05, 1)
        compare("elevators", "5%-MCAR", train, test, "Goal", "regression")

    table = pd.DataFrame(rows)
    print()
    print(table.drop(columns="note").to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"\nload average {os.getloadavg()} (2 cores; the machine is shared with other work)")


if __name__ == "__main__":
    main()
