"""Full conformal prediction against jackknife+, CV+ and split conformal at 90 %.

    python benchmarks/conformal.py [--splits 20] [--sets friedman1,boston,puma32H,elevators,ailerons,pol]
                                   [--max-train 4000] [--n-basis 300]
    python benchmarks/conformal.py --scale [--sizes 2000:200,20000:500]
    python benchmarks/conformal.py --figure-only   (the figure from benchmarks/out/conformal.csv)

Per data set, ``--splits`` random 80/20 splits (the training part capped at
``--max-train`` rows, drawn at random); inputs standardised on the training
part; one SparseLSSVR (RBF, ``gamma = 1 / n_features``, a random basis of
``--n-basis`` points), alpha chosen by exact LOO (PRESS) on a 15-point path,
then on the same fit: ``method="full"`` (exact full conformal at the fitted
basis), ``"jackknife+"``, ``"cv+"`` (10 folds).  Split conformal trains the
same model on half the training rows (its own PRESS alpha) and calibrates on
the other half.  Friedman #1: ``make_friedman1`` (noise 1), 2,500 rows.

Prints mean empirical coverage, mean width, the interval call's seconds (the
fit excluded; split conformal: its whole fit and calibration) and the
ratios full / jackknife+ of width and time, interleaved per split so the
machine's drift hits every method alike; then the load average.  Writes the
coverage-versus-width figure of the documentation (``--figure``, default
``docs/site/_static/conformal_coverage_width.png``).
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

from intervals import ALPHAS, load, loadavg, md, save, standardise  # noqa: E402

from lssvm import SparseLSSVR  # noqa: E402

COVERAGE = 0.9


def dataset(name):
    if name == "friedman1":
        from sklearn.datasets import make_friedman1

        return make_friedman1(2500, noise=1.0, random_state=0)
    X, y = load(name)
    return X, y.astype(float)


def fit(X, y, n_basis, seed):
    est = SparseLSSVR(gamma=1.0 / X.shape[1], alpha=1.0, basis="random", n_basis=min(n_basis, X.shape[0] // 2),
                      random_state=seed).fit(X, y)
    est.set_params(alpha=float(ALPHAS[np.argmin(est.press(ALPHAS))]))
    return est.fit(X, y)  # the same basis (same seed), at the chosen alpha


def split_conformal(X, y, Xte, n_basis, seed):
    rng = np.random.default_rng(seed)
    p = rng.permutation(X.shape[0])
    tr, cal = p[: p.size // 2], p[p.size // 2:]
    est = fit(X[tr], y[tr], n_basis, seed)
    r = np.sort(np.abs(y[cal] - est.predict(X[cal])))
    k = int(np.ceil(COVERAGE * (cal.size + 1) - 1e-9))
    q = r[k - 1]
    f = est.predict(Xte)
    return np.column_stack([f - q, f + q])


def main(args):
    rows = []
    for name in args.sets:
        X, y = dataset(name)
        rng = np.random.default_rng(0)
        for s in range(args.splits):
            p = rng.permutation(X.shape[0])
            k = int(round(0.8 * X.shape[0]))
            tr, te = p[:k][: args.max_train], p[k:]
            Xtr, Xte = standardise(X[tr], X[te])
            est = fit(Xtr, y[tr], args.n_basis, s)
            runs = [(m, (lambda m=m: est.predict_interval(Xte, COVERAGE, m))) for m in ("full", "jackknife+")]
            runs.append(("cv+", lambda: est.predict_interval(Xte, COVERAGE, "cv+", cv=10)))
            runs.append(("split", lambda: split_conformal(Xtr, y[tr], Xte, args.n_basis, s)))
            if s % 2:  # alternate the order: drift and warm caches hit every method alike
                runs = runs[::-1]
            for method, call in runs:
                t0 = time.perf_counter()
                iv = call()
                dt = time.perf_counter() - t0
                rows.append(dict(data=name, split=s, method=method, m=tr.size, t=te.size,
                                 coverage=np.mean((y[te] >= iv[:, 0]) & (y[te] <= iv[:, 1])),
                                 width=np.mean(iv[:, 1] - iv[:, 0]), seconds=dt))
            print(f"  {name} split {s}: " + ", ".join(
                f"{r['method']} {r['coverage']:.3f}/{r['width']:.3g}/{r['seconds']:.2f}s" for r in rows
                if r["data"] == name and r["split"] == s), flush=True)
    df = pd.DataFrame(rows)
    save(df, "conformal.csv")
    table = df.groupby(["data", "method"]).agg(m=("m", "first"), t=("t", "first"), splits=("split", "count"),
                                               coverage=("coverage", "mean"), coverage_min=("coverage", "min"),
                                               width=("width", "mean"), seconds=("seconds", "mean"))
    print(f"\n{COVERAGE:.0%} intervals: mean empirical coverage over random 80/20 splits, mean width (target units), "
          "mean seconds of the interval call")
    print(md(table))
    piv = df.pivot_table(index=["data", "split"], columns="method", values=["width", "seconds"])
    ratio = pd.DataFrame({
        "width full/jk+": (piv["width"]["full"] / piv["width"]["jackknife+"]).groupby("data").mean(),
        "time full/jk+": (piv["seconds"]["full"] / piv["seconds"]["jackknife+"]).groupby("data").mean(),
    })
    print("\nPer-split ratios, full conformal over jackknife+ (mean over splits)")
    print(md(ratio))
    print(loadavg())
    figure(df, args.figure)


#: marker and colour (Okabe-Ito, colour-blind safe) of each method in the figure
_STYLE = {"full": ("o", "#D55E00", "full conformal"), "jackknife+": ("s", "#0072B2", "jackknife+"),
          "cv+": ("^", "#009E73", "CV+ (10 folds)"), "split": ("D", "#777777", "split conformal")}


def figure(df, path):
    """Coverage against width, one panel per data set: each method's mean
    coverage over the splits (bars: +- one standard error over the splits)
    against its mean width relative to jackknife+'s on the same data set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(df["data"]))
    cols = 3
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(9.6, 3.1 * rows), squeeze=False)
    for ax, name in zip(axes.ravel(), names, strict=False):
        d = df[df["data"] == name]
        ref_width = d[d["method"] == "jackknife+"]["width"].mean()
        ax.axhline(COVERAGE, ls="--", color="#999999", lw=1)
        for method, (marker, color, label) in _STYLE.items():
            g = d[d["method"] == method]
            if not len(g):
                continue
            se = g["coverage"].std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else 0.0
            ax.errorbar(g["width"].mean() / ref_width, g["coverage"].mean(), yerr=se, fmt=marker, color=color, ms=7,
                        elinewidth=1, capsize=3, label=label)
        ax.set_title(f"{name} (m = {int(d['m'].iloc[0])})", fontsize=10)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("empirical coverage")
    for ax in axes[-1]:
        ax.set_xlabel("width / jackknife+ width")
    splits = int(df.groupby("data")["split"].nunique().min())
    fig.suptitle(f"{COVERAGE:.0%} intervals of one sparse LS-SVM: mean over {splits} random splits "
                 "(bars: one standard error); dashed: nominal", fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"figure: {path}")


