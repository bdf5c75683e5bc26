"""Uncertainty from the exact CV engine: conformal intervals,
Bayesian error bars and calibrated probabilities, against MAPIE,
neo-ls-svm, GaussianProcessRegressor and CalibratedClassifierCV(SVC).

Sections (run one or more):

    python benchmarks/intervals.py coverage [--splits 20] [--sets boston,puma32H]
    python benchmarks/intervals.py mapie [--sizes 500,1000,2000] [--jk-max 2000] [--methods cv+]
                                         [--repeats 3] [--parts] [--mapie-basis 100,default]
    python benchmarks/intervals.py gp [--splits 5] [--gp-sets boston] [--gp-kernel ard|iso]
    python benchmarks/intervals.py proba [--splits 5] [--proba-sets ripley,magic,adult] [--adult-splits 1]

Every model: inputs standardised on the training split, RBF kernel with
``gamma = 1 / n_features`` (the "scale" rule on standardised inputs), a
random basis, alpha chosen by exact LOO (PRESS) on a 15-point path (the
intervals are then taken at that alpha, from the same factorisation).
Prints tables and the load average; the machine is shared with other work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lssvm import SparseLSSVC, SparseLSSVR  # noqa: E402

DATA = Path("/work/shared/data")
ALPHAS = np.logspace(-4, 3, 15)
REG_SETS = ("boston", "elevators", "ailerons", "pol", "puma32H")


def load(name):
    """Inputs and target of a table (train and test files concatenated)."""
    files = [DATA / f"{name}.csv.gz"] if (DATA / f"{name}.csv.gz").exists() else \
        [DATA / f"{name}_train.csv.gz", DATA / f"{name}_test.csv.gz"]
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    return df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy()


def split(rng, m, frac=0.8):
    p = rng.permutation(m)
    k = int(round(frac * m))
    return p[:k], p[k:]


def standardise(Xtr, Xte):
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def fit_sparse(X, y, n_basis, seed):
    est = SparseLSSVR(gamma=1.0 / X.shape[1], alpha=1.0, basis="random", n_basis=min(n_basis, X.shape[0] // 2),
                      random_state=seed).fit(X, y)
    best = float(ALPHAS[np.argmin(est.press(ALPHAS))])
    return est, best


def md(df, index=True):
    """A DataFrame as a Markdown table (no tabulate dependency)."""
    df = df.reset_index() if index else df
    fmt = [lambda v: f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v)]
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(fmt[0](v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def save(df, name):
    """Per-split rows into benchmarks/out/ (ignored by git), for the record."""
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    df.to_csv(out / name, index=False)


def loadavg():
    return "load average %.1f %.1f %.1f" % os.getloadavg()


# ------------------------------------------------------------------ coverage
def coverage(args):
    from neo_ls_svm import NeoLSSVM

    rows = []
    for name in args.sets:
        X, y = load(name)
        y = y.astype(float)
        rng = np.random.default_rng(0)
        for s in range(args.splits):
            tr, te = split(rng, X.shape[0])
            Xtr, Xte = standardise(X[tr], X[te])
            t0 = time.perf_counter()
            est, a = fit_sparse(Xtr, y[tr], args.n_basis, s)
            t_fit = time.perf_counter() - t0
            for method, kw in (("jackknife+", {}), ("cv+", {"cv": 10})):
                t0 = time.perf_counter()
                iv = est.predict_interval(Xte, 0.9, method, alpha=a, **kw)
                dt = time.perf_counter() - t0
                rows.append(dict(data=name, split=s, method=method, m=tr.size,
                                 coverage=np.mean((y[te] >= iv[:, 0]) & (y[te] <= iv[:, 1])),
                                 width=np.mean(iv[:, 1] - iv[:, 0]), seconds=t_fit + dt))
            if name in args.neo_sets:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    neo = NeoLSSVM().fit(Xtr, y[tr])
                    iv = np.asarray(neo.predict_interval(Xte, coverage=0.9))
                rows.append(dict(data=name, split=s, method="neo-ls-svm", m=tr.size,
                                 coverage=np.mean((y[te] >= iv[:, 0]) & (y[te] <= iv[:, 1])),
                                 width=np.mean(iv[:, 1] - iv[:, 0]), seconds=time.perf_counter() - t0))
            print(f"  {name} split {s}: " + ", ".join(
                f"{r['method']} {r['coverage']:.3f}/{r['width']:.3g}" for r in rows if r["data"] == name
                and r["split"] == s), flush=True)
    df = pd.DataFrame(rows)
    save(df, "intervals_coverage.csv")
    table = df.groupby(["data", "method"]).agg(m=("m", "first"), splits=("split", "count"),
                                               coverage=("coverage", "mean"), coverage_min=("coverage", "min"),
                                               width=("width", "mean"), seconds=("seconds", "mean"))
    print("\n90% intervals: mean empirical coverage over random 80/20 splits, mean width (target units)")
    print(md(table))
    print(loadavg())


# --------------------------------------------------------------------- MAPIE
#: seconds before each timed call: longer than OpenBLAS's idle threads spin after a threaded product (~0.1 s)
PAUSE = 0.15


def best_of(func, repeats, cpu=None):
    """The best wall time of ``repeats`` calls and the last result; with a
    list ``cpu``, the best CPU time of this process (all its threads) is
    appended to it: on a loaded machine a short call's wall time is mostly
    waiting for a core, its CPU time is not."""
    best, best_cpu, out = np.inf, np.inf, None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = func()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    if cpu is not None:
        cpu.append(best_cpu)
    return best, out


def cv_plus_parts(est, Xt, cv):
    """Where our CV+ time goes (best of 5 each): the folds, the fold models
    with their out-of-fold residuals, the sorted scores, the new points'
    kernel and eigenbasis rows, the fold values there and the order
    statistics.  Uses lssvm internals (a benchmark, not an API)."""
    from lssvm.cv.conformal import SortedFoldScores, conformal_ranks, cv_plus_folds
    from lssvm.cv.fold_models import block_cv_plus
    from lssvm.cv.folds import contiguous_folds

    engine = est._fitted_engine()
    fac = engine.fac
    Y = fac.y_centered + fac.y_mean
    parts = {}
    parts["folds"], folds = best_of(lambda: contiguous_folds(cv, fac.n_samples) or engine.resolve_cv(cv), 5)
    # the call's route: the fit's block Grams when the folds are its blocks, else cv_plus_folds
    parts["fold models + residuals"], (oof, models) = best_of(
        lambda: block_cv_plus(fac, folds, est.alpha)
        or cv_plus_folds(engine.holdout_engine(holders=False), folds, est.alpha, "keep"), 5)
    parts["sorted scores"], scores = best_of(lambda: SortedFoldScores(np.abs(Y - oof), folds), 5)
    parts["kernel"], K_x = best_of(lambda: est.kernel_(Xt, est.basis_vectors_), 5)
    parts["fold values"], values = best_of(lambda: models(K_x), 5)
    ranks = conformal_ranks(0.9, fac.n_samples)
    parts["order statistics"], _ = best_of(lambda: scores.bounds(values, ranks), 5)
    return parts


def mapie(args):
    from _common import synthetic_regression
    from mapie.regression import CrossConformalRegressor
    from sklearn.base import clone
    from sklearn.model_selection import KFold, LeaveOneOut

    from lssvm._threads import single_threaded_blas

    tables = {}
    part_rows = []
    for basis in args.mapie_basis:
        rows = tables.setdefault(basis, [])
        for m in args.sizes:
            rng = np.random.default_rng(m)
            X, y = synthetic_regression(rng, m, 5)
            y = y + 0.3 * rng.standard_normal(m)
            Xt = rng.standard_normal((200, 5))
            # n = 100 random points, or the default basis rule (pivoted Cholesky, n_basis=None)
            kw_basis = dict(n_basis=None, random_state=0)
            if basis == "100":
                kw_basis.update(basis="random", n_basis=100)

            def fresh():
                return SparseLSSVR(gamma=0.2, alpha=1.0, **kw_basis).fit(X, y)

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = fresh()
            n = est.basis_vectors_.shape[0]
            wrapped = SparseLSSVR(gamma=0.2, alpha=1.0, basis=est.basis_vectors_)
            t_full, _ = best_of(lambda: clone(wrapped).fit(X, y), args.repeats)  # the one fit both sides share
            cases = [("jackknife+", LeaveOneOut(), dict(method="jackknife+")),
                     ("cv+ (10-fold)", KFold(10), dict(method="cv+", cv=KFold(10), basis_in_holdout="keep"))]
            for label, cv, kw in cases:
                if label.split(" ")[0] not in args.methods:
                    continue
                t_cold = np.nan
                if label == "jackknife+" and m > args.jk_max:
                    t_ours, ours = best_of(lambda: est.predict_interval(Xt, 0.9, **kw), args.repeats)
                    # m refits are too long on a shared machine: time 50 of MAPIE's LOO refits
                    # (fit + predict, no MAPIE overhead) and scale by m / 50 -- a lower bound
                    t0 = time.perf_counter()
                    for i in range(50):
                        keep = np.arange(m) != i
                        clone(wrapped).fit(X[keep], y[keep]).predict(Xt)
                    t_mapie, diff = (time.perf_counter() - t0) * m / 50, np.nan
                    label = "jackknife+ (MAPIE time extrapolated from 50 refits)"
                else:
                    def theirs_call():
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            mp = CrossConformalRegressor(clone(wrapped), confidence_level=0.9, method="plus", cv=cv)
                            return mp.fit_conformalize(X, y).predict_interval(Xt)[1]

                    # side by side, interleaved: one call of each per round, the best round of each kept
                    reps = args.repeats if label != "jackknife+" else 1
                    t_ours = t_mapie = np.inf
                    cpu_ours, cpu_mapie, cpu_cold = [], [], []
                    for _ in range(reps):
                        # a pause before each call: BLAS threads still spinning after the other side's last
                        # product would otherwise be charged (CPU and wall) to the next call.  OpenBLAS's idle
                        # threads spin for about 0.1 s after a threaded product (measured: state R for
                        # 92-123 ms here), so the pause is PAUSE = 0.15 s (it was 0.05 s: they still ran)
                        time.sleep(PAUSE)
                        dt, ours = best_of(lambda: est.predict_interval(Xt, 0.9, **kw), 1, cpu_ours)
                        t_ours = min(t_ours, dt)
                        time.sleep(PAUSE)
                        dt, theirs = best_of(theirs_call, 1, cpu_mapie)
                        t_mapie = min(t_mapie, dt)
                        # cold: a fresh fit (not timed), then its first call (nothing from earlier calls)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            cold_est = fresh()
                        time.sleep(PAUSE)
                        dt, cold = best_of(lambda: cold_est.predict_interval(Xt, 0.9, **kw), 1, cpu_cold)
                        t_cold = min(t_cold, dt) if np.isfinite(t_cold) else dt
                        # the same intervals (a fresh fit on multi-threaded BLAS may round differently)
                        assert np.abs(cold - ours).max() <= 1e-9 * np.abs(ours).max()
                    diff = np.abs(theirs[:, :, 0] - ours).max() / np.abs(ours).max()
                    c_ours, c_mapie = min(cpu_ours), min(cpu_mapie)
                    # ours back to back (warm caches, no other work in between): what a loop of calls sees
                    t_warm, _ = best_of(lambda: est.predict_interval(Xt, 0.9, **kw), 20)
                row = {"m": m, "n": n, "method": label, "rel_diff": diff, "lssvm_ms": 1e3 * t_ours,
                       "lssvm_cold_ms": 1e3 * t_cold, "MAPIE_ms": 1e3 * t_mapie,
                       "MAPIE_minus_full_fit_ms": 1e3 * (t_mapie - t_full),
                       "speedup": t_mapie / t_ours, "cold_speedup": t_mapie / t_cold,
                       "speedup_excl_full_fit": (t_mapie - t_full) / t_ours}
                if not label.startswith("jackknife+ (MAPIE"):
                    row.update({"lssvm_cpu_ms": 1e3 * c_ours, "MAPIE_cpu_ms": 1e3 * c_mapie,
                                "cpu_speedup": c_mapie / c_ours, "cold_cpu_speedup": c_mapie / min(cpu_cold),
                                "lssvm_warm_ms": 1e3 * t_warm, "warm_speedup": t_mapie / t_warm})
                rows.append(row)
                print(f"  m={m} n={n} {label}: rel diff {diff:.1e}, lssvm {1e3 * t_ours:.2f} ms (cold "
                      f"{1e3 * t_cold:.2f}), MAPIE {1e3 * t_mapie:.1f} ms (of which its full fit {1e3 * t_full:.1f} "
                      f"ms), {loadavg()}", flush=True)
                if label.startswith("cv+") and args.parts and basis == "100":
                    with single_threaded_blas():
                        parts = cv_plus_parts(est, Xt, KFold(10))
                    part_rows.append({"m": m, **{k: 1e3 * v for k, v in parts.items()},
                                      "sum": 1e3 * sum(parts.values()),
                                      "MAPIE one fold fit": 1e3 * best_of(
                                          lambda: clone(wrapped).fit(X[m // 10:], y[m // 10:]), args.repeats)[0]})
    print("\nMAPIE 1.6 CrossConformalRegressor(method='plus') around the same model and basis "
          "(5 features, 200 test points), best of "
          f"{args.repeats} interleaved rounds.  lssvm: predict_interval (folds, fold models, out-of-fold residuals, "
          "test-point values, order statistics; not the fit): 'lssvm' on one fitted model called every round, "
          "'cold' the first call of a model fitted just before (the fit not timed).  MAPIE: fit_conformalize + "
          "predict_interval (its full fit, the k fold fits, their predictions, the quantiles); "
          "'excl_full_fit' subtracts one full fit, the one both sides share; 'cpu': process CPU time (all threads), "
          "best of the same rounds; 'warm': lssvm best of 20 back-to-back calls (against MAPIE's interleaved best)")
    for basis, rows in tables.items():
        what = "n = 100 random basis points" if basis == "100" else "the default basis (pivoted Cholesky, n_basis=None)"
        print(f"\n{what}")
        print(md(pd.DataFrame(rows), index=False))
    if part_rows:
        print("\nOur CV+ by part (ms, best of 5 each, one BLAS thread and one Python thread, n = 100), against one "
              "of MAPIE's fold fits")
        print(md(pd.DataFrame(part_rows), index=False))
    print(loadavg())


# ----------------------------------------------------------------------- GP
def gp(args):
    """Coverage of f(x) +- 1.645 sigma: lssvm ``predict_std`` against
    ``GaussianProcessRegressor`` (``--gp-kernel ard``: one length scale per
    input; ``iso``: one for all), on the same splits, m <= 2,000 rows."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    rows = []
    for name in args.gp_sets:
        X, y = load(name)
        y = y.astype(float)
        rng = np.random.default_rng(1)
        for s in range(args.splits):
            tr, te = split(rng, X.shape[0])
            tr = tr[:2000]
            Xtr, Xte = standardise(X[tr], X[te])
            t0, c0 = time.perf_counter(), time.process_time()
            est, a = fit_sparse(Xtr, y[tr], args.n_basis, s)
            est.set_params(alpha=a).fit(Xtr, y[tr])
            mu, sd = est.predict(Xte), est.predict_std(Xte)
            t_ours, c_ours = time.perf_counter() - t0, time.process_time() - c0
            t0, c0 = time.perf_counter(), time.process_time()
            scales = np.ones(X.shape[1]) if args.gp_kernel == "ard" else 1.0
            kern = ConstantKernel() * RBF(scales) + WhiteKernel()
            g = GaussianProcessRegressor(kern, normalize_y=True, random_state=0).fit(Xtr, y[tr])
            gm, gs = g.predict(Xte, return_std=True)
            t_gp, c_gp = time.perf_counter() - t0, time.process_time() - c0
            label_gp = f"GaussianProcessRegressor ({args.gp_kernel})"
            for label, f, sdev, t, c in (("lssvm predict_std", mu, sd, t_ours, c_ours),
                                         (label_gp, gm, gs, t_gp, c_gp)):
                inside = np.abs(y[te] - f) <= 1.645 * sdev
                rows.append(dict(data=name, model=label, split=s, m=tr.size, coverage=inside.mean(),
                                 width=np.mean(2 * 1.645 * sdev), rmse=np.sqrt(np.mean((y[te] - f) ** 2)),
                                 seconds=t, cpu_s=c))
            print(f"  {name} split {s}: " + ", ".join(f"{r['model']} {r['coverage']:.3f}/{r['width']:.3g} "
                                                      f"({r['seconds']:.1f} s)" for r in rows[-2:]), flush=True)
    df = pd.DataFrame(rows)
    save(df, f"intervals_gp_{args.gp_kernel}_{'_'.join(args.gp_sets)}.csv")
    print("\nCoverage of f(x) +- 1.645 sigma (nominal 0.90), m <= 2000 training rows")
    print(md(df.groupby(["data", "model"]).agg(splits=("split", "count"), coverage=("coverage", "mean"),
                                               coverage_min=("coverage", "min"), width=("width", "mean"),
                                               rmse=("rmse", "mean"), seconds=("seconds", "mean"),
                                               cpu_s=("cpu_s", "mean"))))
    print(loadavg())


