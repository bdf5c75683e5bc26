"""lssvm against gradient boosting and other kernel methods on real tables:
test error, seconds, and the error ratio to gradient boosting per table.

Tables (``--data``, default ``../shared/data``): every regression and
classification table there that is not a paper's small benchmark —
elevators, ailerons, pol (official train/test files), puma32H, Boston,
MAGIC (no official split) and adult (official files) — plus Friedman #1
(``sklearn.datasets.make_friedman1``, 10 inputs of which 5 matter, noise
sd 1) with 20,000 training and 5,000 test rows.  Split 0 is the official
split where there is one; every other split (and every split of a table
without one) is a seeded random split of all rows with the official sizes,
or 75/25, stratified for classification.  Inputs are encoded by
:func:`lssvm.io.tabular.make_tabular_preprocessor` (one-hot categorical,
standard-scaled numeric) fitted on the training rows; every contender gets
the same matrix.

Contenders, each timed from the encoded matrix to test predictions:

* ``lssvm``: ``SparseLSSVRCV()`` / ``SparseLSSVCCV()`` with their defaults (the isotropic search, then
  the ARD stage and the basis growth within ``time_budget=60``; the note gives the stage's line and, for LOO
  regression, how many paired standard errors the ARD model's LOO error lies below the isotropic one's);
* ``lssvm-fixed``: the defaults with the fixed basis size rule (``n_basis=None``) instead of the size
  grown by exact CV;
* ``lssvm-iso``: the defaults without the ARD stage (``ard=False``);
* ``lssvm-ard``: the defaults with the ARD stage always run to its 20 evaluations (``ard=True,
  time_budget=None``): what the stage gives where the budget allows it (a machine less loaded);
* ``lssvm-auto``: the same with ``n_basis="auto", time_budget=--time-budget``
  (the basis size chosen by exact CV; ``lssvm select --n-basis auto``);
* ``lssvm-it``: the defaults inside :class:`lssvm.estimators.input_transform.InputTransformSearch`: the
  numeric inputs as given or mapped to normal scores per column (``QuantileTransformer``), chosen by the
  search's exact CV where some column is skewed;
* ``lssvm-qt``: the defaults on the quantile-transformed inputs (the transform forced, no comparison);
* ``lssvm-tt`` (regression): the defaults with the target transform (identity, log or Box-Cox) chosen
  by exact LOO on the original scale (:class:`lssvm.estimators.target_transform.TargetTransformRegressor`);
* ``hgb``: ``HistGradientBoostingRegressor()`` / ``HistGradientBoostingClassifier()``
  (defaults, ``random_state=0``);
* ``neo``: neo-ls-svm's ``NeoLSSVM()`` with its defaults, when installed
  (``pip install neo-ls-svm``); its numba functions are compiled on a tiny
  problem first, outside the timing;
* ``krr-grid`` (regression): ``GridSearchCV(KernelRidge(kernel="rbf"))``
  over alpha in 10^{-4..1} and gamma in 2^{-8..2} / d (3 folds);
* ``svc-grid`` (classification): ``GridSearchCV(SVC())`` over C in
  10^{-1..3} and gamma in 2^{-8..2} / d (3 folds).

The two grids train on at most ``--max-grid-rows`` (5,000) random training
rows (their cost is cubic or worse in the rows); the others on all.

Prints one line per table, split and contender (test RMSE or error rate,
seconds, error / gradient boosting's on that split), then a summary per
table and contender: the mean error, the mean of the per-split ratios to
gradient boosting with its spread (min-max), and the mean seconds.
``--csv FILE`` writes the per-split rows.  The machine may be shared: the
load average is printed; compare ratios measured in one run.

Run: ``python benchmarks/tables.py`` (everything: hours),
``python benchmarks/tables.py --quick`` (one split of Boston, puma32H and
MAGIC), or ``--tables pol,adult --splits 2``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

from lssvm import SparseLSSVCCV, SparseLSSVRCV
from lssvm.estimators.ard_stage import ard_summary
from lssvm.estimators.input_transform import InputTransformSearch
from lssvm.estimators.target_transform import TargetTransformRegressor
from lssvm.io.tabular import make_tabular_preprocessor

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
                    ROOT.parent / "shared" / "data")

#: name -> (train file, test file or None, task); "friedman1" is generated
TABLES = {
    "elevators": ("elevators_train", "elevators_test", "regression"),
    "ailerons": ("ailerons_train", "ailerons_test", "regression"),
    "pol": ("pol_train", "pol_test", "regression"),
    "puma32H": ("puma32H", None, "regression"),
    "boston": ("boston", None, "regression"),
    "friedman1": (None, None, "regression"),
    "magic": ("magic", None, "classification"),
    "adult": ("adult_train", "adult_test", "classification"),
}
QUICK = ("boston", "puma32H", "magic")
CONTENDERS = ("lssvm", "lssvm-fixed", "lssvm-iso", "lssvm-ard", "lssvm-auto", "lssvm-it", "lssvm-qt", "lssvm-tt",
              "hgb", "krr-grid", "svc-grid", "neo")
FRIEDMAN_TRAIN, FRIEDMAN_TEST = 20_000, 5_000


def _frames(data, name):
    """(train frame, test frame or None, target column) of a table as stored."""
    if name == "friedman1":
        X, y = make_friedman1(FRIEDMAN_TRAIN + FRIEDMAN_TEST, n_features=10, noise=1.0, random_state=0)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)]).assign(y=y)
        return frame.iloc[:FRIEDMAN_TRAIN], frame.iloc[FRIEDMAN_TRAIN:], "y"
    tr, te, _ = TABLES[name]
    train = pd.read_csv(data / f"{tr}.csv.gz")
    return train, None if te is None else pd.read_csv(data / f"{te}.csv.gz"), train.columns[-1]


def _labels(values):
    """Class labels as text, the adult test file's trailing dots removed."""
    return np.asarray([str(v).strip().rstrip(".") for v in values])


