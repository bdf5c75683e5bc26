"""The GP contender of the ARD gradient search, tuned on every split.

scikit-learn's ``GaussianProcessRegressor`` with ``ConstantKernel(c) * RBF(l_1 .. l_d) + WhiteKernel(s)``,
``normalize_y=True`` and its default jitter ``alpha=1e-10``, is the contender of the ARD search's target
"no worse than the GP".  Its own optimiser evaluates the gradient of the log marginal likelihood through an
m x m x (d + 2) tensor (``RBF.__call__(eval_gradient=True)``): 4.4 GB at m = 4000, d = 32, and over 70 minutes
per fit here.  :class:`GPObjective` computes the same objective and gradient in O(m^3 + m^2 d) time and
O(m^2) memory, so the GP can be tuned on each split instead of being refitted at one split's hyper-parameters.
It is hand-written because scikit-learn has no such route (its gradient is O(m^2 d) in memory); the model,
the objective, the parametrisation and the bounds are scikit-learn's, and the final fit and prediction are
scikit-learn's own (``optimizer=None`` at the tuned ``theta``).

Parts (``--part``):

* ``check``: value and gradient against ``GaussianProcessRegressor.log_marginal_likelihood(theta,
  eval_gradient=True)`` (sign flipped) at m = 300 rows of puma32H and Friedman #1, 3 random thetas inside the
  bounds each; prints the largest relative differences.
* ``tune``: per split (``--sets``, ``--split-seeds``, ``--m``), the split drawn as ``ard.py`` draws it.  Stage 1:
  L-BFGS-B on the first ``--m1`` rows from scikit-learn's default start (every length-scale sqrt(d), c = 1,
  noise 0.1) and from ``--restarts`` starts drawn log-uniformly inside the bounds, as scikit-learn's
  ``n_restarts_optimizer`` draws them (``RandomState(split)``); the best is kept.  Stage 2: from there on all
  ``--m`` rows, at most ``--maxiter`` iterations, scipy's default tolerances.  Each stage appends one row to
  ``--out-dir/gp_<set>.csv`` in the columns of ``results/ard/gp_friedman.csv`` (which ``ard.py
  --part splits/paired --gp-results`` reads), then its own columns.
* ``continue``: stage 2 continued from its capped optimum (``--maxiter`` more iterations), to a separate file.
* ``transfer``: the puma32H GP tuned once on split 0 (``--gp-theta``) and refitted at that theta, scored on each
  split: log marginal likelihood on the split's training rows and test MSE, against the per-split tuned row.
* ``old``: re-score the old Friedman GP rows (``--old-gp``) through this script's scoring path (same test MSE?).
* ``paired``: ours (``results/ard``: the "min" search, the evidence, the removed PRUNE step; ``selection_rule="one-se"``
  rows from ``results/ard_crit/lib_*.csv``) against the per-split GP and the old GP.

Run from the repository root:
``OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ard_gp.py --part tune --sets puma32H --m 4000``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve, lapack
from scipy.optimize import minimize
from scipy.spatial.distance import pdist, squareform

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ard import fit_and_score, load, markdown, standardise  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OLD = os.path.join(HERE, "results", "ard")  # ard.py's rows, the GP refitted at one split's theta
NEW = os.path.join(HERE, "results", "ard_gp")  # this script's rows, the GP tuned per split
CRIT = os.path.join(HERE, "results", "ard_crit")  # ard_crit.py's per-split rows of the one-se rule
JITTER = 1e-10  # GaussianProcessRegressor's default alpha
RBF_BOUNDS, NOISE_BOUNDS = (1e-2, 1e4), (1e-6, 1e1)  # as in ard.py


def make_kernel(d):
    """``ConstantKernel(1) * RBF(sqrt(d) * ones(d), (1e-2, 1e4)) + WhiteKernel(0.1, (1e-6, 1e1))``: ard.py's GP
    kernel at scikit-learn's default start (the constant at its default bounds (1e-5, 1e5))."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    return ConstantKernel(1.0) * RBF(np.full(d, np.sqrt(d)), RBF_BOUNDS) + WhiteKernel(0.1, NOISE_BOUNDS)


