"""
Nyström LS-SVM classification
=============================

:class:`~lssvm.NystromLSSVC` on Ripley's data, with 50 sampled columns and
rank 25; the exact LOO error rate of the approximate model for a path of
alphas, and its test error.
"""

import numpy as np

from lssvm import NystromLSSVC
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = NystromLSSVC(kernel="rbf", gamma=4.0, alpha=0.1, n_basis=50, rank=25,
                   predictor="low-rank", random_state=0).fit(X, y)
alphas = np.geomspace(1e-3, 1e1, 9)
loo = clf.cv_error("loo", alphas, scoring="error_rate")
for a, e in zip(alphas, loo, strict=True):
    print(f"alpha {a:8.3g}  LOO error {e:.3f}")
print(f"test error at alpha 0.1: {np.mean(clf.predict(X_test) != y_test):.3f}")
