"""What a cold CV+ call pays, and old against new code
side by side in one process.

    python benchmarks/cvplus_cold.py [--m 2000] [--n-basis 100] [--rounds 15] [--parts pause,counts,ab,fit]
                                     [--old-rev c7724e6]

The problem is ``benchmarks/intervals.py mapie``'s: synthetic data (5
features), 200 test points, ``SparseLSSVR(gamma=0.2, alpha=1.0,
basis="random", n_basis=100)``, ``predict_interval(Xt, 0.9, method="cv+",
cv=KFold(10), basis_in_holdout="keep")``.  Parts:

* ``pause``: the call's wall time right after (a) ``time.sleep(0.15)``, (b) a
  0.15 s busy loop in pure Python, (c) a 0.15 s loop streaming a 64 MiB
  array, (d) a sleep and then reading the call's big arrays once (its data
  back in cache), (e) a sleep and then the same call on another model (its
  code back in cache), (f) nothing (back to back); then after busy loops of
  0.5 ms to 0.15 s: how the penalty grows with the pause.  Minor page faults and
  involuntary context switches per call are counted.
* ``counts``: Python-level and C-level function calls of one call (cProfile),
  its tracemalloc peak, minor page faults.
* ``ab``: ``--old-rev``'s ``src/lssvm`` (exported with ``git archive`` and
  imported as ``lssvm_old``) against this tree: a fresh fit each, then its
  first call after a 0.15 s pause (the target's "cold" call) and a second one
  back to back, interleaved rounds, wall and CPU time.
* ``fit``: the fit alone, old against new, interleaved, models kept alive.

Prints medians and bests, and the load average: on a shared machine only the
ratios within one run mean anything.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import synthetic_regression  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

import lssvm  # noqa: E402

PAUSE = 0.15
pc, cpu = time.perf_counter, time.process_time


def problem(m):
    rng = np.random.default_rng(m)
    X, y = synthetic_regression(rng, m, 5)
    return X, y + 0.3 * rng.standard_normal(m), rng.standard_normal((200, 5))


N_BASIS = [100]


def fit(lib, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.SparseLSSVR(gamma=0.2, alpha=1.0, basis="random", n_basis=N_BASIS[0], random_state=0).fit(X, y)


def call(est, Xt):
    return est.predict_interval(Xt, 0.9, method="cv+", cv=KFold(10), basis_in_holdout="keep")


def timed(f):
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0, c0 = pc(), cpu()
    out = f()
    t1, c1 = pc(), cpu()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (t1 - t0) * 1e3, (c1 - c0) * 1e3, r1.ru_minflt - r0.ru_minflt, r1.ru_nivcsw - r0.ru_nivcsw, out


def busy(seconds):
    t = pc()
    while pc() - t < seconds:
        pass


def part_pause(X, y, Xt, rounds):
    est = fit(lssvm, X, y)
    for _ in range(5):
        call(est, Xt)
    big = np.ones(64 << 17)  # 64 MiB

    def thrash():
        t = pc()
        while pc() - t < PAUSE:
            big.sum()

    other = fit(lssvm, X + 0.01, y)  # another model, and other points: the same code on other data
    fac = est.factorization_

    def reread():  # the call's big arrays, read once
        for A in (fac.M, getattr(fac.block_grams, "grams", fac.M), fac.y_centered, est.basis_vectors_):
            A.sum()

    kinds = {"sleep 0.15 s": lambda: time.sleep(PAUSE), "busy loop 0.15 s": lambda: busy(PAUSE),
             "stream 64 MiB for 0.15 s": thrash,
             "sleep, then re-read the call's arrays": lambda: (time.sleep(PAUSE), reread()),
             "sleep, then the call on another model": lambda: (time.sleep(PAUSE), call(other, Xt + 0.5)),
             "none (back to back)": lambda: None}
    res = {k: [] for k in kinds}
    durations = [0.0005, 0.002, 0.01, 0.04, 0.15]
    grow = {d: [] for d in durations}
    for _ in range(rounds):
        for name, pause in kinds.items():
            pause()
            res[name].append(timed(lambda: call(est, Xt))[:4])
        for d in durations:
            call(est, Xt)
            busy(d)
            grow[d].append(timed(lambda: call(est, Xt))[0])
    print(f"\nThe call after a pause (m = {X.shape[0]}, {rounds} rounds; {loadavg()})\n")
    print("| before the call | wall ms, median | best | CPU ms, median | minor faults per call, median (max) | "
          "involuntary switches (all rounds) |\n|---|---|---|---|---|---|")
    for name, rows in res.items():
        a = np.array(rows)
        print(f"| {name} | {np.median(a[:, 0]):.2f} | {a[:, 0].min():.2f} | {np.median(a[:, 1]):.2f} | "
              f"{np.median(a[:, 2]):.0f} ({a[:, 2].max():.0f}) | {a[:, 3].sum():.0f} |")
    print("\n| busy loop before the call | " + " | ".join(f"{d * 1e3:g} ms" for d in durations) + " |")
    print("|---|" + "---|" * len(durations))
    print("| wall ms, median | " + " | ".join(f"{np.median(grow[d]):.2f}" for d in durations) + " |")


def part_counts(X, y, Xt, libs):
    print(f"\nOne warm call, counted ({loadavg()})\n")
    print("| code | function calls (cProfile) | of which C-level | tracemalloc peak KiB | minor faults / call |")
    print("|---|---|---|---|---|")
    for name, lib in libs.items():
        est = fit(lib, X, y)
        for _ in range(3):
            call(est, Xt)
        pr = cProfile.Profile()
        pr.enable()
        call(est, Xt)
        pr.disable()
        st = pstats.Stats(pr)
        c_calls = sum(v[1] for k, v in st.stats.items() if k[0] == "~")
        tracemalloc.start()
        call(est, Xt)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        faults = []
        for _ in range(10):
            time.sleep(0.02)
            faults.append(timed(lambda: call(est, Xt))[2])
        print(f"| {name} | {st.total_calls} | {c_calls} | {peak / 1024:.0f} | {np.mean(faults):.1f} |")


def part_ab(X, y, Xt, libs, rounds):
    names = list(libs)
    res = {f"{n} {w}": [] for n in names for w in ("cold", "back to back")}
    for lib in libs.values():
        for _ in range(3):
            call(fit(lib, X, y), Xt)
    for i in range(rounds):
        outs = {}
        for name in names if i % 2 == 0 else names[::-1]:
            est = fit(libs[name], X, y)
            time.sleep(PAUSE)
            w, c, _, _, outs[name] = timed(lambda: call(est, Xt))
            res[f"{name} cold"].append((w, c))
            res[f"{name} back to back"].append(timed(lambda: call(est, Xt))[:2])
        ref = outs[names[0]]
        for out in outs.values():
            assert np.abs(out - ref).max() <= 1e-9 * np.abs(ref).max()
    print(f"\nOld against new, interleaved ({rounds} rounds, a fresh fit before each cold call; {loadavg()})\n")
    print("| code, call | wall ms, median | best | CPU ms, median |\n|---|---|---|---|")
    for k, rows in res.items():
        a = np.array(rows)
        print(f"| {k} | {np.median(a[:, 0]):.2f} | {a[:, 0].min():.2f} | {np.median(a[:, 1]):.2f} |")
    if len(names) == 2:
        for w in ("cold", "back to back"):
            o, n = np.array(res[f"{names[0]} {w}"]), np.array(res[f"{names[1]} {w}"])
            print(f"\n{names[1]} / {names[0]}, {w}: wall median {np.median(n[:, 0]) / np.median(o[:, 0]):.3f}, "
                  f"best {n[:, 0].min() / o[:, 0].min():.3f}, CPU median {np.median(n[:, 1]) / np.median(o[:, 1]):.3f}")


def part_fit(X, y, libs, rounds):
    names = list(libs)
    res = {n: [] for n in names}
    kept = []
    for i in range(rounds):
        for name in names if i % 2 == 0 else names[::-1]:
            time.sleep(PAUSE)
            w, c, _, _, est = timed(lambda: fit(libs[name], X, y))
            kept.append(est)  # models stay alive, as a user's do: their pages are not handed back
            res[name].append((w, c))
    print(f"\nThe fit alone, interleaved ({rounds} rounds; {loadavg()})\n")
    print("| code | wall ms, median | best | CPU ms, median | best |\n|---|---|---|---|---|")
    for name, rows in res.items():
        a = np.array(rows)
        print(f"| {name} | {np.median(a[:, 0]):.2f} | {a[:, 0].min():.2f} | {np.median(a[:, 1]):.2f} | {a[:, 1].min():.2f} |")
    if len(names) == 2:
        o, n = np.array(res[names[0]]), np.array(res[names[1]])
        print(f"\n{names[1]} / {names[0]}: CPU median {np.median(n[:, 1]) / np.median(o[:, 1]):.3f}, "
              f"best {n[:, 1].min() / o[:, 1].min():.3f}; wall median {np.median(n[:, 0]) / np.median(o[:, 0]):.3f}")


def loadavg():
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def old_package(rev, where):
    """``rev``'s ``src/lssvm`` exported into ``where`` as the package ``lssvm_old``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src/lssvm"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", where], input=archive.stdout, check=True)
    (Path(where) / "src" / "lssvm").rename(Path(where) / "lssvm_old")
    sys.path.insert(0, where)
    return importlib.import_module("lssvm_old")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--m", type=int, default=2000)
    p.add_argument("--n-basis", type=int, default=100)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--parts", default="pause,counts,ab,fit")
    p.add_argument("--old-rev", default=None, help="git revision of the old code for counts/ab/fit")
    args = p.parse_args()
    parts = args.parts.split(",")
    N_BASIS[0] = args.n_basis
    X, y, Xt = problem(args.m)
    print(loadavg())
    with tempfile.TemporaryDirectory() as tmp:
        libs = {"new": lssvm}
        if args.old_rev:
            libs = {f"old ({args.old_rev})": old_package(args.old_rev, tmp), "new": lssvm}
        if "pause" in parts:
            part_pause(X, y, Xt, args.rounds)
        if "counts" in parts:
            part_counts(X, y, Xt, libs)
        if "ab" in parts:
            part_ab(X, y, Xt, libs, args.rounds)
        if "fit" in parts:
            part_fit(X, y, libs, 3 * args.rounds)
    print(loadavg())


if __name__ == "__main__":
    main()
