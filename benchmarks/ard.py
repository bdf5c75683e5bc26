"""ARD widths tuned by the gradient of the exact CV error.

Part "accuracy" (per data set, side by side in one run; inputs and target
standardised on the training rows; test MSE reported relative to the test
target's variance):

* ``SparseLSSVRCV(kernel="ard", search="gradient")``: random basis of
  ``--n-basis`` rows, exact LOO, L-BFGS-B from the best isotropic grid
  point, 1 seeded restart; with and without ``hyper_penalty=True``
  (Cawley & Talbot 2007);
* the isotropic RBF grid ``SparseLSSVRCV(gamma=..., basis=...)``: the same
  random basis, default width grid 2^-10 .. 2^6 and alpha path;
* scikit-learn ``GaussianProcessRegressor``, ``C * RBF(anisotropic) +
  WhiteKernel``, ``normalize_y``, 1 optimiser restart, on the first
  ``--gp-m`` training rows (its gradient holds an m x m x d tensor);
* neo-ls-svm ``NeoLSSVM()`` (its own automatic settings).

Data: puma32H (32 inputs), pol (48), elevators (18), ailerons (40) from
/work/shared/data, and Friedman #1 with 20 inputs of which 5 matter
(``sklearn.datasets.make_friedman1``).  Training rows: a random ``--m`` of
the training file (puma32H and Friedman: of the data), test: up to 4000
other rows.

Part "cost": one ``cv_error_and_gradient`` (LOO, d + 1 partials) against one
``SparseLSSVR(kernel="ard")`` fit on the same basis rows, m = 5000, n = 500,
d = 32, best of 3.

Part "gp": the GP and ours on the same ``--gp-m`` rows of one data set
(``--sets``, first name), ours before and after the GP (the machine is
shared, so its load drifts).  The GP runs one L-BFGS-B start (no restart)
capped at ``--gp-maxiter`` iterations; each of its evaluations (value and
gradient of the log marginal likelihood) is timed and printed.

Part "ct": the effect of Cawley & Talbot's regularisation where they
found over-fitting of the selection criterion, on small training sets: the
IDA binary benchmarks (``--ida-sets``, realisations 1..``--realisations``,
the original partitions from /work/shared/data; test error rate) and
Friedman #1 / puma32H at ``--small-m`` rows (``--realisations`` random
draws; test MSE / variance).  ARD gradient search with and without
``hyper_penalty``, and the isotropic grid, on a random basis of
``min(--ct-basis, distinct rows / 2)`` rows (on 2-D banana, 200 basis
points make ``K_BB`` singular at the isotropic optimum, where the search
cannot start); mean and standard error over realisations.

Part "splits": ours (``--variants``: basis size, k-center basis, more
evaluations, more restarts, 10-fold, 5-fold, Cawley-Talbot, the evidence; "ARD n=300" keeps the lowest LOO
error, ``selection_rule="min"``, and "ARD one-se" keeps the default rule) and the GP
on ``--split-seeds`` random splits of one data set at ``--gp-m`` rows; the
GP starts from ``--gp-theta`` (saved by part "gp") and re-optimises for at
most ``--gp-maxiter`` iterations (0: scored there).  Per split test MSE /
variance, then mean, spread and the paired difference from the GP.

Part "gp-splits": the GP alone on each split (``--gp-m`` rows from scikit-learn's default
start, then re-optimised on ``--gp-m2`` rows), appended to ``--gp-results``; part "splits" then reads the
GP's test MSE from there (``--gp-results``) instead of fitting it, and appends ours to ``--csv``.  On
Friedman #1 the split seed also seeds ``make_friedman1``.  Part "paired": the paired statistics against the
GP from those two files.  Part "trajectory": the test MSE at every iterate that lowered the criterion.
Part "gp-point": both criteria and the test MSE at our point and at the GP's, on our basis rows.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/ard.py [--part cost|accuracy|gp|ct|splits] [--sets puma32H,friedman]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
import pandas as pd
from _common import best_time

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.selection import cv_error_and_gradient
from lssvm.selection.gradient import evidence_and_gradient

DATA = "/work/shared/data"
SETS = ("puma32H", "friedman", "pol", "elevators", "ailerons")



def fit_and_score(model, Xtr, ytr, Xte, yte):
    """Fit with warnings silenced; return (wall s, process CPU s, test MSE / test variance)."""
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr, ytr)
    t, c = time.perf_counter() - t0, time.process_time() - c0
    return t, c, float(np.mean((model.predict(Xte) - yte) ** 2) / yte.var())

def load(name, m, rng, n_test=4000, seed=0):
    if name == "friedman":
        from sklearn.datasets import make_friedman1

        X, y = make_friedman1(m + n_test, n_features=20, noise=1.0, random_state=seed)
        return X[:m], y[:m], X[m:], y[m:]
    if name == "puma32H":
        f = pd.read_csv(f"{DATA}/puma32H.csv.gz").to_numpy()
        idx = rng.permutation(len(f))
        tr, te = f[idx[:m]], f[idx[m:m + n_test]]
    else:
        tr = pd.read_csv(f"{DATA}/{name}_train.csv.gz").to_numpy()
        te = pd.read_csv(f"{DATA}/{name}_test.csv.gz").to_numpy()
        tr = tr[rng.permutation(len(tr))[:m]]
        te = te[rng.permutation(len(te))[:n_test]]
    return tr[:, :-1], tr[:, -1], te[:, :-1], te[:, -1]


def standardise(Xtr, ytr, Xte, yte):
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    ym, ys = ytr.mean(), ytr.std()
    return (Xtr - mu) / sd, (ytr - ym) / ys, (Xte - mu) / sd, (yte - ym) / ys


def contenders(args, d):
    def ard(penalty, scoring=None):
        return SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=args.n_basis, random_state=0,
                             max_evaluations=args.max_evaluations, n_restarts=1, hyper_penalty=penalty,
                             scoring=scoring)

    def gp():
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        kern = ConstantKernel(1.0) * RBF(np.full(d, np.sqrt(d)), (1e-2, 1e4)) + WhiteKernel(0.1, (1e-6, 1e1))
        return GaussianProcessRegressor(kern, normalize_y=True, n_restarts_optimizer=1, random_state=0)

    def neo():
        from neo_ls_svm import NeoLSSVM

        return NeoLSSVM()

    return {
        "ARD gradient": (lambda: ard(False), None),
        "ARD gradient + CT penalty": (lambda: ard(True), None),
        "ARD gradient, evidence": (lambda: ard(False, "evidence"), None),
        "isotropic grid": (lambda: SparseLSSVRCV(gamma=1.0, basis="random", n_basis=args.n_basis, random_state=0),
                           None),
        "GP anisotropic": (gp, args.gp_m),
        "neo-ls-svm": (neo, None),
    }


def accuracy(args):
    rows = []
    for name in args.sets:
        Xtr, ytr, Xte, yte = standardise(*load(name, args.m, np.random.default_rng(0)))
        var = yte.var()
        for label, (make, m_cap) in contenders(args, Xtr.shape[1]).items():
            if label in args.skip:
                continue
            X, y = (Xtr, ytr) if m_cap is None else (Xtr[:m_cap], ytr[:m_cap])
            est = make()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            t = time.perf_counter() - t0
            mse = float(np.mean((est.predict(Xte) - yte) ** 2) / var)
            rel = getattr(est, "feature_relevance_", None)
            top = "" if rel is None else " ".join(str(j) for j in np.argsort(rel)[::-1][:5])
            widths = np.atleast_1d(getattr(est, "gamma_", 0.0)) if rel is not None else None
            top_w = "" if widths is None else " ".join(str(j) for j in np.argsort(widths)[::-1][:5])
            rows.append(dict(data=name, d=Xtr.shape[1], method=label, m=X.shape[0], fit_s=round(t, 2),
                             test_mse_rel=round(mse, 4), top5_relevance=top, top5_width=top_w))
            print(rows[-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
    table = pd.DataFrame(rows)
    cols = list(table.columns)
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in table.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in r) + " |")
    return table


def gp_at_scale(args):
    """The GP (one start, capped iterations) and ours on the same ``--gp-m`` rows."""
    from scipy.optimize import minimize
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    name = args.sets[0]
    Xtr, ytr, Xte, yte = standardise(*load(name, args.gp_m, np.random.default_rng(0)))
    var, d = yte.var(), Xtr.shape[1]
    log = {"n": 0, "t": time.perf_counter(), "nit": 0}

    def optimizer(obj_func, theta0, bounds):
        def fun(theta):
            out = obj_func(theta)
            log["n"] += 1
            now = time.perf_counter()
            print(f"  GP evaluation {log['n']}: {now - log['t']:.1f} s (CPU {time.process_time():.0f} s in all), "
                  f"-lml {out[0]:.2f}, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            log["t"] = now
            if args.gp_state and out[0] < log.get("best", np.inf):  # the best point so far, for a run cut short
                log["best"] = out[0]
                np.save(args.gp_state, theta)
            return out

        res = minimize(fun, theta0, method="L-BFGS-B", jac=True, bounds=bounds,
                       options={"maxiter": args.gp_maxiter})
        log["nit"], log["msg"] = res.nit, res.message
        return res.x, res.fun

    def ours(tag):
        est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=args.n_basis, random_state=0,
                            max_evaluations=args.max_evaluations, n_restarts=1)
        t, c, mse = fit_and_score(est, Xtr, ytr, Xte, yte)
        print(f"ours ({tag}), m={len(ytr)}: fit {t:.1f} s (CPU {c:.1f} s), test MSE/var {mse:.4f}, "
              f"{est.n_evaluations_} evaluations, load {os.getloadavg()[0]:.1f}", flush=True)
        return t, mse

    kern = ConstantKernel(1.0) * RBF(np.full(d, np.sqrt(d)), (1e-2, 1e4)) + WhiteKernel(0.1, (1e-6, 1e1))
    if args.gp_theta:  # score the GP at saved hyper-parameters (a run cut short), one fit without optimiser
        gp = GaussianProcessRegressor(kern.clone_with_theta(np.load(args.gp_theta)), normalize_y=True, optimizer=None)
        t0 = time.perf_counter()
        gp.fit(Xtr, ytr)
        mse = float(np.mean((gp.predict(Xte) - yte) ** 2) / var)
        print(f"GP at {args.gp_theta}, m={len(ytr)}: test MSE/var {mse:.4f} (fit without optimiser "
              f"{time.perf_counter() - t0:.1f} s), -lml {-gp.log_marginal_likelihood_value_:.2f}\n  kernel: {gp.kernel_}")
        return
    ours("before the GP")
    if "GP anisotropic" in args.skip:
        return
    gp = GaussianProcessRegressor(kern, normalize_y=True, n_restarts_optimizer=0, random_state=0,
                                  optimizer=optimizer)
    t, c, mse = fit_and_score(gp, Xtr, ytr, Xte, yte)
    print(f"GP, m={len(ytr)}, d={d}: fit {t:.1f} s (CPU {c:.1f} s), test MSE/var {mse:.4f}, {log['n']} evaluations, "
          f"{log['nit']} iterations (cap {args.gp_maxiter}): {log.get('msg')}, load {os.getloadavg()[0]:.1f}",
          flush=True)
    print(f"  kernel: {gp.kernel_}", flush=True)
    ours("after the GP")


def markdown(table):
    """A pandas DataFrame as a Markdown table (no tabulate dependency)."""
    cols = [str(c) for c in table.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join(lines)


def load_ida(name, k):
    """IDA realisation ``k`` (1-based) of ``name``: (Xtr, ytr, Xte, yte), inputs standardised on the training rows."""
    data = pd.read_csv(f"{DATA}/ida_{name}.csv.gz").to_numpy()
    splits = pd.read_csv(f"{DATA}/ida_{name}_splits.csv.gz")
    part = splits[splits.realisation == k].sort_values("position")
    tr = data[part[part.set == "train"].row.to_numpy()]
    te = data[part[part.set == "test"].row.to_numpy()]
    mu, sd = tr[:, :-1].mean(0), tr[:, :-1].std(0)
    sd[sd == 0] = 1.0
    return (tr[:, :-1] - mu) / sd, tr[:, -1], (te[:, :-1] - mu) / sd, te[:, -1]


def cawley_talbot(args):
    """ARD with and without hyper_penalty, and the isotropic grid, on small training sets."""
    from lssvm import SparseLSSVCCV

    rows = []
    jobs = [(name, k, "ida") for name in args.ida_sets for k in range(1, args.realisations + 1)]
    jobs += [(name, k, "reg") for name in ("friedman", "puma32H") for k in range(args.realisations)]
    for name, k, kind in jobs:
        if kind == "ida":
            Xtr, ytr, Xte, yte = load_ida(name, k)
            Est = SparseLSSVCCV
        else:
            Xtr, ytr, Xte, yte = standardise(*load(name, args.small_m, np.random.default_rng(k), n_test=4000, seed=k))
            Est = SparseLSSVRCV
        nb = min(args.ct_basis, len(np.unique(Xtr, axis=0)) // 2)
        made = {
            "ARD": Est(kernel="ard", search="gradient", basis="random", n_basis=nb, random_state=k,
                       max_evaluations=args.max_evaluations, n_restarts=1),
            "ARD + CT": Est(kernel="ard", search="gradient", basis="random", n_basis=nb, random_state=k,
                            max_evaluations=args.max_evaluations, n_restarts=1, hyper_penalty=True),
            "isotropic grid": Est(gamma=1.0, basis="random", n_basis=nb, random_state=k, scoring="mse"),
        }
        for label, est in made.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est.fit(Xtr, ytr)
            t = time.perf_counter() - t0
            stopped = any("stopped early" in str(w.message) for w in caught)
            if kind == "ida":
                err = float(np.mean(est.predict(Xte) != yte))
            else:
                err = float(np.mean((est.predict(Xte) - yte) ** 2) / yte.var())
            trace = getattr(est, "gradient_trace_", None)
            rows.append(dict(data=name, realisation=k, m=len(ytr), d=Xtr.shape[1], n_basis=nb, method=label,
                             error=err, fit_s=t, evaluations=0 if trace is None else trace["mse"].size,
                             stopped=stopped))
            print(rows[-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby(["data", "method"], sort=False).agg(
        m=("m", "first"), d=("d", "first"), n_basis=("n_basis", "first"), runs=("error", "size"),
        error=("error", "mean"), se=("error", lambda e: e.std(ddof=1) / np.sqrt(e.size)), fit_s=("fit_s", "mean"),
        evaluations=("evaluations", "mean"), stopped_early=("stopped", "sum"))
    print(markdown(summary.round(4).reset_index()))
    wide = table.pivot_table(index=["data", "realisation"], columns="method", values="error")
    diff = (wide["ARD + CT"] - wide["ARD"]).groupby(level=0)
    paired = pd.DataFrame({"mean": diff.mean(), "se": diff.std(ddof=1) / np.sqrt(diff.size()),
                           "wins": (wide["ARD + CT"] < wide["ARD"]).groupby(level=0).sum(),
                           "losses": (wide["ARD + CT"] > wide["ARD"]).groupby(level=0).sum()})
    print("paired ARD + CT minus ARD:\n" + markdown(paired.round(4).reset_index()))
    return table


def splits(args):
    """Ours (variants ``--variants``) and the GP on several random splits of one data set (``--sets``, first
    name): ``--gp-m`` training rows, 4000 test rows, the split drawn with ``numpy.random.default_rng(split)``.

    The GP (``C * RBF(d length-scales) + WhiteKernel``, ``normalize_y``) starts its L-BFGS-B from
    ``--gp-theta`` (log hyper-parameters saved by part "gp") and is capped at ``--gp-maxiter`` iterations
    (0: scored at ``--gp-theta`` without re-optimising).  The GP is fitted once per split, in the same process
    after ours, one heavy process at a time.
    """
    from scipy.optimize import minimize
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    variants = {
        "ARD n=300": dict(n_basis=300, selection_rule="min"),  # the lowest LOO error
        "ARD one-se": dict(n_basis=300, selection_rule="one-se"),  # the default rule
        "ARD n=300 200 evaluations": dict(n_basis=300, max_evaluations=200),
        "ARD n=500": dict(n_basis=500),
        "ARD n=700": dict(n_basis=700),
        "ARD kcenter n=300": dict(n_basis=300, basis="kcenter"),
        "ARD 3 restarts": dict(n_basis=300, n_restarts=3),
        "ARD 10-fold keep": dict(n_basis=300, cv=10, basis_in_holdout="keep"),
        "ARD 5-fold remove": dict(n_basis=300, cv=5, basis_in_holdout="remove"),
        "ARD + CT": dict(n_basis=300, hyper_penalty=True),
        "ARD evidence": dict(n_basis=300, scoring="evidence"),
        "ARD evidence n=500": dict(n_basis=500, scoring="evidence"),
    }
    name = args.sets[0]
    rows = []
    for split in args.split_seeds:
        m_ours = args.split_m or args.gp_m
        # the rows and test set of part gp-splits: ours fits the first m_ours of them
        Xtr, ytr, Xte, yte = standardise(*load(name, max(m_ours, args.gp_m, args.gp_m2), np.random.default_rng(split),
                                               seed=split))
        Xtr, ytr = Xtr[:m_ours], ytr[:m_ours]
        d = Xtr.shape[1]
        for label in args.variants:
            opts = dict(basis="random", random_state=0, max_evaluations=args.max_evaluations, n_restarts=1)
            opts.update(variants[label])
            est = SparseLSSVRCV(kernel="ard", search="gradient", **opts)
            t, c, mse = fit_and_score(est, Xtr, ytr, Xte, yte)
            rows.append(dict(split=split, method=label, test_mse=mse, cv_mse=-est.best_score_, fit_s=t, cpu_s=c,
                             evaluations=est.gradient_trace_["mse"].size))
            print(rows[-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
            if args.csv:
                pd.DataFrame([dict(data=name, m=len(ytr), **rows[-1], load=os.getloadavg()[0])]).to_csv(
                    args.csv, mode="a", index=False, header=not os.path.exists(args.csv))
        if args.gp_results:  # the GP's rows from part "gp-splits" (same split, the largest m there)
            gp_rows = pd.read_csv(args.gp_results)
            gp_rows = gp_rows[(gp_rows.data == name) & (gp_rows.split == split)]
            if len(gp_rows):
                r = gp_rows.sort_values("m").iloc[-1]
                rows.append(dict(split=split, method=f"GP (m={r.m})", test_mse=r.test_mse, cv_mse=np.nan,
                                 fit_s=r.fit_s, cpu_s=r.cpu_s, evaluations=r.evaluations))
        elif "GP" not in args.skip:
            kern = ConstantKernel(1.0) * RBF(np.full(d, np.sqrt(d)), (1e-2, 1e4)) + WhiteKernel(0.1, (1e-6, 1e1))
            if args.gp_theta:
                kern = kern.clone_with_theta(np.load(args.gp_theta))
            n_eval = [0]

            def optimizer(obj_func, theta0, bounds):
                def fun(theta):
                    n_eval[0] += 1
                    return obj_func(theta)

                res = minimize(fun, theta0, method="L-BFGS-B", jac=True, bounds=bounds,
                               options={"maxiter": args.gp_maxiter})
                return res.x, res.fun

            gp = GaussianProcessRegressor(kern, normalize_y=True, random_state=0,
                                          optimizer=optimizer if args.gp_maxiter > 0 else None)
            t, c, mse = fit_and_score(gp, Xtr, ytr, Xte, yte)
            label = "GP" + (f" (from --gp-theta, {args.gp_maxiter} iterations)" if args.gp_maxiter > 0
                            else " (at --gp-theta)")
            rows.append(dict(split=split, method=label, test_mse=mse, cv_mse=np.nan, fit_s=t, cpu_s=c,
                             evaluations=n_eval[0]))
            print(rows[-1], f"-lml {-gp.log_marginal_likelihood_value_:.2f}, load {os.getloadavg()[0]:.1f}",
                  flush=True)
            if args.csv:
                pd.DataFrame([dict(data=name, m=len(ytr), **rows[-1], load=os.getloadavg()[0])]).to_csv(
                    args.csv, mode="a", index=False, header=not os.path.exists(args.csv))
    table = pd.DataFrame(rows)
    wide = table.pivot_table(index="split", columns="method", values="test_mse", sort=False)
    print(markdown(wide.round(4).reset_index()))
    gp_cols = [c for c in wide.columns if c.startswith("GP")]
    summary = pd.DataFrame({"mean": wide.mean(), "sd": wide.std(ddof=1)})
    if gp_cols:
        diff = wide.sub(wide[gp_cols[0]], axis=0)
        summary["minus GP, mean"] = diff.mean()
        summary["minus GP, sd"] = diff.std(ddof=1)
        summary["wins vs GP"] = (diff < 0).sum()
    summary["cpu_s"] = table.groupby("method", sort=False).cpu_s.mean()
    print(markdown(summary.round(5).reset_index()))
    return table


def gp_splits(args):
    """The GP alone on ``--split-seeds`` random splits of one data set (``--sets``, first name), for part
    "splits" to read (``--gp-results``): one L-BFGS-B start from scikit-learn's default point (every
    length-scale sqrt(d), noise 0.1) on the first ``--gp-m`` training rows, at most ``--gp-maxiter``
    iterations; then, where ``--gp-m2`` > ``--gp-m``, re-optimised on the first ``--gp-m2`` rows from that
    optimum for at most ``--gp-maxiter2`` iterations (the m^3 steps at the larger m are few).  Appends one CSV
    row per split and size to ``--gp-results`` (test MSE / variance, -lml, evaluations, CPU s, log
    hyper-parameters), one process, one split at a time.
    """
    from scipy.optimize import minimize
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    name = args.sets[0]
    m_big = max(args.gp_m, args.gp_m2)
    for split in args.split_seeds:
        Xtr, ytr, Xte, yte = standardise(*load(name, m_big, np.random.default_rng(split), seed=split))
        d = Xtr.shape[1]
        kern = ConstantKernel(1.0) * RBF(np.full(d, np.sqrt(d)), (1e-2, 1e4)) + WhiteKernel(0.1, (1e-6, 1e1))
        stages = [(args.gp_m, args.gp_maxiter)] + ([(args.gp_m2, args.gp_maxiter2)] if args.gp_m2 > args.gp_m else [])
        for m, maxiter in stages:
            n_eval = [0]

            def optimizer(obj_func, theta0, bounds, maxiter=maxiter, n_eval=n_eval):
                def fun(theta):
                    n_eval[0] += 1
                    return obj_func(theta)

                res = minimize(fun, theta0, method="L-BFGS-B", jac=True, bounds=bounds, options={"maxiter": maxiter})
                return res.x, res.fun

            gp = GaussianProcessRegressor(kern, normalize_y=True, random_state=0, optimizer=optimizer)
            # the target was standardised on all m_big rows; the GP normalises its own rows again
            t, c, mse = fit_and_score(gp, Xtr[:m], ytr[:m], Xte, yte)
            kern = gp.kernel_
            row = dict(data=name, split=split, m=m, test_mse=mse, lml=gp.log_marginal_likelihood_value_,
                       evaluations=n_eval[0], fit_s=t, cpu_s=c, theta=" ".join(f"{v:.6g}" for v in kern.theta))
            print(row, f"load {os.getloadavg()[0]:.1f}", flush=True)
            if args.gp_results:
                pd.DataFrame([row]).to_csv(args.gp_results, mode="a", index=False,
                                           header=not os.path.exists(args.gp_results))


def trajectory(args):
    """Test MSE along the search's path: for each start, every evaluation that lowered the criterion is refitted
    (``rcond=1e-14``, the search's own) and scored on the test rows.  Does the test error bottom out before the
    criterion does (over-fitting of the selection criterion late in the optimisation)?  ``--sets`` (first
    name), ``--split-seeds`` (first seed), ``--split-m`` rows (default ``--gp-m``), ``--scoring``."""
    from lssvm import SparseLSSVR

    name, split = args.sets[0], args.split_seeds[0]
    m = args.split_m or args.gp_m
    Xtr, ytr, Xte, yte = standardise(*load(name, m, np.random.default_rng(split), seed=split))
    est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=args.n_basis, random_state=0,
                        max_evaluations=args.max_evaluations, n_restarts=1, scoring=args.scoring or None)
    fit_and_score(est, Xtr, ytr, Xte, yte)
    tr = est.gradient_trace_
    for k in np.unique(tr["start"]):
        print(f"{name}, split {split}, m = {m}, start {k}: evaluation, criterion, test MSE / variance")
        low = np.inf
        for i in np.flatnonzero(tr["start"] == k):
            if tr["mse"][i] < low:
                low, th = tr["mse"][i], tr["theta"][i]
                model = SparseLSSVR(kernel="ard", gamma=np.exp(th[:-1]), alpha=np.exp(th[-1]), basis=est.basis_rows_,
                                    rcond=1e-14)
                _, _, mse = fit_and_score(model, Xtr, ytr, Xte, yte)
                print(f"  {i:4d}  {low:.6f}  {mse:.5f}", flush=True)


def paired(args):
    """Paired statistics against the GP from the rows parts "splits" (``--csv``) and "gp-splits"
    (``--gp-results``, the largest m per split) wrote: per split test MSE / variance, then per method the mean,
    the mean paired difference from the GP, its standard error (sd / sqrt(splits)) and the splits won."""
    ours = pd.read_csv(args.csv)
    ours = ours[ours.data == args.sets[0]].drop_duplicates(["split", "method"], keep="last")
    if args.gp_results:
        gp = pd.read_csv(args.gp_results)
        gp = gp[gp.data == args.sets[0]].sort_values("m").drop_duplicates("split", keep="last")
        gp = gp.assign(method="GP (m = " + gp.m.astype(str) + ")")
        ours = pd.concat([ours, gp[["split", "method", "test_mse", "cpu_s"]]])
    wide = ours.pivot_table(index="split", columns="method", values="test_mse", sort=False)
    gp_col = [c for c in wide.columns if c.startswith("GP")][0]
    print(markdown(wide.round(5).reset_index()))
    diff = wide.sub(wide[gp_col], axis=0)
    summary = pd.DataFrame({"mean": wide.mean(), "minus GP, mean": diff.mean(),
                            "minus GP, se": diff.std(ddof=1) / np.sqrt(diff.count()),
                            "wins": (diff < 0).sum(), "splits": diff.count(),
                            "cpu_s": ours.groupby("method", sort=False).cpu_s.mean()})
    print(markdown(summary.round(5).reset_index()))


def gp_point(args):
    """Both criteria and the test MSE of our model at our chosen point and at the GP's hyper-parameters, on the
    same basis rows, per split (``--sets`` first name, ``--split-seeds``): does our criterion prefer a point that
    generalises worse (over-fitting of the selection criterion), or does the search miss a point the criterion
    prefers?  The GP's point (``gamma_j = 1 / (2 l_j^2)``, ``alpha = noise / C``) is read from ``--gp-theta``
    (one for all splits) or from ``--gp-results`` (the split's largest m).  Everything at ``rcond=1e-14``."""
    from lssvm import SparseLSSVR

    name = args.sets[0]
    for split in args.split_seeds:
        m_ours = args.split_m or args.gp_m
        Xtr, ytr, Xte, yte = standardise(*load(name, max(m_ours, args.gp_m, args.gp_m2), np.random.default_rng(split),
                                               seed=split))
        Xtr, ytr = Xtr[:m_ours], ytr[:m_ours]
        est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=args.n_basis, random_state=0,
                            max_evaluations=args.max_evaluations, n_restarts=1)
        fit_and_score(est, Xtr, ytr, Xte, yte)
        if args.gp_theta:
            theta = np.load(args.gp_theta)
        else:
            gp = pd.read_csv(args.gp_results)
            gp = gp[(gp.data == name) & (gp.split == split)].sort_values("m").iloc[-1]
            theta = np.array(gp.theta.split(), dtype=float)
        points = {"ours": (est.gamma_, est.alpha_),
                  "GP's": (0.5 * np.exp(-2 * theta[1:-1]), float(np.exp(theta[-1] - theta[0])))}
        for label, (gamma, alpha) in points.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loo, _ = cv_error_and_gradient(Xtr, ytr, est.basis_rows_, "ard", {"gamma": gamma}, alpha, rcond=1e-14)
                ev, _ = evidence_and_gradient(Xtr, ytr, est.basis_rows_, "ard", {"gamma": gamma}, alpha, rcond=1e-14)
                model = SparseLSSVR(kernel="ard", gamma=gamma, alpha=alpha, basis=est.basis_rows_, rcond=1e-14)
                _, _, mse = fit_and_score(model, Xtr, ytr, Xte, yte)
            print(f"{name} split {split}, {label} point: LOO MSE {loo:.6f}, log evidence {-ev * len(ytr):.2f}, "
                  f"test MSE / variance {mse:.5f}, load {os.getloadavg()[0]:.1f}", flush=True)


def cost(args):
    rng = np.random.default_rng(0)
    m, n, d = 5000, 500, 32
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    rows = rng.choice(m, n, replace=False)
    gamma = np.full(d, 0.5 / d)
    t_grad, _ = best_time(lambda: cv_error_and_gradient(X, y, rows, "ard", {"gamma": gamma}, 1e-2), 3)
    t_fit, _ = best_time(lambda: SparseLSSVR(kernel="ard", gamma=gamma, alpha=1e-2, basis=rows).fit(X, y), 3)
    t_ev, _ = best_time(lambda: evidence_and_gradient(X, y, rows, "ard", {"gamma": gamma}, 1e-2), 3)
    print(f"m={m} n={n} d={d}: LOO gradient {t_grad:.3f} s, evidence gradient {t_ev:.3f} s, fit {t_fit:.3f} s, "
          f"ratios {t_grad / t_fit:.2f} and {t_ev / t_fit:.2f} (load {os.getloadavg()[0]:.1f})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["cost", "accuracy", "gp", "ct", "splits", "gp-splits", "trajectory", "paired",
                                       "gp-point", "all"], default="all")
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--skip", default="", help="comma-separated contenders to leave out")
    p.add_argument("--m", type=int, default=2000)
    p.add_argument("--gp-m", type=int, default=2000)
    p.add_argument("--gp-maxiter", type=int, default=15000, help="cap on the GP optimiser's iterations (part gp)")
    p.add_argument("--gp-state", default="", help="part gp: save the GP's best log hyper-parameters here (.npy)")
    p.add_argument("--gp-theta", default="", help="part gp: only score the GP at these saved hyper-parameters")
    p.add_argument("--n-basis", type=int, default=300)
    p.add_argument("--ida-sets", default="banana,breast_cancer,heart,german,ringnorm,waveform")
    p.add_argument("--realisations", type=int, default=5)
    p.add_argument("--small-m", type=int, default=200, help="training rows of Friedman / puma32H (part ct)")
    p.add_argument("--ct-basis", type=int, default=100, help="largest basis (part ct)")
    p.add_argument("--max-evaluations", type=int, default=60)
    p.add_argument("--split-seeds", default="0,1,2,3,4", help="part splits: seeds of the random splits")
    p.add_argument("--variants", default="ARD n=300", help="part splits: comma-separated variants of ours")
    p.add_argument("--split-m", type=int, default=0, help="part splits: training rows of ours (default --gp-m)")
    p.add_argument("--gp-results", default="", help="part gp-splits: append the GP's rows here; part splits: "
                   "read the GP's test MSE from here instead of fitting it")
    p.add_argument("--scoring", default="", help="part trajectory: the search's scoring (default: LOO MSE)")
    p.add_argument("--csv", default="", help="part splits: append each of ours' rows to this CSV file")
    p.add_argument("--gp-m2", type=int, default=0, help="part gp-splits: re-optimise the GP on this many rows")
    p.add_argument("--gp-maxiter2", type=int, default=20, help="part gp-splits: iterations at --gp-m2")
    args = p.parse_args()
    args.sets = [s for s in args.sets.split(",") if s]
    args.skip = set(s for s in args.skip.split(",") if s)
    args.ida_sets = [s for s in args.ida_sets.split(",") if s]
    args.split_seeds = [int(s) for s in args.split_seeds.split(",") if s]
    args.variants = [s for s in args.variants.split(",") if s]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, load {os.getloadavg()}")
    if args.part in ("cost", "all"):
        cost(args)
    if args.part in ("accuracy", "all"):
        accuracy(args)
    if args.part == "gp":
        gp_at_scale(args)
    if args.part == "ct":
        cawley_talbot(args)
    if args.part == "splits":
        splits(args)
    if args.part == "gp-splits":
        gp_splits(args)
    if args.part == "trajectory":
        trajectory(args)
    if args.part == "paired":
        paired(args)
    if args.part == "gp-point":
        gp_point(args)


if __name__ == "__main__":
    main()
