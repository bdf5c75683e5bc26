"""The defaults' speed and accuracy on real data, side by side.

Every contender is run with its defaults on standardised inputs
(``StandardScaler`` in a pipeline, as a user would), in one process, and
timed over ``fit`` (search + refit) with test error on held-out rows:

* ``SparseLSSVRCV()`` / ``SparseLSSVCCV()``, ``NystromLSSVRCV()``,
  ``FixedSizeLSSVRCV()`` (and the classifiers), lssvm's defaults;
* ``sparse-dask`` and ``fixed-size-dask``: the same defaults on Dask arrays
  (the standardised rows in blocks of ``--dask-chunk-rows``; the basis is
  then chosen on a row sample);
* ``fixed-size-candidates``: ``FixedSizeLSSVRCV(size_search="candidates")``,
  the model size picked at every candidate (Karsmakers et al. 2011);
* neo-ls-svm's ``NeoLSSVM()`` (PyPI ``neo-ls-svm``);
* ``GridSearchCV(KernelRidge(kernel="rbf"), 5 gammas x 5 alphas, cv=5)`` and
  ``GridSearchCV(SVR(), same grid, cv=5)`` for regression with m <= 5,000.

Data: ``make_friedman1`` (noise 1, 2,000 test rows) at the requested sizes;
MAGIC and adult (random 2/3 splits; adult encoded as in
``paper002_large.py``); elevators, ailerons and pol (their train/test files).

Run:  python benchmarks/defaults_speed.py [--sets friedman1:2000 magic ...] [--splits 1]
      [--contenders sparse neo krr ...] [--repeats 2] [--growth 10000 30000 100000]

Every contender is fitted once on a small problem first (imports, JIT and
thread pools are not charged to the first data set), then the contenders
of one split run interleaved ``--repeats`` times and the fastest run of
each counts.  Prints one table (seconds, test MSE or error rate, ratios to
neo-ls-svm) and ``os.getloadavg()``: the machine may be shared, so compare
within a data set; the process CPU time (all BLAS threads) is printed as
well, as it depends less on other work than the wall time.

``--growth M1 M2 ...`` times ``lssvm select`` (a subprocess, defaults but
``--n-basis 300``) on friedman1 CSV files of those sizes instead: the time
at a fixed basis size should grow at most linearly in m.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lssvm import (  # noqa: E402
    FixedSizeLSSVCCV,
    FixedSizeLSSVRCV,
    NystromLSSVCCV,
    NystromLSSVRCV,
    SparseLSSVCCV,
    SparseLSSVRCV,
)

DATA = Path(os.environ.get("LSSVM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import paper002_large  # noqa: E402

paper002_large.DATA = DATA  # its own default is the checkout's sibling folder
load_large = paper002_large.load

#: The GridSearchCV peers' 5 x 5 grid on standardised inputs (gamma around 1 / n_features).
PEER_GAMMAS = np.logspace(-3, 1, 5)
PEER_ALPHAS = np.logspace(-3, 1, 5)
PEER_MAX_M = 5000


def datasets(specs, splits, seed=0):
    """Yield (name, split, X_train, y_train, X_test, y_test, classification)."""
    for spec in specs:
        if spec.startswith("friedman1:"):
            m = int(spec.split(":")[1])
            for s in range(splits):
                X, y = make_friedman1(n_samples=m + 2000, noise=1.0, random_state=seed + s)
                yield f"friedman1 m={m}", s, X[:m], y[:m], X[m:], y[m:], False
        elif spec in ("magic", "adult"):
            X, y, _ = load_large(spec)
            for s in range(splits):
                Xa, Xb, ya, yb = train_test_split(X, y, train_size=2 / 3, random_state=seed + s, stratify=y)
                yield spec, s, Xa, ya, Xb, yb, True
        else:
            tr = pd.read_csv(DATA / f"{spec}_train.csv.gz")
            te = pd.read_csv(DATA / f"{spec}_test.csv.gz")
            Xa, ya = tr.iloc[:, :-1].to_numpy(float), tr.iloc[:, -1].to_numpy(float)
            Xb, yb = te.iloc[:, :-1].to_numpy(float), te.iloc[:, -1].to_numpy(float)
            keep = Xa.std(axis=0) > 0  # pol has constant columns
            yield spec, 0, Xa[:, keep], ya, Xb[:, keep], yb, False


def contenders(names, classification, m):
    out = {}
    for name in names:
        if name == "sparse":
            out[name] = SparseLSSVCCV() if classification else SparseLSSVRCV()
        elif name == "nystrom":
            out[name] = NystromLSSVCCV() if classification else NystromLSSVRCV()
        elif name == "fixed-size":
            out[name] = FixedSizeLSSVCCV() if classification else FixedSizeLSSVRCV()
        elif name == "fixed-size-candidates":
            cls = FixedSizeLSSVCCV if classification else FixedSizeLSSVRCV
            out[name] = cls(size_search="candidates")
        elif name in ("sparse-dask", "fixed-size-dask"):
            family = (SparseLSSVCCV, SparseLSSVRCV) if name == "sparse-dask" else (FixedSizeLSSVCCV, FixedSizeLSSVRCV)
            out[name] = OnDask(family[0]() if classification else family[1]())
        elif name == "neo":
            from neo_ls_svm import NeoLSSVM

            out[name] = NeoLSSVM()
        elif name in ("krr", "svr") and not classification and m <= PEER_MAX_M:
            if name == "krr":
                out[name] = GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": PEER_GAMMAS, "alpha": PEER_ALPHAS},
                                         cv=5, n_jobs=1)
            else:
                out[name] = GridSearchCV(SVR(), {"gamma": PEER_GAMMAS, "C": 1.0 / PEER_ALPHAS}, cv=5, n_jobs=1)
    return {k: v if isinstance(v, OnDask) else make_pipeline(StandardScaler(), v) for k, v in out.items()}


class OnDask:
    """An estimator fitted on Dask arrays of the standardised rows (blocks of ``CHUNK_ROWS`` rows);
    predicts from NumPy rows.  ``self[-1]`` is the estimator, as for a pipeline."""

    CHUNK_ROWS = 5000

    def __init__(self, est):
        self.est = est

    def __getitem__(self, i):
        return self.est

    def fit(self, X, y):
        import dask.array as da

        self.scaler = StandardScaler().fit(X)
        chunk = min(self.CHUNK_ROWS, X.shape[0])
        self.est.fit(da.from_array(self.scaler.transform(X), chunks=(chunk, -1)), da.from_array(y, chunks=chunk))
        return self

    def predict(self, X):
        return np.asarray(self.est.predict(self.scaler.transform(X)))


def warm_up(names):
    """Fit every contender once on small data (regression and classification)."""
    X, y = make_friedman1(n_samples=400, noise=1.0, random_state=99)
    for clf, target in ((False, y), (True, np.where(y > np.median(y), 1.0, -1.0))):
        for est in contenders(names, clf, X.shape[0]).values():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, target)


def fit_once(est, Xa, ya, Xb, yb, clf):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(Xa, ya)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        pred = est.predict(Xb)
    err = float(np.mean(pred != yb)) if clf else float(np.mean((pred - yb) ** 2))
    final = est[-1]
    best = getattr(final, "best_estimator_", None)
    size = getattr(best, "n_basis_", "")
    if getattr(best, "n_support_", None) is not None:  # fixed size: prototypes used / pool
        size = f"{best.n_support_}/{size}"
    return secs, cpu, err, size


def growth(sizes, n_basis=300):
    """``lssvm select`` wall time on friedman1 of each size at a fixed basis size."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in sizes:
            X, y = make_friedman1(n_samples=m, noise=1.0, random_state=0)
            path = Path(tmp) / f"friedman1_{m}.csv"
            pd.DataFrame(np.column_stack([X, y]), columns=[f"x{i}" for i in range(10)] + ["y"]).to_csv(path,
                                                                                                       index=False)
            cmd = [sys.executable, "-m", "lssvm.cli", "select", str(path), "--target", "y", "--n-basis",
                   str(n_basis), "--output", str(Path(tmp) / f"model_{m}")]
            t0 = time.perf_counter()
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp)
            secs = time.perf_counter() - t0
            if out.returncode:
                print(out.stdout[-2000:], out.stderr[-2000:])
            rows.append(dict(m=m, seconds=secs, load=os.getloadavg()[0]))
            print(f"lssvm select friedman1 m={m} n_basis={n_basis}: {secs:.2f} s (rc {out.returncode}), "
                  f"{1e6 * secs / m:.1f} us per row, load {os.getloadavg()[0]:.1f}", flush=True)
    df = pd.DataFrame(rows)
    df["per_row_vs_first"] = (df.seconds / df.m) / (df.seconds[0] / df.m[0])
    print(df.to_string(float_format=lambda v: f"{v:.3g}"))
    return df


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", nargs="+", default=["friedman1:1000", "friedman1:2000", "friedman1:5000",
                                                 "friedman1:20000", "magic", "adult", "elevators", "ailerons",
                                                 "pol"])
    p.add_argument("--splits", type=int, default=5, help="random splits of friedman1, MAGIC and adult")
    p.add_argument("--contenders", nargs="+", default=["sparse", "nystrom", "fixed-size", "neo", "krr", "svr"])
    p.add_argument("--repeats", type=int, default=1, help="interleaved runs per split; the fastest counts")
    p.add_argument("--growth", nargs="+", type=int, default=None, help="time lssvm select at these sizes instead")
    p.add_argument("--dask-chunk-rows", type=int, default=OnDask.CHUNK_ROWS, help="rows per block of the Dask rows")
    add_run_options(p)
    args = p.parse_args(argv)
    OnDask.CHUNK_ROWS = args.dask_chunk_rows
    if args.growth:
        if args.growth_estimator:
            return growth_estimator(args.growth, args.n_basis, args.csv)
        return growth_with_cpu(args.growth, args.n_basis, args.csv)
    rows = []
    print(f"load before: {os.getloadavg()}", flush=True)
    warm_up(args.contenders)
    for name, split, Xa, ya, Xb, yb, clf in datasets(args.sets, args.splits):
        best = {}
        for _ in range(args.repeats):
            for cname, est in contenders(args.contenders, clf, Xa.shape[0]).items():
                run = guarded_fit(args, cname, est, Xa, ya, Xb, yb, clf, dict(data=name, split=split))
                if cname not in best or run[0] < best[cname][0]:
                    best[cname] = run
        for cname, (secs, cpu, err, size) in best.items():
            rows.append(dict(data=name, split=split, m=Xa.shape[0], contender=cname, seconds=secs, cpu=cpu,
                             error=err, scoring="error rate" if clf else "MSE", n_basis=size))
            print(f"{name:22s} split {split} {cname:10s} {secs:8.2f} s ({cpu:.2f} s CPU)  {rows[-1]['scoring']} "
                  f"{err:.5g}  basis {size}  load {os.getloadavg()[0]:.1f}", flush=True)
    df = pd.DataFrame(rows)
    mean = df.groupby(["data", "contender"], sort=False)[["m", "seconds", "cpu", "error"]].mean()
    neo = mean.xs("neo", level="contender") if "neo" in args.contenders else None
    if neo is not None:
        ref = mean.index.get_level_values(0)
        mean["time/neo"] = mean["seconds"] / neo["seconds"].reindex(ref).to_numpy()
        mean["cpu/neo"] = mean["cpu"] / neo["cpu"].reindex(ref).to_numpy()
        mean["error/neo"] = mean["error"] / neo["error"].reindex(ref).to_numpy()
    if "sparse" in args.contenders:  # each family's defaults against the sparse defaults
        ref = mean.index.get_level_values(0)
        sparse = mean.xs("sparse", level="contender")
        mean["time/sparse"] = mean["seconds"] / sparse["seconds"].reindex(ref).to_numpy()
        mean["error/sparse"] = mean["error"] / sparse["error"].reindex(ref).to_numpy()
    print()
    print(mean.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nsplits: {args.splits}, repeats: {args.repeats}; load after: {os.getloadavg()}")
    return df


# --- Runner options: a per-fit time limit, rows written as they
# --- finish, and the growth check with CPU time.  Kept apart from the lssvm side of this script.


def add_run_options(parser):
    """``--timeout``, ``--csv`` and ``--n-basis`` (for ``--growth``)."""
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop a contender's fit after this many seconds and record it as timed out")
    parser.add_argument("--csv", type=Path, default=None, help="append every finished row to this CSV file")
    parser.add_argument("--n-basis", type=int, default=300, help="fixed basis size of the --growth check")
    parser.add_argument("--growth-estimator", action="store_true",
                        help="with --growth: time SparseLSSVRCV(n_basis=...).fit in this process, not lssvm select")


class FitTimeout(BaseException):
    """A contender ran past ``--timeout`` (a BaseException: GridSearchCV records an Exception as a score)."""


def _alarm(signum, frame):
    raise FitTimeout


def guarded_fit(args, cname, est, Xa, ya, Xb, yb, clf, where):
    """:func:`fit_once` under ``--timeout`` (SIGALRM), its row appended to ``--csv``.

    A timed-out fit returns ``(elapsed, cpu, nan, "timed out")`` so that the table still shows it;
    the signal is only seen between Python bytecodes, so a limit is overrun by at most one BLAS or
    libsvm call.
    """
    import csv
    import math
    import signal

    t0, c0 = time.perf_counter(), time.process_time()
    old = None
    if args.timeout:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
    try:
        run = fit_once(est, Xa, ya, Xb, yb, clf)
    except FitTimeout:
        run = (time.perf_counter() - t0, time.process_time() - c0, math.nan, "timed out")
        print(f"{where['data']} split {where['split']} {cname}: stopped after {run[0]:.0f} s (--timeout)",
              flush=True)
    finally:
        if args.timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if args.csv is not None:
        row = dict(**where, m=Xa.shape[0], contender=cname, seconds=run[0], cpu=run[1], error=run[2],
                   scoring="error rate" if clf else "MSE", n_basis=run[3], load1=os.getloadavg()[0],
                   utc=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()))
        new = not args.csv.exists()
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)
    return run


