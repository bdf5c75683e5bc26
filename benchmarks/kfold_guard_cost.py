"""CPU cost of the k-fold conditioning guard alone, in process.

The hold-out engine's folds are timed three ways on the same fitted models,
alternating, on one BLAS thread (folds run one per core), by CPU time of
this thread (robust to other work on a shared machine):

* ``none``: the fold solver without any error estimate;
* ``per-alpha``: an inverse-iteration estimate of ``||(C + alpha I)^-1||``
  at every alpha (the guard as first written);
* ``free``: the free bound ``eps (lambda_max + alpha) / alpha``, with the
  estimate only at the alphas where it passes ``GUARD_RTOL`` (this tree).

Cases: the 10-fold CV of ``validation_overhead.py`` (m = 5000, n = 1000),
paper001's 10-fold CV (m = 3000, n = 800, alphas 1e-3..1e3) and one width
of ``select_speed.py``'s 10-fold search (m = 2000, n = 400, alphas
1e-6..10), all with basis removal and 20 alphas.

Run:  PYTHONPATH=src python benchmarks/kfold_guard_cost.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)

    from sklearn.model_selection import KFold

    from lssvm import SparseLSSVR
    from lssvm.cv import fold_solver, holdout
    from lssvm.solvers.shifted_band import ShiftedBandSolver

    def per_alpha(C, rhs, alphas, scale, bandwidth=64):
        X, inv = ShiftedBandSolver(C, bandwidth).solve(alphas, rhs, inverse_norms=True)
        return X, fold_solver.EPS * (scale + alphas) * inv

    def none(C, rhs, alphas, scale, bandwidth=64):
        return ShiftedBandSolver(C, bandwidth).solve(alphas, rhs), np.zeros(len(alphas))

    variants = {"none": none, "per-alpha": per_alpha, "free": fold_solver.solve_fold_path}
    rng = np.random.default_rng(0)
    cases = []
    for name, m, d, n, gamma, alphas in [
        ("10-fold CV, m=5000 n=1000", 5000, 8, 1000, 0.1, np.logspace(-4, 1, 20)),
        ("paper001 10-fold, m=3000 n=800", 3000, 8, 800, 0.1, np.geomspace(1e-3, 1e3, 20)),
        ("select 10-fold, m=2000 n=400", 2000, 10, 400, 2.0**-7, np.geomspace(1e-6, 1e1, 20)),
    ]:
        X = rng.standard_normal((m, d))
        y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)
        est = SparseLSSVR(gamma=gamma, alpha=1e-3, basis=np.sort(rng.choice(m, n, replace=False))).fit(X, y)
        folds = [t for _, t in KFold(10).split(X)]
        cases.append((name, est._holdout_engine(), folds, alphas))
    print(f"# {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f} (shared machine)")
    print(f"{'case':32s} {'none (s)':>9s} {'per-alpha':>10s} {'free':>9s} {'per-alpha/none':>15s} {'free/none':>10s}")
    for name, engine, folds, alphas in cases:
        best = dict.fromkeys(variants, np.inf)
        with threadpool_limits(1):
            for _ in range(args.rounds):
                for key, func in variants.items():
                    holdout.solve_fold_path = func
                    t0 = time.thread_time()
                    for H in folds:
                        engine.predict(H, alphas, "remove")
                    best[key] = min(best[key], time.thread_time() - t0)
        holdout.solve_fold_path = fold_solver.solve_fold_path
        print(f"{name:32s} {best['none']:9.3f} {best['per-alpha']:10.3f} {best['free']:9.3f} "
              f"{best['per-alpha'] / best['none']:15.3f} {best['free'] / best['none']:10.3f}")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
