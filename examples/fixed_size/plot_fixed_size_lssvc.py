"""
Fixed-size LS-SVM classification with few prototypes
====================================================

:class:`~lssvm.FixedSizeLSSVC` on Ripley's data, every training row in the
pool: SCDP grows the model and 10-fold CV stops it at a handful of
prototypes.
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import FixedSizeLSSVC
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = FixedSizeLSSVC(kernel="rbf", gamma=2.0, alpha=0.1, basis="all", cv=10, random_state=0).fit(X, y)
print(f"{clf.n_support_} prototypes; test error {np.mean(clf.predict(X_test) != y_test):.3f}")

xx, yy = np.meshgrid(np.linspace(-1.3, 1.1, 150), np.linspace(-0.3, 1.1, 150))
zz = clf.decision_function(np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)
fig, ax = plt.subplots(figsize=(5, 4))
ax.contour(xx, yy, zz, levels=[0], colors="k")
ax.scatter(X[:, 0], X[:, 1], c=y, s=10, cmap="coolwarm")
ax.set(title=f"{clf.n_support_} prototypes")
plt.show()
