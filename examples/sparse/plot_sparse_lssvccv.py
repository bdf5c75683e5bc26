"""
Tuning a sparse LS-SVM classifier with Nelder-Mead
==================================================

:class:`~lssvm.SparseLSSVCCV` on Ripley's data: Nelder-Mead over log2 of
the RBF width, the alpha path scored by exact leave-one-out at each point.
"""

import numpy as np

from lssvm import SparseLSSVCCV
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = SparseLSSVCCV(
    kernel="rbf", gamma=1.0, basis="fvs", n_basis=40, cv="loo", search="nelder-mead",
    param_space={"gamma": (0.25, 64.0)}, max_evaluations=15, random_state=0,
).fit(X, y)
print("best", clf.best_params_)
print(f"LOO error {1 - clf.best_score_:.3f} after {clf.n_evaluations_} evaluations")
print(f"test error {np.mean(clf.predict(X_test) != y_test):.3f}")
