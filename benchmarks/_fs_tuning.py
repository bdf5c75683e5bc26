"""Hyper-parameter search for the fixed-size LS-SVM benchmarks (paper 002 §4.4).

For each kernel width the prototype kernel, the full system and the fold
downdates are computed once and shared by every regularisation value
(:func:`lssvm.cv.fixed_size.fixed_size_cv_curves` takes an alpha array);
each (gamma, alpha) is scored by the 10-fold CV mean squared error (PRESS / N)
at the model size the 0.1-std rule picks.  The paper searched with coupled
simulated annealing + Nelder-Mead; here a log grid followed by a Nelder-Mead
refinement (scipy) around its best point.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from lssvm.cv.fixed_size import fixed_size_cv_curves
from lssvm.kernels import RBF
from lssvm.selection.fixed_size import select_model_size
from lssvm.solvers.fixed_size import FixedSizeSystem


class FixedSizeTuner:
    """CV scores of SCDP fixed-size LS-SVMs over (gamma, alpha), cached.

    Parameters
    ----------
    X : (N, d) standardised inputs; y : (N,) labels +1/-1
    pool : (M,) training-row indices of the prototype pool
    folds : list of test-index arrays (a fixed partition, Remark 7)
    rho : SCDPP candidates or None; seed : SCDPP draws
    scoring : "mse" (PRESS / N) or "error_rate", for the score and the size rule
    """

    def __init__(self, X, y, pool, folds, rho=None, seed=0, max_size=None, stop_window=10, stop_tol=1e-4,
                 scoring="mse"):
        self.X, self.Y, self.pool, self.folds = X, y[:, None].astype(float), pool, folds
        self.rho, self.seed = rho, seed
        self.max_size = max_size
        self.stop = (stop_window, stop_tol)
        self.scoring = scoring
        self.cache = {}
        self.n_evals = 0

    def scores(self, log2_gamma, log2_alphas):
        """CV score at the chosen size and that size, per alpha."""
        gamma = 2.0 ** log2_gamma
        K = RBF(gamma)(self.X, self.X[self.pool])
        system = FixedSizeSystem.from_kernel(K, K[self.pool], self.Y)
        kmax = None if self.max_size is None else min(self.max_size, system.n_coef)
        curves = fixed_size_cv_curves(
            system, K, self.Y, self.folds, 2.0 ** np.asarray(log2_alphas), max_size=kmax,
            n_candidates=self.rho, seed=self.seed, stop_window=self.stop[0], stop_tol=self.stop[1],
        )
        mean, std = curves.curve(self.scoring)
        out = []
        for a, la in enumerate(log2_alphas):
            last = int(curves.stopped_at[a].max())
            size = select_model_size(mean[a, 0, :last], std[a, 0, :last])
            score = float(mean[a, 0, size - 1])
            self.cache[(float(log2_gamma), float(la))] = (score, size)
            out.append((score, size))
        self.n_evals += len(log2_alphas)
        return out

    def grid(self, log2_gammas, log2_alphas):
        best = (np.inf, None)
        for lg in log2_gammas:
            for la, (score, _) in zip(log2_alphas, self.scores(lg, log2_alphas), strict=True):
                if score < best[0]:
                    best = (score, (float(lg), float(la)))
        return best

    def refine(self, start, maxfev=20, step=1.0):
        """Nelder-Mead in (log2 gamma, log2 alpha) from ``start``."""

        def f(p):
            key = (float(p[0]), float(p[1]))
            if key not in self.cache:
                self.scores(p[0], [p[1]])
            return self.cache[key][0]

        simplex = np.array([start, [start[0] + step, start[1]], [start[0], start[1] + step]])
        res = minimize(f, np.asarray(start), method="Nelder-Mead",
                       options={"maxfev": maxfev, "initial_simplex": simplex, "xatol": 0.1, "fatol": 1e-4})
        return float(res.fun), (float(res.x[0]), float(res.x[1]))

    def search(self, log2_gammas, log2_alphas, maxfev=20):
        score, start = self.grid(log2_gammas, log2_alphas)
        return self.refine(start, maxfev=maxfev) if maxfev else (score, start)
