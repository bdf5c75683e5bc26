"""One fold of the SVR peer grid at friedman1 m = 5,000 (4,000 training rows), each setting timed."""
import os
import time

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

X, y = make_friedman1(n_samples=7000, noise=1.0, random_state=0)
X, y = X[:5000], y[:5000]
tr, te = next(KFold(5).split(X))
sc = StandardScaler().fit(X[tr]); Xa, Xb = sc.transform(X[tr]), sc.transform(X[te])
for a in np.logspace(-3, 1, 5)[::-1]:
    for g in np.logspace(-3, 1, 5):
        t0, c0 = time.perf_counter(), time.process_time()
        m = SVR(gamma=g, C=1 / a).fit(Xa, y[tr])
        print(f"C={1/a:g} gamma={g:g}: {time.perf_counter()-t0:.2f} s ({time.process_time()-c0:.2f} CPU) "
              f"n_iter {m.n_iter_} SVs {m.support_.size} MSE {np.mean((m.predict(Xb)-y[te])**2):.3f} "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
