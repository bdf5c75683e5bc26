"""Robust LS-SVM under gross outliers: test RMSE on clean rows.

Friedman #1 (500 training rows, 10 inputs, noise 1; 1000 test rows) and
Silverman's motorcycle data (133 rows, random 100 / 33 splits).  A share
(5, 10, 20 %) of the *training* targets gets a wrong-sign spike: the target
moves against the sign of its deviation from the mean by 5 to 20 standard
deviations of y.  Test rows stay clean.

Methods, all at the kernel width and alpha that ``SparseLSSVRCV`` (exact
LOO) chooses on the clean training rows, on the same pchol basis:

* clean: ``SparseLSSVR`` fitted on the clean training targets;
* plain: ``SparseLSSVR`` on the contaminated targets;
* hampel (the default) / huber / logistic / myriad: ``RobustLSSVR`` with that weight function;
* HuberRegressor: scikit-learn's, on the whitened basis kernel features
  ``k(x, Z) L^-T`` (so its ridge penalty is the LS-SVM's ``a^T K_BB a``),
  its alpha by 5-fold CV on the contaminated rows, scored by median absolute
  error;
* KernelRidge: scikit-learn's, full kernel, same width and alpha, contaminated rows.

Searched on the contaminated rows (nothing from the clean rows), on one grid:
widths ``scale x 2^{-2, 0, 2}``, alphas ``10^-4 ... 10^2`` (7 values), pchol basis:

* lscv: ``SparseLSSVRCV`` (least squares, exact LOO MSE);
* rcv: ``RobustLSSVRCV`` (Hampel reweighting at every alpha, median of the
  absolute exact LOO residuals of the reweighted model).

Run: ``OMP_NUM_THREADS=1 python benchmarks/robust.py [--splits N]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import linalg
from sklearn.datasets import make_friedman1
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import HuberRegressor
from sklearn.model_selection import GridSearchCV, KFold

from lssvm import RobustLSSVR, RobustLSSVRCV, SparseLSSVR, SparseLSSVRCV
from lssvm.datasets import load_motorcycle

SHARES = (0.05, 0.10, 0.20)
ROBUST = ("hampel", "huber", "logistic", "myriad")
METHODS = ("clean", "plain", *ROBUST, "HuberRegressor", "KernelRidge", "lscv", "rcv")
TIMED = ("plain", *ROBUST, "lscv", "rcv")


def contaminate(y, share, rng):
    """Wrong-sign spikes of 5-20 SD on a random ``share`` of the rows; returns the new targets and the rows."""
    y = y.copy()
    rows = rng.choice(y.size, int(round(share * y.size)), replace=False)
    direction = np.sign(y[rows] - y.mean())
    direction[direction == 0] = 1.0
    y[rows] -= direction * rng.uniform(5, 20, size=rows.size) * y.std()
    return y, rows


def friedman(seed):
    X, y = make_friedman1(1500, noise=1.0, random_state=seed)
    return X[:500], y[:500], X[500:], y[500:]


def motorcycle(seed):
    X, y = load_motorcycle(return_X_y=True)
    X = (X - X.mean()) / X.std()
    order = np.random.default_rng(seed).permutation(y.size)
    train, test = order[:100], order[100:]
    return X[train], y[train], X[test], y[test]


def huber_on_features(model, X, y, Xt):
    """scikit-learn's HuberRegressor on the whitened basis kernel features of ``model``."""
    Z, kernel = model.basis_vectors_, model.kernel_
    L = linalg.cholesky(kernel(Z, Z) + 1e-10 * np.eye(Z.shape[0]), lower=True)

    def features(A):
        return linalg.solve_triangular(L, kernel(A, Z).T, lower=True).T

    grid = GridSearchCV(HuberRegressor(max_iter=2000), {"alpha": np.logspace(-4, 2, 7)},
                        cv=KFold(5, shuffle=True, random_state=0), scoring="neg_median_absolute_error")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid.fit(features(X), y)
    return grid.predict(features(Xt))


def one_split(data, seed, share):
    X, y, Xt, yt = data(seed)
    rng = np.random.default_rng(1000 + seed)
    y_bad, _ = contaminate(y, share, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(random_state=0).fit(X, y)
    gamma, alpha = search.best_params_["gamma"], search.alpha_
    basis = search.best_estimator_.basis_indices_
    kw = dict(gamma=gamma, alpha=alpha, basis=basis)
    out, times = {}, {}

    def rmse(pred):
        return float(np.sqrt(np.mean((pred - yt) ** 2)))

    t0 = time.perf_counter()
    out["clean"] = rmse(SparseLSSVR(**kw).fit(X, y).predict(Xt))
    plain = SparseLSSVR(**kw).fit(X, y_bad)
    times["plain"] = time.perf_counter() - t0
    out["plain"] = rmse(plain.predict(Xt))
    for name in ROBUST:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = RobustLSSVR(weight_function=name, **kw).fit(X, y_bad)
        times[name] = time.perf_counter() - t0
        out[name] = rmse(model.predict(Xt))
    out["HuberRegressor"] = rmse(huber_on_features(plain, X, y_bad, Xt))
    out["KernelRidge"] = rmse(KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(X, y_bad).predict(Xt))
    scale = 1.0 / (X.shape[1] * X.var())
    grid = dict(param_space={"gamma": scale * 2.0 ** np.array([-2.0, 0.0, 2.0])}, alphas=np.logspace(-4, 2, 7))
    for name, cls in (("lscv", SparseLSSVRCV), ("rcv", RobustLSSVRCV)):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(random_state=0, **grid).fit(X, y_bad)
        times[name] = time.perf_counter() - t0
        out[name] = rmse(model.predict(Xt))
    return out, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5, help="random splits / draws per setting (default 5)")
    args = parser.parse_args()
    print(f"test RMSE on clean rows, mean over {args.splits} splits; ratios of the hampel (default) and huber fits")
    ratios = ("ham/cln", "ham/pln", "hub/cln", "hub/pln", "rcv/cln", "rcv/lscv")
    head = f"{'data':<11}{'out %':>6}" + "".join(f"{m[:9]:>10}" for m in METHODS) + "".join(f"{r:>9}" for r in ratios)
    print(head)
    for label, data in (("friedman1", friedman), ("motorcycle", motorcycle)):
        for share in SHARES:
            rows = [one_split(data, seed, share) for seed in range(args.splits)]
            mean = {m: np.mean([r[0][m] for r in rows]) for m in METHODS}
            line = f"{label:<11}{100 * share:>6.0f}" + "".join(f"{mean[m]:>10.3f}" for m in METHODS)
            for name in ("hampel", "huber"):
                line += f"{mean[name] / mean['clean']:>9.2f}{mean[name] / mean['plain']:>9.2f}"
            line += f"{mean['rcv'] / mean['clean']:>9.2f}{mean['rcv'] / mean['lscv']:>9.2f}"
            print(line, flush=True)
            t = {m: np.mean([r[1][m] for r in rows]) for m in TIMED}
            print(f"{'':<17}fit seconds: " + ", ".join(f"{m} {v:.3f}" for m, v in t.items()))


if __name__ == "__main__":
    main()
