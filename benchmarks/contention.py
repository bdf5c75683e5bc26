"""Fit + 20-alpha LOO under CPU contention: lssvm's default thread
rule against forced 1 and 2 threads and scikit-learn, idle and beside busy
processes.

The workload is ``speed_loo.py``'s: m = 5000, d = 10, RBF(0.1), n basis
points drawn by scikit-learn's ``Nystroem`` (the same points for both),
``SparseLSSVR(basis=Z).fit`` then ``loo_residuals`` over 20 alphas; the peer
is ``make_pipeline(Nystroem(n), RidgeCV(alphas))``.  Conditions:

* ``idle``: nothing started by the benchmark (the machine may still be shared:
  the 1-minute load average and the runnable count are printed per row);
* ``one``: one busy process (a pure-Python loop) pinned to core 0;
* ``two``: two busy processes, pinned to cores 0 and 1.

The busy processes are started before a condition's rows and killed after.
Settings of one n are interleaved (default, n_jobs=1, n_jobs=2, sklearn),
each timed as the best of ``--repeats`` (a run over ``--cap`` seconds is not
repeated).

``--efficiency`` also prints the idle-efficiency checks: fit time against
the sum of its BLAS kernels run alone (n = 500), and fit GFLOP/s against the
DGEMM rate measured now (n >= 1000; flops as in ``speed_loo.fit_flops``).

``--compare TREE``: the idle default against the lssvm at ``TREE/src`` (e.g.
a ``git worktree`` of the previous commit), in interleaved subprocesses.

Run:  python benchmarks/contention.py [--n 500 1000 2000 2500] [--conditions idle one two]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

M, D, GAMMA = 5000, 10, 0.1
ALPHAS = np.geomspace(1e-3, 1e3, 20)
BUSY = "while True:\n    pass\n"


def _data(n):
    from _common import synthetic_regression
    from sklearn.kernel_approximation import Nystroem

    X, y = synthetic_regression(np.random.default_rng(0), M, D)
    ny = Nystroem(kernel="rbf", gamma=GAMMA, n_components=n, random_state=0).fit(X)
    return X, y, X[ny.component_indices_]


def _timed(func, repeats, cap):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
        if best > cap:
            break
    return best


def _ours(X, y, Z, n_jobs):
    from lssvm import SparseLSSVR

    kw = {} if n_jobs == "default" else {"n_jobs": n_jobs}
    est = SparseLSSVR(kernel="rbf", gamma=GAMMA, alpha=float(ALPHAS[0]), basis=Z, **kw)
    return lambda: est.fit(X, y).loo_residuals(ALPHAS)


def _sklearn(X, y, n):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(Nystroem(kernel="rbf", gamma=GAMMA, n_components=n, random_state=0),
                         RidgeCV(alphas=ALPHAS, store_cv_results=True))
    return lambda: pipe.fit(X, y)


def _runnable():
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except OSError:
        return -1


def _start_busy(k):
    procs = []
    for core in range(k):
        p = subprocess.Popen([sys.executable, "-c", BUSY])
        try:
            os.sched_setaffinity(p.pid, {core % (os.cpu_count() or 1)})
        except (AttributeError, OSError):
            pass
        procs.append(p)
    time.sleep(0.5 if k else 0.0)
    return procs


def contention(args):
    from lssvm._threads import current_plan

    rows = []
    busy_of = {"idle": 0, "one": 1, "two": 2}
    data = {n: _data(n) for n in args.n}
    for cond in args.conditions:
        procs = _start_busy(busy_of[cond])
        try:
            for n in args.n:
                X, y, Z = data[n]
                row = {"condition": cond, "n": n, "load1": round(os.getloadavg()[0], 2), "runnable": _runnable(),
                       "default_threads": current_plan().threads}
                runs = [("default", _ours(X, y, Z, "default")), ("1 thread", _ours(X, y, Z, 1)),
                        ("2 threads", _ours(X, y, Z, 2)), ("sklearn", _sklearn(X, y, n))]
                if args.sklearn_max_n is not None and n > args.sklearn_max_n:
                    runs, row["sklearn"] = runs[:3], np.nan
                for name, f in runs:
                    reps = args.sklearn_repeats if name == "sklearn" else args.repeats
                    row[name] = _timed(f, reps, args.cap)
                best = min(row["1 thread"], row["2 threads"])
                row["default/best"] = row["default"] / best
                row["sklearn/default"] = row["sklearn"] / row["default"]
                row["load1_end"] = round(os.getloadavg()[0], 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            for p in procs:
                p.kill()
                p.wait()
    return rows


def efficiency(args):
    """Idle: fit vs the sum of its kernels (n = 500) and vs DGEMM (n >= 1000)."""
    from _common import gemm_rate
    from speed_loo import fit_flops, phase_times

    from lssvm import SparseLSSVR

    out = []
    for n in args.n:
        X, y, Z = _data(n)
        est = SparseLSSVR(kernel="rbf", gamma=GAMMA, alpha=float(ALPHAS[0]), basis=Z)
        t_fit = _timed(lambda: est.fit(X, y), args.repeats + 2, np.inf)
        phases = phase_times(X, Z, GAMMA, args.repeats + 2)
        peak = gemm_rate(M, n)
        row = {"n": n, "fit_s": t_fit, "kernels_s": sum(phases.values()), "fit/kernels": t_fit / sum(phases.values()),
               "fit_GFLOP/s": fit_flops(M, n, D) / t_fit / 1e9, "dgemm_GFLOP/s": peak,
               "fraction_of_dgemm": fit_flops(M, n, D) / t_fit / 1e9 / peak, "load1": round(os.getloadavg()[0], 2),
               "phases": {k: round(v, 4) for k, v in phases.items()}}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


_WORKER = """
import json, sys, time
sys.path.insert(0, {bench!r})
from contention import _data, _ours, _timed
n, repeats = {n}, {repeats}
X, y, Z = _data(n)
print(json.dumps(_timed(_ours(X, y, Z, "default"), repeats, 1e9)))
"""


def compare(args):
    """Idle default, this tree against ``args.compare``, interleaved subprocesses."""
    trees = {"new": Path(__file__).resolve().parents[1] / "src", "old": Path(args.compare) / "src"}
    bench = str(Path(__file__).resolve().parent)
    res = {(t, n): [] for t in trees for n in args.n}
    for _ in range(args.rounds):
        for n in args.n:
            for t, src in trees.items():
                env = {**os.environ, "PYTHONPATH": str(src)}
                code = _WORKER.format(bench=bench, n=n, repeats=args.repeats)
                out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
                res[t, n].append(float(out.stdout.strip().splitlines()[-1]))
    rows = []
    for n in args.n:
        new, old = min(res["new", n]), min(res["old", n])
        rows.append({"n": n, "new_s": new, "old_s": old, "new/old": new / old, "load1": round(os.getloadavg()[0], 2)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000, 2500])
    ap.add_argument("--conditions", nargs="+", default=["idle", "one", "two"], choices=["idle", "one", "two"])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--sklearn-repeats", type=int, default=1)
    ap.add_argument("--sklearn-max-n", type=int, default=None, help="skip scikit-learn above this n (slow under load)")
    ap.add_argument("--cap", type=float, default=5.0, help="do not repeat a run longer than this (s)")
    ap.add_argument("--efficiency", action="store_true")
    ap.add_argument("--compare", help="a tree (git worktree) whose src/ holds the lssvm to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = ap.parse_args(argv)
    print(f"# {os.cpu_count()} cores, affinity {sorted(os.sched_getaffinity(0))}, load {os.getloadavg()}", flush=True)
    result = {}
    if args.compare:
        result["compare"] = compare(args)
    elif args.efficiency:
        result["efficiency"] = efficiency(args)
    else:
        result["contention"] = contention(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "contention.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
