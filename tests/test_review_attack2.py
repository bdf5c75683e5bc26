"""Hostile-user review of issue 18's merged tree (one vocabulary, one fold
rule, one engine, ``kernel_expansion``): regression tests for what it found."""

import warnings

import numpy as np
import pytest

import lssvm.estimators as E


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(m=40, d=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=m)
    return X, y, (y > 0).astype(int)


ARD_GAMMA = np.array([1.0, 2.0, 0.5])


@pytest.mark.parametrize("name", [n for n in E.__all__ if n.endswith("CV")])
def test_search_takes_an_ard_width_vector(name):
    # was: `self.gamma == "scale"` on a vector -> "truth value of an array is ambiguous"
    X, y, yc = _data()
    est = getattr(E, name)(kernel="ard", gamma=ARD_GAMMA, n_basis=10, alphas=[0.1, 1.0],
                           param_space={"degree": [3]}, random_state=0)
    est.fit(X, yc if "SVC" in name else y)
    np.testing.assert_array_equal(est.best_estimator_.gamma_, ARD_GAMMA)


@pytest.mark.parametrize("name", ["SparseLSSVR", "FixedSizeLSSVR", "NystromLSSVR"])
def test_dask_fit_takes_an_ard_width_vector(name):
    # was: the same comparison in the Dask fit paths of all three families
    da = pytest.importorskip("dask.array")
    X, y, _ = _data()
    kw = dict(kernel="ard", gamma=ARD_GAMMA, alpha=0.1, basis="random", n_basis=10, random_state=0)
    lazy = getattr(E, name)(**kw).fit(da.from_array(X, chunks=13), da.from_array(y, chunks=13))
    mem = getattr(E, name)(**kw).fit(X, y)
    np.testing.assert_allclose(lazy.predict(X), mem.predict(X), rtol=1e-8, atol=1e-10)


def test_dask_cv_error_with_a_basis_given_as_points_matches_memory():
    da = pytest.importorskip("dask.array")
    X, y, _ = _data(m=60)
    B = X[[3, 11, 17, 25, 31, 40, 44, 52, 58]]
    kw = dict(gamma=0.5, alpha=0.1, basis=B)
    mem = E.SparseLSSVR(**kw).fit(X, y).cv_error(5)
    lazy = E.SparseLSSVR(**kw).fit(da.from_array(X, chunks=37), da.from_array(y, chunks=37)).cv_error(5)
    assert lazy == pytest.approx(mem, rel=1e-9)


@pytest.mark.parametrize("name", ["SparseLSSVR", "SparseLSSVC", "NystromLSSVR", "NystromLSSVC"])
def test_cv_error_with_an_array_as_scoring_names_the_allowed_values(name):
    # groups passed by position lands in scoring: the error names the allowed values and the
    # argument's type, not the whole array; groups is keyword-only
    X, y, yc = _data()
    est = getattr(E, name)(gamma=1.0, alpha=0.1, basis="random", n_basis=10, random_state=0)
    est.fit(X, yc if "SVC" in name else y)
    groups = np.arange(len(X)) % 4
    with pytest.raises(ValueError, match="scoring must be one of .*got a ndarray$"):
        est.cv_error(5, None, groups)
    with pytest.raises(TypeError, match="positional argument"):
        est.cv_error(5, None, groups, "keep")
    assert est.cv_error(5, None, None, groups=groups) == est.cv_error(5, groups=groups)


@pytest.mark.parametrize("name", E.__all__)
def test_n_jobs_zero_is_refused_before_fit(name):
    # was: n_jobs=0 refused only by the in-memory fit's thread scope, so a Dask fit took it
    with pytest.raises(ValueError, match="n_jobs"):
        getattr(E, name)(n_jobs=0)._validate_params()


def test_dask_fit_refuses_n_jobs_zero_and_cv_true_as_memory_does():
    # was: n_jobs=0 accepted on Dask; cv_error(True) raised "'bool' object is not iterable"
    da = pytest.importorskip("dask.array")
    X, y, _ = _data()
    lazy_X, lazy_y = da.from_array(X, chunks=13), da.from_array(y, chunks=13)
    kw = dict(gamma=1.0, alpha=0.1, basis="random", n_basis=10, random_state=0)
    with pytest.raises(ValueError, match="n_jobs"):
        E.SparseLSSVR(n_jobs=0, **kw).fit(lazy_X, lazy_y)
    lazy = E.SparseLSSVR(**kw).fit(lazy_X, lazy_y)
    mem = E.SparseLSSVR(**kw).fit(X, y)
    for est in (mem, lazy):
        with pytest.raises(ValueError, match="cv must be an int, a scikit-learn splitter"):
            est.cv_error(True)


@pytest.mark.parametrize("mode", ["remove", "train"])
def test_dask_cv_with_duplicate_rows_of_basis_points_matches_memory(mode):
    """Duplicate rows hold one basis point together: it leaves a fold's model
    only when every copy is held out, on Dask as in memory."""
    da = pytest.importorskip("dask.array")
    X, y, _ = _data(m=60)
    X[[5, 30, 47]] = X[3]  # three more copies of row 3, spread over folds
    X[12] = X[11]  # a copy in the same 5-fold block as row 11
    kw = dict(gamma=0.5, alpha=0.1, basis="random", n_basis=12, random_state=1)
    mem = E.SparseLSSVR(**kw).fit(X, y)
    lazy = E.SparseLSSVR(**kw).fit(da.from_array(X, chunks=37), da.from_array(y, chunks=37))
    np.testing.assert_array_equal(mem.basis_vectors_, lazy.basis_vectors_)
    assert lazy.cv_error(5, basis_in_holdout=mode) == pytest.approx(mem.cv_error(5, basis_in_holdout=mode), rel=1e-9)
