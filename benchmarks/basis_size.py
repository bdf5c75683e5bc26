"""The basis size chosen by exact CV (``n_basis="auto"``) against the
default size and against gradient boosting, on the public tables.

Tables (``--data``, default ``../shared/data``): elevators, ailerons, pol
(official train/test files), puma32H, Boston, MAGIC (seeded 75/25 splits,
stratified for classification; ``--splits`` seeds) and adult (official
files).  Inputs are encoded by :func:`lssvm.io.tabular.make_tabular_preprocessor`
(one-hot categorical, standard-scaled numeric) fitted on the training rows.

Contenders, each timed from the encoded matrix to test predictions:

* ``defaults``: ``SparseLSSVRCV()`` / ``SparseLSSVCCV()``;
* ``auto``: the same with ``n_basis="auto", time_budget=--time-budget``;
* ``auto-min``: the same curve, refitted at the size of lowest CV error
  instead of the one-SE size (the time is auto's plus that refit);
* ``ard`` (regression, ``--ard full``): ``SparseLSSVRCV(kernel="ard", search="gradient")``;
* ``ard-cheap`` (regression, ``--ard cheap``): the same with ``n_restarts=0,
  max_evaluations=20, selection_rule="min"``;
* ``hgb``: ``HistGradientBoostingRegressor()`` / ``HistGradientBoostingClassifier()``.

Prints per table and contender the test error (RMSE or error rate), the
seconds, the error relative to gradient boosting's, and for "auto" the size
chosen, the largest size grown and why the growth stopped.  The machine may
be shared: compare ratios measured in one run.

Run: ``python benchmarks/basis_size.py [--only pol,puma32H] [--splits 1] [--ard cheap|full|both]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

from lssvm import SparseLSSVCCV, SparseLSSVRCV
from lssvm.io.tabular import make_tabular_preprocessor

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
                    ROOT.parent / "shared" / "data")

#: name -> (train file, test file or None, task)
TABLES = {
    "elevators": ("elevators_train", "elevators_test", "regression"),
    "ailerons": ("ailerons_train", "ailerons_test", "regression"),
    "pol": ("pol_train", "pol_test", "regression"),
    "puma32H": ("puma32H", None, "regression"),
    "boston": ("boston", None, "regression"),
    "magic": ("magic", None, "classification"),
    "adult": ("adult_train", "adult_test", "classification"),
}


def splits(data, name, n_splits):
    """(X_train, y_train, X_test, y_test) per split, inputs encoded on the training rows."""
    tr, te, task = TABLES[name]
    frame = pd.read_csv(data / f"{tr}.csv.gz")
    target = frame.columns[-1]
    if te is not None:
        pairs = [(frame, pd.read_csv(data / f"{te}.csv.gz"))]
    else:
        pairs = [train_test_split(frame, test_size=0.25, random_state=s,
                                  stratify=frame[target] if task == "classification" else None)
                 for s in range(n_splits)]
    for train, test in pairs:
        ytr, yte = train[target].to_numpy(), test[target].to_numpy()
        if task == "classification":
            ytr = np.asarray([str(v).strip().rstrip(".") for v in ytr])
            yte = np.asarray([str(v).strip().rstrip(".") for v in yte])
        pre = make_tabular_preprocessor()
        Xtr = np.asarray(pre.fit_transform(train.drop(columns=[target])), dtype=float)
        Xte = np.asarray(pre.transform(test.drop(columns=[target])), dtype=float)
        yield Xtr, ytr, Xte, yte


def contenders(task, budget, ard):
    if task == "regression":
        out = {"defaults": lambda: SparseLSSVRCV(random_state=0),
               "auto": lambda: SparseLSSVRCV(n_basis="auto", time_budget=budget, random_state=0)}
        if ard in ("full", "both"):
            out["ard"] = lambda: SparseLSSVRCV(kernel="ard", search="gradient", random_state=0)
        if ard in ("cheap", "both"):  # one L-BFGS-B start of 20 evaluations, the lowest criterion kept
            out["ard-cheap"] = lambda: SparseLSSVRCV(kernel="ard", search="gradient", n_restarts=0, max_evaluations=20,
                                                     selection_rule="min", random_state=0)
        out["hgb"] = lambda: HistGradientBoostingRegressor(random_state=0)
        return out
    return {"defaults": lambda: SparseLSSVCCV(random_state=0),
            "auto": lambda: SparseLSSVCCV(n_basis="auto", time_budget=budget, random_state=0),
            "hgb": lambda: HistGradientBoostingClassifier(random_state=0)}


def error(task, y, pred):
    if task == "regression":
        return float(np.sqrt(np.mean((np.asarray(y, dtype=float) - pred) ** 2)))
    return float(np.mean(np.asarray(y) != np.asarray(pred)))


def _at_min(search, Xtr, ytr, Xte, yte, task, secs):
    curve = search.basis_curve_
    n = int(np.argmin(curve["cv_error"])) + 1
    est = clone(search.best_estimator_).set_params(basis=search.basis_pivots_[:n], alpha=curve["alpha"][n - 1])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = est.fit(Xtr, ytr).predict(Xte)
    return error(task, yte, pred), secs + time.perf_counter() - t0, f"n_basis {n}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--only", default=None)
    ap.add_argument("--splits", type=int, default=1)
    ap.add_argument("--time-budget", type=float, default=60.0)
    ap.add_argument("--ard", choices=["cheap", "full", "both"], default=None)
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(TABLES)
    print(f"load average {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print(f"{'table':10} {'split':>5} {'contender':9} {'error':>10} {'seconds':>8} {'/hgb':>6}  detail", flush=True)
    for name in names:
        task = TABLES[name][2]
        for s, (Xtr, ytr, Xte, yte) in enumerate(splits(args.data, name, args.splits)):
            rows = {}
            for label, make in contenders(task, args.time_budget, args.ard).items():
                model = make()
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(Xtr, ytr)
                    pred = model.predict(Xte)
                secs = time.perf_counter() - t0
                detail = ""
                if hasattr(model, "best_estimator_"):
                    detail = f"n_basis {model.best_estimator_.n_basis_}"
                    curve = getattr(model, "basis_curve_", None)
                    if curve is not None:
                        grown = curve["n_basis"][-1] if curve["n_basis"].size else 0
                        detail += f" (grown {grown}, {curve['stop_reason']}, replaced {curve['replaced']})"
                rows[label] = (error(task, yte, pred), secs, detail)
                if label == "auto" and model.basis_curve_["n_chosen"] is not None:  # the same curve, the size of lowest CV error instead of the one-SE size
                    rows["auto-min"] = _at_min(model, Xtr, ytr, Xte, yte, task, secs)
            ref = rows["hgb"][0]
            for label, (err, secs, detail) in rows.items():
                print(f"{name:10} {s:5d} {label:9} {err:10.4g} {secs:8.1f} {err / ref:6.3f}  {detail}", flush=True)


if __name__ == "__main__":
    main()
