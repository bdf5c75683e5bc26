"""Jackknife+ and full conformal intervals of training rows, each from the
other m - 1 rows, against explicit refits on those rows at the same basis."""

import numpy as np
import pytest

from lssvm import NystromLSSVR, SparseLSSVR
from lssvm.cv.conformal import training_row_intervals

LEVELS = (0.5, 0.8, 0.9)


def _data(seed, m=45, outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, (m, 2))
    Y = np.column_stack([np.sin(X[:, 0]) * (1 + j) + 0.3 * rng.standard_normal(m) for j in range(outputs)])
    return X, (Y[:, 0] if outputs == 1 else Y)


def _model(family, points, **extra):
    if family == "sparse":
        return SparseLSSVR(gamma=0.5, alpha=0.2, basis=points, **extra)
    return NystromLSSVR(gamma=0.5, alpha=0.2, basis=points, rank=7, predictor="low-rank", **extra)


@pytest.mark.parametrize("outputs", (1, 2))
@pytest.mark.parametrize("family", ("sparse", "nystrom"))
@pytest.mark.parametrize("seed", range(2))
def test_each_row_gets_the_interval_of_a_refit_without_it(family, seed, outputs):
    X, y = _data(seed, outputs=outputs)
    points = X[np.random.default_rng(seed + 10).choice(len(X), 10, replace=False)] + 0.05
    est = _model(family, points).fit(X, y)
    rows = np.array([0, 7, 23, 44])
    got, targets = training_row_intervals(est.factorization_, est.alpha, rows, LEVELS)
    np.testing.assert_allclose(targets, np.reshape(y, (len(X), -1))[rows], rtol=0, atol=1e-12)
    for s, i in enumerate(rows):
        keep = np.arange(len(X)) != i
        refit = _model(family, points).fit(X[keep], y[keep])
        for level_index, coverage in enumerate(LEVELS):
            for method in ("jackknife+", "full"):
                want = np.reshape(refit.predict_interval(X[i:i + 1], coverage, method), (2, -1))
                np.testing.assert_allclose(got[method][level_index, s], want, rtol=1e-8, atol=1e-9,
                                           err_msg=f"{method} row {i} coverage {coverage}")


def test_levels_past_the_rows_give_nan():
    X, y = _data(3, m=12)
    est = SparseLSSVR(gamma=0.5, alpha=0.2, basis=X[:5] + 0.05).fit(X, y)
    got, _ = training_row_intervals(est.factorization_, est.alpha, [0, 1], (0.5, 0.95))
    for method in ("jackknife+", "full"):
        assert np.all(np.isfinite(got[method][0])) and np.all(np.isnan(got[method][1]))


def test_bad_levels_are_refused():
    X, y = _data(4, m=12)
    est = SparseLSSVR(gamma=0.5, alpha=0.2, basis=X[:5] + 0.05).fit(X, y)
    with pytest.raises(ValueError, match="coverage must be a number strictly between 0 and 1"):
        training_row_intervals(est.factorization_, est.alpha, [0], (1.5,))
