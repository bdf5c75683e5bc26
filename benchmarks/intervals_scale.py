"""Conformal intervals for many test rows against the fit's own time.

    python benchmarks/intervals_scale.py [--quick] [--m 20000] [--t 20000] [--n 500] [--repeats 2]
                                         [--methods jackknife+,jackknife,cv+,full] [--no-memory] [--direct]

A sparse LS-SVR (RBF, random basis of n points, fixed alpha) is fitted on m
rows of a smooth 8-feature problem; then ``predict_interval`` runs on t new
rows by each method.  Printed side by side, in one run: the fit's time, each
method's interval time and its ratio to the fit, the peak memory the call
allocated (``tracemalloc``: NumPy reports its buffers to it), and the flops
of the one product every direct jackknife+ / full conformal needs, the t x m
cross-leverages ``u_i(x)`` (2 t m r), with the time it would take at the
BLAS rate measured here on a GEMM of the same shape.  For jackknife+ and
full conformal it also prints the share of the m training rows whose
cross-leverages the screened order statistics formed
(:mod:`lssvm.cv.conformal.screened`), and the flops of their two products
(the test rows' features, 2 t n r, and the windows', 2 t w r), and the
CPU time those products take at the GEMM rate per CPU second measured here,
as a share of the fit's CPU time (the floor of the screened methods).  ``--direct``:
also the direct jackknife+ (every (t x m) value formed and partitioned, in
blocks of 4M floats).  Times are the least of ``--repeats`` runs (the
machine may be shared); the CPU columns are the process's CPU time, the
steadier measure where other work competes for the cores.  ``--quick``: m = t = 4,000, n = 200, with
``--direct``.

Exactness is the tests' business (tests/test_loo_bounds.py checks the fast
bounds against the direct definition); this script only times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import lssvm.cv.conformal.full as full_module  # noqa: E402
import lssvm.cv.conformal.jackknife as jackknife_module  # noqa: E402
from lssvm import SparseLSSVR  # noqa: E402
from lssvm.cv.conformal import eigen_rows, interval_from_values, loo_values, screened_kth  # noqa: E402


def data(rng, m, d=8):
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.3 * X[:, 3] ** 2 + 0.3 * rng.standard_normal(m)
    return X, y


def timed(fn, memory, repeats=1):
    """Least wall time of ``repeats`` calls of ``fn()``, the least process CPU
    time of the same calls (steadier than the wall time on a shared machine:
    waiting for a core does not count) and, with ``memory``, the peak of one
    more call's traced allocations (MiB)."""
    wall = cpu = np.inf
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    peak = np.nan
    if memory:
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return wall, peak, out, cpu


def direct_jackknife_plus(est, Xt, coverage):
    """Jackknife+ with every (t x m) LOO value formed, in blocks of 4M floats."""
    fac, a = est.factorization_, est.alpha
    R = fac.loo_residuals(a)
    out = np.empty((Xt.shape[0], 2, R.shape[1]))
    step = max(1, (1 << 22) // R.size)
    for lo in range(0, Xt.shape[0], step):
        Mx = eigen_rows(fac, est.kernel_(Xt[lo:lo + step], est.basis_vectors_))
        out[lo:lo + step] = interval_from_values(loo_values(fac, Mx, a, R)[1], np.abs(R), coverage)
    return out[:, :, 0]


def window_share(module, fn, m):
    """Mean window of the screened groups run by ``fn`` through ``module``, as a share of m."""
    seen = []
    real = module.screened_kth
    module.screened_kth = lambda *a, **k: screened_kth(*a, **k, windows=seen)
    try:
        fn()
    finally:
        module.screened_kth = real
    return float(np.mean(seen)) / m if seen else np.nan


def blas_rate(t, m, r, rng):
    """GEMM flops per second of wall time and of process CPU time on a (t_b x
    r) times (r x m) product, t_b = 512 rows at a time as the interval code
    blocks them."""
    tb = min(t, 512)
    A, B = rng.standard_normal((tb, r)), rng.standard_normal((r, m))
    A @ B
    reps, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < 0.5:
        A @ B
        reps += 1
    flops = 2.0 * tb * r * m * reps
    return flops / (time.perf_counter() - t0), flops / max(time.process_time() - c0, 1e-9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--m", type=int, default=20_000)
    ap.add_argument("--t", type=int, default=20_000)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--methods", default="jackknife+,jackknife,cv+,full")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.quick:
        args.m, args.t, args.n, args.direct = 4_000, 4_000, 200, True
    rng = np.random.default_rng(args.seed)
    X, y = data(rng, args.m)
    Xt, _ = data(rng, args.t)
    memory = not args.no_memory

    est = SparseLSSVR(gamma=1.0 / X.shape[1], alpha=1e-2, basis="random", n_basis=args.n, random_state=args.seed)
    fit_s, fit_peak, _, fit_cpu = timed(lambda: est.fit(X, y), memory, args.repeats)
    r = est.factorization_.rank
    rate, cpu_rate = blas_rate(args.t, args.m, r, rng)
    gemm_flops = 2.0 * args.t * args.m * r
    print(f"# m = {args.m}, t = {args.t}, n = {args.n} (rank {r}); OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, load {os.getloadavg()[0]:.1f}")
    print(f"# BLAS rate on a (512 x {r}) @ ({r} x {args.m}) GEMM: {rate / 1e9:.1f} GFLOP/s ({cpu_rate / 1e9:.1f} per "
          f"CPU second); the t x m cross-leverages, {gemm_flops / 1e9:.0f} GFLOP, would take {gemm_flops / rate:.2f} s "
          "at that rate")
    print()
    print("| what | time (s) | / fit | CPU (s) | CPU / fit | peak memory (MiB) | window share | GFLOP in products "
          "| at the BLAS rate (s) | products' CPU floor / fit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| fit | {fit_s:.2f} | 1.00 | {fit_cpu:.2f} | 1.00 | {fit_peak:.0f} | | | | |")
    modules = {"jackknife+": jackknife_module, "full": full_module}
    n = est.basis_vectors_.shape[0]
    for method in args.methods.split(","):
        call = lambda method=method: est.predict_interval(Xt, 0.9, method=method)  # noqa: E731
        wall, peak, out, cpu = timed(call, memory, args.repeats)
        width = float(np.mean(out[:, 1] - out[:, 0]))
        share, flops = "", ""
        if method in modules:
            w = window_share(modules[method], call, args.m)
            gf = (2.0 * args.t * n * r + 2.0 * args.t * w * args.m * r) / 1e9
            share, flops = f"{w:.3f}", f"{gf:.1f} | {gf * 1e9 / rate:.2f} | {gf * 1e9 / cpu_rate / fit_cpu:.2f}"
        else:
            flops = " | | "
        print(f"| predict_interval {method} (mean width {width:.3f}) | {wall:.2f} | {wall / fit_s:.2f} | {cpu:.2f} "
              f"| {cpu / fit_cpu:.2f} | {peak:.0f} "
              f"| {share} | {flops} |")
    if args.direct:
        wall, peak, out, cpu = timed(lambda: direct_jackknife_plus(est, Xt, 0.9), memory, args.repeats)
        print(f"| direct jackknife+, every (t x m) value | {wall:.2f} | {wall / fit_s:.2f} | {cpu:.2f} | "
              f"{cpu / fit_cpu:.2f} | {peak:.0f} | 1 | "
              f"{(2.0 * args.t * n * (n + r) + gemm_flops) / 1e9:.1f} | {gemm_flops / rate:.2f} | "
              f"{gemm_flops / cpu_rate / fit_cpu:.2f} |")


if __name__ == "__main__":
    main()
