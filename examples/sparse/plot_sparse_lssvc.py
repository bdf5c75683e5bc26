"""
Sparse LS-SVM classification: LOO and k-fold error for free
===========================================================

:class:`~lssvm.SparseLSSVC` on Ripley's two-class data.  The exact
leave-one-out error rate and the exact 10-fold error rate for a path of
alphas come from the single training factorisation; the test error on
Ripley's 1000 test points is shown for comparison.
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import SparseLSSVC
from lssvm.datasets import load_ripley

X, y = load_ripley(return_X_y=True)
X_test, y_test = load_ripley(subset="test", return_X_y=True)

clf = SparseLSSVC(kernel="rbf", gamma=4.0, alpha=0.1, basis="fvs", n_basis=40).fit(X, y)

alphas = np.geomspace(1e-4, 1e2, 13)
loo = clf.loo_error_rate(alphas)
kfold = clf.cv_error(10, alphas)          # held-out basis points removed from the basis
test = [np.mean(clf.set_params(alpha=a).fit(X, y).predict(X_test) != y_test) for a in alphas]
print(f"{clf.n_basis_} basis points; best LOO error {loo.min():.3f}")

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
ax0.semilogx(alphas, loo, label="exact LOO")
ax0.semilogx(alphas, kfold, label="exact 10-fold")
ax0.semilogx(alphas, test, "--", label="test set")
ax0.set(xlabel="alpha", ylabel="error rate", title="Error over the regularisation path")
ax0.legend()

clf.set_params(alpha=alphas[np.argmin(loo)]).fit(X, y)
xx, yy = np.meshgrid(np.linspace(-1.3, 1.1, 150), np.linspace(-0.3, 1.1, 150))
zz = clf.decision_function(np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)
ax1.contour(xx, yy, zz, levels=[0], colors="k")
ax1.scatter(X[:, 0], X[:, 1], c=y, s=10, cmap="coolwarm")
ax1.plot(*clf.basis_vectors_.T, "o", mfc="none", color="k", ms=8, label="basis")
ax1.set(title="Decision boundary")
ax1.legend()
fig.tight_layout()
plt.show()
