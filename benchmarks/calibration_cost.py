"""The cost of default class probabilities: every classifier's fit with its
default calibration (Platt's sigmoid on the exact held-out decision values)
against the same fit with ``calibration=None``.

    python benchmarks/calibration_cost.py [--sizes 5000:100,20000:300] [--repeats 3]
                                          [--families sparse,nystrom,fixed_size,fixed_size_cv]

Synthetic binary data (10 inputs, a noisy non-linear boundary), RBF ``gamma
= 0.1``, ``alpha = 0.1``, a random basis of n points (fixed size: SCDP from a
pool of n random rows, grown to n / 2 with no CV of the size, calibrated on the
exact LOO values of the model at its support; ``fixed_size_cv``: the size chosen
by the default 10-fold CV up to n / 2, calibrated on that selection's
out-of-fold values).  Per family and size the two fits alternate,
``--repeats`` times; the table gives the least of each, their ratio, and the
calibration step timed alone on the fitted model (sparse and Nyström: the
exact LOO decision values and Platt's fit, no refit; fixed size: the support
model's engine built afresh, its LOO values and Platt's fit; ``fixed_size_cv``: Platt's fit on the
values the fit kept, whose own cost, the fold paths and one product per fold, shows in the ratio
only), as a share of the plain fit; the "cpu" columns are the same ratios in process CPU time, steadier
where other work competes for the cores.  Prints the load average: read the
ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from intervals import loadavg, md  # noqa: E402

from lssvm import FixedSizeLSSVC, NystromLSSVC, SparseLSSVC  # noqa: E402

FAMILIES = {
    "sparse": lambda n, **kw: SparseLSSVC(gamma=0.1, alpha=0.1, basis="random", n_basis=n, random_state=0, **kw),
    "nystrom": lambda n, **kw: NystromLSSVC(gamma=0.1, alpha=0.1, basis="random", n_basis=n, random_state=0, **kw),
    "fixed_size": lambda n, **kw: FixedSizeLSSVC(gamma=0.1, alpha=0.1, basis="random", n_basis=n, max_size=n // 2,
                                                 cv=None, random_state=0, **kw),
    "fixed_size_cv": lambda n, **kw: FixedSizeLSSVC(gamma=0.1, alpha=0.1, basis="random", n_basis=n, max_size=n // 2,
                                                    random_state=0, **kw),
}


def calibration_step(est):
    """The calibration step alone on a fitted model (a fixed-size model's support engine rebuilt first,
    as its fit builds it; the size selection's values, where kept, reused as the fit reuses them)."""
    if isinstance(est, FixedSizeLSSVC):
        est._engine = None
    est._fit_calibration()


def data(m, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 10))
    y = (np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * rng.standard_normal(m) > 0).astype(int)
    return X, y


def timed(make, X, y):
    """Wall time, process CPU time and the fitted estimator."""
    t0, c0 = time.perf_counter(), time.process_time()
    est = make().fit(X, y)
    return time.perf_counter() - t0, time.process_time() - c0, est


def main(args):
    rows = []
    for size in args.sizes:
        m, n = (int(v) for v in size.split(":"))
        X, y = data(m)
        for family in args.families:
            build = FAMILIES[family]
            plain, default, step, plain_cpu, default_cpu, step_cpu = [], [], [], [], [], []
            for _ in range(args.repeats):
                dt, dc, _ = timed(lambda b=build, n=n: b(n, calibration=None), X, y)
                plain.append(dt)
                plain_cpu.append(dc)
                dt, dc, est = timed(lambda b=build, n=n: b(n), X, y)
                default.append(dt)
                default_cpu.append(dc)
                t0, c0 = time.perf_counter(), time.process_time()
                calibration_step(est)
                step.append(time.perf_counter() - t0)
                step_cpu.append(time.process_time() - c0)
            row = dict(family=family, m=m, n=n, fit_none=min(plain), fit_default=min(default),
                       ratio=min(default) / min(plain))
            row["calibration_step"] = min(step)
            row["step / fit"] = row["calibration_step"] / min(plain)
            row["cpu ratio"] = min(default_cpu) / min(plain_cpu)
            row["cpu step / fit"] = min(step_cpu) / min(plain_cpu)
            rows.append(row)
            print(row, flush=True)
    print("\nSeconds (least of the repeats) of the fit with calibration=None and with the default sigmoid; the "
          "calibration step alone")
    print(md(pd.DataFrame(rows), index=False))
    print(loadavg())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: s.split(","), default=["5000:100", "20000:300"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--families", type=lambda s: s.split(","), default=list(FAMILIES))
    main(ap.parse_args())