class GPObjective:
    """Minus the log marginal likelihood of scikit-learn's GP and its gradient, in its ``theta``.

    The model: ``K = c R + s I + eps I`` with ``R_ab = exp(-1/2 sum_j (x_aj - x_bj)^2 / l_j^2)``, ``eps = 1e-10``,
    ``theta = (log c, log l_1 .. log l_d, log s)`` (scikit-learn's order for ``C * RBF + WhiteKernel``), and the
    target normalised as ``normalize_y=True`` does (``(y - mean) / std`` of these rows)::

        -lml = 1/2 y^T a + sum_a log L_aa + m/2 log(2 pi),   a = K^-1 y,   K = L L^T.

    Gradient (Rasmussen & Williams 2006, eq. 5.9): ``d lml / d theta_k = 1/2 tr(W dK/dtheta_k)`` with the
    symmetric ``W = a a^T - K^-1``.  The partials of ``K`` are ``dK/dlog c = c R =: F``, ``dK/dlog s = s I`` and
    ``dK/dlog l_j = F o D_j / l_j^2``, ``(D_j)_ab = (x_aj - x_bj)^2`` (the jitter is constant).  With
    ``P = W o F`` (elementwise) and ``tr(W (F o D_j)) = sum_ab P_ab D_j,ab``:

    * ``d lml / d log c = 1/2 sum_ab P_ab``;
    * ``d lml / d log s = s/2 tr W = s/2 (a^T a - tr K^-1)``;
    * ``d lml / d log l_j = 1/(2 l_j^2) sum_ab P_ab (x_aj^2 + x_bj^2 - 2 x_aj x_bj)
      = (x_j^2 . P 1 - x_j^T P x_j) / l_j^2`` (``P`` symmetric), i.e. all d partials from one ``P @ X``.

    scikit-learn forms the m x m x d tensor ``F o D_j`` instead (O(m^2 d) memory).  Cost here per evaluation:
    the kernel as scikit-learn builds it (``pdist``, m^2 d / 2, so ``K`` is the same to the last bit), Cholesky
    (m^3 / 3), ``K^-1`` by LAPACK ``potri`` (2 m^3 / 3), ``P @ X`` (2 m^2 d) and a few m^2 passes; memory: three
    m x m arrays.  A non-positive-definite ``K`` gives ``(inf, 0)``, as scikit-learn's objective does.

    ``evaluations`` counts the calls.
    """

    def __init__(self, X, y):
        self.X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        std = np.std(y)
        self.y = (y - y.mean()) / (std if std > 0 else 1.0)
        self.evaluations = 0

    def __call__(self, theta):
        self.evaluations += 1
        X, y = self.X, self.y
        m = X.shape[0]
        c, length, s = np.exp(theta[0]), np.exp(theta[1:-1]), np.exp(theta[-1])
        R = squareform(np.exp(-0.5 * pdist(X / length, metric="sqeuclidean")))
        np.fill_diagonal(R, 1.0)
        K = c * R
        K[np.diag_indices_from(K)] += s
        K[np.diag_indices_from(K)] += JITTER
        try:
            L, lower = cho_factor(K, lower=True, overwrite_a=True, check_finite=False)
        except np.linalg.LinAlgError:
            return np.inf, np.zeros_like(theta)
        a = cho_solve((L, lower), y, check_finite=False)
        value = 0.5 * y @ a + np.log(np.diag(L)).sum() + 0.5 * m * np.log(2 * np.pi)
        Kinv, info = lapack.dpotri(L, lower=1, overwrite_c=1)  # lower triangle of K^-1; upper: L's leftovers
        if info != 0:
            return np.inf, np.zeros_like(theta)
        Kinv = np.tril(Kinv)
        Kinv += np.tril(Kinv, -1).T
        trace_w = a @ a - np.trace(Kinv)
        P = np.subtract(np.multiply.outer(a, a), Kinv, out=Kinv)  # W, in K^-1's memory
        P *= R
        P *= c
        row_sums = P.sum(axis=1)
        PX = P @ X
        g_length = ((X * X).T @ row_sums - np.einsum("aj,aj->j", X, PX)) / length**2
        grad = np.concatenate(([0.5 * row_sums.sum()], g_length, [0.5 * s * trace_w]))
        return float(value), -grad


def log_uniform_starts(bounds, n, seed):
    """``n`` starts as scikit-learn's ``n_restarts_optimizer`` draws them (uniform in the log bounds)."""
    rng = np.random.RandomState(seed)
    return [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(n)]


def score(theta, d, Xtr, ytr, Xte, yte):
    """scikit-learn's GP at ``theta`` (no optimiser) on these rows: (wall s, CPU s, test MSE / test variance, lml)."""
    from sklearn.gaussian_process import GaussianProcessRegressor

    gp = GaussianProcessRegressor(make_kernel(d).clone_with_theta(theta), normalize_y=True, optimizer=None)
    t, c, mse = fit_and_score(gp, Xtr, ytr, Xte, yte)
    return t, c, mse, float(gp.log_marginal_likelihood_value_)


