"""Paper 002 Table 5 and Figs. 12-13: SCDP-FSLSSVM_PV on adult and MAGIC gamma telescope.

Table 5 (§5.3): 5 random 2/3 - 1/3 train/test splits of all rows (adult:
the 45,222 complete rows of adult.data + adult.test; MAGIC: 19,020 rows),
numeric inputs standardised on the training part, 2,000 k-center
prototypes, RBF.  Adult's 8 categorical columns are 0/1 indicators (not
standardised) and capital gain/loss are log1p-transformed: 104 inputs.  The
paper lists 14 inputs, but integer codes for the categories gave 15.8 %
(SVC 15.2 %) against the paper's 14.5 %, and standardised indicators 16.3 %.
(gamma, alpha) are tuned once, on split 1, by 10-fold CV PRESS (a 4 x 5 log2
grid + Nelder-Mead, see ``_fs_tuning.py``) and reused for the other splits;
the model size is CV-chosen on every split.  Reported: test error, # PV, the
time of one training at the tuned values and size (kernel, system, SCDP),
and of a training that also runs the 10-fold size selection.
SVC (LIBSVM) with (C, gamma) from a 3 x 3 grid, 3-fold CV on a 5,000-row
subsample of split 1, trained on the full training part (``--svc-splits``
splits, default 1: it takes minutes per split on adult).

Figs. 12-13: on split 1's system (29) at the tuned values, the Pareto front
(test error vs model size 1..K) and the time to produce it for SCDP (its
path gives the least-squares model of every size), and for LARS, LASSO
(scikit-learn ``lars_path_gram`` with Gram = A, Xy = b) and
matching pursuit (Gauss-Southwell coordinate steps), whose supports are
de-biased by a least-squares solve on each support, as in the paper.

Run:  python benchmarks/paper002_large.py [--splits 5] [--svc-splits 1] [--sets adult magic]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.linalg import cho_factor, cho_solve  # noqa: E402
from sklearn.linear_model import lars_path_gram  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import gemm_rate  # noqa: E402
from _fs_tuning import FixedSizeTuner  # noqa: E402

from lssvm import FixedSizeLSSVC, scdp  # noqa: E402
from lssvm.basis import kcenter  # noqa: E402
from lssvm.kernels import RBF  # noqa: E402
from lssvm.solvers.fixed_size import FixedSizeSystem, augmented_rows  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
OUT = Path(__file__).resolve().parent / "out"
PAPER = {"adult": (14.55, 0.34, 166, 41.6, 10.7), "magic": (13.9, 0.27, 778, 58.9, 44.4)}
PAPER_SVM = {"adult": (14.53, 10494, 371.7), "magic": (13.3, 4211, 25.0)}


def load(name):
    """Inputs, labels +1/-1, and which columns to standardise."""
    if name == "adult":
        df = pd.concat([pd.read_csv(DATA / "adult_train.csv.gz"), pd.read_csv(DATA / "adult_test.csv.gz")])
        df = df.dropna()
        y = np.where(df.pop("income").str.strip() == ">50K", 1.0, -1.0)
        num = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
        df[["capital_gain", "capital_loss"]] = np.log1p(df[["capital_gain", "capital_loss"]])
        cats = pd.get_dummies(df[[c for c in df.columns if c not in num]], dtype=float)
        X = np.hstack([df[num].to_numpy(dtype=float), cats.to_numpy()])
        return X, y, np.arange(X.shape[1]) < len(num)
    df = pd.read_csv(DATA / "magic.csv.gz")
    y = np.where(df.pop("class") == "g", 1.0, -1.0)
    X = df.to_numpy(dtype=float)
    return X, y, np.ones(X.shape[1], dtype=bool)


def split(X, y, seed, scale):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=1 / 3, random_state=seed, stratify=y)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    mu[~scale], sd[~scale] = 0.0, 1.0
    return (Xtr - mu) / sd, ytr, (Xte - mu) / sd, yte


def timed(func):
    t0 = time.perf_counter()
    out = func()
    return out, time.perf_counter() - t0


def matching_pursuit(A, b, K):
    """Gauss-Southwell coordinate descent on A w = b (MP on the normal
    equations): supports after each new coordinate."""
    w, c = np.zeros(b.size), -b.copy()
    supports, seen = [], []
    diag = np.diag(A).copy()
    for _ in range(50 * K):
        j = int(np.argmax(np.abs(c) / np.sqrt(diag)))
        step = -c[j] / diag[j]
        w[j] += step
        c += step * A[:, j]
        if j not in seen:
            seen.append(j)
            supports.append(list(seen))
            if len(seen) == K:
                break
    return supports


def debiased_errors(A, b, supports, Ktest, yte):
    """Test error of the least-squares model on each support."""
    errs = []
    for S in supports:
        w = np.zeros(b.size)
        w[S] = cho_solve(cho_factor(A[np.ix_(S, S)]), b[S])
        errs.append(np.mean(np.sign(Ktest @ w) != yte))
    return np.asarray(errs)


def fronts(A, b, Ktest, yte, K, n_rows):
    """Pareto fronts (test error per size) and the time to produce each."""
    out = {}
    res, t = timed(lambda: scdp(A, b, max_nonzero=K))
    t_pred = time.perf_counter()
    err = np.array([np.mean(np.sign(Ktest @ res.coef(k)) != yte) for k in range(1, K + 1)])
    out["SCDP"] = (err, t, time.perf_counter() - t_pred)
    for name, method in (("LARS", "lar"), ("LASSO", "lasso")):
        (_, active, coefs), t_path = timed(
            lambda m=method: lars_path_gram(b, A, n_samples=n_rows, method=m, max_iter=K if m == "lar" else 3 * K))
        supports, seen = [], set()
        for col in coefs.T:
            S = np.flatnonzero(col)
            if S.size and S.size <= K and (S.size, tuple(S)) not in seen:
                seen.add((S.size, tuple(S)))
                supports.append(S)
        errs, t_db = timed(lambda s=supports: debiased_errors(A, b, s, Ktest, yte))
        best = np.full(K, np.nan)
        for S, e in zip(supports, errs, strict=True):  # the paper plots the best error per cardinality
            best[S.size - 1] = e if np.isnan(best[S.size - 1]) else min(best[S.size - 1], e)
        out[name] = (best, t_path + t_db, 0.0)
    supports, t_mp = timed(lambda: matching_pursuit(A, b, K))
    errs, t_db = timed(lambda: debiased_errors(A, b, supports, Ktest, yte))
    out["MP"] = (np.pad(errs, (0, K - errs.size), constant_values=np.nan), t_mp + t_db, 0.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--svc-splits", type=int, default=1)
    ap.add_argument("--sets", nargs="*", default=["adult", "magic"])
    ap.add_argument("--prototypes", type=int, default=2000)
    ap.add_argument("--cat-weight", type=float, default=1.0,
                    help="adult: scale of the 0/1 category indicators against the standardised numeric inputs")
    ap.add_argument("--scoring", choices=("mse", "error_rate"), default="mse",
                    help="CV criterion for tuning and for the model-size rule")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    suffix = ("" if args.scoring == "mse" else f"_{args.scoring}") + \
        ("" if args.cat_weight == 1.0 else f"_cat{args.cat_weight:g}")
    lines = [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
             f"DGEMM {gemm_rate(4000, 2000):.0f} GFLOP/s", ""]
    for name in args.sets:
        X, y, scale = load(name)
        rows = []
        for s in range(1, args.splits + 1):
            Xtr, ytr, Xte, yte = split(X, y, seed=s, scale=scale)
            Xtr[:, ~scale] *= args.cat_weight
            Xte[:, ~scale] *= args.cat_weight
            pool = kcenter(Xtr, args.prototypes, random_state=s)
            if s == 1:
                folds = [t for _, t in StratifiedKFold(10, shuffle=True, random_state=0).split(Xtr, ytr)]
                tuner = FixedSizeTuner(Xtr, ytr, pool, folds, seed=0, scoring=args.scoring)
                d = Xtr.shape[1]
                (score, (lg, la)), t_tune = timed(lambda: tuner.search(
                    np.log2(1.0 / d) + np.array([-3.0, -1.0, 1.0, 3.0]), np.array([-8.0, -4.0, 0.0, 4.0, 8.0]),
                    maxfev=10))
                print(f"# {name}: tuned log2 gamma {lg:.2f}, log2 alpha {la:.2f} (CV {args.scoring} {score:.4f}) "
                      f"in {t_tune:.0f} s, {tuner.n_evals} evaluations", flush=True)
            g, a = 2.0**lg, 2.0**la
            Z = Xtr[pool]
            clf, t_cv = timed(lambda: FixedSizeLSSVC(gamma=g, alpha=a, basis=Z, cv=10, random_state=s,
                                                             scoring=args.scoring)
                              .fit(Xtr, ytr))
            size = clf.model_size_
            final, t_fit = timed(lambda: FixedSizeLSSVC(gamma=g, alpha=a, basis=Z, cv=None, max_size=size)
                                 .fit(Xtr, ytr))
            row = dict(split=s, err=100 * np.mean(final.predict(Xte) != yte), n_pv=final.n_support_,
                       t_fit=t_fit, t_fit_with_size_cv=t_cv)
            if s <= args.svc_splits:
                if s == 1:
                    sub = np.random.default_rng(0).choice(Xtr.shape[0], min(5000, Xtr.shape[0]), replace=False)
                    search = GridSearchCV(SVC(), {"C": [1.0, 10.0, 100.0], "gamma": [g / 4, g, 4 * g]}, cv=3)
                    search.fit(Xtr[sub], ytr[sub])
                    svc_params = search.best_params_
                svc, t_svc = timed(lambda: SVC(**svc_params).fit(Xtr, ytr))
                row.update(svc_err=100 * np.mean(svc.predict(Xte) != yte), svc_sv=int(svc.n_support_.sum()),
                           svc_t=t_svc)
            rows.append(row)
            print(f"# {name} split {s}: {row}", flush=True)
            if s == 1:
                K = RBF(g)(Xtr, Z)
                system = FixedSizeSystem.from_kernel(K, K[pool], ytr[:, None])
                A, b = system.matrix(a), system.rhs[:, 0]
                Kt = augmented_rows(RBF(g)(Xte, Z))
                fr = fronts(A, b, Kt, yte, K=max(2 * size, 50), n_rows=Xtr.shape[0])
                plot_fronts(name, fr, size)
                lines += [f"Fig. {12 if name == 'magic' else 13} ({name}, split 1, sizes 1..{max(2 * size, 50)}): "
                          "time to produce the whole front, s (ratio to SCDP); best error on it", "",
                          "| method | time s | / SCDP | best test error % |", "|---|---|---|---|"]
                for m, (err, t, _) in fr.items():
                    lines.append(f"| {m} | {t:.2f} | {t / fr['SCDP'][1]:.1f} | {100 * np.nanmin(err):.2f} |")
                lines.append("")
        df = pd.DataFrame(rows)
        df.to_csv(OUT / f"paper002_large_{name}{suffix}.csv", index=False)
        p, ps = PAPER[name], PAPER_SVM[name]
        lines += [f"Table 5, {name} ({len(df)} splits; paper in parentheses)", "",
                  "| method | err % | # PV / SV | train s | train + size CV s |", "|---|---|---|---|---|",
                  f"| SCDP-FSLSSVM_PV | {df.err.mean():.2f} ± {df.err.std(ddof=1):.2f} ({p[0]} ± {p[1]}) | "
                  f"{df.n_pv.mean():.0f} ± {df.n_pv.std(ddof=1):.0f} ({p[2]} ± {p[3]}) | "
                  f"{df.t_fit.mean():.1f} ({p[4]}) | {df.t_fit_with_size_cv.mean():.1f} |"]
        if "svc_err" in df:
            sv = df.dropna(subset=["svc_err"])
            lines.append(f"| SVC | {sv.svc_err.mean():.2f} ({ps[0]}) | {sv.svc_sv.mean():.0f} ({ps[1]}) | "
                         f"{sv.svc_t.mean():.1f} ({ps[2]}) | |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    (OUT / f"paper002_large{suffix}.md").write_text(text + "\n")


def plot_fronts(name, fr, size):
    fig, ax = plt.subplots(figsize=(5, 4))
    for m, (err, t, _) in fr.items():
        ax.plot(np.arange(1, err.size + 1), 100 * err, label=f"{m} ({t:.1f} s)", lw=1)
    ax.axvline(size, color="grey", ls=":", lw=0.8)
    ax.set(xlabel="model size", ylabel="test error %", title=f"Paper 002 Pareto fronts, {name}")
    ax.set_ylim(top=min(40, ax.get_ylim()[1]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / f"paper002_fronts_{name}.png", dpi=120)


if __name__ == "__main__":
    main()