def splits(data, name, n_splits):
    """(X_train, y_train, X_test, y_test) per split, inputs encoded on the training rows.

    Split 0 is the given split where the table has one; the others are seeded random splits of all rows
    with the same sizes (75/25 without a given split), stratified for classification.
    """
    task = TABLES[name][2]
    train, test, target = _frames(data, name)
    whole = train if test is None else pd.concat([train, test], ignore_index=True)
    if task == "classification":  # class codes 0..k-1, the same for every contender
        whole = whole.assign(**{target: np.unique(_labels(whole[target]), return_inverse=True)[1].ravel()})
    n_test = len(whole) // 4 if test is None else len(test)
    for s in range(n_splits):
        if s == 0 and test is not None:
            tr, te = whole.iloc[:len(train)], whole.iloc[len(train):]
        else:
            tr, te = train_test_split(whole, test_size=n_test, random_state=s,
                                      stratify=whole[target] if task == "classification" else None)
        pre = make_tabular_preprocessor()
        Xtr = np.asarray(pre.fit_transform(tr.drop(columns=[target])), dtype=float)
        Xte = np.asarray(pre.transform(te.drop(columns=[target])), dtype=float)
        ytr, yte = tr[target].to_numpy(), te[target].to_numpy()
        if task == "regression":
            ytr, yte = ytr.astype(float), yte.astype(float)
        yield Xtr, ytr, Xte, yte


def _grid_widths(d):
    return [2.0 ** k / d for k in range(-8, 3, 2)]