def growth_with_cpu(sizes, n_basis=300, csv_path=None):
    """:func:`growth` with the children's CPU time (user + system) and the load per size.

    Each size runs ``lssvm select`` once in a subprocess; the CPU time is the difference of
    ``resource.getrusage(RUSAGE_CHILDREN)`` around it, so it covers all of that process's BLAS threads.
    """
    import resource

    rows = []
    for m in sizes:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load0 = os.getloadavg()[0]
        df = growth([m], n_basis)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows.append(dict(m=m, n_basis=n_basis, seconds=float(df.seconds[0]), cpu=cpu, load_before=load0,
                         load_after=os.getloadavg()[0]))
    return _growth_table(rows, csv_path)


def growth_estimator(sizes, n_basis=300, csv_path=None):
    """``SparseLSSVRCV(n_basis=n_basis)`` fit time on friedman1 of each size, in this process.

    The linear-growth check without the command line's fixed start-up (imports, cost probe, report):
    the search's defaults but for the basis size, on standardised inputs, wall and process CPU time.
    """
    rows = []
    warm_up(["sparse"])
    for m in sizes:
        X, y = make_friedman1(n_samples=m, noise=1.0, random_state=0)
        est = make_pipeline(StandardScaler(), SparseLSSVRCV(n_basis=n_basis))
        load0 = os.getloadavg()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(X, y)
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows.append(dict(m=m, n_basis=est[-1].best_estimator_.n_basis_, seconds=secs, cpu=cpu, load_before=load0,
                         load_after=os.getloadavg()[0]))
        print(f"SparseLSSVRCV(n_basis={n_basis}) friedman1 m={m}: {secs:.2f} s ({cpu:.2f} s CPU), "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    return _growth_table(rows, csv_path)


def _growth_table(rows, csv_path):
    """The growth rows as a table, with each size's time and CPU over the first size's; printed, and
    written to ``csv_path`` when given."""
    out = pd.DataFrame(rows)
    out["wall_vs_first"] = out.seconds / out.seconds[0]
    out["cpu_vs_first"] = out.cpu / out.cpu[0]
    out["m_vs_first"] = out.m / out.m[0]
    print(out.to_string(float_format=lambda v: f"{v:.3g}"))
    if csv_path is not None:
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        out.to_csv(csv_path, index=False)
    return out


if __name__ == "__main__":
    main()
