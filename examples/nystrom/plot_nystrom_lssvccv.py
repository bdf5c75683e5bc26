"""
Tuning a Nyström LS-SVM classifier by k-fold CV
===============================================

:class:`~lssvm.NystromLSSVCCV` on Ripley's data: a grid over the RBF
width in powers of 2, as in Ding & Liao (2012) (6 widths here), with every
alpha scored by exact 5-fold CV of the Nyström model (50 sampled columns,
rank 25).
"""

import numpy as np

from lssvm import NystromLSSVCCV
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = NystromLSSVCCV(
    kernel="rbf", gamma=1.0, n_basis=50, rank=25, predictor="low-rank", cv=5,
    param_space={"gamma": 2.0 ** np.arange(0, 6)}, alphas=np.logspace(-5, 1, 13),
    random_state=0,
).fit(X, y)
print("best", clf.best_params_, f"5-fold error {1 - clf.best_score_:.3f}")
print(f"test error {np.mean(clf.predict(X_test) != y_test):.3f}")
