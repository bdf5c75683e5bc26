"""Time the hold-out algorithms of ``lssvm.cv.holdout`` against each other
(one k-fold engine: drop the paths that are never the cheapest).

For a grid of hold-out size h, rank r (basis size), removed basis points e
and number of alphas A, each algorithm is forced through the private
``_side`` argument of ``HoldoutEngine.predict`` and timed on one BLAS thread
(folds run one per core), best of ``--repeats``.  ``PYTHONPATH`` selects
the source tree (e.g. an export of an older commit, which still has the
r-side path: ``--sides h r refactor``).  The table marks the fastest
path and the one the tree's flop-count rule picks.

Run:  PYTHONPATH=src python benchmarks/holdout_paths.py [--sides h refactor] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sides", nargs="+", default=["h", "refactor"])
    ap.add_argument("--r", type=int, nargs="+", default=[20, 50, 200, 800])
    ap.add_argument("--h", type=int, nargs="+", default=[5, 50, 300])
    ap.add_argument("--alphas", type=int, nargs="+", default=[1, 20])
    ap.add_argument("--m", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    from lssvm import SparseLSSVR

    try:
        from lssvm.cv.holdout import cheapest_path
    except ImportError:  # an older tree (it has the r-side path)
        from lssvm.cv.holdout import _cheapest_method as cheapest_path

    rng = np.random.default_rng(0)
    m, d = args.m, 8
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, m = {m}, d = {d}, RBF gamma 0.1, 'remove', one BLAS thread")
    print(f"# load average before: {os.getloadavg()[0]:.2f} (the machine is shared with other work)")
    head = f"{'r':>5s} {'h':>5s} {'e':>4s} {'A':>3s} " + " ".join(f"{s + ' (ms)':>13s}" for s in args.sides)
    print(head + f" {'fastest':>9s} {'chosen':>9s}")
    for r in args.r:
        basis = np.sort(rng.choice(m, r, replace=False))
        est = SparseLSSVR(gamma=0.1, alpha=1e-2, basis=basis).fit(X, y)
        engine = est._holdout_engine()
        rank = est.factorization_.rank
        for h in args.h:
            # a contiguous fold, as KFold: e is the number of basis rows in it
            H = np.arange(h) + (m - h) // 2
            e = int(np.isin(basis, H).sum())
            for n_alphas in args.alphas:
                alphas = np.geomspace(1e-3, 1e1, n_alphas)
                times = []
                with threadpool_limits(1):
                    for side in args.sides:
                        best = np.inf
                        for _ in range(args.repeats):
                            t0 = time.perf_counter()
                            engine.predict(H, alphas, "remove", _side=side)
                            best = min(best, time.perf_counter() - t0)
                        times.append(best)
                chosen = cheapest_path(h, h, rank, e, n_alphas)
                line = f"{rank:5d} {h:5d} {e:4d} {n_alphas:3d} " + " ".join(f"{1e3 * t:13.2f}" for t in times)
                print(line + f" {args.sides[int(np.argmin(times))]:>9s} {chosen:>9s}", flush=True)
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
