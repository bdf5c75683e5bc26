"""Coefficients with one alpha per target: one product with the generalised eigenvectors ``Q = W V``
(no pass of every target back through the whitener), equal to one fit per target at its alpha."""

from __future__ import annotations

import numpy as np
import pytest

from lssvm import SparseLSSVR
from lssvm.solvers.sparse_rls import PathSolution


@pytest.mark.parametrize("basis", ["pchol", "rows"])
def test_per_target_coefficients_equal_one_fit_per_target(basis, monkeypatch):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v = 160, 23
    X = rng.normal(size=(m, 3))
    Y = np.sin(X @ rng.normal(size=(3, v))) + 1.0 + np.geomspace(0.01, 2.0, v) * rng.normal(size=(m, v))
    alphas = 10.0 ** rng.uniform(-5, 2, v)
    rows = rng.choice(m, 30, replace=False)
    kw = {"gamma": 0.4, "basis": rows} if basis == "rows" else {"gamma": 0.4, "basis": "pchol", "n_basis": 30,
                                                               "random_state": 0}
    widths = []
    original = PathSolution.whiten_back
    monkeypatch.setattr(PathSolution, "whiten_back", lambda self, B: widths.append(B.shape[1]) or original(self, B))
    est = SparseLSSVR(alpha=alphas, **kw).fit(X, Y)
    assert v not in widths, f"seed {seed}: the targets were taken back through the whitener"
    monkeypatch.setattr(PathSolution, "whiten_back", original)
    Xq = rng.normal(size=(40, 3))
    F = est.predict(Xq)
    for t in range(v):
        one = SparseLSSVR(alpha=alphas[t], **kw).fit(X, Y[:, t])
        np.testing.assert_allclose(est.dual_coef_[:, t], one.dual_coef_, rtol=1e-8,
                                   atol=1e-10 * np.abs(one.dual_coef_).max(), err_msg=f"seed {seed}, target {t}")
        np.testing.assert_allclose(F[:, t], one.predict(Xq), rtol=1e-9, atol=1e-11, err_msg=f"seed {seed}, target {t}")
