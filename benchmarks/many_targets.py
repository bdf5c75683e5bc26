"""Many targets, one alpha per target, chosen by grouped CV: lssvm against himalaya.

An encoding-model workload: m training rows (d = 100 Gaussian inputs), a
test set of 500 rows, v targets whose signal-to-noise ratios spread widely
(noise standard deviations log-uniform over 0.1 ... 10 times the signal's),
an RBF kernel of fixed width, 15 alphas, GroupKFold(5) over five contiguous
"runs".  Side by side in one run, each method in its own subprocess (its
peak resident memory measured there, above the data it generates):

* ``lssvm default``: ``SparseLSSVRCV(alpha_per_target=True)`` on its default
  basis (pivoted Cholesky, 448 points at m = 2000), exact grouped CV;
* ``lssvm full``: the same with every training row in the basis: the same
  model as kernel ridge regression, so its alphas should equal himalaya's;
  where they differ, a dense solve of each fold's bordered kernel system
  says which of the two is the argmin of the exact CV error;
* ``himalaya``: ``KernelRidgeCV`` (numpy backend, ``fit_intercept=True``,
  same alphas, same folds), which eigendecomposes the fold kernels;
* ``lssvm LOO path``: one ``SparseLSSVR`` fit, then ``press`` over the 15
  alphas (every target's exact LOO path), timed against the fit.

Reported per method: wall time, CPU time (user + system; steadier than wall
time on a loaded machine), time per 10^4 targets, mean test R^2 over the
targets, peak memory above the data, and the share of targets whose alpha
equals himalaya's.  The two do not pick by the same criterion: lssvm takes
each target's argmin of the pooled CV squared error; himalaya the argmax
of minus the fold-mean MSE plus ``1e-10 log(alpha)``, a slope that prefers
larger alphas where the CV curve is flat.  The notes give the share under
himalaya's criterion applied to lssvm's CV paths, and where lssvm's own
picks differ, the relative CV-error gap between the two picks.

Run:  OMP_NUM_THREADS=1 python benchmarks/many_targets.py [--m 2000] [--v 1000 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

N_TEST, N_GROUPS, D = 500, 5, 100
ALPHAS = np.logspace(-7, 4, 15)


def make_data(m, v, seed=0):
    """Train and test sets: a smooth random function of d = 100 inputs per target, noise spread widely."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m + N_TEST, D))
    n_latent = 20
    latent = np.tanh(X @ rng.standard_normal((D, n_latent)) / np.sqrt(D) * 1.5)
    Y = latent @ rng.standard_normal((n_latent, v))  # the signal, scaled to unit deviation in place
    for lo in range(0, v, 1024):  # by column blocks: Y.std(axis=0) forms a centred copy of all of Y
        Y[:, lo : lo + 1024] /= Y[:, lo : lo + 1024].std(axis=0)
    noise_sd = np.exp(rng.uniform(np.log(0.1), np.log(10.0), v))
    # the noise in row blocks, drawn in the order one (m + N_TEST, v) draw would take: the peak stays at
    # Y plus one block, so the workers' "peak above the data" is not hidden under a generation peak
    for lo in range(0, m + N_TEST, 256):
        hi = min(lo + 256, m + N_TEST)
        Y[lo:hi] += noise_sd * rng.standard_normal((hi - lo, v))
    groups = np.repeat(np.arange(N_GROUPS), -(-m // N_GROUPS))[:m]
    return X[:m], Y[:m], X[m:], Y[m:], groups


def r2_per_target(Y, F):
    return 1.0 - ((Y - F) ** 2).sum(axis=0) / ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)


def cpu_seconds():
    """User + system CPU time of this process: under a loaded machine a steadier measure than wall time."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def worker(method, m, v):
    from sklearn.model_selection import GroupKFold

    X, Y, X_test, Y_test, groups = make_data(m, v)
    gamma = 1.0 / D
    base = peak_rss()
    out = {}
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    if method in ("lssvm_default", "lssvm_full"):
        from lssvm import SparseLSSVRCV

        basis = "auto" if method == "lssvm_default" else np.arange(m)
        model = SparseLSSVRCV(alphas=ALPHAS, param_space={}, gamma=gamma, cv=GroupKFold(N_GROUPS), basis=basis,
                              alpha_per_target=True, store_cv_results=True).fit(X, Y, groups=groups)
        alpha = model.alpha_
        np.save(f"/tmp/many_targets_path_{method}_{m}_{v}.npy", model.cv_results_["per_target_test_mse"])
        out["n_basis"] = int(model.best_estimator_.n_basis_)
    elif method == "himalaya":
        from himalaya.backend import set_backend
        from himalaya.kernel_ridge import KernelRidgeCV

        set_backend("numpy")
        splits = list(GroupKFold(N_GROUPS).split(X, Y, groups))
        model = KernelRidgeCV(alphas=ALPHAS, kernel="rbf", kernel_params={"gamma": gamma}, fit_intercept=True,
                              cv=splits).fit(X, Y)
        alpha = np.asarray(model.best_alphas_)
    elif method == "lssvm_loo":
        from lssvm import SparseLSSVR

        model = SparseLSSVR(gamma=gamma, alpha=1.0).fit(X, Y)
        out["fit_s"], out["fit_cpu"] = time.perf_counter() - t0, cpu_seconds() - c0
        t1, c1 = time.perf_counter(), cpu_seconds()
        press = model.press(ALPHAS)
        out["press_s"], out["press_cpu"] = time.perf_counter() - t1, cpu_seconds() - c1
        alpha = ALPHAS[np.argmin(press, axis=0)]
        model.set_params(alpha=alpha).fit(X, Y)
        out["n_basis"] = int(model.n_basis_)
    else:
        raise ValueError(method)
    out["seconds"] = time.perf_counter() - t0
    out["cpu"] = cpu_seconds() - c0
    out["peak_bytes"] = peak_rss() - base
    out["r2"] = float(np.mean(r2_per_target(Y_test, np.asarray(model.predict(X_test)))))
    np.save(f"/tmp/many_targets_alpha_{method}_{m}_{v}.npy", alpha)
    print(json.dumps(out))


def dense_fold_argmin(m, v, targets):
    """Each listed target's alpha by brute force: per fold a dense solve of kernel ridge's bordered
    system ``[K_RR + alpha I, 1; 1^T, 0]`` (every row in the basis), errors summed over the folds."""
    from scipy import linalg
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import GroupKFold

    X, Y, _, _, groups = make_data(m, v)
    Y = Y[:, targets]
    K = rbf_kernel(X, X, gamma=1.0 / D)
    sse = np.zeros((ALPHAS.size, targets.size))
    for train, test in GroupKFold(N_GROUPS).split(X, Y, groups):
        n = train.size
        for i, alpha in enumerate(ALPHAS):
            B = np.zeros((n + 1, n + 1))
            B[:n, :n] = K[np.ix_(train, train)] + alpha * np.eye(n)
            B[:n, n] = B[n, :n] = 1.0
            sol = linalg.solve(B, np.vstack([Y[train], np.zeros((1, targets.size))]), assume_a="sym")
            sse[i] += ((K[np.ix_(test, train)] @ sol[:n] + sol[n] - Y[test]) ** 2).sum(axis=0)
    return ALPHAS[np.argmin(sse, axis=0)]


def himalaya_criterion_picks(mse_path):
    """Each target's alpha by himalaya's rule applied to lssvm's CV path (A, v): himalaya scores
    each fold by minus its mean squared error (``l2_neg_loss``), averages over the folds, and adds
    ``1e-10 log(alpha)`` before the argmax ("to select larger alphas if scores are equal",
    ``_select_best_alphas``).  The folds here are the same size, so the fold average is the
    pooled MSE."""
    return ALPHAS[np.argmax(-mse_path + 1e-10 * np.log(ALPHAS)[:, None], axis=0)]


def agreement_notes(out, ref, m, v, method):
    """The share of targets whose alpha equals himalaya's under each criterion, and on the targets
    where lssvm's own pick differs, the relative CV-score gap between the two picks."""
    path = np.load(f"/tmp/many_targets_path_{method}_{m}_{v}.npy")
    same_rule = np.isclose(himalaya_criterion_picks(path), ref["alpha"], rtol=1e-6)
    notes = f"; with himalaya's criterion (fold-mean MSE + 1e-10 log alpha) {same_rule.mean() * 100:.2f}% same"
    differ = np.flatnonzero(~np.isclose(out["alpha"], ref["alpha"], rtol=1e-6))
    if differ.size:
        ia = np.searchsorted(ALPHAS, out["alpha"][differ] * (1 - 1e-9))
        ih = np.searchsorted(ALPHAS, ref["alpha"][differ] * (1 - 1e-9))
        gap = (path[ih, differ] - path[ia, differ]) / path[ia, differ]
        slope = 1e-10 * (np.log(ALPHAS[ih]) - np.log(ALPHAS[ia])) / path[ia, differ]
        notes += (f"; where the picks differ ({differ.size}): himalaya's pick worse by {np.median(gap):.1e} "
                  f"(median, max {gap.max():.1e}) in relative CV MSE, its alpha slope worth "
                  f"{np.median(slope):.1e} (median); himalaya larger on {(ih > ia).sum()}")
    return notes


def run(method, m, v):
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, __file__, "--worker", method, "--m", str(m), "--v", str(v)],
                         capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{method} at m={m}, v={v} failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["alpha"] = np.load(f"/tmp/many_targets_alpha_{method}_{m}_{v}.npy")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, nargs="+", default=[2000])
    parser.add_argument("--v", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--methods", nargs="+", default=["himalaya", "lssvm_default", "lssvm_full", "lssvm_loo"])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.m[0], args.v[0])
        return
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, d={D}, {ALPHAS.size} alphas "
          f"{ALPHAS[0]:g}..{ALPHAS[-1]:g}, GroupKFold({N_GROUPS}), {N_TEST} test rows")
    header = (f"{'m':>6} {'v':>7} {'method':<14} {'n':>5} {'time s':>8} {'cpu s':>8} {'s/1e4 tg':>9} {'mean R2':>8} "
              f"{'peak MiB':>9} {'alpha = him.':>12}  notes")
    print(header)
    print("-" * len(header))
    for m in args.m:
        for v in args.v:
            ref = None
            for method in args.methods:  # himalaya first (the default order): the others compare with it
                out = run(method, m, v)
                ref = out if method == "himalaya" else ref
                same = "" if ref is None else \
                    f"{np.mean(np.isclose(out['alpha'], ref['alpha'], rtol=1e-6)) * 100:11.2f}%"
                notes = ""
                if ref is not None and method != "himalaya":
                    notes = (f"{ref['seconds'] / out['seconds']:.1f}x faster ({ref['cpu'] / out['cpu']:.1f}x in cpu), "
                             f"dR2 {out['r2'] - ref['r2']:+.4f}")
                if method in ("lssvm_full", "lssvm_default") and ref is not None:
                    notes += agreement_notes(out, ref, m, v, method)
                if method == "lssvm_full" and ref is not None:
                    differ = np.flatnonzero(~np.isclose(out["alpha"], ref["alpha"], rtol=1e-6))
                    if differ.size:
                        dense = dense_fold_argmin(m, v, differ)
                        notes += (f"; where the alphas differ ({differ.size}) a dense refit per fold picks "
                                  f"lssvm's on {np.isclose(dense, out['alpha'][differ]).sum()}, "
                                  f"himalaya's on {np.isclose(dense, ref['alpha'][differ]).sum()}")
                if method == "lssvm_loo":
                    notes += f"; fit {out['fit_s']:.2f} s, LOO path {out['press_s']:.2f} s = " \
                             f"{out['press_s'] / out['fit_s']:.2f} fits ({out['press_cpu'] / out['fit_cpu']:.2f} in cpu)"
                print(f"{m:>6} {v:>7} {method:<14} {out.get('n_basis', m):>5} {out['seconds']:>8.2f} {out['cpu']:>8.2f} "
                      f"{out['seconds'] * 1e4 / v:>9.2f} {out['r2']:>8.4f} {out['peak_bytes'] / 2**20:>9.0f} "
                      f"{same:>12}  {notes}", flush=True)

if __name__ == "__main__":
    main()
