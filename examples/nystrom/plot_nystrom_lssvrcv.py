"""
Approximate model selection with a Nyström LS-SVM
=================================================

:class:`~lssvm.NystromLSSVRCV` on the Boston housing data inside a
scikit-learn ``Pipeline``: a grid over the RBF width, the alpha path scored
by exact 5-fold CV of the Nyström model, then a refit; the pipeline is evaluated
by an outer 3-fold ``cross_val_score``.
"""

import numpy as np
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lssvm import NystromLSSVRCV
from lssvm.datasets import load_boston

X, y = load_boston(return_X_y=True)

pipe = make_pipeline(
    StandardScaler(),
    NystromLSSVRCV(kernel="rbf", gamma=0.1, n_basis=100, rank=50, predictor="low-rank",
                   cv=5, param_space={"gamma": [0.003, 0.01, 0.03, 0.1, 0.3]},
                   alphas=np.logspace(-6, 1, 8), random_state=0),
)
scores = cross_val_score(pipe, X, y, cv=KFold(3, shuffle=True, random_state=0))
print(f"outer 3-fold R^2: {scores.mean():.3f} +- {scores.std():.3f}")