# -------------------------------------------------------------------- proba
def ece(p, y, bins=10):
    """Expected calibration error of the positive-class probability."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return sum(abs(p[idx == b].mean() - y[idx == b].mean()) * (idx == b).mean() for b in range(bins) if np.any(idx == b))


def class_sets(names):
    """(inputs, 0/1 labels, columns to standardise) of each classification set.

    Ripley: train + test files; MAGIC: positive class the first label in the
    file ("g"); adult: the complete rows encoded as in
    ``benchmarks/paper002_large.py`` (numeric columns, log1p capital gain and
    loss, one-hot categories left as 0/1), positive class ">50K".
    """
    for name in names:
        if name == "adult":
            import paper002_large

            paper002_large.DATA = DATA  # its own path assumes the main checkout's layout
            X, y, scale = paper002_large.load("adult")
            yield name, X, (y > 0).astype(int), scale
            continue
        if name == "ripley":
            df = pd.concat([pd.read_csv(DATA / "synth_tr.csv.gz"), pd.read_csv(DATA / "synth_te.csv.gz")],
                           ignore_index=True)
        else:
            df = pd.read_csv(DATA / f"{name}.csv.gz")
        X = df.iloc[:, :-1].to_numpy(float)
        y = (df.iloc[:, -1].astype(str).to_numpy() == df.iloc[:, -1].astype(str).iloc[0]).astype(int)
        yield name, X, y, np.ones(X.shape[1], dtype=bool)


def timed_fit(make):
    """(fitted model, wall seconds, process CPU seconds) of ``make()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    model = make()
    return model, time.perf_counter() - t0, time.process_time() - c0


