"""Duplicate and near-duplicate basis points (issue 8): dropped, the first
of each group kept, with a warning saying how many; the model then equals
the one fitted on the de-duplicated basis exactly, and hold-out removal
stays exact against retraining."""

import dask.array as da
import numpy as np
import pytest

from lssvm import FixedSizeLSSVR, NumericalWarning, NystromLSSVR, SparseLSSVR
from lssvm.basis import NEAR_DUPLICATE_RTOL, near_duplicate_free
from lssvm.cv import explicit_holdout_predict
from lssvm.kernels import RBF, Linear, Normalized

from conftest import rel_err


def _data(rng, m=80):
    X = rng.standard_normal((m, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)


def test_exact_and_near_duplicates_are_dropped_with_a_count(rng):
    X, y = _data(rng)
    Z = X[:6].copy()
    # +2 exact copies, +1 at feature-space distance^2 ~ 2e-14 (dropped), +1 at ~2e-6 (kept)
    Zd = np.vstack([Z, Z[1], Z[4], Z[2] + 1e-7, Z[3] + 1e-3])
    with pytest.warns(NumericalWarning, match="dropped 3 of 10 basis points .* 7 remain"):
        est = SparseLSSVR(gamma=1.0, alpha=0.1, basis=Zd).fit(X, y)
    ref = SparseLSSVR(gamma=1.0, alpha=0.1, basis=np.vstack([Z, Z[3] + 1e-3])).fit(X, y)
    np.testing.assert_array_equal(est.basis_vectors_, ref.basis_vectors_)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    np.testing.assert_array_equal(est.loo_residuals(), ref.loo_residuals())
    assert est.n_basis_ == 7


def test_repeated_rows_keep_hold_out_removal_exact(rng):
    X, y = _data(rng)
    X[10] = X[3]  # row 10 duplicates row 3
    with pytest.warns(NumericalWarning, match="dropped 2 of 6"):
        est = SparseLSSVR(gamma=0.5, alpha=0.05, basis=np.array([3, 10, 20, 20, 31, 47])).fit(X, y)
    np.testing.assert_array_equal(est.basis_indices_, [3, 20, 31, 47])
    H = np.array([3, 10, 11, 31])  # removes basis rows 3 and 31
    np.testing.assert_allclose(est.holdout_predict(H), explicit_holdout_predict(est, X, H).ravel(), rtol=1e-8, atol=1e-10)


def test_the_threshold_is_the_feature_space_distance(rng):
    z = rng.standard_normal(3)
    for gamma in (1e-3, 1.0, 1e3):  # d^2 = 2 (1 - exp(-gamma delta^2)) ~ 2 gamma delta^2
        delta_dup = np.sqrt(0.2 * NEAR_DUPLICATE_RTOL / gamma)
        delta_kept = np.sqrt(5.0 * NEAR_DUPLICATE_RTOL / gamma)
        Z = np.vstack([z, z + [delta_dup, 0, 0], z + [delta_kept, 0, 0]])
        np.testing.assert_array_equal(near_duplicate_free(Z, RBF(gamma)), [0, 2])
    # a chain z ~ w ~ u with z !~ u keeps z and u; under a normalised kernel z and 3z are one function
    step = np.sqrt(0.4 * NEAR_DUPLICATE_RTOL)  # d^2 = 0.8 rtol between neighbours, 3.2 rtol across
    chain = np.array([[0.0], [step], [2 * step]])
    np.testing.assert_array_equal(near_duplicate_free(chain, RBF(1.0)), [0, 2])
    np.testing.assert_array_equal(near_duplicate_free(np.vstack([z, 3 * z, -z]), Normalized(Linear())), [0, 2])
    np.testing.assert_array_equal(near_duplicate_free(np.vstack([z, 3 * z]), Linear()), [0, 1])


def test_prototypes_and_nystrom_rows(rng):
    X, y = _data(rng)
    P = np.vstack([X[:10], X[:3]])
    with pytest.warns(NumericalWarning, match="dropped 3 of 13 prototype points"):
        fs = FixedSizeLSSVR(gamma=0.5, alpha=0.1, prototypes=P, cv=None).fit(X, y)
    ref = FixedSizeLSSVR(gamma=0.5, alpha=0.1, prototypes=X[:10], cv=None).fit(X, y)
    np.testing.assert_array_equal(fs.predict(X), ref.predict(X))
    with pytest.warns(NumericalWarning, match="dropped 2 of 7 Nystrom column points"):
        ny = NystromLSSVR(gamma=0.5, alpha=0.1, sampling=np.array([0, 1, 2, 3, 4, 1, 0])).fit(X, y)
    ref = NystromLSSVR(gamma=0.5, alpha=0.1, sampling=np.array([0, 1, 2, 3, 4])).fit(X, y)
    np.testing.assert_array_equal(ny.predict(X), ref.predict(X))


def test_dask_drops_the_same_points(rng):
    X, y = _data(rng, m=120)
    Zd = np.vstack([X[:8], X[2], X[5]])
    with pytest.warns(NumericalWarning, match="dropped 2 of 10"):
        ref = SparseLSSVR(gamma=0.5, alpha=0.1, basis=Zd).fit(X, y)
    with pytest.warns(NumericalWarning, match="dropped 2 of 10"):
        est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=Zd).fit(da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    assert est.n_basis_ == 8
    assert rel_err(est.predict(X), ref.predict(X)) < 1e-10
    with pytest.warns(NumericalWarning, match="dropped 1 of 4"):
        est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.array([5, 9, 9, 30])).fit(
            da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    np.testing.assert_array_equal(est.basis_indices_, [5, 9, 30])
