"""Cost of the input validation and numerical safeguards.

Times the hot paths the reliability work touched — training (basis
de-duplication, finiteness checks of K and y), exact 10-fold CV with basis
removal over 20 alphas, FVS basis selection (kernel calls in an inner loop)
and single kernel evaluations (per-call argument checks) — at m = 5000,
d = 8, RBF, on this checkout; with ``--compare SRC`` also on another source
tree (e.g. a ``git worktree`` of the commit before the change), in
interleaved subprocesses, best of ``--repeats``, with the ratio.

It adds the cases the conditioning guards touch: the 10-fold CV of
``paper001_speed.py`` and the model selections of ``select_speed.py`` (at
smaller m), a fixed-size direct fit and a Nyström fit.

``--cpu`` times CPU seconds of the process (all threads) instead of wall
seconds: on a machine shared with other work, other processes' load then
does not enter the ratio.

Run:  python benchmarks/validation_overhead.py [--compare /tmp/old/src] [--repeats 5] [--cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

CASES = ["fit, random basis n=1000", "10-fold CV, remove, 20 alphas", "FVS basis, n<=300",
         "RBF kernel 5000x1000", "linear kernel 5000x5000",
         # the conditioning guards, on the well-conditioned cases of
         # paper001_speed.py and select_speed.py (smaller m to stay short)
         "p001: 10-fold remove n=800 20a", "select: LOO 5 widths x 20a", "select: 10-fold remove 5w x 20a",
         "fixed-size direct fit M=500", "Nystrom fit c=500 k=250"]


def _measure(repeats, only=None, clock=time.perf_counter):
    import numpy as np

    from lssvm import FixedSizeLSSVR, NystromLSSVR, SparseLSSVR, SparseLSSVRCV
    from lssvm.kernels import RBF, Linear

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, 8))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(5000)
    est = SparseLSSVR(gamma=0.1, alpha=1e-3, basis="random", n_basis=1000, random_state=0).fit(X, y)
    work = [
        lambda: SparseLSSVR(gamma=0.1, alpha=1e-3, basis="random", n_basis=1000, random_state=0).fit(X, y),
        lambda: est.cv_predict(10, np.logspace(-4, 1, 20)),
        lambda: SparseLSSVR(gamma=0.1, basis="fvs", n_basis=300).fit(X, y),
        lambda: RBF(0.1)(X, X[:1000]),
        lambda: Linear()(X, X),
    ]
    # paper001_speed: RBF gamma 0.1, alphas 1e-3..1e3, 10-fold CV with basis removal
    X1 = rng.standard_normal((3000, 8))
    y1 = np.sin(X1[:, 0]) + 0.1 * rng.standard_normal(3000)
    est1 = SparseLSSVR(gamma=0.1, alpha=1e-3, basis="random", n_basis=800, random_state=0).fit(X1, y1)
    # select_speed: d = 10, n = 500, widths 2^-11..2^-3, alphas 1e-6..10
    X2 = rng.standard_normal((2000, 10))
    y2 = np.sin(X2[:, 0]) + 0.1 * rng.standard_normal(2000)
    gammas, alphas = 2.0 ** np.arange(-11.0, -2.0, 2.0), np.geomspace(1e-6, 1e1, 20)

    def select(cv):
        return SparseLSSVRCV(param_space={"gamma": gammas}, alphas=alphas, cv=cv, basis="random", n_basis=400,
                             random_state=0).fit(X2, y2)

    work += [
        lambda: est1.cv_predict(10, np.geomspace(1e-3, 1e3, 20), basis_in_holdout="remove"),
        lambda: select("loo"),
        lambda: select(10),
        lambda: FixedSizeLSSVR(gamma=0.1, alpha=1e-3, basis="random", n_basis=500, solver="direct",
                               cv=None, random_state=0).fit(X, y),
        lambda: NystromLSSVR(gamma=0.1, alpha=1e-3, n_basis=500, rank=250, random_state=0).fit(X, y),
    ]
    out = []
    for i, f in enumerate(work):
        if only is not None and i not in only:
            out.append(float("nan"))
            continue
        best = float("inf")
        for _ in range(repeats):
            t0 = clock()
            f()
            best = min(best, clock() - t0)
        out.append(best)
    return out


def _run(src, repeats, only, cpu=False):
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, __file__, "--child", str(repeats)] + (["--only", ",".join(map(str, only))] if only else [])
    cmd += ["--cpu"] if cpu else []
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", type=Path, default=None, help="another src/ folder to time side by side")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", default=None, help="comma-separated case numbers (0-based) to time")
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds of the process instead of wall seconds")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    only = None if args.only is None else {int(i) for i in args.only.split(",")}
    if args.child is not None:
        print(json.dumps(_measure(args.child, only, time.process_time if args.cpu else time.perf_counter)))
        return
    here = Path(__file__).resolve().parents[1] / "src"
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# load average before: {os.getloadavg()[0]:.2f} (the machine is shared with other work)")
    rounds = 3 if args.compare else 1
    new, old = [], []
    for _ in range(rounds):  # interleaved: drifts in machine load hit both alike
        new.append(_run(here, args.repeats, only, args.cpu))
        if args.compare:
            old.append(_run(args.compare, args.repeats, only, args.cpu))
    new = [min(t) for t in zip(*new, strict=True)]
    print(f"# {'CPU' if args.cpu else 'wall'} seconds, best of {args.repeats}, {rounds} interleaved round(s)")
    head = f"{'case':34s} {'this (s)':>9s}"
    if args.compare:
        old = [min(t) for t in zip(*old, strict=True)]
        head += f" {'compare (s)':>11s} {'ratio':>6s}"
    print(head)
    for i, case in enumerate(CASES):
        if only is not None and i not in only:
            continue
        line = f"{case:34s} {new[i]:9.3f}"
        if args.compare:
            line += f" {old[i]:11.3f} {new[i] / old[i]:6.2f}"
        print(line)
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
