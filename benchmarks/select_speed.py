"""Speed of full model selection: widths x 20 alphas.

m = 5000 training rows (d = 10 Gaussian inputs, the speed benchmarks'
smooth target), a separate test set of 2000 rows, an RBF width grid of 5
values and 20 alphas.  Side by side in one run:

* ours: ``SparseLSSVRCV`` on n = 500 random basis rows, exact LOO over the
  alpha path (one factorisation per width), and the same with exact 10-fold
  CV removing held-out basis rows;
* scikit-learn ``GridSearchCV(KernelRidge)`` with 10-fold CV over the same
  (width, alpha) grid: 5 x 20 x 10 = 1000 dense fits on 4500 rows (targets
  centred, as KernelRidge has no intercept);
* scikit-learn ``GridSearchCV`` over the width of ``Nystroem(n_components=500)
  + RidgeCV(alphas)`` with 10-fold CV (RidgeCV picks alpha by its own
  efficient LOO inside each fold): the same basis size.

Reported: wall time, speed-up of ours, chosen parameters and the held-out
test MSE of each refitted selection.  ``--krr-widths K`` times KernelRidge on
the first K widths only and scales its time to the full grid (every fit
costs the same), for quick runs; the test MSE is then that of the partial
grid.

Run:  python benchmarks/select_speed.py [--krr-widths 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from _common import gemm_rate, synthetic_regression
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_info

from lssvm import SparseLSSVRCV

M, M_TEST, D, N_BASIS = 5000, 2000, 10, 500
GAMMAS = 2.0 ** np.arange(-11.0, -2.0, 2.0)
ALPHAS = np.geomspace(1e-6, 1e1, 20)


def timed(func):
    t0 = time.perf_counter()
    out = func()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--krr-widths", type=int, default=GAMMAS.size)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    X, y = synthetic_regression(rng, M + M_TEST, D)
    X, Xt, y, yt = X[:M], X[M:], y[:M], y[M:]
    ymean = y.mean()
    rows = []

    def test_mse(pred):
        return float(np.mean((pred - yt) ** 2))

    t, ours = timed(lambda: SparseLSSVRCV(param_space={"gamma": GAMMAS}, alphas=ALPHAS, cv="loo", basis="random",
                                          n_basis=N_BASIS, random_state=0).fit(X, y))
    rows.append(("ours: SparseLSSVRCV, LOO", t, ours.gamma_, ours.alpha_, test_mse(ours.predict(Xt)), "measured"))
    t10, ours10 = timed(lambda: SparseLSSVRCV(param_space={"gamma": GAMMAS}, alphas=ALPHAS, cv=10, basis="random",
                                              n_basis=N_BASIS, random_state=0).fit(X, y))
    rows.append(("ours: SparseLSSVRCV, 10-fold, basis removal", t10, ours10.gamma_, ours10.alpha_,
                 test_mse(ours10.predict(Xt)), "measured"))

    kw = args.krr_widths
    folds = KFold(10, shuffle=True, random_state=0)
    krr = GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": GAMMAS[:kw], "alpha": ALPHAS}, cv=folds,
                       scoring="neg_mean_squared_error")
    t, _ = timed(lambda: krr.fit(X, y - ymean))
    note = "measured" if kw == GAMMAS.size else f"{kw} of {GAMMAS.size} widths timed, scaled"
    rows.append(("GridSearchCV(KernelRidge), 10-fold", t * GAMMAS.size / kw, krr.best_params_["gamma"],
                 krr.best_params_["alpha"], test_mse(krr.predict(Xt) + ymean), note))

    pipe = make_pipeline(Nystroem(n_components=N_BASIS, random_state=0), RidgeCV(alphas=ALPHAS))
    nys = GridSearchCV(pipe, {"nystroem__gamma": GAMMAS}, cv=folds, scoring="neg_mean_squared_error")
    t, _ = timed(lambda: nys.fit(X, y))
    rows.append(("GridSearchCV(Nystroem + RidgeCV), 10-fold", t, nys.best_params_["nystroem__gamma"],
                 float(nys.best_estimator_[-1].alpha_), test_mse(nys.predict(Xt)), "measured"))

    blas = ", ".join(f"{i['internal_api']} {i.get('version', '')} ({i['num_threads']} threads)"
                     for i in threadpool_info() if i["user_api"] == "blas")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; BLAS {blas}; "
          f"DGEMM {gemm_rate(2000, 1000):.1f} GFLOP/s")
    print(f"m = {M}, test {M_TEST}, d = {D}, n = {N_BASIS}; {GAMMAS.size} widths x {ALPHAS.size} alphas\n")
    base = rows[0][1]
    print("| method | time (s) | ours (LOO) faster by | gamma | alpha | test MSE | timing |")
    print("|---|---|---|---|---|---|---|")
    for name, t, g, a, mse, note in rows:
        print(f"| {name} | {t:.2f} | {t / base:.1f}x | {g:.4g} | {a:.3g} | {mse:.4f} | {note} |")


if __name__ == "__main__":
    main()
