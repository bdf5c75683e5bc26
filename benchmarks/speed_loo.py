"""Speed of fit + exact LOO over a 20-alpha path, against scikit-learn.

The speed check: m = 5000, d = 10, n in {500, 1000, 2000} random basis
points, RBF kernel, 20 alphas on a log grid.

* ours:  SparseLSSVR(basis=Z).fit, then loo_residuals(alphas) (20 alphas);
* peer:  make_pipeline(Nystroem(n_components=n), RidgeCV(alphas, store_cv_results=True)),
  the same model on the same basis points (Nystroem features K_mn K_BB^-1/2,
  ridge with an unpenalised intercept) with the same LOO errors, computed by
  scikit-learn's SVD/eigen GCV.

Printed: times (best of --repeats), ratios, agreement of the LOO squared
errors, and the flop rate of ``fit`` against this machine's DGEMM rate
measured in the same run.

Run:  python benchmarks/speed_loo.py [--n 500 1000 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
import sklearn
from _common import best_time, gemm_rate, synthetic_regression
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline

from lssvm import SparseLSSVR


def fit_flops(m, n, d):
    """Flops of SparseLSSVR.fit with an explicit basis (see factorize_sparse_rls).

    kernel distances 2mnd; whitening Kc L^-T m n^2 (TRSM); Phi^T Phi m n^2
    (SYRK); Cholesky n^3/3; eigh ~10/3 n^3 (tridiagonalisation 4/3 n^3 +
    divide-and-conquer back-transformation ~2 n^3); M = Phi V 2 m n^2.
    Exponentials and the n x n basis kernel are not counted.
    """
    return 2 * m * n * d + 4 * m * n**2 + n**3 / 3 + 10 / 3 * n**3


def phase_times(X, Z, gamma, repeats):
    """Seconds per step of factorize_sparse_rls (Cholesky path), best of repeats."""
    from scipy import linalg
    from scipy.linalg import lapack

    from lssvm.kernels import RBF

    kern = RBF(gamma)
    best = {}
    for _ in range(repeats):
        t = {}
        t0 = time.perf_counter(); K = kern(X, Z); KBB = kern(Z, Z); t["kernel"] = time.perf_counter() - t0
        t0 = time.perf_counter(); K -= K.mean(axis=0); t["centre"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        L = linalg.cholesky(KBB, lower=True, check_finite=False)
        lapack.dpocon(L, np.linalg.norm(KBB, 1), uplo="L")
        t["cholesky+rcond"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        Phi = linalg.solve_triangular(L, K.T, lower=True, overwrite_b=True, check_finite=False).T
        t["whiten (TRSM m n^2)"] = time.perf_counter() - t0
        t0 = time.perf_counter(); C = Phi.T @ Phi; t["Phi^T Phi (SYRK m n^2)"] = time.perf_counter() - t0
        t0 = time.perf_counter(); lam, V = linalg.eigh(C, driver="evd", check_finite=False); t["eigh (~10/3 n^3)"] = time.perf_counter() - t0
        t0 = time.perf_counter(); Phi @ V; t["M = Phi V (GEMM 2 m n^2)"] = time.perf_counter() - t0
        best = {k: min(v, best.get(k, np.inf)) for k, v in t.items()}
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=5000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--gamma", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sklearn-repeats", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    ap.add_argument("--phases", action="store_true", help="also time each step of fit")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(0)
    m, d = args.m, args.d
    X, y = synthetic_regression(rng, m, d)
    alphas = np.geomspace(1e-3, 1e3, 20)
    peak = gemm_rate(m, max(args.n))

    rows = []
    for n in args.n:
        ny = Nystroem(kernel="rbf", gamma=args.gamma, n_components=n, random_state=0).fit(X)
        Z = X[ny.component_indices_]

        est = SparseLSSVR(kernel="rbf", gamma=args.gamma, alpha=float(alphas[0]), basis=Z)
        t_fit, _ = best_time(lambda: est.fit(X, y), args.repeats)
        t_loo, R = best_time(lambda: est.loo_residuals(alphas), args.repeats)

        pipe = make_pipeline(
            Nystroem(kernel="rbf", gamma=args.gamma, n_components=n, random_state=0),
            RidgeCV(alphas=alphas, store_cv_results=True),
        )
        t_sk, _ = best_time(lambda: pipe.fit(X, y), args.sklearn_repeats)
        sk_sq = pipe[-1].cv_results_.T  # (A, m) squared LOO errors
        ours_sq = R**2
        agree = max(
            np.linalg.norm(ours_sq[k] - sk_sq[k]) / np.linalg.norm(sk_sq[k]) for k in range(len(alphas))
        )
        flops = fit_flops(m, n, d)
        rows.append(
            {
                "n": n,
                "fit_s": t_fit,
                "loo20_s": t_loo,
                "fit+loo_s": t_fit + t_loo,
                "(fit+loo)/fit": (t_fit + t_loo) / t_fit,
                "sklearn_s": t_sk,
                "speedup_vs_sklearn": t_sk / (t_fit + t_loo),
                "loo_rel_diff": agree,
                "fit_GFLOP": flops / 1e9,
                "fit_GFLOP/s": flops / t_fit / 1e9,
                "fraction_of_dgemm": flops / t_fit / 1e9 / peak,
                "cond_KBB": float(np.linalg.cond(est.kernel_(Z, Z))),
            }
        )
        print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.3g}"), flush=True)

    table = pd.DataFrame(rows)
    phases = None
    if args.phases:
        n = max(args.n)
        phases = phase_times(X, X[:n].copy(), args.gamma, args.repeats)
        total = sum(phases.values())
        print(f"\nfit phases at n={n} (best of {args.repeats}):")
        for k, v in phases.items():
            print(f"  {k:28s} {v:7.3f} s  {100 * v / total:5.1f} %")
    machine = {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "dgemm_GFLOPs": peak,
    }
    print()
    print(f"m={m} d={d} gamma={args.gamma} alphas=geomspace(1e-3, 1e3, 20); DGEMM peak {peak:.1f} GFLOP/s")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "speed_loo.json").write_text(json.dumps({"machine": machine, "rows": rows, "phases": phases}, indent=2))
    return table


if __name__ == "__main__":
    main()
