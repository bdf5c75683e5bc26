"""Paper 003 Table 2: exact vs approximate (Nyström) model selection of the
LS-SVM on the 13 IDA benchmarks.

For each data set and realisation (inputs standardised with the training
set's mean and standard deviation, RBF kernel), hyper-parameters are chosen
on paper 003's 13 x 11 grid (its LS-SVM gamma 2^-15 ... 2^9 -> our alpha =
1/gamma; its sigma^2 2^-15 ... 2^5 -> our gamma = 1/sigma^2; steps of 2^2)
by minimising the 5-fold CV error rate (ties to the lower CV MSE), with

- exact: 5-fold CV of the dense LS-SVM (``DenseLSSVMCV``: one ``eigh`` per
  width, every alpha and fold from it -- already far cheaper than the
  paper's retraining per fold and grid point, which ``--naive`` also times);
- approx 5-fold: the same CV of the LS-SVM on a rank-k Nyström kernel,
  c = 0.1 n uniformly sampled columns, k = 0.5 c (``NystromCV``, Alg. 2);
- approx LOO: the exact LOO of that Nyström LS-SVM.

Then the dense LS-SVM is trained on the training set with each choice and
tested on the test set.  Reported: mean test error rate (TER, %) ± standard
error over realisations, the z statistic of the TER difference against
exact selection (z = (TER_a - TER_e) / sqrt(se_a^2 + se_e^2); z > 1.645 means
significantly worse at 95 %, one-sided), the Wilcoxon signed-rank p-value
over the paired realisations, and mean model-selection times.

Realisations: IDA's own where ten exist; otherwise the seeded substitutes
(see the data README).  --mode fast: the first 10; --mode full: all.
Results accumulate in out/paper003_ida_{mode}.csv (a run on --sets replaces
those sets' rows) and the table is written to out/paper003_ida_{mode}.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.stats import wilcoxon

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import runs_kept, runs_merged  # noqa: E402
from paper002_ida import DATA, OUT, realisations  # noqa: E402

from lssvm.datasets import IDA_NAMES, load_ida  # noqa: E402
from lssvm.kernels import squared_distances  # noqa: E402
from lssvm.selection import DEFAULT_ALPHAS, PAPER003_GAMMAS, DenseLSSVMCV, grid_search  # noqa: E402
from lssvm.selection.nystrom import NystromCV  # noqa: E402
from lssvm.solvers.nystrom import dense_factorize  # noqa: E402

METHODS = ("exact 5-fold", "approx 5-fold", "approx LOO")
GRID = {"gamma": PAPER003_GAMMAS}


def fit_predict(Xtr, ytr, Xte, gamma, alpha):
    """Dense LS-SVM (dual, exact kernel) trained on (Xtr, ytr +-1); test labels."""
    K = np.exp(-gamma * squared_distances(Xtr, Xtr))
    fac = dense_factorize(K, ytr[:, None])
    a, b, _ = fac.solve(alpha)
    return np.where(np.exp(-gamma * squared_distances(Xte, Xtr)) @ a[:, 0] + b[0] > 0, 1, -1)


def naive_exact_selection(Xtr, ytr, folds):
    """Paper 003's baseline: retrain the dense LS-SVM per fold and grid point
    (Cholesky of each fold's K + alpha I, two solves); returns seconds."""
    t0 = time.perf_counter()
    D = squared_distances(Xtr, Xtr)
    for g in PAPER003_GAMMAS:
        K = np.exp(-g * D)
        for a in DEFAULT_ALPHAS:
            for T in folds:
                tr = np.setdiff1d(np.arange(len(ytr)), T)
                cf = cho_factor(K[np.ix_(tr, tr)] + a * np.eye(tr.size), check_finite=False)
                eta = cho_solve(cf, np.ones(tr.size))
                nu = cho_solve(cf, ytr[tr])
                b = nu.sum() / eta.sum()
                _ = K[np.ix_(T, tr)] @ (nu - b * eta) + b
    return time.perf_counter() - t0


def run_realisation(name, k, sub, seed, naive):
    Xtr, ytr, Xte, yte = load_ida(name, k, DATA, substitute=sub)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    ytr, yte = np.where(ytr > 0, 1, -1), np.where(yte > 0, 1, -1)
    rows = {}
    criteria = {
        "exact 5-fold": lambda: DenseLSSVMCV(Xtr, ytr, cv=5, classification=True, random_state=seed),
        "approx 5-fold": lambda: NystromCV(Xtr, ytr, cv=5, classification=True, random_state=seed),
        "approx LOO": lambda: NystromCV(Xtr, ytr, cv="loo", classification=True, random_state=seed),
    }
    for method, make in criteria.items():
        t0 = time.perf_counter()
        crit = make()
        res = grid_search(crit, GRID, scoring="error_rate")
        t_sel = time.perf_counter() - t0
        g, a = res.best_params["gamma"], res.best_params["alpha"]
        err = 100 * np.mean(fit_predict(Xtr, ytr, Xte, g, a) != yte)
        rows[method] = dict(err=err, t_select=t_sel, log2_gamma=np.log2(g), log2_alpha=np.log2(a),
                            cv_error=100 * res.best_score)
        if method == "exact 5-fold" and naive:
            rows[method]["t_naive"] = naive_exact_selection(Xtr, ytr, crit.folds)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("fast", "full"), default="fast")
    ap.add_argument("--sets", nargs="*", default=list(IDA_NAMES))
    ap.add_argument("--naive", action="store_true",
                    help="also time the paper's exact selection by retraining (first realisation only)")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    csv = OUT / f"paper003_ida_{args.mode}.csv"
    kept = runs_kept(csv, args.sets)
    records = []
    for name in args.sets:
        reals, sub = realisations(name, args.mode)
        t0 = time.perf_counter()
        for i, k in enumerate(reals):
            rows = run_realisation(name, k, sub, seed=k, naive=args.naive and i == 0)
            for method, r in rows.items():
                records.append(dict(data=name, realisation=k, substitute=sub, method=method, **r))
        runs_merged(kept, records, IDA_NAMES).to_csv(csv, index=False)
        print(f"# {name}: {len(reals)} realisations in {time.perf_counter() - t0:.0f} s", flush=True)
    report(runs_merged(kept, records, IDA_NAMES), args.mode)


