"""``predict_interval`` runs inside the estimator's thread scope, as ``fit``
does: its BLAS products use the call's thread plan (``n_jobs``, the cores
other work leaves free), not the library default, whose threads on small
per-group products of a loaded machine took 2.5-6 times the fit."""

import numpy as np
import pytest

import lssvm._threads as threads
import lssvm.cv.conformal.full as full_module
import lssvm.cv.conformal.jackknife as jackknife_module
from lssvm import NystromLSSVR, SparseLSSVR


@pytest.mark.parametrize("method, module", [("jackknife+", jackknife_module), ("full", full_module)])
@pytest.mark.parametrize("make", [
    lambda: SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=20, random_state=0),
    lambda: NystromLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=20, random_state=0, n_jobs=1),
])
def test_predict_interval_runs_in_a_thread_scope(rng, monkeypatch, method, module, make):
    X = rng.standard_normal((200, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(200)
    est = make().fit(X, y)
    plans = []
    real = module.screened_kth

    def spy(*args, **kwargs):
        plans.append(threads._active.get())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "screened_kth", spy)
    out = est.predict_interval(rng.standard_normal((30, 3)), 0.9, method=method)
    assert out.shape == (30, 2)
    assert plans and all(plan is not None for plan in plans)
    if est.get_params().get("n_jobs") == 1:
        assert all(plan.threads == 1 for plan in plans)
    assert threads._active.get() is None  # the scope ends with the call