def split_data(name, m, split):
    """The split exactly as ard.py's parts splits / gp-splits draw it."""
    return standardise(*load(name, m, np.random.default_rng(split), seed=split))


def check(args):
    """Value and gradient against scikit-learn's ``log_marginal_likelihood(theta, eval_gradient=True)``."""
    from sklearn.gaussian_process import GaussianProcessRegressor

    worst = [0.0, 0.0]
    for name in ("puma32H", "friedman"):
        Xtr, ytr, _, _ = split_data(name, 300, 0)
        d = Xtr.shape[1]
        kern = make_kernel(d)
        gp = GaussianProcessRegressor(kern, normalize_y=True, optimizer=None).fit(Xtr, ytr)
        obj = GPObjective(Xtr, ytr)
        for theta in [kern.theta] + log_uniform_starts(kern.bounds, 3, 0):
            lml, glml = gp.log_marginal_likelihood(theta, eval_gradient=True)
            value, grad = obj(theta)
            dv = abs(value + lml) / abs(lml)
            dg = np.max(np.abs(grad + glml)) / np.max(np.abs(glml))
            worst = [max(worst[0], dv), max(worst[1], dg)]
            print(f"{name}, m = 300, theta[:3] = {np.round(theta[:3], 3)}: -lml {value:.10g}, relative difference "
                  f"{dv:.2e}; gradient max |diff| / max |grad| {dg:.2e} (max |grad| {np.max(np.abs(glml)):.3g})")
    print(f"largest relative differences: value {worst[0]:.2e}, gradient {worst[1]:.2e}; "
          f"{'PASS' if max(worst) <= 1e-8 else 'FAIL'} (1e-8)")
    return max(worst) <= 1e-8


def optimise(obj, theta0, bounds, maxiter=None):
    options = {} if maxiter is None else {"maxiter": maxiter}
    return minimize(obj, theta0, method="L-BFGS-B", jac=True, bounds=bounds, options=options)


def append(path, row):
    pd.DataFrame([row]).to_csv(path, mode="a", index=False, header=not os.path.exists(path))


def tune(args):
    """Stage 1 (``--m1`` rows, default start + ``--restarts`` log-uniform starts, best kept), stage 2 (all
    ``--m`` rows from stage 1's optimum, at most ``--maxiter`` iterations); one CSV row per stage."""
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.sets:
        out = os.path.join(args.out_dir, f"gp_{name}.csv")
        for split in args.split_seeds:
            Xtr, ytr, Xte, yte = split_data(name, args.m, split)
            d = Xtr.shape[1]
            kern = make_kernel(d)
            bounds = kern.bounds
            t0, c0 = time.perf_counter(), time.process_time()
            obj = GPObjective(Xtr[:args.m1], ytr[:args.m1])
            starts = [kern.theta] + log_uniform_starts(bounds, args.restarts, split)
            results = []
            for k, theta0 in enumerate(starts):
                res = optimise(obj, theta0, bounds)
                results.append(res)
                print(f"{name} split {split} stage 1 start {k}: -lml {res.fun:.4f}, {res.nfev} evaluations, "
                      f"{res.nit} iterations, {res.message}, load {os.getloadavg()[0]:.1f}", flush=True)
            best = int(np.argmin([r.fun for r in results]))
            theta1 = results[best].x
            t_opt, c_opt = time.perf_counter() - t0, time.process_time() - c0
            t, c, mse, lml = score(theta1, d, Xtr[:args.m1], ytr[:args.m1], Xte, yte)
            row = dict(data=name, split=split, m=args.m1, test_mse=mse, lml=lml, evaluations=obj.evaluations,
                       fit_s=t_opt + t, cpu_s=c_opt + c, theta=" ".join(f"{v:.6g}" for v in theta1), stage=1,
                       starts=len(starts), best_start=best, iterations=sum(r.nit for r in results),
                       converged=all(r.success for r in results),
                       message="; ".join(str(r.message) for r in results), load=os.getloadavg()[0])
            print(row, flush=True)
            append(out, row)
            if args.m <= args.m1:
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            obj = GPObjective(Xtr, ytr)
            res = optimise(obj, theta1, bounds, maxiter=args.maxiter)
            t_opt, c_opt = time.perf_counter() - t0, time.process_time() - c0
            t, c, mse, lml = score(res.x, d, Xtr, ytr, Xte, yte)
            row = dict(data=name, split=split, m=args.m, test_mse=mse, lml=lml, evaluations=obj.evaluations,
                       fit_s=t_opt + t, cpu_s=c_opt + c, theta=" ".join(f"{v:.6g}" for v in res.x), stage=2,
                       starts=1, best_start=0, iterations=res.nit, converged=bool(res.success),
                       message=str(res.message), load=os.getloadavg()[0])
            print(row, f"(-lml at the optimum by GPObjective {res.fun:.6f})", flush=True)
            append(out, row)


