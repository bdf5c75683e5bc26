"""
Nyström LS-SVM regression: how close to the full LS-SVM?
========================================================

:class:`~lssvm.NystromLSSVR` on the Boston housing data: the LS-SVM on a
rank-k Nyström kernel built from c sampled columns.  Its exact LOO error
over a path of alphas costs one solve.  With more columns it approaches the
full LS-SVM (here the sparse model with every row in the basis).
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import NystromLSSVR, SparseLSSVR
from lssvm.datasets import load_boston

X, y = load_boston(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)

alphas = np.geomspace(1e-3, 1e2, 11)
full = SparseLSSVR(kernel="rbf", gamma=0.1, alpha=1.0, basis=np.arange(len(X))).fit(X, y)
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogx(alphas, full.press(alphas) / len(y), "k--", label="full LS-SVM")
for c in (25, 50, 100):
    model = NystromLSSVR(kernel="rbf", gamma=0.1, alpha=1.0, n_basis=c, rank=c // 2,
                         predictor="low-rank", random_state=0).fit(X, y)
    ax.semilogx(alphas, model.cv_error("loo", alphas), label=f"c = {c}, k = {c // 2}")
    gap = np.sqrt(np.mean((model.predict(X) - full.predict(X)) ** 2))
    print(f"c = {c:3d}: RMS difference from the full LS-SVM at alpha = 1: {gap:.3f}")
ax.set(xlabel="alpha", ylabel="exact LOO MSE", title="More columns, closer to the full LS-SVM")
ax.legend()
plt.show()
