"""The reason ``ard_stage_`` gives for not running names the stage, not the search the user chose."""

import numpy as np

from lssvm import SparseLSSVRCV


def test_weighted_grid_search_reason_names_the_stage():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=80)
    search = SparseLSSVRCV(search="grid", n_basis=20, time_budget=5).fit(X, y, sample_weight=rng.uniform(0.5, 1.5, 80))
    reason = search.ard_stage_["reason"]
    assert not search.ard_stage_["ran"]
    assert "sample_weight" in reason and "gradient search" not in reason, reason
