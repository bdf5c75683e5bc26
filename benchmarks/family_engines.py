"""Fit, fit plus a 20-alpha LOO path, and 10-fold CV of the Nyström and
fixed-size regressors on the shared engine (m rows, c basis points).

Runs against whatever ``lssvm`` is on the path; on a checkout without the
shared methods the Nyström LOO and k-fold go through ``cv_residuals`` and the
fixed-size rows are left out.  Run it once per checkout in the same session
and compare the ratios:

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/family_engines.py [m] [c]
"""

import sys
import time
import warnings

import numpy as np

from lssvm import FixedSizeLSSVR, NystromLSSVR


def best_of(f, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main(m=5000, c=500):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(m, 4))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 4 + 0.1 * rng.normal(size=m)
    alphas = np.logspace(-4, 1, 20)
    shared = hasattr(NystromLSSVR, "loo_residuals")
    rows = []
    nys = NystromLSSVR(gamma=0.3, alpha=0.1, n_basis=c, random_state=0)
    rows.append(("Nystrom fit", best_of(lambda: nys.fit(X, y))))
    if shared:
        rows.append(("Nystrom fit + 20-alpha LOO", best_of(lambda: nys.fit(X, y).loo_residuals(alphas))))
        rows.append(("Nystrom 10-fold cv_error", best_of(lambda: nys.cv_error(10))))
    else:
        rows.append(("Nystrom fit + 20-alpha LOO", best_of(lambda: nys.fit(X, y).cv_residuals("loo", alphas))))
        rows.append(("Nystrom 10-fold cv_error", best_of(lambda: nys.cv_error(10))))
    fs = FixedSizeLSSVR(gamma=0.3, alpha=0.1, n_basis=c // 5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows.append(("fixed-size fit", best_of(lambda: fs.fit(X, y), repeat=1)))
        if shared:
            rows.append(("fixed-size 20-alpha LOO (engine built)", best_of(lambda: fs.fit(X, y).loo_residuals(alphas),
                                                                             repeat=1)))
            rows.append(("fixed-size 10-fold cv_error", best_of(lambda: fs.cv_error(10))))
    print(f"m = {m}, c = {c}, shared methods: {shared}")
    for name, t in rows:
        print(f"{name:40s} {t:8.3f} s")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
