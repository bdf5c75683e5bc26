"""The ARD stage keeps its model only where the CV error is lower by more than rounding: where the gradient did
not move from the isotropic start (equal widths, the same model), the two computations of one model's CV error
differ by 1e-14 to 1e-10 relative, and that noise must not decide that ARD is "kept" with a "lower CV error"."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import SparseLSSVRCV


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("cv", [None, "kfold"])
def test_ard_start_that_did_not_move_is_not_kept(seed, cv):
    # a target linear in one input at the default widths: K_BB is numerically singular at the best width, and
    # the gradient stops at its start after one evaluation
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    folds = None if cv is None else KFold(4, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(ard=True, cv=folds, random_state=0).fit(X, y)
    stage = search.ard_stage_
    assert stage["ran"]
    widths = np.asarray(stage["gamma"], dtype=float)
    if np.ptp(widths) == 0 and stage["n_evaluations"] == 1:  # the isotropic model again
        assert not stage["kept"], stage["summary"]
        assert stage["reason"] == "its CV error is not lower"
        assert np.ndim(search.best_params_["gamma"]) == 0
    if stage["kept"]:
        assert stage["cv_ard"] < stage["cv_isotropic"] * (1 - 1e-8)