def contenders(task, d, budget, neo):
    """name -> (factory, training rows cap or None)."""
    if task == "regression":
        out = {"lssvm": (lambda: SparseLSSVRCV(random_state=0), None),
               "lssvm-fixed": (lambda: SparseLSSVRCV(n_basis=None, random_state=0), None),
               "lssvm-iso": (lambda: SparseLSSVRCV(ard=False, random_state=0), None),
               "lssvm-ard": (lambda: SparseLSSVRCV(ard=True, time_budget=None, random_state=0), None),
               "lssvm-auto": (lambda: SparseLSSVRCV(n_basis="auto", time_budget=budget, random_state=0), None),
               "lssvm-it": (lambda: InputTransformSearch(SparseLSSVRCV(random_state=0)), None),
               "lssvm-qt": (lambda: InputTransformSearch(SparseLSSVRCV(random_state=0), "quantile"), None),
               "lssvm-tt": (lambda: TargetTransformRegressor(SparseLSSVRCV(random_state=0)), None),
               "hgb": (lambda: HistGradientBoostingRegressor(random_state=0), None)}
        grid = {"alpha": list(np.logspace(-4, 0, 5)), "gamma": _grid_widths(d)}
        out["krr-grid"] = (lambda: GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=3), "grid")
    else:
        out = {"lssvm": (lambda: SparseLSSVCCV(random_state=0), None),
               "lssvm-fixed": (lambda: SparseLSSVCCV(n_basis=None, random_state=0), None),
               "lssvm-iso": (lambda: SparseLSSVCCV(ard=False, random_state=0), None),
               "lssvm-ard": (lambda: SparseLSSVCCV(ard=True, time_budget=None, random_state=0), None),
               "lssvm-auto": (lambda: SparseLSSVCCV(n_basis="auto", time_budget=budget, random_state=0), None),
               "lssvm-it": (lambda: InputTransformSearch(SparseLSSVCCV(random_state=0)), None),
               "lssvm-qt": (lambda: InputTransformSearch(SparseLSSVCCV(random_state=0), "quantile"), None),
               "hgb": (lambda: HistGradientBoostingClassifier(random_state=0), None)}
        grid = {"C": list(np.logspace(-1, 3, 5)), "gamma": _grid_widths(d)}
        out["svc-grid"] = (lambda: GridSearchCV(SVC(), grid, cv=3), "grid")
    if neo is not None:
        out["neo"] = (lambda: neo(), None)
    return out


def _neo_class():
    """neo-ls-svm's NeoLSSVM, its numba functions compiled on a tiny problem; None when not installed."""
    try:
        from neo_ls_svm import NeoLSSVM
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NeoLSSVM().fit(X, X[:, 0]).predict(X)
        NeoLSSVM().fit(X, (X[:, 0] > 0).astype(int)).predict(X)
    return NeoLSSVM


def error(task, y, pred):
    """Test RMSE (regression) or error rate (classification)."""
    if task == "regression":
        return float(np.sqrt(np.mean((np.asarray(y, dtype=float) - np.ravel(pred)) ** 2)))
    return float(np.mean(np.asarray(y) != np.ravel(pred)))


def run_one(make, cap, Xtr, ytr, Xte, yte, task, max_grid_rows, seed):
    """(test error, seconds, note) of one contender; the grids on at most ``max_grid_rows`` rows."""
    note = ""
    if cap == "grid" and Xtr.shape[0] > max_grid_rows:
        keep = np.random.default_rng(seed).choice(Xtr.shape[0], max_grid_rows, replace=False)
        Xtr, ytr, note = Xtr[keep], ytr[keep], f"{max_grid_rows} rows"
    model = make()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(Xtr, ytr)
            pred = model.predict(Xte)
        except Exception as exc:  # a contender that fails is reported, not fatal to the table
            return float("nan"), time.perf_counter() - t0, f"failed: {type(exc).__name__}: {str(exc)[:60]}"
    seconds = time.perf_counter() - t0
    if hasattr(model, "target_transform_"):
        tr, scores = model.target_transform_, model.target_transform_scores_
        lam = "" if tr.lmbda is None else f" {tr.lmbda:.2f}"
        note = f"target {tr.name}{lam}" + (f" (CV MSE {', '.join(f'{k} {v:.4g}' for k, v in scores.items())})"
                                           if scores else "")
        model = model.estimator_
    if hasattr(model, "input_transform_"):
        scores = model.input_transform_scores_
        note = (note + "; " if note else "") + f"inputs {model.input_transform_}" + (
            f" (CV score {', '.join(f'{k} {v:.5g}' for k, v in scores.items())})" if scores else "")
        model = model.estimator_
    stage = getattr(model, "ard_stage_", None)
    if isinstance(stage, dict) and stage.get("ran"):
        z = stage.get("paired_z", float("nan"))
        note = (note + "; " if note else "") + ard_summary(stage) + ("" if z != z else f", {z:.2f} paired SE")
    elif isinstance(stage, dict) and stage.get("reason") != "ard=False":
        note = (note + "; " if note else "") + ard_summary(stage)
    curve = getattr(model, "basis_curve_", None)
    if isinstance(curve, dict) and curve.get("n_chosen") is not None:
        note += (f"basis {model.best_estimator_.n_basis_} (grown {curve['n_basis'][-1]}, {curve['stop_reason']}"
                f"{', kept' if curve.get('replaced') else ''})")
    elif hasattr(model, "best_estimator_") and hasattr(model.best_estimator_, "n_basis_"):
        note = (note + "; " if note else "") + f"basis {model.best_estimator_.n_basis_}"
    return error(task, yte, pred), seconds, note