def continue_(args):
    """Stage 2 continued for ``--maxiter`` more iterations from each split's stage-2 optimum (``--sets`` first
    name, ``--split-seeds``): is the capped optimum converged, and does the test MSE move?  Rows go to
    ``--out-dir/gp_<set>_continued.csv`` (not the contender's file), with the -lml every 25 evaluations."""
    name = args.sets[0]
    tuned = pd.read_csv(os.path.join(args.out_dir, f"gp_{name}.csv"))
    for split in args.split_seeds:
        prev = tuned[(tuned.split == split) & (tuned.m == args.m)].iloc[-1]
        Xtr, ytr, Xte, yte = split_data(name, args.m, split)
        d = Xtr.shape[1]
        obj = GPObjective(Xtr, ytr)
        trace = []

        def traced(theta, obj=obj, trace=trace):
            out = obj(theta)
            if obj.evaluations % 25 == 0:
                trace.append(f"{obj.evaluations}:{out[0]:.4f}")
            return out

        t0, c0 = time.perf_counter(), time.process_time()
        res = optimise(traced, np.array(prev.theta.split(), dtype=float), make_kernel(d).bounds, args.maxiter)
        t_opt, c_opt = time.perf_counter() - t0, time.process_time() - c0
        t, c, mse, lml = score(res.x, d, Xtr, ytr, Xte, yte)
        row = dict(data=name, split=split, m=args.m, test_mse=mse, lml=lml, evaluations=obj.evaluations,
                   fit_s=t_opt + t, cpu_s=c_opt + c, theta=" ".join(f"{v:.6g}" for v in res.x), stage=3,
                   iterations=res.nit, converged=bool(res.success), message=str(res.message),
                   previous_lml=prev.lml, previous_test_mse=prev.test_mse, trace=" ".join(trace),
                   load=os.getloadavg()[0])
        print(row, flush=True)
        append(os.path.join(args.out_dir, f"gp_{name}_continued.csv"), row)