def scale(args):
    """Interval time for t = m test rows against the fit's time (synthetic
    data, 8 inputs, a random basis of n points, alpha 0.1), methods
    interleaved."""
    rng = np.random.default_rng(0)
    rows = []
    for size in args.sizes:
        m, n = (int(v) for v in size.split(":"))
        X = rng.standard_normal((2 * m, 8))
        y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(2 * m)
        t0 = time.perf_counter()
        est = SparseLSSVR(gamma=0.1, alpha=0.1, basis="random", n_basis=n, random_state=0).fit(X[:m], y[:m])
        row = dict(m=m, t=m, n=n, fit=time.perf_counter() - t0)
        for method in ("jackknife+", "full", "cv+"):
            t0 = time.perf_counter()
            est.predict_interval(X[m:], COVERAGE, method)
            row[method] = time.perf_counter() - t0
        rows.append(row)
        print(row, flush=True)
    df = pd.DataFrame(rows)
    for method in ("jackknife+", "full", "cv+"):
        df[f"{method} / fit"] = df[method] / df["fit"]
    print("\nSeconds for t = m test rows, and as multiples of the fit")
    print(md(df, index=False))
    print(loadavg())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--sets", type=lambda s: s.split(","),
                    default=["friedman1", "boston", "puma32H", "elevators", "ailerons", "pol"])
    ap.add_argument("--max-train", type=int, default=4000)
    ap.add_argument("--n-basis", type=int, default=300)
    ap.add_argument("--scale", action="store_true", help="interval time for t = m rows against the fit's")
    ap.add_argument("--sizes", type=lambda s: s.split(","), default=["2000:200", "20000:500"])
    ap.add_argument("--figure", default=str(Path(__file__).resolve().parents[1] / "docs" / "site" / "_static"
                                            / "conformal_coverage_width.png"))
    ap.add_argument("--figure-only", action="store_true", help="redraw the figure from benchmarks/out/conformal.csv")
    parsed = ap.parse_args()
    if parsed.figure_only:
        figure(pd.read_csv(Path(__file__).resolve().parent / "out" / "conformal.csv"), parsed.figure)
    else:
        scale(parsed) if parsed.scale else main(parsed)
