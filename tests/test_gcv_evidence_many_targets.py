"""The sparse criterion's GCV and evidence columns for many targets in batches: the centred
targets' sums of squares are read once for both criteria and every batch, and the columns equal
the per-target GCV and log evidence computed from the dense centred targets."""

from __future__ import annotations

import numpy as np
import pytest

from lssvm import SparseLSSVR
from lssvm.selection import sparse_cv
from lssvm.solvers.sparse_rls import SparseRLSFactorization, target_batches


@pytest.mark.parametrize("batch_targets", [7, 1000])  # several batches of targets, and one
def test_gcv_evidence_read_sums_of_squares_once(batch_targets, monkeypatch):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v = 150, 40
    X = rng.normal(size=(m, 3))
    Y = np.sin(X @ rng.normal(size=(3, v))) + 2.0 + np.geomspace(0.01, 3.0, v) * rng.normal(size=(m, v))
    fac = SparseLSSVR(gamma=0.5, basis=rng.choice(m, 20, replace=False)).fit(X, Y).factorization_
    alphas = np.geomspace(1e-4, 1e2, 8)
    # brute force: the criteria per target from the dense centred targets (m x v)
    lam, z2 = fac.eigenvalues[:, None], fac.z**2
    shift = lam + alphas[None, :]
    yy = (fac.y_centered**2).sum(axis=0)
    sse = np.maximum(yy - 2.0 * (1.0 / shift).T @ z2 + (lam / shift**2).T @ z2, 0.0)
    tr = 1.0 + (lam / shift).sum(axis=0)
    gcv = ((sse / m) / ((1.0 - tr / m) ** 2)[:, None]).mean(axis=1)
    S = np.maximum(yy - (1.0 / shift).T @ z2, 0.0)
    logdet = np.log(shift).sum(axis=0) - lam.size * np.log(alphas)
    evidence = (-0.5 * ((m - 1) * np.log(2 * np.pi) + np.log(m) + logdet[:, None]
                        - (m - 1) * np.log((m - 1.0) / S) + (m - 1.0))).sum(axis=1)

    reads = []
    original = SparseRLSFactorization.centred_sum_squares
    monkeypatch.setattr(SparseRLSFactorization, "centred_sum_squares",
                        lambda self: reads.append(self.y.shape[1]) or original(self))
    monkeypatch.setattr(sparse_cv, "target_batches", lambda rows, n: target_batches(rows, n, 8 * rows * batch_targets))
    out = sparse_cv._gcv_and_evidence(fac, alphas)
    np.testing.assert_allclose(out["gcv"], gcv, rtol=1e-10, err_msg=f"seed {seed}")
    np.testing.assert_allclose(out["evidence"], evidence, rtol=1e-10, err_msg=f"seed {seed}")
    assert reads == [v], f"seed {seed}: sums of squares read for {reads} targets"
