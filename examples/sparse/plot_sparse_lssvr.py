"""
Sparse LS-SVM regression and its exact leave-one-out path
==========================================================

:class:`~lssvm.SparseLSSVR` on the motorcycle data (133 rows, one input).
A basis of 30 points is chosen by feature-vector selection; after one
``fit`` the exact leave-one-out error for 30 regularisation values costs
one matrix product each, and picks ``alpha``.
"""

import matplotlib.pyplot as plt
import numpy as np

from lssvm import SparseLSSVR
from lssvm.datasets import load_motorcycle

X, y = load_motorcycle(return_X_y=True)
X = (X - X.mean()) / X.std()

model = SparseLSSVR(kernel="rbf", gamma=13.0, alpha=1.0, basis="fvs", n_basis=30).fit(X, y)

# %%
# Exact LOO mean squared error for a whole path of alphas, without retraining.
alphas = np.geomspace(1e-5, 1e2, 30)
loo_mse = model.press(alphas) / len(y)
best = alphas[np.argmin(loo_mse)]
print(f"{model.n_basis_} basis points; best alpha {best:.3g}, LOO MSE {loo_mse.min():.1f}")

# %%
# Refit at the chosen alpha and plot the fit with the basis points.
model.set_params(alpha=best).fit(X, y)
grid = np.linspace(X.min(), X.max(), 300)[:, None]
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
ax0.semilogx(alphas, loo_mse)
ax0.axvline(best, color="k", ls=":")
ax0.set(xlabel="alpha", ylabel="exact LOO MSE", title="Regularisation path")
ax1.scatter(X, y, s=8, color="0.6", label="data")
ax1.plot(grid, model.predict(grid), label="fit")
ax1.plot(model.basis_vectors_, model.predict(model.basis_vectors_), "o", mfc="none", label="basis")
ax1.set(xlabel="time (standardised)", ylabel="acceleration", title="Fit")
ax1.legend()
fig.tight_layout()
plt.show()