def report(df, mode):
    lines = [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; mode {mode}", "",
             "| data | R | exact 5-fold TER % | approx 5-fold TER % | z | Wilcoxon p | approx LOO TER % | z | "
             "Wilcoxon p | exact sel. s | approx 5-fold sel. s | speed-up | approx LOO sel. s | speed-up |",
             "|" + "---|" * 14]
    not_worse = {"approx 5-fold": 0, "approx LOO": 0}
    n_sets = 0
    for name, g in df.groupby("data", sort=False):
        n_sets += 1
        e = g[g.method == "exact 5-fold"].sort_values("realisation")
        R = len(e)
        se = lambda s: s.std(ddof=1) / np.sqrt(len(s)) if len(s) > 1 else 0.0  # noqa: E731
        cells = [name, str(R), f"{e.err.mean():.2f} ± {se(e.err):.2f}"]
        times = []
        for m in ("approx 5-fold", "approx LOO"):
            a = g[g.method == m].sort_values("realisation")
            den = np.hypot(se(a.err), se(e.err))
            z = (a.err.mean() - e.err.mean()) / den if den > 0 else 0.0
            diff = a.err.to_numpy() - e.err.to_numpy()
            p = wilcoxon(diff, zero_method="zsplit").pvalue if np.any(diff != 0) else 1.0
            not_worse[m] += int(z <= 1.645)
            cells += [f"{a.err.mean():.2f} ± {se(a.err):.2f}", f"{z:.2f}", f"{p:.2f}"]
            times.append(a.t_select.mean())
        te = e.t_select.mean()
        cells += [f"{te:.2f}", f"{times[0]:.3f}", f"{te / times[0]:.0f}×", f"{times[1]:.3f}", f"{te / times[1]:.0f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"{m}: not significantly worse (z <= 1.645) on {v} of {n_sets} data sets"
                    for m, v in not_worse.items())]
    if "t_naive" in df and df.t_naive.notna().any():
        lines += ["", "Paper's exact selection by retraining per fold and grid point (first realisation):"]
        for name, g in df[df.t_naive.notna()].groupby("data", sort=False):
            r = g.iloc[0]
            ap = df[(df.data == name) & (df.realisation == r.realisation) & (df.method == "approx 5-fold")]
            lines.append(f"- {name}: {r.t_naive:.1f} s (ours exact {r.t_select:.2f} s, approx "
                         f"{ap.t_select.iloc[0]:.3f} s: {r.t_naive / ap.t_select.iloc[0]:.0f}×)")
    text = "\n".join(lines)
    print(text)
    (OUT / f"paper003_ida_{mode}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
