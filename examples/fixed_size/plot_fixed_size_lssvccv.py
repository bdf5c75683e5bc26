"""
Tuning a fixed-size LS-SVM classifier with coupled simulated annealing
======================================================================

:class:`~lssvm.FixedSizeLSSVCCV` on Ripley's data with ``search="csa"``:
coupled simulated annealing, then Nelder-Mead, over log2 of the RBF width,
as in LS-SVMlab.
"""

import numpy as np

from lssvm import FixedSizeLSSVCCV
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = FixedSizeLSSVCCV(
    kernel="rbf", gamma=1.0, basis="kcenter", n_basis=50, cv=5, search="csa",
    param_space={"gamma": (0.5, 32.0)}, max_evaluations=8, alphas=np.logspace(-3, 1, 5),
    random_state=0,
).fit(X, y)
print("best", clf.best_params_, f"CV error {1 - clf.best_score_:.3f}")
print(f"test error {np.mean(clf.predict(X_test) != y_test):.3f}, "
      f"{clf.best_estimator_.n_support_} prototypes")
