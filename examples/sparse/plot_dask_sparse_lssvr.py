"""
Out-of-core training and exact LOO with Dask
============================================

:class:`~lssvm.SparseLSSVR` on a Dask array: training and the exact
leave-one-out path run as passes over row blocks, and agree with the
in-memory model.  Here the Boston data is split into 4 partitions to stand
in for a table too large for memory (``dd.read_parquet("data/*.parquet")``
works the same way).
"""

import dask.dataframe as dd
import numpy as np

from lssvm import SparseLSSVR
from lssvm.datasets import load_boston

frame = load_boston(as_frame=True).frame
df = dd.from_pandas(frame, npartitions=4)
target = "medv"
features = [c for c in df.columns if c != target]

# One ``to_dask_array`` call with known chunk lengths, then split the columns.
Xy = df[features + [target]].to_dask_array(lengths=True)
X, y = Xy[:, :-1], Xy[:, -1]
X = (X - X.mean(axis=0)) / X.std(axis=0)

basis = np.arange(0, len(frame), 5)          # every 5th row as basis (training-row indices)
alphas = np.logspace(-3, 2, 6)
model = SparseLSSVR(kernel="rbf", gamma=0.1, alpha=1e-2, basis=basis).fit(X, y)
loo_dask = model.press(alphas) / len(frame)

# %%
# The same model in memory gives the same numbers.
Xn = frame[features].to_numpy()
Xn = (Xn - Xn.mean(0)) / Xn.std(0)
in_memory = SparseLSSVR(kernel="rbf", gamma=0.1, alpha=1e-2, basis=basis).fit(Xn, frame[target].to_numpy())
loo_numpy = in_memory.press(alphas) / len(frame)
for a, d, n in zip(alphas, loo_dask, loo_numpy, strict=True):
    print(f"alpha {a:8.3g}  LOO MSE Dask {d:8.3f}  NumPy {n:8.3f}")
print("largest relative difference", np.max(np.abs(loo_dask - loo_numpy) / loo_numpy))
