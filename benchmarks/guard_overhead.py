"""Cost of the numerical safeguards on hot paths: squared distances with exact
round-off-level entries (RBF kernel), row-block PRESS, per-fold cv_error
and the lazy basis-identity hashing of the first hold-out call.

Times (CPU time of the process, all threads: on a shared, overloaded
machine wall time is mostly other people's work) this checkout and, with
``--compare SRC``, another source tree in interleaved subprocesses (best of
``--repeats`` per round, min over rounds), and prints the ratio and the
load average.

Run:  python benchmarks/guard_overhead.py --compare /tmp/old/src [--repeats 7] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CASES = ["RBF kernel 5000x1000, d=8", "RBF kernel 20000x100, d=3", "RBF kernel 2000x2000, d=50",
         "press, 20 alphas, m=5000 n=300", "cv_error 10-fold, 20 alphas", "holdout_predict 50 rows (first call)"]


def _measure(repeats):
    import numpy as np

    from lssvm import SparseLSSVR
    from lssvm.kernels import RBF

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, 8))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(5000)
    X3 = rng.standard_normal((20000, 3))
    X50 = rng.standard_normal((2000, 50))
    alphas = np.logspace(-4, 1, 20)
    est = SparseLSSVR(gamma=0.1, alpha=1e-3, basis=np.arange(0, 5000, 17)).fit(X, y)

    def first_holdout():
        e = SparseLSSVR(gamma=0.1, alpha=1e-3, basis=np.arange(0, 5000, 17)).fit(X, y)
        t0 = time.process_time()
        e.holdout_predict(np.arange(50), alphas)
        return time.process_time() - t0

    work = [
        lambda: RBF(0.1)(X, X[:1000]),
        lambda: RBF(0.1)(X3, X3[:100]),
        lambda: RBF(0.01)(X50, X50),
        lambda: est.press(alphas),
        lambda: est.cv_error(10, alphas),
    ]
    out = []
    for f in work:
        best = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            f()
            best = min(best, time.process_time() - t0)
        out.append(best)
    out.append(min(first_holdout() for _ in range(max(1, repeats // 2))))
    return out


def _run(src, repeats):
    env = {**os.environ, "PYTHONPATH": str(src)}
    res = subprocess.run([sys.executable, __file__, "--child", str(repeats)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(_measure(args.child)))
        return
    here = Path(__file__).resolve().parents[1] / "src"
    new, old = [], []
    for _ in range(args.rounds):  # interleaved: load drifts hit both alike
        new.append(_run(here, args.repeats))
        if args.compare:
            old.append(_run(args.compare, args.repeats))
    new = [min(t) for t in zip(*new, strict=True)]
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()}")
    head = f"{'case':40s} {'this (CPU ms)':>13s}"
    if args.compare:
        old = [min(t) for t in zip(*old, strict=True)]
        head += f" {'compare (CPU ms)':>16s} {'ratio':>6s}"
    print(head, flush=True)
    for i, case in enumerate(CASES):
        line = f"{case:40s} {1e3 * new[i]:13.2f}"
        if args.compare:
            line += f" {1e3 * old[i]:16.2f} {new[i] / old[i]:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
