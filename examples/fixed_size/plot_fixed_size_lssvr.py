"""
Fixed-size LS-SVM regression: the model size chosen by CV
=========================================================

:class:`~lssvm.FixedSizeLSSVR` on the motorcycle data.  SCDP adds one
prototype per step from a pool of 60 k-center prototypes; fast 10-fold
cross-validation scores every model size, and the model keeps the smallest
size within 0.1 standard deviation of the best.
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import FixedSizeLSSVR
from lssvm.datasets import load_motorcycle

X, y = load_motorcycle(return_X_y=True)
X = (X - X.mean()) / X.std()

model = FixedSizeLSSVR(kernel="rbf", gamma=13.0, alpha=1e-2, basis="kcenter",
                       n_basis=60, cv=10, random_state=0).fit(X, y)
print(f"pool of 60 prototypes, {model.n_support_} used (SCDP steps kept, intercept included: {model.model_size_})")

grid = np.linspace(X.min(), X.max(), 300)[:, None]
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
sizes = np.arange(1, len(model.cv_curve_) + 1)
ax0.plot(sizes, model.cv_curve_)
ax0.axvline(model.model_size_, color="k", ls=":")
ax0.set(xlabel="model size (non-zeros)", ylabel="10-fold CV MSE", title="CV curve of the SCDP path",
        yscale="log")
ax1.scatter(X, y, s=8, color="0.6")
ax1.plot(grid, model.predict(grid))
ax1.set(xlabel="time (standardised)", ylabel="acceleration", title="Fit")
fig.tight_layout()
plt.show()
