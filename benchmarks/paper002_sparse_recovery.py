"""Paper 002's two small studies of SCDP itself.

Fig. 4 (§3.2): X (20 x 15) and y (20) standard normal; for each cardinality
l, the training MSE ``||X w - y||^2 / 20`` of SCDP on ``(X^T X + 1e-9 I) w =
X^T y`` after l steps, of the LASSO path (scikit-learn ``lars_path``,
method="lasso"; the best solution of each cardinality along the path), of
the de-biased LASSO (least squares on each LASSO support) and of the
exhaustive-search Pareto front (best subset of each size), averaged over
100 draws.

Figs. 5-6 (§3.2, the setup of Figueiredo et al. 2007): a 4096-dim signal with
160 spikes of +-1, 1024 measurements by a Gaussian matrix with orthonormalised
rows, noise variance sigma^2.  SCDP runs 320 steps (twice the sparsity: greedy errors among the first
160 picks get zero weight once the true spikes are in) on ``(X^T X + 1e-9 I) w =
X^T y``; the LASSO (scikit-learn ``Lasso``) uses tau = 0.1 ||X^T y||_inf as in
GPSR (alpha = tau / 1024 in scikit-learn's scaling).  A signal counts as
recovered when the support of the estimate thresholded at 0.5 equals the
true one.  Recovery rate over runs per variance.

Run:  python benchmarks/paper002_sparse_recovery.py [--draws 100] [--runs 100]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.linear_model import Lasso, lars_path  # noqa: E402

from lssvm import scdp  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
VARIANCES = (1e-4, 1e-3, 2e-3, 3e-3, 4e-3, 6e-3, 1e-2)


def pareto_study(draws, seed=0):
    rng = np.random.default_rng(seed)
    N, D = 20, 15
    curves = {m: np.zeros(D) for m in ("SCDP", "LASSO", "de-biased LASSO", "exhaustive")}
    subsets = [list(itertools.combinations(range(D), k)) for k in range(1, D + 1)]
    for _ in range(draws):
        X, y = rng.standard_normal((N, D)), rng.standard_normal(N)
        mse = lambda w: float(np.sum((X @ w - y) ** 2) / N)  # noqa: E731

        def ls(S):
            w = np.zeros(D)
            w[list(S)] = np.linalg.lstsq(X[:, list(S)], y, rcond=None)[0]
            return w

        res = scdp(X.T @ X + 1e-9 * np.eye(D), X.T @ y)
        curves["SCDP"] += [mse(res.coef(k)) for k in range(1, D + 1)]
        _, _, coefs = lars_path(X, y, method="lasso")
        best = np.full(D, np.inf)
        best_db = np.full(D, np.inf)
        for w in coefs.T:
            k = np.count_nonzero(w)
            if k:
                best[k - 1] = min(best[k - 1], mse(w))
                best_db[k - 1] = min(best_db[k - 1], mse(ls(np.flatnonzero(w))))
        curves["LASSO"] += best
        curves["de-biased LASSO"] += best_db
        curves["exhaustive"] += [min(mse(ls(S)) for S in subsets[k]) for k in range(D)]
    return {m: c / draws for m, c in curves.items()}


def recovery_study(runs, seed=0):
    rng = np.random.default_rng(seed)
    N, D, S = 1024, 4096, 160
    hits = {m: np.zeros(len(VARIANCES)) for m in ("SCDP", "LASSO")}
    example = None
    for _ in range(runs):
        X = np.linalg.qr(rng.standard_normal((D, N)))[0].T  # orthonormal rows
        w = np.zeros(D)
        support = rng.choice(D, S, replace=False)
        w[support] = rng.choice([-1.0, 1.0], S)
        A = X.T @ X
        A[np.diag_indices(D)] += 1e-9
        truth = np.sort(support)
        for i, var in enumerate(VARIANCES):
            y = X @ w + np.sqrt(var) * rng.standard_normal(N)
            b = X.T @ y
            w_scdp = scdp(A, b, max_nonzero=2 * S).coef()
            tau = 0.1 * np.abs(b).max()
            w_lasso = Lasso(alpha=tau / N, fit_intercept=False, max_iter=5000, tol=1e-6).fit(X, y).coef_
            for m, est in (("SCDP", w_scdp), ("LASSO", w_lasso)):
                hits[m][i] += np.array_equal(np.flatnonzero(np.abs(est) > 0.5), truth)
            if example is None and i == 0:
                example = (w, w_scdp, np.linalg.lstsq(X, y, rcond=None)[0])
    return {m: 100 * h / runs for m, h in hits.items()}, example


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)

    t0 = time.perf_counter()
    curves = pareto_study(args.draws)
    print(f"Fig. 4: mean training MSE by cardinality over {args.draws} draws ({time.perf_counter() - t0:.0f} s)\n")
    print("| l | " + " | ".join(curves) + " |")
    print("|---" * (len(curves) + 1) + "|")
    for k in range(15):
        print(f"| {k + 1} | " + " | ".join(f"{c[k]:.4f}" for c in curves.values()) + " |")
    gap = {m: float(np.mean(c[:-1] - curves["exhaustive"][:-1])) for m, c in curves.items()}
    print("\nmean gap to the Pareto front (l = 1..14): " + ", ".join(f"{m} {g:.4f}" for m, g in gap.items()))
    fig, ax = plt.subplots(figsize=(5, 4))
    for m, c in curves.items():
        ax.plot(np.arange(1, 16), c, marker="o", ms=3, label=m)
    ax.set(xlabel="cardinality", ylabel="training MSE", title="Paper 002 Fig. 4")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "paper002_fig4_pareto.png", dpi=120)

    t0 = time.perf_counter()
    rates, (w, w_scdp, w_ls) = recovery_study(args.runs)
    print(f"\nFigs. 5-6: % of {args.runs} signals recovered ({time.perf_counter() - t0:.0f} s)\n")
    print("| noise variance | " + " | ".join(rates) + " |")
    print("|---|---|---|")
    for i, var in enumerate(VARIANCES):
        print(f"| {var:g} | " + " | ".join(f"{r[i]:.0f}" for r in rates.values()) + " |")
    fig, axes = plt.subplots(3, 1, figsize=(7, 5), sharex=True)
    for ax, sig, title in zip(axes, (w, w_scdp, w_ls), ("original", "SCDP", "least squares (minimum norm)"), strict=True):
        ax.plot(sig, lw=0.6)
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(OUT / "paper002_fig5_signal.png", dpi=120)
    fig, ax = plt.subplots(figsize=(5, 4))
    for m, r in rates.items():
        ax.semilogx(VARIANCES, r, marker="o", label=m)
    ax.set(xlabel="noise variance", ylabel="% recovered", title="Paper 002 Fig. 6")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "paper002_fig6_recovery.png", dpi=120)


if __name__ == "__main__":
    main()
