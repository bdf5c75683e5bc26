"""Selection over-fitting of the ARD search's LOO criterion: candidates
that keep LOO as the criterion but refuse gains within its own noise (the one-standard-error rule,
Breiman et al. 1984; Hastie, Tibshirani & Friedman, ESL 2nd ed., section 7.10).

Part "candidates": per split, the benchmark's default search (``SparseLSSVRCV(kernel="ard",
search="gradient", basis="random", n_basis=300, random_state=0, max_evaluations=60, n_restarts=1)``), then
every point it evaluated is re-factorised once (rcond 1e-14, the search's) for its per-row squared LOO
residuals, log evidence and effective degrees of freedom, and the candidates pick a point from them:

* ``A z=.. [+alpha]``: the earliest iterate on the winning start's path (the iterates that lowered that
  start's LOO, in order) whose mean paired rise of the squared LOO residuals over the best point is within
  ``z`` standard errors (``sd(e_t^2 - e_best^2) / sqrt(m)``); "+alpha": alpha then re-chosen on the exact
  LOO path ``alpha x 4^-4 .. 4^4`` at its widths;
* ``B``: among all evaluated points within one standard error of the best, the highest log evidence;
  ``B+ev``: the same, the points of a short evidence search (L-BFGS-B from the same start, at most 60
  evaluations) added;
* ``C df``: within one standard error, the fewest effective degrees of freedom (trace of the hat matrix);
* ``... + prune``: A, A', B' or B+ev', then ``gradient_prune.prune_inputs`` (inputs switched off by a
  per-input one-standard-error rule) from there.  That module was removed after these runs (the
  rows with "prune" in ``benchmarks/results/ard_crit/crit*_.csv`` come from commit 4dc5847 and its
  successors up to the removal); the candidate is skipped where the module is gone.
* ``... cap=c`` (``--caps``): the band ``z se`` capped at ``c`` times the best point's LOO MSE.

Each chosen point is refitted (``SparseLSSVR`` at the estimator's default rcond, 1e-10, as the search's
refit) and scored on the split's test rows (MSE / variance).  Rows go to ``--csv``; part "summary" prints
the paired statistics against ``--gp`` (a CSV with data, split, test_mse; the largest m per split) or
against ``--baseline`` (a method name in the same file).

Splits as ``ard.py --part splits``: ``load(name, m, default_rng(split), seed=split)``.

Part "classifiers": ``SparseLSSVCCV`` with ``selection_rule`` "min" and "one-se" on IDA benchmark sets.
Part "defaults": both rules at the library's default ``n_restarts`` and ``max_evaluations``.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/ard_crit.py --sets friedman --m 2000 --csv FILE
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from ard import load, markdown, standardise
from scipy.optimize import minimize

from lssvm import NumericalWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.estimators.gradient_search import feature_relevance
from lssvm.kernels import ARD
from lssvm.selection.evidence import log_evidence_path
from lssvm.selection.gradient import evidence_and_gradient
from lssvm.solvers import factorize_sparse_rls


def _loo_path(X, Y, rows, gamma, alphas, rcond):
    """LOO MSE per alpha at ``gamma``: one factorisation, O(m n) per alpha."""
    K_mn = ARD(gamma)(X, X[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        fac = factorize_sparse_rls(K_mn, K_mn[rows], Y, rcond=rcond, overwrite_k=True)
        r = np.asarray(fac.loo_residuals(alphas)).reshape(len(alphas), -1)
    return (r**2).mean(axis=1)


def point_stats(X, Y, rows, theta, rcond=1e-14):
    """(per-row squared LOO residuals, log evidence, effective degrees of freedom) at ``theta``, or None."""
    gamma, alpha = np.exp(theta[:-1]), float(np.exp(theta[-1]))
    K_mn = ARD(gamma)(X, X[rows])
    K_BB = K_mn[rows]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", NumericalWarning)
            fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=rcond, overwrite_k=True, warn=False)
            if fac.method != "cholesky":  # as the search: a singular K_BB stops it
                return None
            warnings.simplefilter("ignore", NumericalWarning)  # leverage within 1e-8 of 1: the search takes it
            r = np.asarray(fac.loo_residuals(alpha)).reshape(X.shape[0], -1)
            ev = float(np.sum(log_evidence_path(fac, alpha)))
    except (NumericalWarning, np.linalg.LinAlgError, ValueError):
        return None
    e2 = (r**2).sum(axis=1)
    if not np.all(np.isfinite(e2)):
        return None
    lam = fac.eigenvalues
    return e2, ev, 1.0 + float(np.sum(lam / (lam + alpha)))


def within(e2, e2_best, z, paired=True, cap=None):
    """Mean rise within ``z`` standard errors: of the paired differences, or (``paired=False``, ESL's rule)
    of the best point's LOO MSE itself, ``sd(e_best^2) / sqrt(m)``; with ``cap``, within at most that
    fraction of the best point's LOO MSE."""
    d = e2 - e2_best
    se = (d if paired else e2_best).std(ddof=1) / np.sqrt(d.size)
    band = z * se if cap is None else min(z * se, cap * e2_best.mean())
    return d.mean() <= band


def evidence_path(X, y, rows, theta0, max_evaluations):
    """Thetas of an L-BFGS-B evidence search from ``theta0`` (stopped at a singular K_BB)."""
    thetas = []
    p = theta0.size - 1
    lo = np.r_[np.full(p, np.log(1e-9)), np.log(1e-10)]
    hi = np.r_[np.full(p, np.log(1e3)), np.log(1e6)]

    class Stop(Exception):
        pass

    def fun(theta):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", NumericalWarning)
                v, g = evidence_and_gradient(X, y, rows, "ard", {"gamma": np.exp(theta[:p])}, float(np.exp(theta[-1])),
                                             rcond=1e-14)
        except (NumericalWarning, ValueError, np.linalg.LinAlgError):
            raise Stop from None
        if not (np.isfinite(v) and np.all(np.isfinite(g))):
            raise Stop
        thetas.append(theta.copy())
        return v, g

    try:
        minimize(fun, theta0, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                 options={"maxfun": max_evaluations, "maxiter": max_evaluations})
    except Stop:
        pass
    return thetas


def test_mse(Xtr, ytr, Xte, yte, rows, theta):
    model = SparseLSSVR(kernel="ard", gamma=np.exp(theta[:-1]), alpha=float(np.exp(theta[-1])), basis=rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr, ytr)
    return float(np.mean((model.predict(Xte) - yte) ** 2) / yte.var())


def candidates(args):
    for name in args.sets:
        for split in args.split_seeds:
            Xtr, ytr, Xte, yte = standardise(*load(name, args.m, np.random.default_rng(split), seed=split))
            m = len(ytr)
            est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=300, random_state=0,
                                max_evaluations=60, n_restarts=1, selection_rule="min")
            c0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, ytr)
            search_cpu = time.process_time() - c0
            rows = est.basis_rows_
            tr = est.gradient_trace_
            Y = ytr[:, None]
            c0 = time.process_time()
            stats = [point_stats(Xtr, Y, rows, th) for th in tr["theta"]]
            stats_cpu = time.process_time() - c0
            b = int(np.argmin(tr["mse"]))
            if stats[b] is None:
                print(f"{name} {split}: best point not re-factorisable, skipped", flush=True)
                continue
            e2b = stats[b][0]
            out = {"default": (tr["theta"][b], search_cpu)}
            # A: earliest accepted iterate on the winning start's path within z se
            k = tr["start"][b]
            low, path = np.inf, []
            for i in np.flatnonzero(tr["start"] == k):
                if tr["mse"][i] < low:
                    low = tr["mse"][i]
                    path.append(int(i))
            for z, paired in [(z, True) for z in args.z] + [(z, False) for z in args.zu]:
                pick = next(i for i in path if stats[i] is not None and within(stats[i][0], e2b, z, paired))
                tag = "A" if paired else "A'"
                out[f"{tag} z={z:g}"] = (tr["theta"][pick], 0.0)
                th = tr["theta"][pick]
                a = float(np.exp(th[-1]))
                alphas = a * 4.0 ** np.arange(-4, 5)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        lp = _loo_path(Xtr, Y, rows, np.exp(th[:-1]), alphas, 1e-14)
                    th2 = np.r_[th[:-1], np.log(alphas[int(np.nanargmin(lp))])]
                except (NumericalWarning, np.linalg.LinAlgError):
                    th2 = th
                out[f"{tag} z={z:g} +alpha"] = (th2, 0.0)
                out[f"{tag} z={z:g} pick"] = (None, path.index(pick) - (len(path) - 1))
            # B / C within one se among all evaluated points
            for paired, z, cap in [(True, 1.0, None), (False, 1.0, None)] + [(False, z, None) for z in args.zb] + \
                    [(False, 1.0, c) for c in args.caps]:
                q = ("" if paired else "'") + ("" if z == 1 else f" z={z:g}") + ("" if cap is None else f" cap={cap:g}")
                ok = [i for i, s in enumerate(stats) if s is not None and within(s[0], e2b, z, paired, cap)]
                iB = max(ok, key=lambda i: stats[i][1])
                out["B" + q] = (tr["theta"][iB], 0.0)
                iC = min(ok, key=lambda i: stats[i][2])
                out["C df" + q] = (tr["theta"][iC], 0.0)
            # B+ev: the evidence search's points from the same start
            c0 = time.process_time()
            ev_thetas = evidence_path(Xtr, ytr, rows, tr["theta"][0], 60)
            ev_stats = [point_stats(Xtr, Y, rows, th) for th in ev_thetas]
            ev_cpu = time.process_time() - c0
            for paired, z, cap in [(True, 1.0, None), (False, 1.0, None)] + [(False, z, None) for z in args.zb] + \
                    [(False, 1.0, c) for c in args.caps]:
                pool = [(th, s) for th, s in zip(list(tr["theta"]) + ev_thetas, stats + ev_stats, strict=True)
                        if s is not None and within(s[0], e2b, z, paired, cap)]
                thB, _ = max(pool, key=lambda t: t[1][1])
                out["B+ev" + ("" if paired else "'") + ("" if z == 1 else f" z={z:g}")
                    + ("" if cap is None else f" cap={cap:g}")] = (thB, ev_cpu)
            # A + prune
            try:
                from lssvm.estimators.gradient_prune import prune_inputs
            except ImportError:  # removed after these runs
                prune_inputs = None
            for tagA in ("A z=1", "A' z=1", "B+ev'", "B'") if prune_inputs else ():
                thA = out[tagA][0]
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        probe = SparseLSSVR(kernel="ard", gamma=np.exp(thA[:-1]), alpha=float(np.exp(thA[-1])),
                                            basis=rows, rcond=1e-14).fit(Xtr, ytr)
                        order = np.argsort(feature_relevance(probe, Xtr), kind="stable")
                        g, off, _, a = prune_inputs(Xtr, Y, rows, np.exp(thA[:-1]), float(np.exp(thA[-1])), order,
                                                    alphas=np.exp(thA[-1]) * 4.0 ** np.arange(-4, 5))
                    out[tagA + " + prune"] = (np.r_[np.log(g), np.log(a)], 0.0)
                except (NumericalWarning, np.linalg.LinAlgError):
                    out[tagA + " + prune"] = (thA, 0.0)
            for label, (th, cpu) in out.items():
                if th is None:
                    row = dict(data=name, m=m, split=split, method=label, test_mse=np.nan, loo=np.nan,
                               log_evidence=np.nan, df=np.nan, extra=cpu)
                else:
                    s = point_stats(Xtr, Y, rows, th)
                    row = dict(data=name, m=m, split=split, method=label,
                               test_mse=test_mse(Xtr, ytr, Xte, yte, rows, th),
                               loo=np.nan if s is None else s[0].mean(), log_evidence=np.nan if s is None else s[1],
                               df=np.nan if s is None else s[2], extra=cpu)
                if label == "default":
                    row.update(est_test=float(np.mean((est.predict(Xte) - yte) ** 2) / yte.var()),
                               n_points=len(stats), path=len(path), stats_cpu=stats_cpu, evidence_points=len(ev_thetas))
                row["load"] = os.getloadavg()[0]
                print(row, flush=True)
                if args.csv:
                    pd.DataFrame([row]).to_csv(args.csv, mode="a", index=False, header=not os.path.exists(args.csv))


