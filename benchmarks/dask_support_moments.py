"""Where the fixed-size model's engine on Dask gets its training moments.

At its support S the fixed-size model is the sparse model on the prototypes
Z[S] (the documentation's Mathematics page, §4, §6).  Its Dask engine needs
the centred moments of the whitened kernel rows ``(k(x, Z[S]) - shift) W``.
Two routes:

* "gram": the pool's Gram sums (already summed for SCDP) restricted to S,
  centred and whitened afterwards: no pass over the rows;
* "pass": one pass that whitens each row before summing (what the engine
  does, at its first use).

Both are compared with the in-memory sparse factorisation on the same
support (coefficients over three alphas, relative to their largest), for
RBF widths that make ``K_SS`` from well to badly conditioned.  Run:
``PYTHONPATH=src python benchmarks/dask_support_moments.py``.
"""

import numpy as np

from lssvm.kernels import make_kernel
from lssvm.solvers import factorize_sparse_rls
from lssvm.solvers.fixed_size import GramSums
from lssvm.solvers.row_blocks import BlockContext, RowMoments, solution_from_moments, whitened_rows

BLOCK = 64


def from_gram(sums, sel, ctx):
    """The path solution from the pool's sums restricted to columns ``sel``."""
    m, G = sums.n_samples, sums.gram
    s = np.append(sel, G.shape[0] - 1)  # the support and the ones column
    g, rhs = G[np.ix_(s, s)], sums.rhs[s]
    k_sum = g[:-1, -1]
    k_mean, y_mean = k_sum / m, rhs[-1] / m
    W = ctx.W
    mom = RowMoments(m, (k_mean - ctx.shift) @ W, k_mean, y_mean,
                     W.T @ (g[:-1, :-1] - np.outer(k_sum, k_mean)) @ W, W.T @ (rhs[:-1] - np.outer(k_sum, y_mean)))
    return solution_from_moments(mom, ctx)


def from_pass(X, Y, ctx):
    """The path solution from moments of whitened rows, block by block."""
    total = None
    for lo in range(0, X.shape[0], BLOCK):
        k_mean, psi = whitened_rows(X[lo : lo + BLOCK], ctx)
        mom = RowMoments.of_rows(psi, k_mean, Y[lo : lo + BLOCK])
        total = mom if total is None else total + mom
    return solution_from_moments(total, ctx)


def main(m=3000, pool=120, support=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    Y = (np.sin(X[:, 0]) + 0.1 * rng.normal(size=m))[:, None]
    alphas = (1e-4, 1e-2, 1.0)
    print(f"m = {m}, pool {pool}, support {support}; relative error of the coefficients against memory")
    print(f"{'gamma':>6} {'cond(K_SS)':>11} {'gram':>9} {'pass':>9}")
    for gamma in (2.0, 0.5, 0.1, 0.03):
        kern = make_kernel("rbf", gamma=gamma)
        Zp = X[rng.choice(m, pool, replace=False)]
        K = kern(X, Zp)
        sums = None
        for lo in range(0, m, BLOCK):
            part = GramSums.of_rows(K[lo : lo + BLOCK], Y[lo : lo + BLOCK])
            sums = part if sums is None else sums + part
        sel = np.sort(rng.choice(pool, support, replace=False))
        Zs = Zp[sel]
        ctx = BlockContext.of_basis(Zs, kern)
        ref = factorize_sparse_rls(kern(X, Zs), kern(Zs, Zs), Y, warn=False)
        want = np.stack([ref.coef(a)[0] for a in alphas])

        def err(sol, want=want):
            return np.abs(np.stack([sol.coef(a)[0] for a in alphas]) - want).max() / np.abs(want).max()

        cond = np.linalg.cond(kern(Zs, Zs))
        print(f"{gamma:6.2f} {cond:11.1e} {err(from_gram(sums, sel, ctx)):9.1e} {err(from_pass(X, Y, ctx)):9.1e}")


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # the widest kernel's K_SS is numerically singular: said by the table
    main()
