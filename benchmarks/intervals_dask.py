"""Conformal intervals of a model fitted on Dask, streamed in passes.

Data: the regression of ``benchmarks/scale_dask.py`` (d = 10 Gaussian
inputs, target ``sin(x0) + x1 x2`` + noise) generated block by block inside
the Dask graph (chunks of ``--chunk`` rows, each from its own seed: never
all in memory, no files).  Model: ``SparseLSSVR`` (RBF, gamma = 0.1,
alpha = 1) on n = ``--n`` uniformly drawn basis rows, fitted on Dask's
threaded scheduler; then ``predict_interval`` at t = ``--t`` new points,
coverage 0.9, for "jackknife", "jackknife+" and "cv+" (``cv=10``).

Reported per method: passes over the training rows, wall time of each pass
and in all, and the peak resident memory of the process so far
(``ru_maxrss``).  ``--check-m`` (default 10^5) runs the same at a smaller m
and compares every bound with the in-memory ``SparseLSSVR`` on the same
rows (materialised) and basis: largest difference relative to the largest
bound.  The CV+ reference is brute force (ten explicit refits), because the
in-memory hold-out formulas cost O(h^3) per fold of h = 10^4 rows.  Each run is its own process, one at a time; the load average is
printed with the results (the machine may be shared).

Run:  python benchmarks/intervals_dask.py [--m 1e6] [--check-m 1e5] [--n 200] [--t 1000]

``--families`` runs ``FixedSizeLSSVR/SVC`` and
``NystromLSSVR/SVC`` instead (:func:`family_worker`): their fit, CV+ by ten
fold refits on the Dask rows with streamed order statistics, and the
classifiers' fit with and without ``calibration="sigmoid"``; passes, time
and peak memory per stage, each family in its own process, and with
``--check-m`` the differences from the in-memory results at that m.

Run:  python benchmarks/intervals_dask.py --families --m 1e5 --check-m 2e4 [--n 200] [--t 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale_dask import GAMMA, D, basis_rows, synthetic  # noqa: E402

METHODS = ("jackknife", "jackknife+", "cv+")
COVERAGE = 0.9


def _peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB


def _progress(out):
    """Each finished stage as one JSON line in the temp folder (long runs on a loaded machine)."""
    import tempfile

    with open(Path(tempfile.gettempdir()) / "intervals_dask.progress.jsonl", "a") as f:
        f.write(json.dumps(out) + "\n")


def worker(m, n, t, chunk, check):
    import dask

    from lssvm import SparseLSSVR
    from lssvm.backends.dask import report_passes

    passes = []

    class Timer:
        def __init__(self, label):
            self.label = label

        def __enter__(self):
            self.t0 = time.perf_counter()

        def __exit__(self, *exc):
            passes.append((self.label, time.perf_counter() - self.t0))

    X, y = synthetic(m, chunk)
    Xt = np.random.default_rng(7).standard_normal((t, D))
    idx = basis_rows(m, n)
    out = {"m": m, "n": n, "t": t, "chunk": chunk, "methods": {}}
    with dask.config.set(scheduler="threads"), report_passes(Timer):
        t0 = time.perf_counter()
        est = SparseLSSVR(gamma=GAMMA, alpha=1.0, basis=idx).fit(X, y)
        out["fit"] = {"wall": time.perf_counter() - t0, "passes": list(passes), "peak_gib": _peak_gib()}
        _progress(out)
        bounds = {}
        for method in METHODS:
            passes.clear()
            t0 = time.perf_counter()
            bounds[method] = est.predict_interval(Xt, COVERAGE, method, cv=10)
            wall = time.perf_counter() - t0
            out["methods"][method] = {"wall": wall, "passes": list(passes), "peak_gib": _peak_gib(),
                                      "mean_width": float(np.mean(bounds[method][:, 1] - bounds[method][:, 0]))}
            _progress(out)
    if check:
        Xm, ym = dask.compute(X, y)
        ref = SparseLSSVR(gamma=GAMMA, alpha=1.0, basis=idx).fit(Xm, ym)
        for method in METHODS:
            t0 = time.perf_counter()
            if method == "cv+":  # brute force: the in-memory hold-out formulas cost O(h^3) per fold of h rows
                want = brute_force_cv_plus(Xm, ym, idx, Xt, 10)
            else:
                want = ref.predict_interval(Xt, COVERAGE, method)
            res = out["methods"][method]
            res["numpy_wall"] = time.perf_counter() - t0
            res["rel_diff"] = float(np.abs(bounds[method] - want).max() / np.abs(want).max())
    print(json.dumps(out))


def brute_force_cv_plus(X, y, idx, Xt, k):
    """CV+ bounds from k explicit refits (unshuffled KFold, the fold's basis
    rows removed from its model, as ``basis_in_holdout="remove"``)."""
    from sklearn.model_selection import KFold

    from lssvm import SparseLSSVR
    from lssvm.cv.conformal import interval_from_values

    m = X.shape[0]
    scores, fold_of, centres = np.empty(m), np.empty(m, dtype=np.intp), np.empty((Xt.shape[0], k))
    for f, (train, test) in enumerate(KFold(k).split(X)):
        local = np.searchsorted(train, idx[np.isin(idx, train)])
        model = SparseLSSVR(gamma=GAMMA, alpha=1.0, basis=local).fit(X[train], y[train])
        scores[test] = np.abs(y[test] - model.predict(X[test]))
        fold_of[test] = f
        centres[:, f] = model.predict(Xt)
    out = np.empty((Xt.shape[0], 2))
    for lo in range(0, Xt.shape[0], 50):
        c = centres[lo : lo + 50, fold_of][:, :, None]
        out[lo : lo + 50] = interval_from_values(c, scores[:, None], COVERAGE)[:, :, 0]
    return out


FAMILIES = ("fixed-size", "nystrom")


def family_worker(family, m, n, t, chunk, check):
    """A fixed-size or Nyström model on Dask rows.
    Regression: fit, then CV+ (cv=10; each fold refitted by the family's Dask
    fit on its training rows, the order statistics streamed).  Classification
    (labels ``y > 0``): fit with ``calibration="sigmoid"`` and without, the
    difference being the calibration's passes.  With ``check``: the same in
    memory on the materialised rows, largest difference relative to the
    largest bound / probability."""
    import dask

    from lssvm import FixedSizeLSSVC, FixedSizeLSSVR, NystromLSSVC, NystromLSSVR
    from lssvm.backends.dask import report_passes

    passes = []

    class Timer:
        def __init__(self, label):
            self.label = label

        def __enter__(self):
            self.t0 = time.perf_counter()

        def __exit__(self, *exc):
            passes.append((self.label, time.perf_counter() - self.t0))

    if family == "fixed-size":
        kw = dict(gamma=GAMMA, alpha=1.0, basis="random", n_basis=n, cv=10, random_state=0)
        reg, clf = FixedSizeLSSVR, FixedSizeLSSVC
    else:
        kw = dict(gamma=GAMMA, alpha=1.0, basis="random", n_basis=n, random_state=0)
        reg, clf = NystromLSSVR, NystromLSSVC
    X, y = synthetic(m, chunk)
    labels = y > 0
    Xt = np.random.default_rng(7).standard_normal((t, D))
    out = {"family": family, "m": m, "n": n, "t": t, "chunk": chunk, "stages": {}}

    def stage(name, func):
        passes.clear()
        t0 = time.perf_counter()
        with dask.config.set(scheduler="threads"), report_passes(Timer):
            res = func()
        out["stages"][name] = {"wall": time.perf_counter() - t0, "passes": len(passes), "peak_gib": _peak_gib(),
                               "pass_times": list(passes)}
        _progress(out)
        return res

    est = stage("fit (regression)", lambda: reg(**kw).fit(X, y))
    bounds = stage("cv+ (t points)", lambda: est.predict_interval(Xt, COVERAGE, "cv+", cv=10))
    out["stages"]["cv+ (t points)"]["mean_width"] = float(np.mean(bounds[:, 1] - bounds[:, 0]))
    stage("fit (classification)", lambda: clf(**kw).fit(X, labels))
    cal = stage("fit + calibration", lambda: clf(**kw, calibration="sigmoid").fit(X, labels))
    proba = cal.predict_proba(Xt)
    if check:
        Xm, ym, lm = dask.compute(X, y, labels)
        t0 = time.perf_counter()
        want = reg(**kw).fit(Xm, ym).predict_interval(Xt, COVERAGE, "cv+", cv=10)
        out["stages"]["cv+ (t points)"].update(numpy_wall=time.perf_counter() - t0,
                                               rel_diff=float(np.abs(bounds - want).max() / np.abs(want).max()))
        t0 = time.perf_counter()
        want = clf(**kw, calibration="sigmoid").fit(Xm, lm).predict_proba(Xt)
        out["stages"]["fit + calibration"].update(numpy_wall=time.perf_counter() - t0,
                                                  rel_diff=float(np.abs(proba - want).max()))
    print(json.dumps(out))


def run_family(family, m, n, t, chunk, check):
    cmd = [sys.executable, __file__, "--worker-family", family, "--m", str(m), "--n", str(n), "--t", str(t),
           "--chunk", str(chunk)]
    if check:
        cmd.append("--check")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def families_main(a):
    print(f"# {platform.node()}, {os.cpu_count()} cores, load before {os.getloadavg()}")
    print(f"d = {D}, RBF gamma = {GAMMA}, alpha = 1, {a.n} random prototypes / columns (fixed size: cv=10 picks "
          f"the size; Nyström: rank 0.5 n), t = {a.t} test points, coverage {COVERAGE}, cv+ with cv=10, "
          f"chunks of {a.chunk} rows generated in the graph")
    runs = []
    for family in FAMILIES:
        if a.check_m:
            runs.append(run_family(family, int(a.check_m), a.n, a.t, min(a.chunk, int(a.check_m) // 4), True))
        if a.m:
            runs.append(run_family(family, int(a.m), a.n, a.t, a.chunk, False))
    print("| family | m | stage | passes | total s | peak GiB | in-memory s | rel. diff |")
    print("|---|---|---|---|---|---|---|---|")
    for res in runs:
        for name, r in res["stages"].items():
            extra = f" {r['numpy_wall']:.1f} | {r['rel_diff']:.1e} |" if "rel_diff" in r else " | |"
            print(f"| {res['family']} | {res['m']:.0e} | {name} | {r['passes']} | {r['wall']:.1f} | "
                  f"{r['peak_gib']:.2f} |" + extra)
    for res in runs:
        r = res["stages"]["cv+ (t points)"]
        sel = sum(s for lab, s in r["pass_times"] if lab.startswith("cv+"))
        print(f"# {res['family']} m={res['m']}: cv+ mean width {r['mean_width']:.3f}; selection passes {sel:.1f} s "
              f"of {r['wall']:.1f} s (" + "; ".join(f"{lab} {s:.1f}" for lab, s in r["pass_times"]
                                                     if lab.startswith("cv+")) + ")")
    print(f"# load after {os.getloadavg()}")


def run(m, n, t, chunk, check):
    cmd = [sys.executable, __file__, "--worker", "--m", str(m), "--n", str(n), "--t", str(t), "--chunk", str(chunk)]
    if check:
        cmd.append("--check")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _row(res, method):
    r = res["methods"][method]
    per = ", ".join(f"{s:.1f}" for _, s in r["passes"])
    cells = [method, f"{res['m']:.0e}", str(len(r["passes"])), per, f"{r['wall']:.1f}", f"{r['peak_gib']:.2f}",
             f"{r['mean_width']:.3f}"]
    if "rel_diff" in r:
        cells += [f"{r['numpy_wall']:.1f}", f"{r['rel_diff']:.1e}"]
    return "| " + " | ".join(cells) + " |"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--m", type=float, default=1e6)
    p.add_argument("--check-m", type=float, default=1e5)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--t", type=int, default=1000)
    p.add_argument("--chunk", type=int, default=100_000)
    p.add_argument("--worker", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--families", action="store_true",
                   help="the fixed-size and Nyström families instead (CV+ by refitted folds, calibration)")
    p.add_argument("--worker-family", choices=FAMILIES)
    a = p.parse_args()
    if a.worker_family:
        family_worker(a.worker_family, int(a.m), a.n, a.t, a.chunk, a.check)
        return
    if a.families:
        families_main(a)
        return
    if a.worker:
        worker(int(a.m), a.n, a.t, a.chunk, a.check)
        return
    print(f"# {platform.node()}, {os.cpu_count()} cores, load before {os.getloadavg()}")
    print(f"d = {D}, RBF gamma = {GAMMA}, alpha = 1, n = {a.n} random basis rows, t = {a.t} test points, "
          f"coverage {COVERAGE}, cv+ with cv=10, chunks of {a.chunk} rows generated in the graph")
    runs = []
    if a.check_m:
        runs.append(run(int(a.check_m), a.n, a.t, min(a.chunk, int(a.check_m) // 4), True))
    if a.m:
        runs.append(run(int(a.m), a.n, a.t, a.chunk, False))
    print("| method | m | passes | seconds per pass | total s | peak GiB | mean width | in-memory s | rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for res in runs:
        f = res["fit"]
        print(f"| fit | {res['m']:.0e} | {len(f['passes'])} | "
              + ", ".join(f"{s:.1f}" for _, s in f["passes"]) + f" | {f['wall']:.1f} | {f['peak_gib']:.2f} | | | |")
        for method in METHODS:
            print(_row(res, method))
    print(f"# load after {os.getloadavg()}")
    for res in runs:
        for method in METHODS:
            print(f"# m={res['m']} {method}: " + "; ".join(f"{lab} {s:.1f}s" for lab, s in
                                                          res["methods"][method]["passes"]))


if __name__ == "__main__":
    main()
