"""Helpers shared by the benchmark scripts: timing and the synthetic speed data."""

from __future__ import annotations

import time

import numpy as np


def run_times(func, trials):
    """Run ``func`` ``trials`` times; return (array of seconds, last result)."""
    times, out = [], None
    for _ in range(trials):
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return np.asarray(times), out


def best_time(func, repeats):
    """Best of ``repeats`` runs (seconds) and the last result."""
    times, out = run_times(func, repeats)
    return float(times.min()), out


def mean_time(func, trials):
    """Mean run time (seconds), its standard error, and the last result."""
    times, out = run_times(func, trials)
    se = times.std(ddof=1) / np.sqrt(trials) if trials > 1 else 0.0
    return float(times.mean()), float(se), out


def gemm_rate(m, n, repeats=3):
    """GFLOP/s of float64 DGEMM (m x n) @ (n x n) on this machine, now."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((m, n)), rng.standard_normal((n, n))
    t, _ = best_time(lambda: A @ B, repeats)
    return 2.0 * m * n * n / t / 1e9


def synthetic_regression(rng, m, d):
    """The speed benchmarks' data: Gaussian inputs (m, d) and a smooth target
    ``sin(x0) + x1 x2`` plus N(0, 0.1^2) noise, drawn from ``rng``."""
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    return X, y


def runs_kept(csv, sets):
    """Rows of an accumulating results CSV for data sets other than ``sets``
    (a run on some sets replaces their rows and keeps the others, so a table
    can be built up over several runs)."""
    import pandas as pd

    kept = pd.read_csv(csv) if csv.exists() else pd.DataFrame()
    return kept[~kept.data.isin(sets)] if len(kept) else kept


def runs_merged(kept, records, order):
    """``kept`` plus the new ``records`` (list of dicts), data sets in ``order``."""
    import pandas as pd

    df = pd.concat([kept, pd.DataFrame(records)], ignore_index=True)
    rank = {n: i for i, n in enumerate(order)}
    return df.sort_values("data", key=lambda c: c.map(rank), kind="stable")
