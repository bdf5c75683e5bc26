"""
Tuning a fixed-size LS-SVM regressor
====================================

:class:`~lssvm.FixedSizeLSSVRCV` on the motorcycle data: a grid over the
RBF width, every alpha of the path scored by the fast v-fold CV at the
model size its rule picks, then a refit.
"""

import numpy as np

from lssvm import FixedSizeLSSVRCV
from lssvm.datasets import load_motorcycle

X, y = load_motorcycle(return_X_y=True)
X = (X - X.mean()) / X.std()

search = FixedSizeLSSVRCV(
    kernel="rbf", gamma=1.0, basis="kcenter", n_basis=40, cv=5, search="grid",
    param_space={"gamma": [0.5, 2.0, 8.0, 32.0]}, alphas=np.logspace(-4, 1, 6), random_state=0,
).fit(X, y)
print("best", search.best_params_, f"5-fold MSE {-search.best_score_:.1f}")
print(f"refitted model: {search.best_estimator_.n_support_} prototypes")