def proba(args):
    """Log-loss, Brier score and ECE of held-out class probabilities; fit
    wall and CPU time (the CPU time counts every thread of this process)."""
    from neo_ls_svm import NeoLSSVM
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.metrics import brier_score_loss, log_loss
    from sklearn.svm import SVC

    from lssvm import SparseLSSVCCV

    rows = []
    for name, X, y, scale in class_sets(args.proba_sets):
        rng = np.random.default_rng(2)
        for s in range(args.splits if name != "adult" else min(args.splits, args.adult_splits)):
            tr, te = split(rng, X.shape[0])
            mu, sd = X[tr].mean(0), X[tr].std(0)
            sd[(sd == 0) | ~scale], mu[~scale] = 1.0, 0.0
            Xtr, Xte = (X[tr] - mu) / sd, (X[te] - mu) / sd
            models = {}

            def sparse_sigmoid():
                clf = SparseLSSVC(gamma=1.0 / X.shape[1], alpha=1.0, basis="random",
                                  n_basis=min(args.n_basis, tr.size // 2), random_state=s).fit(Xtr, y[tr])
                a = float(ALPHAS[np.argmin(clf.press(ALPHAS))])
                return clf.set_params(alpha=a, calibration="sigmoid").fit(Xtr, y[tr])

            models["lssvm sigmoid (LOO)"] = sig = timed_fit(sparse_sigmoid)
            iso = timed_fit(lambda: SparseLSSVC(**{**sig[0].get_params(), "calibration": "isotonic"}).fit(Xtr, y[tr]))
            models["lssvm isotonic (LOO)"] = (iso[0], iso[1] + sig[1], iso[2] + sig[2])
            models["SparseLSSVCCV(calibration='sigmoid') defaults"] = timed_fit(
                lambda: SparseLSSVCCV(calibration="sigmoid").fit(Xtr, y[tr]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                models["neo-ls-svm NeoLSSVM()"] = timed_fit(lambda: NeoLSSVM().fit(Xtr, y[tr]))
            models["CalibratedClassifierCV(SVC(), cv=5)"] = timed_fit(
                lambda: CalibratedClassifierCV(SVC(), cv=5).fit(Xtr, y[tr]))
            for label, (mod, t, c) in models.items():
                P = np.asarray(mod.predict_proba(Xte))
                p = P[:, list(mod.classes_).index(1)] if P.ndim == 2 else P
                rows.append(dict(data=name, model=label, split=s, m=tr.size,
                                 log_loss=log_loss(y[te], np.clip(p, 0.0, 1.0), labels=[0, 1]),
                                 brier=brier_score_loss(y[te], p), ece=ece(p, y[te]), fit_s=t, cpu_s=c))
            print(f"  {name} split {s}: " + ", ".join(f"{r['model']} {r['log_loss']:.4f} ({r['fit_s']:.1f} s)"
                                                      for r in rows[-len(models):]), flush=True)
            save(pd.DataFrame(rows), f"intervals_proba_{'_'.join(args.proba_sets)}.csv")
    df = pd.DataFrame(rows)
    table = df.groupby(["data", "model"]).agg(splits=("split", "count"), m=("m", "first"),
                                              log_loss=("log_loss", "mean"), brier=("brier", "mean"),
                                              ece=("ece", "mean"), fit_s=("fit_s", "mean"), cpu_s=("cpu_s", "mean"))
    ref = table.xs("CalibratedClassifierCV(SVC(), cv=5)", level="model")
    data = table.index.get_level_values("data")
    table["log_loss/svc"] = table["log_loss"].to_numpy() / ref["log_loss"].reindex(data).to_numpy()
    table["svc/fit_s"] = ref["fit_s"].reindex(data).to_numpy() / table["fit_s"].to_numpy()
    table["svc/cpu_s"] = ref["cpu_s"].reindex(data).to_numpy() / table["cpu_s"].to_numpy()
    print("\nClass probabilities on held-out 20% (mean over splits); svc/...: CalibratedClassifierCV's time "
          "over this model's")
    print(md(table))
    print(loadavg())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sections", nargs="+", choices=["coverage", "mapie", "gp", "proba"])
    p.add_argument("--splits", type=int, default=20)
    p.add_argument("--sets", default=",".join(REG_SETS))
    p.add_argument("--neo-sets", default="boston,puma32H")
    p.add_argument("--gp-sets", default="boston,puma32H")
    p.add_argument("--gp-kernel", choices=["ard", "iso"], default="ard",
                   help="GaussianProcessRegressor: RBF with one length scale per input (ard) or one (iso)")
    p.add_argument("--proba-sets", default="ripley,magic,adult")
    p.add_argument("--adult-splits", type=int, default=1, help="at most this many splits of adult (slow SVC)")
    p.add_argument("--n-basis", type=int, default=200)
    p.add_argument("--sizes", default="500,1000,2000,5000")
    p.add_argument("--jk-max", type=int, default=1000, help="largest m for a full MAPIE jackknife+ (m refits)")
    p.add_argument("--methods", default="jackknife+,cv+", help="mapie: which of jackknife+, cv+ to run")
    p.add_argument("--repeats", type=int, default=3, help="mapie: interleaved rounds, best kept")
    p.add_argument("--parts", action="store_true", help="mapie: also time the parts of our CV+")
    p.add_argument("--mapie-basis", default="100",
                   help="mapie: basis of each table, comma-separated: 100 (random points) and/or default (n_basis=None)")
    args = p.parse_args()
    args.sets = args.sets.split(",")
    args.neo_sets = args.neo_sets.split(",")
    args.gp_sets = args.gp_sets.split(",")
    args.proba_sets = args.proba_sets.split(",")
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.methods = args.methods.split(",")
    args.mapie_basis = args.mapie_basis.split(",")
    if set(args.mapie_basis) - {"100", "default"}:
        p.error(f"--mapie-basis takes 100 and/or default; got {args.mapie_basis}")
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), loadavg())
    for section in args.sections:
        globals()[section](args)


if __name__ == "__main__":
    main()