def classifiers(args):
    """``SparseLSSVCCV`` ARD gradient search, ``selection_rule`` "min" against "one-se", on IDA realisations
    1..``--realisations`` of ``--sets`` (the original partitions; test error rate), basis min(100, distinct
    rows / 2) random rows."""
    from ard import load_ida

    from lssvm import SparseLSSVCCV

    rows = []
    for name in args.sets:
        for k in range(1, args.realisations + 1):
            Xtr, ytr, Xte, yte = load_ida(name, k)
            nb = min(100, len(np.unique(Xtr, axis=0)) // 2)
            for rule in ("min", "one-se"):
                est = SparseLSSVCCV(kernel="ard", search="gradient", basis="random", n_basis=nb, random_state=k,
                                    max_evaluations=60, n_restarts=1, selection_rule=rule)
                c0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Xtr, ytr)
                rows.append(dict(data=name, realisation=k, m=len(ytr), rule=rule,
                                 error=float(np.mean(est.predict(Xte) != yte)), cpu_s=time.process_time() - c0))
                print(rows[-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
    t = pd.DataFrame(rows)
    if args.csv:
        t.to_csv(args.csv, index=False)
    w = t.pivot_table(index=["data", "realisation"], columns="rule", values="error")
    d = (w["one-se"] - w["min"]).groupby(level=0)
    print(markdown(pd.DataFrame({"min": w["min"].groupby(level=0).mean(), "one-se": w["one-se"].groupby(level=0).mean(),
                                 "one-se - min": d.mean(), "se": d.std(ddof=1) / np.sqrt(d.size()),
                                 "better": (w["one-se"] < w["min"]).groupby(level=0).sum(),
                                 "worse": (w["one-se"] > w["min"]).groupby(level=0).sum()}).round(4).reset_index()))
    print(t.groupby("rule").cpu_s.mean())


def defaults(args):
    """The library's own defaults (``n_restarts=2``, ``max_evaluations=30``) with ``selection_rule`` "min" and
    "one-se", per split of ``--sets`` at ``--m`` rows (``n_basis=300`` random, ``random_state=0``)."""
    for name in args.sets:
        res = {"min": [], "one-se": []}
        for split in args.split_seeds:
            Xtr, ytr, Xte, yte = standardise(*load(name, args.m, np.random.default_rng(split), seed=split))
            for rule in res:
                est = SparseLSSVRCV(kernel="ard", search="gradient", basis="random", n_basis=300, random_state=0,
                                    selection_rule=rule)
                c0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Xtr, ytr)
                t = float(np.mean((est.predict(Xte) - yte) ** 2) / yte.var())
                res[rule].append(t)
                row = dict(data=name, m=args.m, split=split, rule=rule, test_mse=t, cpu_s=time.process_time() - c0,
                           load=os.getloadavg()[0])
                print(row, flush=True)
                if args.csv:
                    pd.DataFrame([row]).to_csv(args.csv, mode="a", index=False, header=not os.path.exists(args.csv))
        print(name, {k: round(float(np.mean(v)), 5) for k, v in res.items()}, flush=True)


def summary(args):
    ours = pd.read_csv(args.csv)
    ours = ours[~ours.method.str.endswith("pick")]
    for name in args.sets:
        t = ours[ours.data == name].drop_duplicates(["split", "method"], keep="last")
        wide = t.pivot_table(index="split", columns="method", values="test_mse", sort=False)
        if args.gp:
            gp = pd.read_csv(args.gp)
            gp = gp[gp.data == name]
            if "m" in gp:
                gp = gp.sort_values("m").drop_duplicates("split", keep="last")
            ref = gp.set_index("split").test_mse.reindex(wide.index)
            label = "GP"
        else:
            ref, label = wide[args.baseline], args.baseline
        wide[label] = ref
        print(f"\n{name}: test MSE / variance per split\n" + markdown(wide.round(5).reset_index()))
        diff = wide.sub(ref, axis=0)
        rel = wide.div(ref, axis=0) - 1
        s = pd.DataFrame({"mean": wide.mean(), f"minus {label}": diff.mean(),
                          "se": diff.std(ddof=1) / np.sqrt(diff.count()), "wins": (diff < 0).sum(),
                          "worst split, %": 100 * rel.max(), "mean, %": 100 * rel.mean()})
        print(markdown(s.round(5).reset_index()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["candidates", "summary", "classifiers", "defaults"], default="candidates")
    p.add_argument("--realisations", type=int, default=5, help="part classifiers: IDA realisations")
    p.add_argument("--sets", default="friedman")
    p.add_argument("--m", type=int, default=2000)
    p.add_argument("--split-seeds", default="0,1,2,3,4")
    p.add_argument("--z", default="1,0.5,2", help="A: paired standard errors")
    p.add_argument("--zu", default="1,0.5", help="A': standard errors of the best point's LOO MSE (ESL)")
    p.add_argument("--zb", default="", help="B+ev': further standard errors (unpaired)")
    p.add_argument("--caps", default="", help="B, B+ev': bands capped at these fractions of the best LOO MSE")
    p.add_argument("--csv", default="")
    p.add_argument("--gp", default="")
    p.add_argument("--baseline", default="default")
    args = p.parse_args()
    args.sets = [s for s in args.sets.split(",") if s]
    args.split_seeds = [int(s) for s in args.split_seeds.split(",") if s]
    args.z = [float(s) for s in args.z.split(",") if s]
    args.zu = [float(s) for s in args.zu.split(",") if s]
    args.zb = [float(s) for s in args.zb.split(",") if s]
    args.caps = [float(s) for s in args.caps.split(",") if s]
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, load {os.getloadavg()}", flush=True)
    {"candidates": candidates, "summary": summary, "classifiers": classifiers, "defaults": defaults}[args.part](args)


if __name__ == "__main__":
    main()