def transfer(args):
    """The transferred puma32H theta (tuned on split 0's rows) on each split's training rows."""
    theta = np.load(args.gp_theta)
    tuned = pd.read_csv(os.path.join(args.out_dir, "gp_puma32H.csv"))
    rows = []
    for split in args.split_seeds:
        Xtr, ytr, Xte, yte = split_data("puma32H", args.m, split)
        t, c, mse, lml = score(theta, Xtr.shape[1], Xtr, ytr, Xte, yte)
        own = tuned[(tuned.split == split) & (tuned.m == args.m)]
        row = dict(split=split, m=args.m, transferred_lml=lml, transferred_test_mse=mse)
        if len(own):
            own = own.iloc[-1]
            row.update(tuned_lml=own.lml, tuned_test_mse=own.test_mse, lml_gain=own.lml - lml,
                       test_mse_change=own.test_mse - mse)
        rows.append(row)
        print(row, f"load {os.getloadavg()[0]:.1f}", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(os.path.join(args.out_dir, "transfer_puma32H.csv"), index=False)
    print(markdown(table.round(6)))


def old(args):
    """Re-score the old Friedman GP rows (largest m per split) through :func:`score`: the same test MSE?"""
    gp = pd.read_csv(args.old_gp)
    gp = gp.sort_values("m").drop_duplicates(["data", "split"], keep="last")
    for r in gp.itertuples():
        if r.split not in args.split_seeds:
            continue
        Xtr, ytr, Xte, yte = split_data(r.data, r.m, r.split)
        theta = np.array(r.theta.split(), dtype=float)
        _, _, mse, lml = score(theta, Xtr.shape[1], Xtr, ytr, Xte, yte)
        print(f"{r.data} split {r.split} m = {r.m}: test MSE {mse:.10f} (old CSV {r.test_mse:.10f}), lml at the "
              f"CSV's rounded theta {lml:.4f} (old CSV {r.lml:.4f})", flush=True)


def paired(args):
    """Ours against the per-split GP (the largest m per split) and the old GP, per set: per-split table, then
    the mean paired difference, its standard error (sd / sqrt(splits)) and the splits won."""
    sets = {"puma32H": (os.path.join(OLD, "ours_puma.csv"), None, os.path.join(OLD, "prune_puma.csv")),
            "friedman": (os.path.join(OLD, "ours_friedman.csv"), os.path.join(OLD, "gp_friedman.csv"),
                         os.path.join(OLD, "prune_friedman.csv"))}
    for name in args.sets:
        ours_csv, old_csv, prune_csv = sets[name]
        ours = pd.read_csv(ours_csv).drop_duplicates(["split", "method"], keep="last")
        wide = ours.pivot_table(index="split", columns="method", values="test_mse")
        cols = {"ours, min": wide["ARD n=300"]}
        lib = os.path.join(CRIT, f"lib_{'puma' if name == 'puma32H' else name}.csv")
        if os.path.exists(lib):  # ard_crit.py's rows: selection_rule="one-se", the default
            one_se = pd.read_csv(lib)
            one_se = one_se[one_se.method == "ARD one-se"].drop_duplicates("split", keep="last").set_index("split")
            cols["ours, one-se (default)"] = one_se.test_mse
        if "ARD evidence" in wide:
            cols["ours, evidence"] = wide["ARD evidence"]
        if os.path.exists(prune_csv):  # rows of PRUNE, a step since removed
            pr = pd.read_csv(prune_csv).drop_duplicates("split", keep="last").set_index("split")
            cols["ours + PRUNE"] = pr.test_after
        if old_csv is None:  # puma32H: the old GP was refitted at split 0's theta (ours_puma.csv)
            cols["old GP"] = wide["GP (at --gp-theta)"]
        else:
            g = pd.read_csv(old_csv).sort_values("m").drop_duplicates("split", keep="last").set_index("split")
            cols["old GP"] = g.test_mse
        new = pd.read_csv(os.path.join(args.out_dir, f"gp_{name}.csv"))
        new = new[new.m == new.m.max()].drop_duplicates("split", keep="last").set_index("split")  # stage 2
        cols["new GP"] = new.test_mse
        table = pd.DataFrame(cols).loc[lambda t: t.index.isin(new.index)]
        print(f"\n{name}: test MSE / test variance per split")
        print(markdown(table.round(6).reset_index()))
        stats = []
        for gp_col in ("old GP", "new GP"):
            for col in [c for c in table.columns if not c.endswith("GP")] + (["old GP"] if gp_col == "new GP" else []):
                diff = (table[col] - table[gp_col]).dropna()
                stats.append({"method": col, "against": gp_col, "splits": diff.size, "mean diff": diff.mean(),
                              "se": diff.std(ddof=1) / np.sqrt(diff.size), "relative": diff.mean() / table[gp_col].mean(),
                              "wins": int((diff < 0).sum())})
        print(markdown(pd.DataFrame(stats).round(6)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["check", "tune", "continue", "transfer", "old", "paired"], default="check")
    p.add_argument("--sets", default="puma32H,friedman")
    p.add_argument("--split-seeds", default="0,1,2,3,4")
    p.add_argument("--m", type=int, default=4000, help="training rows of the split (stage 2)")
    p.add_argument("--m1", type=int, default=1000, help="rows of stage 1 (the first of the split's rows)")
    p.add_argument("--restarts", type=int, default=2, help="log-uniform starts in stage 1, besides the default")
    p.add_argument("--maxiter", type=int, default=300, help="L-BFGS-B iterations of stage 2")
    p.add_argument("--out-dir", default=NEW)
    p.add_argument("--gp-theta", default=os.path.join(OLD, "gp_theta_puma32H.npy"))
    p.add_argument("--old-gp", default=os.path.join(OLD, "gp_friedman.csv"))
    args = p.parse_args()
    args.sets = [s for s in args.sets.split(",") if s]
    args.split_seeds = [int(s) for s in args.split_seeds.split(",") if s]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, load {os.getloadavg()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS-B's and the GP's convergence warnings: recorded in the rows
        if args.part == "check":
            sys.exit(0 if check(args) else 1)
        {"tune": tune, "continue": continue_, "transfer": transfer, "old": old, "paired": paired}[args.part](args)


if __name__ == "__main__":
    main()
