"""Duplicate and near-duplicate basis points: dropped, the first
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
        fs = FixedSizeLSSVR(gamma=0.5, alpha=0.1, basis=P, cv=None).fit(X, y)
    ref = FixedSizeLSSVR(gamma=0.5, alpha=0.1, basis=X[:10], cv=None).fit(X, y)
    np.testing.assert_array_equal(fs.predict(X), ref.predict(X))
    with pytest.warns(NumericalWarning, match="dropped 2 of 7 sampled column points"):
        ny = NystromLSSVR(gamma=0.5, alpha=0.1, basis=np.array([0, 1, 2, 3, 4, 1, 0])).fit(X, y)
    ref = NystromLSSVR(gamma=0.5, alpha=0.1, basis=np.array([0, 1, 2, 3, 4])).fit(X, y)
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


def test_searches_refit_the_rows_they_scored(rng):
    """Near-duplicates are dropped per candidate kernel, and rows_for returns
    the rows actually used, so the refit is the scored model."""
    from lssvm import FixedSizeLSSVRCV, NystromLSSVRCV, SparseLSSVRCV

    X, y = _data(rng, m=60)
    X[30:40] = X[:10]  # ten repeated rows
    with pytest.warns(NumericalWarning, match="dropped"):
        ny = NystromLSSVRCV(param_space={"gamma": [0.5, 2.0]}, n_basis=40, random_state=0).fit(X, y)
    assert np.unique(X[ny.best_estimator_.basis_indices_], axis=0).shape[0] == \
        ny.best_estimator_.basis_indices_.size
    X[30:40] = X[:10] + 1e-7  # now near-duplicates: distinct rows, one function each
    with pytest.warns(NumericalWarning, match="dropped 10 of 60 prototype points"):
        fs = FixedSizeLSSVRCV(param_space={"gamma": [0.5]}, basis="all", cv=3, alphas=[0.1]).fit(X, y)
    assert fs.best_estimator_.support_vectors_.shape[0] <= 50
    # a pair that is a near-duplicate only at the wide kernel
    X2, y2 = _data(rng, m=40)
    X2[1] = X2[0] + 3e-5
    rows = np.arange(0, 40, 2)
    rows[1] = 1
    with pytest.warns(NumericalWarning, match="dropped 1 of 20"):
        sp = SparseLSSVRCV(param_space={"gamma": [1e-3]}, basis=rows, alphas=[1e-2]).fit(X2, y2)
    assert sp.cv_results_["n_basis"][0] == sp.best_estimator_.n_basis_ == 19


def test_dask_random_basis_and_shuffled_folds_with_one_seed(rng):
    from sklearn.model_selection import KFold

    X, y = _data(rng, m=100)
    for seed in range(3):
        est = SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=20, random_state=seed).fit(
            da.from_array(X, chunks=50), da.from_array(y, chunks=50))
        out = est.cv_predict(KFold(5, shuffle=True, random_state=seed)).compute()
        assert np.all(np.isfinite(out))


def test_dask_singular_basis_fold_holding_every_basis_vector_is_a_clear_error(rng):
    X, y = _data(rng, m=60)
    with pytest.warns(NumericalWarning, match="singular"):
        est = SparseLSSVR(gamma=1e-6, alpha=0.1, basis=np.arange(8)).fit(
            da.from_array(X, chunks=20), da.from_array(y, chunks=20))
    with pytest.raises(ValueError, match="holds every basis vector"):
        est.cv_predict([(None, np.arange(0, 30)), (None, np.arange(30, 60))]).compute()
