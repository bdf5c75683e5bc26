"""Paper 002 Figs. 7-8 on Ripley's synthetic data (bundled: 250 training,
1,000 test points; inputs standardised on the training set).

Fig. 7: classic fixed-size LS-SVM (``solver="direct"``) on M k-center
prototypes, M = 1..30, at tuned hyper-parameters: the 10-fold CV
misclassification rate of each fold as a box per M.  The paper saw little
gain beyond about 11 prototypes.

Fig. 8: SCDP-FSLSSVM with every training point as a candidate prototype,
(gamma, alpha) tuned by 10-fold CV PRESS (grid + Nelder-Mead), model size by
the 0.1-std rule: the decision boundary with the chosen prototypes circled.

Run:  python benchmarks/paper002_ripley.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fs_tuning import FixedSizeTuner  # noqa: E402

from lssvm import FixedSizeLSSVC  # noqa: E402
from lssvm.basis import kcenter  # noqa: E402
from lssvm.datasets import load_ripley  # noqa: E402
from lssvm.kernels import RBF  # noqa: E402
from lssvm.solvers.fixed_size import FixedSizeSystem, augmented_rows, solve_spd  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def main():
    OUT.mkdir(exist_ok=True)
    Xtr, ytr = load_ripley(subset="train", return_X_y=True)
    Xte, yte = load_ripley(subset="test", return_X_y=True)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    y = np.where(ytr == 1, 1.0, -1.0)
    yt = np.where(yte == 1, 1.0, -1.0)
    N = Xtr.shape[0]
    folds = [t for _, t in StratifiedKFold(10, shuffle=True, random_state=0).split(Xtr, y)]
    tuner = FixedSizeTuner(Xtr, y, np.arange(N), folds, seed=0)
    score, (lg, la) = tuner.search(np.arange(-5.0, 3.1, 1.0), np.arange(-14.0, 4.1, 2.0), maxfev=20)
    g, a = 2.0**lg, 2.0**la
    print(f"tuned: gamma = 2^{lg:.2f} (sigma^2 = {1 / g:.3g}), alpha = 2^{la:.2f} "
          f"(paper's gamma = {1 / a:.3g}), CV MSE {score:.4f}")

    clf = FixedSizeLSSVC(gamma=g, alpha=a, basis="all", cv=[(np.setdiff1d(np.arange(N), t), t) for t in folds],
                         random_state=0).fit(Xtr, y)
    err = np.mean(clf.predict(Xte) != yt)
    print(f"Fig. 8: SCDP-FSLSSVM uses {clf.n_support_} prototypes; test error {100 * err:.1f} % "
          "(Bayes rate about 8 %)")
    gx, gy = np.meshgrid(np.linspace(-2.5, 2.5, 200), np.linspace(-2.8, 2.5, 200))
    F = clf.decision_function(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.scatter(*Xtr[y > 0].T, s=8, marker="+", c="C1", label="class 1")
    ax.scatter(*Xtr[y < 0].T, s=8, marker="x", c="C0", label="class 0")
    ax.contour(gx, gy, F, levels=[0.0], colors="k", linewidths=1)
    ax.scatter(*clf.support_vectors_.T, s=80, facecolors="none", edgecolors="r", label="selected prototypes")
    ax.set(title=f"SCDP-FSLSSVM on Ripley: {clf.n_support_} prototypes, test error {100 * err:.1f} %")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "paper002_fig8_ripley.png", dpi=120)

    sizes = np.arange(1, 31)
    rates = np.zeros((sizes.size, len(folds)))
    for i, M in enumerate(sizes):
        pool = kcenter(Xtr, M, random_state=0)
        K = RBF(g)(Xtr, Xtr[pool])
        system = FixedSizeSystem.from_kernel(K, K[pool], y[:, None])
        for f, test in enumerate(folds):
            sub = system.without_rows(K[test], y[test, None])
            w = solve_spd(sub.matrix(a), sub.rhs)
            rates[i, f] = np.mean(np.sign(augmented_rows(K[test]) @ w[:, 0]) != y[test])
    print("Fig. 7: 10-fold CV misclassification (%) of FS-LSSVM with M k-center prototypes")
    print("| M | mean | median | min | max |\n|---|---|---|---|---|")
    for M, r in zip(sizes, rates, strict=True):
        print(f"| {M} | {100 * r.mean():.1f} | {100 * np.median(r):.1f} | {100 * r.min():.1f} | {100 * r.max():.1f} |")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.boxplot(100 * rates.T, positions=sizes)
    ax.set(xlabel="number of prototypes M (k-center)", ylabel="10-fold CV error %", title="Paper 002 Fig. 7 (Ripley)")
    fig.tight_layout()
    fig.savefig(OUT / "paper002_fig7_ripley.png", dpi=120)


if __name__ == "__main__":
    main()
