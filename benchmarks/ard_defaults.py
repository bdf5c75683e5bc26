"""The ARD gradient search at the library's literal defaults, against the GP.

Part "decide": per split of ``--sets`` at ``--m`` rows, the gradient search with the default basis
("pchol": the pivoted-Cholesky rows of the best isotropic grid point, then fixed) and with
``basis="random"`` (``n_basis`` None: 200 rows), both with ``max_evaluations=--cap`` (large: L-BFGS-B
runs to its own convergence), recording every L-BFGS-B run's evaluations and stop message (scipy's
``minimize`` wrapped in the module namespace), the test MSE and the CPU.  It decides the default basis and
the default evaluation budget per start.

Part "defaults": ``SparseLSSVRCV(kernel="ard", search="gradient", random_state=split)`` and nothing else,
and the isotropic grid ``SparseLSSVRCV()`` (``random_state=split``), per split; rows to ``--csv``.

Part "summary": the paired differences of ``--csv``'s ARD rows against ``--gp`` (``ard_gp.py``'s per-split GP, the
largest m per split) or against ``--baseline`` (``ard_crit.py``'s ``lib_*.csv`` rows, method "ARD one-se").

Splits as ``ard.py --part splits``: ``load(name, m, default_rng(split), seed=split)``, standardised.

Run: python benchmarks/ard_defaults.py --part defaults --sets puma32H --m 4000 --csv FILE
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from ard import load, standardise

import lssvm.estimators.gradient_search as gs
from lssvm import SparseLSSVRCV

RUNS = []
_minimize = gs.minimize


def _logged_minimize(*args, **kw):
    try:
        res = _minimize(*args, **kw)
    except Exception:
        RUNS.append((-1, "stopped (_Stop)"))
        raise
    RUNS.append((int(res.nfev), str(res.message)))
    return res


gs.minimize = _logged_minimize


def _row(name, m, split, method, est, Xte, yte, t, c, extra=None):
    test = float(np.mean((est.predict(Xte) - yte) ** 2) / yte.var())
    row = dict(data=name, m=m, split=split, method=method, test_mse=test, cv_mse=-float(est.best_score_),
               fit_s=t, cpu_s=c, evaluations=int(est.n_evaluations_),
               n_basis=int(np.size(getattr(est, "basis_rows_", est.best_estimator_.basis_indices_))),
               max_evaluations=getattr(est, "max_evaluations_", None), load=os.getloadavg()[0])
    row.update(extra or {})
    return row


def _fit(est, X, y):
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return time.perf_counter() - t0, time.process_time() - c0


def _emit(row, csv):
    print(row, flush=True)
    if csv:
        pd.DataFrame([row]).to_csv(csv, mode="a", index=False, header=not os.path.exists(csv))


def decide(args):
    for name in args.sets:
        for split in args.split_seeds:
            Xtr, ytr, Xte, yte = standardise(*load(name, args.m, np.random.default_rng(split), seed=split))
            for basis in args.bases:
                RUNS.clear()
                est = SparseLSSVRCV(kernel="ard", search="gradient", basis=basis, random_state=split,
                                    max_evaluations=args.cap or None)
                t, c = _fit(est, Xtr, ytr)
                runs = list(RUNS)
                label = f"ARD {basis} cap={args.cap}" if args.cap else f"ARD {basis} default budget"
                row = _row(name, args.m, split, label, est, Xte, yte, t, c, extra=dict(
                    d=Xtr.shape[1], d_varying=int((np.ptp(Xtr, axis=0) > 0).sum()),
                    run_nfev=" ".join(str(n) for n, _ in runs),
                    run_capped=sum("LIMIT" in msg for _, msg in runs),
                    run_stops=" | ".join(sorted({msg[:40] for _, msg in runs}))))
                _emit(row, args.csv)


def defaults(args):
    for name in args.sets:
        for split in args.split_seeds:
            Xtr, ytr, Xte, yte = standardise(*load(name, args.m, np.random.default_rng(split), seed=split))
            for method in args.methods:
                RUNS.clear()
                if method == "ARD default":
                    est = SparseLSSVRCV(kernel="ard", search="gradient", random_state=split)
                else:  # "grid default"
                    est = SparseLSSVRCV(random_state=split)
                t, c = _fit(est, Xtr, ytr)
                extra = dict(run_nfev=" ".join(str(n) for n, _ in RUNS),
                             run_capped=sum("LIMIT" in msg for _, msg in RUNS))
                _emit(_row(name, args.m, split, method, est, Xte, yte, t, c, extra), args.csv)


def summary(args):
    ours = pd.concat([pd.read_csv(f) for f in args.csv.split(",")], ignore_index=True)
    for name, g in ours.groupby("data"):
        if args.gp:
            ref = pd.read_csv(args.gp)
            ref = ref[ref.data == name].sort_values("m").groupby("split").last()["test_mse"]
            label = "GP"
        else:
            ref = pd.read_csv(args.baseline)
            ref = ref[(ref.data == name) & (ref.method == "ARD one-se")].set_index("split")["test_mse"]
            label = "configured search"
        for method, h in g.groupby("method"):
            h = h.set_index("split")["test_mse"]
            common = h.index.intersection(ref.index)
            if common.empty:
                continue
            diff = (h[common] - ref[common]).to_numpy()
            se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.nan
            if args.gp and method == "ARD default":  # fit CPU against the GP's (both stages per split)
                gp = pd.read_csv(args.gp)
                gp_cpu = gp[gp.data == name].groupby("split")["cpu_s"].sum()
                ours_cpu = g[g.method == method].set_index("split")["cpu_s"]
                print(f"{name}: CPU per fit ours {ours_cpu.min():.1f}-{ours_cpu.max():.1f} s (mean {ours_cpu.mean():.1f}),"
                      f" GP {gp_cpu.min():.0f}-{gp_cpu.max():.0f} s (mean {gp_cpu.mean():.0f}): "
                      f"{gp_cpu.mean() / ours_cpu.mean():.1f}x lower")
            if method == "ARD default" and "grid default" in set(g.method):
                grid = g[g.method == "grid default"].set_index("split")["test_mse"]
                print(f"{name}: ARD / isotropic grid test MSE, per split "
                      + ", ".join(f"{h[s] / grid[s]:.2f}" for s in h.index.intersection(grid.index))
                      + f"; of the means {h.mean() / grid.mean():.2f}")
            print(f"{name} {method} vs {label}: " + ", ".join(f"{h[s]:.5f}/{ref[s]:.5f}" for s in common)
                  + f"; mean diff {diff.mean():+.6f} ± {se:.6f} ({100 * diff.mean() / ref[common].mean():+.2f} %),"
                  f" wins {int((diff < 0).sum())} of {diff.size}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["decide", "defaults", "summary"], default="defaults")
    p.add_argument("--sets", default="friedman")
    p.add_argument("--m", type=int, default=2000)
    p.add_argument("--split-seeds", default="0,1,2,3,4")
    p.add_argument("--bases", default="pchol,random", help="part decide")
    p.add_argument("--cap", type=int, default=400, help="part decide: max_evaluations per start (0: None)")
    p.add_argument("--methods", default="ARD default,grid default", help="part defaults")
    p.add_argument("--csv", default="")
    p.add_argument("--gp", default="", help="part summary: ard_gp.py's gp_*.csv")
    p.add_argument("--baseline", default="", help="part summary: ard_crit.py's lib_*.csv")
    args = p.parse_args()
    args.sets = args.sets.split(",")
    args.split_seeds = [int(s) for s in args.split_seeds.split(",")]
    args.bases = args.bases.split(",")
    args.methods = args.methods.split(",")
    print(f"load {os.getloadavg()}", time.strftime("%H:%M:%S UTC", time.gmtime()), flush=True)
    {"decide": decide, "defaults": defaults, "summary": summary}[args.part](args)


if __name__ == "__main__":
    main()
