"""The Dask backend attacked as a hostile user would: every case must give what the in-memory
path gives (ARD widths, a basis given as points, duplicated basis rows, group splitters, CV+
of the fixed-size search) or refuse what it refuses."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

import lssvm.estimators as E
from lssvm import (
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    SearchEdgeWarning,
    SparseLSSVR,
)


def _data_with_labels(m=40, d=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=m)
    return X, y, (y > 0).astype(int)


ARD_GAMMA = np.array([1.0, 2.0, 0.5])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["SparseLSSVR", "FixedSizeLSSVR", "NystromLSSVR"])
def test_dask_fit_takes_an_ard_width_vector(name):
    # was: the same comparison in the Dask fit paths of all three families
    da = pytest.importorskip("dask.array")
    X, y, _ = _data_with_labels()
    kw = dict(kernel="ard", gamma=ARD_GAMMA, alpha=0.1, basis="random", n_basis=10, random_state=0)
    lazy = getattr(E, name)(**kw).fit(da.from_array(X, chunks=13), da.from_array(y, chunks=13))
    mem = getattr(E, name)(**kw).fit(X, y)
    np.testing.assert_allclose(lazy.predict(X), mem.predict(X), rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore")
def test_dask_cv_error_with_a_basis_given_as_points_matches_memory():
    da = pytest.importorskip("dask.array")
    X, y, _ = _data_with_labels(m=60)
    B = X[[3, 11, 17, 25, 31, 40, 44, 52, 58]]
    kw = dict(gamma=0.5, alpha=0.1, basis=B)
    mem = E.SparseLSSVR(**kw).fit(X, y).cv_error(5)
    lazy = E.SparseLSSVR(**kw).fit(da.from_array(X, chunks=37), da.from_array(y, chunks=37)).cv_error(5)
    assert lazy == pytest.approx(mem, rel=1e-9)


@pytest.mark.filterwarnings("ignore")
def test_dask_fit_refuses_n_jobs_zero_and_cv_true_as_memory_does():
    # was: n_jobs=0 accepted on Dask; cv_error(True) raised "'bool' object is not iterable"
    da = pytest.importorskip("dask.array")
    X, y, _ = _data_with_labels()
    lazy_X, lazy_y = da.from_array(X, chunks=13), da.from_array(y, chunks=13)
    kw = dict(gamma=1.0, alpha=0.1, basis="random", n_basis=10, random_state=0)
    with pytest.raises(ValueError, match="n_jobs"):
        E.SparseLSSVR(n_jobs=0, **kw).fit(lazy_X, lazy_y)
    lazy = E.SparseLSSVR(**kw).fit(lazy_X, lazy_y)
    mem = E.SparseLSSVR(**kw).fit(X, y)
    for est in (mem, lazy):
        with pytest.raises(ValueError, match="cv must be an int, a scikit-learn splitter"):
            est.cv_error(True)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("mode", ["remove", "train"])
def test_dask_cv_with_duplicate_rows_of_basis_points_matches_memory(mode):
    """Duplicate rows hold one basis point together: it leaves a fold's model
    only when every copy is held out, on Dask as in memory."""
    da = pytest.importorskip("dask.array")
    X, y, _ = _data_with_labels(m=60)
    X[[5, 30, 47]] = X[3]  # three more copies of row 3, spread over folds
    X[12] = X[11]  # a copy in the same 5-fold block as row 11
    kw = dict(gamma=0.5, alpha=0.1, basis="random", n_basis=12, random_state=1)
    mem = E.SparseLSSVR(**kw).fit(X, y)
    lazy = E.SparseLSSVR(**kw).fit(da.from_array(X, chunks=37), da.from_array(y, chunks=37))
    np.testing.assert_array_equal(mem.basis_vectors_, lazy.basis_vectors_)
    assert lazy.cv_error(5, basis_in_holdout=mode) == pytest.approx(mem.cv_error(5, basis_in_holdout=mode), rel=1e-9)


@pytest.mark.parametrize("cv", [3, KFold(3, shuffle=True, random_state=0)], ids=["int", "seeded-kfold"])
def test_fixed_size_search_cv_plus_on_dask_equals_in_memory(cv):
    da = pytest.importorskip("dask.array")
    import dask

    rng = np.random.default_rng(1)
    m = 240
    X = rng.normal(size=(m, 3))
    y = np.sin(X[:, 0]) + 0.2 * rng.normal(size=m)
    Xt = rng.normal(size=(9, 3))
    kw = dict(basis="random", n_basis=20, random_state=5, cv=cv, param_space={"gamma": [0.3, 1.0]},
              alphas=[0.01, 0.1])
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore", SearchEdgeWarning)
        mem = FixedSizeLSSVRCV(**kw).fit(X, y)
        dsk = FixedSizeLSSVRCV(**kw).fit(da.from_array(X, chunks=(37, 3)), da.from_array(y, chunks=37))
        got = dsk.predict_interval(Xt, 0.7, "cv+", cv=5)
    # a Dask fixed-size fit's intervals: those of the model at its support, as in memory
    ref = mem.best_estimator_.predict_interval(Xt, 0.7, "cv+", cv=5)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    # and both are the intervals of a fresh fixed-size model with the chosen parameters
    fresh = FixedSizeLSSVR(**{**mem.best_estimator_.get_params()}).fit(X, y)
    np.testing.assert_allclose(fresh.predict_interval(Xt, 0.7, "cv+", cv=5), ref, rtol=1e-12, atol=1e-12)


def test_fixed_size_search_on_dask_with_a_group_splitter():
    # the refit of the best model once lost the groups its group splitter needs ('GroupKFold needs groups')
    da = pytest.importorskip("dask.array")
    import dask
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0])
    groups = rng.integers(0, 6, 120)
    kw = dict(basis="random", n_basis=15, random_state=5, cv=GroupKFold(3), param_space={"gamma": [0.5]},
              alphas=[0.1])
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore", SearchEdgeWarning)
        mem = FixedSizeLSSVRCV(**kw).fit(X, y, groups=groups)
        dsk = FixedSizeLSSVRCV(**kw).fit(da.from_array(X, chunks=(37, 3)), da.from_array(y, chunks=37),
                                         groups=groups)
    Xt = rng.normal(size=(5, 3))
    np.testing.assert_allclose(dsk.predict(Xt), mem.predict(Xt), rtol=1e-10, atol=1e-10)


def test_dask_explicit_pairs_whose_train_is_not_the_complement_are_refused():
    """The Dask engine's explicit (train, test) pairs get the in-memory check of the train rows."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(29)
    X = rng.standard_normal((120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis="random", n_basis=20, random_state=0).fit(
        da.from_array(X, chunks=40), da.from_array(y, chunks=40))
    good = list(KFold(5).split(X))
    np.testing.assert_allclose(np.asarray(est.cv_predict(good)), np.asarray(est.cv_predict(5)), rtol=1e-12)
    with pytest.raises(ValueError, match="training rows must be all rows outside"):
        est.cv_predict([(tr[3:], te) for tr, te in good])
