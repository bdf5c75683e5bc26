"""
Tuning a sparse LS-SVM by exact cross-validation
================================================

:class:`~lssvm.SparseLSSVRCV` on the Boston housing data: a grid over the
RBF width, with every alpha of a 21-value path scored at each width by
exact 5-fold cross-validation, then a refit of the best model.
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import SparseLSSVRCV
from lssvm.datasets import load_boston

X, y = load_boston(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)

gammas = np.geomspace(0.005, 0.5, 7)
search = SparseLSSVRCV(
    kernel="rbf", gamma=0.1, basis="random", n_basis=150, cv=5, search="grid",
    param_space={"gamma": gammas}, alphas=np.logspace(-5, 1, 13), random_state=0,
).fit(X, y)
print("best", search.best_params_, f"5-fold MSE {-search.best_score_:.2f}")

# %%
# ``cv_results_`` has one row per (gamma, alpha): here a 7 x 13 grid.
res = search.cv_results_
mse = -np.asarray(res["mean_test_score"]).reshape(len(gammas), -1)
fig, ax = plt.subplots(figsize=(6, 4))
im = ax.imshow(np.log10(mse), aspect="auto", origin="lower", cmap="viridis")
ax.set(xlabel="alpha index (1e-5 ... 10)", ylabel="gamma index (0.005 ... 0.5)",
       title="log10 5-fold CV MSE")
fig.colorbar(im)
plt.show()
