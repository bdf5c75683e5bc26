"""Paper 001 §6.4 (Fig. 8): cross-validation on strongly grouped data, and the
three treatments of held-out basis vectors.

The paper's parse-ranking data (501 sentences x ~5 parses, sparse features,
linear kernel) is not public.  This script builds data with the same
structure:

* G training groups ("sentences") of 3-7 rows ("parses"); a separate test
  set of fresh groups with 20 rows each;
* sparse bag-of-features rows over a vocabulary of 20 000 features drawn
  with Zipf-like frequencies (common features recur across groups): every
  row of a group shares the group's 40 "sentence" features (counts 1-3) and
  adds 6 features of its own, so rows of one group are near-duplicates
  under the linear kernel (printed: within-group and between-group cosine);
* targets ``y = <w_row, own features> + <w_group, shared features> + noise``:
  part of the score is shared by a group, part is specific to a row, as a
  parse's correctness depends both on the sentence and on the parse.

As in the paper: one random row per group is a basis vector (n = G), CV
holds out one group at a time (LeaveOneGroupOut), lambda from 2^-5 to 2^14,
ordinary and normalised linear kernels.  For each lambda we compare the CV
MSE of the three treatments -- "remove" (the held-out basis vector leaves the
basis: paper approach 1), "train" (it stays, and its loss stays in training:
approach 2), "keep" (it stays a basis function, its loss goes: approach 3) --
with the MSE of the model trained on all data on the separate test set.

Run:  python benchmarks/paper001_groups.py [--groups 500]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.model_selection import LeaveOneGroupOut  # noqa: E402

from lssvm import SparseLSSVR  # noqa: E402

VOCAB = 20_000
SHARED, OWN = 40, 6


#: Zipf-like feature frequencies: common features recur across groups, so
#: what is learned on some groups carries over to others.
FREQ = 1.0 / (np.arange(VOCAB) + 20.0)
FREQ /= FREQ.sum()


def make_groups(rng, n_groups, rows_per_group, w_shared, w_own, noise=0.5):
    """Sparse grouped data: returns X (CSR), y, group labels."""
    rows, cols, vals, y, groups = [], [], [], [], []
    r = 0
    for g in range(n_groups):
        k = rows_per_group(rng)
        shared = rng.choice(VOCAB, SHARED, replace=False, p=FREQ)
        shared_counts = rng.integers(1, 4, SHARED)
        group_score = w_shared[shared] @ shared_counts
        for _ in range(k):
            own = rng.choice(VOCAB, OWN, replace=False, p=FREQ)
            cidx = np.concatenate([shared, own])
            cval = np.concatenate([shared_counts, np.ones(OWN)])
            rows.extend([r] * cidx.size)
            cols.extend(cidx)
            vals.extend(cval)
            y.append(group_score + w_own[own].sum() + noise * rng.standard_normal())
            groups.append(g)
            r += 1
    X = sp.csr_matrix((vals, (rows, cols)), shape=(r, VOCAB), dtype=float)
    X.sum_duplicates()
    return X, np.asarray(y), np.asarray(groups)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=500)
    ap.add_argument("--test-groups", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(args.seed)
    w_shared = rng.standard_normal(VOCAB) * 0.3
    w_own = rng.standard_normal(VOCAB)
    X, y, groups = make_groups(rng, args.groups, lambda r: int(r.integers(3, 8)), w_shared, w_own)
    Xt, yt, _ = make_groups(rng, args.test_groups, lambda r: 20, w_shared, w_own)
    # one random basis row per group (paper 001: better than a uniform draw)
    basis_rows = np.array([rng.choice(np.flatnonzero(groups == g)) for g in range(args.groups)])
    alphas = 2.0 ** np.arange(-5, 15)

    def cosine(A, B):
        K = (A @ B.T).toarray()
        return K / np.sqrt(np.outer(A.multiply(A).sum(1), B.multiply(B).sum(1)))

    C = cosine(X[:200], X[:200])
    same = groups[:200, None] == groups[None, :200]
    print(f"data: {X.shape[0]} training rows in {args.groups} groups, {Xt.shape[0]} test rows; "
          f"{X.shape[1]} sparse features, {X.nnz / X.shape[0]:.0f} non-zeros per row")
    print(f"cosine similarity within groups {C[same & ~np.eye(200, dtype=bool)].mean():.2f}, "
          f"between groups {C[~same].mean():.3f}")

    rows = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
    for ax, normalize in zip(axes, (False, True), strict=True):
        est = SparseLSSVR(kernel="linear", normalize_kernel=normalize, alpha=1.0, basis=basis_rows).fit(X, y)
        t0 = time.perf_counter()
        cv = {mode: est.cv_error(LeaveOneGroupOut(), alpha=alphas, groups=groups, basis_in_holdout=mode)
              for mode in ("remove", "train", "keep")}
        t_cv = time.perf_counter() - t0
        test = _test_mse(est, Xt, yt, alphas)
        kind = "normalised linear" if normalize else "linear"
        for i, a in enumerate(alphas):
            rows.append({"kernel": kind, "lambda": a, "test": test[i], **{m: cv[m][i] for m in cv}})
        ax.loglog(alphas, test, "k-", lw=2, label="separate test set")
        ax.loglog(alphas, cv["remove"], "g-o", ms=4, label="remove (approach 1)")
        ax.loglog(alphas, cv["train"], "b-s", ms=4, label="train (approach 2)")
        ax.loglog(alphas, cv["keep"], "r-^", ms=4, label="keep (approach 3)")
        ax.set_xlabel("lambda (alpha)")
        ax.set_ylabel("MSE")
        ax.set_title(f"{kind} kernel")
        ax.legend(fontsize=8)
        print(f"{kind}: leave-one-group-out CV, 3 treatments x {alphas.size} lambdas: {t_cv:.2f} s")
    fig.suptitle("Paper 001 Fig. 8: grouped CV with held-out basis vectors (synthetic grouped data)")
    fig.tight_layout()
    fig.savefig(args.out / "paper001_fig8_groups.png", dpi=120)
    table = pd.DataFrame(rows)
    for kind, sub in table.groupby("kernel", sort=False):
        sub = sub.assign(**{f"{m}/test": sub[m] / sub["test"] for m in ("remove", "train", "keep")})
        print(f"\n{kind} kernel (CV MSE / test MSE per lambda):")
        print(sub[["lambda", "test", "remove", "train", "keep", "remove/test", "train/test", "keep/test"]]
              .to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"figure written to {args.out}/paper001_fig8_groups.png")
    return table


def _test_mse(est, Xt, yt, alphas):
    """Test MSE of the model trained on all rows, for every alpha (one factorisation)."""
    fac = est.factorization_
    A, b = fac.coef(alphas)
    K = est.kernel_(Xt, est.basis_vectors_)
    pred = np.einsum("tn,anv->atv", K, A) + b[:, None, :]
    return ((pred[..., 0] - yt[None]) ** 2).mean(axis=1)


if __name__ == "__main__":
    main()
