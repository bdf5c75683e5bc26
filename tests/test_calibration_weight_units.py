"""A weighted leave-one-out calibration takes one unit of a row's weight out, not the whole row.

For an integer weight that is leaving out one copy of a row repeated ``w_i`` times, so a calibrated
classifier fitted with integer weights gives the probabilities of the one fitted on the repeated rows;
a zero weight is a removed row.  The residuals are checked against explicit weighted refits.
"""

import numpy as np
import pytest

from lssvm import FixedSizeLSSVC, NystromLSSVC, SparseLSSVC, SparseLSSVR

GAMMA = 0.5


def _data(seed, m=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=m)
    w = rng.integers(0, 4, size=m).astype(float)
    w[:3] = [0.0, 0.4, 2.5]  # zero, fractional and non-integer weights
    return X, y, w


def test_one_unit_residuals_equal_explicit_weighted_refits():
    seed = int(np.random.SeedSequence().entropy % 2**32)
    X, y, w = _data(seed)
    basis = np.arange(0, 60, 4)
    est = SparseLSSVR(gamma=GAMMA, alpha=0.3, basis=basis).fit(X, y, sample_weight=w)
    got = est._fitted_engine().loo_residuals_one_unit(np.array([0.3]))[0][:, 0]
    for i in (0, 1, 2, 7, 30):  # each row with min(w_i, 1) of its weight taken out, refitted at the same basis
        wi = w.copy()
        wi[i] -= min(w[i], 1.0)
        ref = SparseLSSVR(gamma=GAMMA, alpha=0.3, basis=X[basis]).fit(X, y, sample_weight=wi)
        np.testing.assert_allclose(got[i], y[i] - ref.predict(X[i : i + 1])[0], rtol=1e-8, atol=1e-10,
                                   err_msg=f"seed {seed}, row {i}")


@pytest.mark.parametrize("make", [
    lambda: SparseLSSVC(gamma=GAMMA, alpha=0.3, basis="random", n_basis=15, random_state=0),
    lambda: NystromLSSVC(gamma=GAMMA, alpha=0.3, basis="random", n_basis=15, random_state=0),
    lambda: FixedSizeLSSVC(gamma=GAMMA, alpha=0.3, basis="kcenter", n_basis=15, cv=None, random_state=0),
], ids=["sparse", "nystrom", "fixed-size"])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_integer_weights_calibrate_as_repeated_rows(make, calibration):
    X, y, _ = _data(11)
    w = np.random.default_rng(5).integers(0, 4, size=len(y))
    labels = y > np.median(y)
    weighted = make().set_params(calibration=calibration)
    # the basis of the repeated fit must be the same points: given as the weighted fit's
    weighted.fit(X, labels, sample_weight=w)
    rows = np.repeat(np.arange(len(y)), w)
    repeated = make().set_params(calibration=calibration, basis=weighted.basis_vectors_)
    if isinstance(repeated, FixedSizeLSSVC):
        repeated.set_params(basis=np.flatnonzero(np.isin(rows, weighted.basis_indices_)
                                                 & (np.r_[True, np.diff(rows) != 0])))
    repeated.fit(X[rows], labels[rows])
    T = np.random.default_rng(3).normal(size=(20, 2))
    np.testing.assert_allclose(weighted.decision_function(T), repeated.decision_function(T), atol=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(T), repeated.predict_proba(T), atol=1e-7)
