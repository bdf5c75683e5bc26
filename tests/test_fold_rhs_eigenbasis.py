"""k-fold error sums of many targets on the eigen route in one batch of targets: each fold's
right-hand side goes straight into the eigenbasis of its normal matrix (no reflector pass over the
targets, each fold's target rows read once), and the sums equal explicit refits on each fold."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import KFold
from test_kfold_sums_many_targets import _refit_sse  # the explicit refit of one fold

from lssvm import SparseLSSVR
from lssvm.cv import holdout as holdout_paths
from lssvm.solvers import shifted_band


@pytest.fixture
def counted(monkeypatch):
    """Reflector passes over arrays with one column per target, and reads of target rows."""
    calls = {"reflector_on_targets": 0, "target_rows": 0, "v": None}
    apply, rows_get, held_get = (shifted_band.BlockReflector.apply, holdout_paths.TargetRows.__getitem__,
                                 holdout_paths.HeldTargetRows.__getitem__)

    def counting_apply(self, X, transpose=False):
        calls["reflector_on_targets"] += X.shape[1] == calls["v"]
        return apply(self, X, transpose)

    def counting_rows(get):
        def read(self, rows):
            calls["target_rows"] += 1
            return get(self, rows)
        return read

    monkeypatch.setattr(shifted_band.BlockReflector, "apply", counting_apply)
    monkeypatch.setattr(holdout_paths.TargetRows, "__getitem__", counting_rows(rows_get))
    monkeypatch.setattr(holdout_paths.HeldTargetRows, "__getitem__", counting_rows(held_get))
    return calls


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_first_batch_rhs_in_eigenbasis_equals_explicit_refits(mode, counted):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    m, v, d = 240, 37, 3
    X = rng.normal(size=(m, d))
    noise = rng.permutation(np.geomspace(0.02, 3.0, v))
    Y = np.sin(X @ rng.normal(size=(d, v))) + 1.5 + noise * rng.normal(size=(m, v))
    basis_rows = rng.choice(m, 25, replace=False)
    gamma, alphas = 0.5, np.geomspace(1e-4, 1e2, 9)  # alphas x targets far above 4 x rank: the eigen route
    est = SparseLSSVR(gamma=gamma, basis=basis_rows, n_jobs=1).fit(X, Y)
    engine = est._fitted_engine()
    engine.n_targets_batch = v  # one batch: every fold's first (and only) batch
    folds = [test for _, test in KFold(4, shuffle=True, random_state=int(rng.integers(1000))).split(X)]
    counted["v"] = v
    sse = engine.cv_sums(folds, alphas, mode).sse
    ref = sum(_refit_sse(X, Y, basis_rows, gamma, alphas, test, mode) for test in folds)
    np.testing.assert_allclose(sse, ref, rtol=1e-8, err_msg=f"seed {seed}")
    # the removed basis points' reflector acts on the r x r eigenvectors only, never on a right-hand side
    assert counted["reflector_on_targets"] == 0, f"seed {seed}"
    # each fold's target rows read once (not once more for the right-hand side)
    assert counted["target_rows"] == len(folds), f"seed {seed}"