def summary(records):
    """Per table and contender: mean error, mean / min / max of the per-split ratio to hgb, mean seconds."""
    df = pd.DataFrame(records)
    ref = df[df.contender == "hgb"].set_index(["table", "split"])["error"]
    df["ratio"] = df["error"].to_numpy() / ref.reindex(pd.MultiIndex.from_frame(df[["table", "split"]])).to_numpy()
    g = df.groupby(["table", "contender"], sort=False)  # in the order run
    return g.agg(splits=("split", "size"), error=("error", "mean"), ratio=("ratio", "mean"),
                 ratio_min=("ratio", "min"), ratio_max=("ratio", "max"), seconds=("seconds", "mean")).reset_index()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--tables", default=None, help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument("--splits", type=int, default=None, help="random splits per table (default 5; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help=f"one split of {', '.join(QUICK)} (unless --tables/--splits)")
    ap.add_argument("--time-budget", type=float, default=60.0, help="seconds for lssvm-auto's search")
    ap.add_argument("--max-grid-rows", type=int, default=5000)
    ap.add_argument("--no-neo", action="store_true", help="leave neo-ls-svm out")
    ap.add_argument("--only", default=None, help="comma-separated contenders (hgb is always run)")
    ap.add_argument("--csv", type=Path, default=None, help="write the per-split rows here")
    args = ap.parse_args(argv)
    names = args.tables.split(",") if args.tables else list(QUICK if args.quick else TABLES)
    unknown = sorted(set(names) - set(TABLES))
    if unknown:
        ap.error(f"unknown table(s) {unknown}; choose from {', '.join(TABLES)}")
    n_splits = args.splits if args.splits is not None else 1 if args.quick else 5
    only = None if args.only is None else set(args.only.split(",")) | {"hgb"}
    if only is not None and only - set(CONTENDERS):
        ap.error(f"unknown contender(s) {sorted(only - set(CONTENDERS))}; choose from {', '.join(CONTENDERS)}")
    neo = None if args.no_neo or (only is not None and "neo" not in only) else _neo_class()
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs; OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}; neo-ls-svm {'in' if neo else 'not in'}stalled; "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"{'table':10} {'split':>5} {'rows':>6} {'cols':>4} {'contender':10} {'error':>10} {'seconds':>8} "
          f"{'/hgb':>6}  note", flush=True)
    records = []
    for name in names:
        task = TABLES[name][2]
        for s, (Xtr, ytr, Xte, yte) in enumerate(splits(args.data, name, n_splits)):
            runs = contenders(task, Xtr.shape[1], args.time_budget, neo)
            ref = None
            for label in ["hgb"] + [k for k in runs if k != "hgb"]:  # the reference first: each line printed as run
                if only is not None and label not in only:
                    continue
                make, cap = runs[label]
                err, secs, note = run_one(make, cap, Xtr, ytr, Xte, yte, task, args.max_grid_rows, s)
                ref = err if ref is None else ref
                records.append({"table": name, "task": task, "split": s, "rows": Xtr.shape[0], "contender": label,
                                "error": err, "seconds": secs, "note": note})
                print(f"{name:10} {s:5d} {Xtr.shape[0]:6d} {Xtr.shape[1]:4d} {label:10} {err:10.4g} {secs:8.1f} "
                      f"{err / ref:6.3f}  {note}", flush=True)
    if args.csv is not None:
        pd.DataFrame(records).to_csv(args.csv, index=False)
    table = summary(records)
    print(f"\nsummary (error: test RMSE or error rate, mean over splits; /hgb: mean of the per-split ratios, "
          f"min-max; load average now {os.getloadavg()[0]:.1f})")
    print(f"{'table':10} {'contender':10} {'splits':>6} {'error':>10} {'/hgb':>6} {'min-max':>13} {'seconds':>8}")
    for r in table.itertuples():
        print(f"{r.table:10} {r.contender:10} {r.splits:6d} {r.error:10.4g} {r.ratio:6.3f} "
              f"{r.ratio_min:6.3f}-{r.ratio_max:<6.3f} {r.seconds:8.1f}")


if __name__ == "__main__":
    main()
