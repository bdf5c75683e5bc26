"""Hostile-user checks of session 27's merged changes (review27).

Each test pins a defect found by attacking the new code: a BLAS thread
limit left at one thread for good when a fit's thread scope starts while
another thread's CV+ holds BLAS at one thread; ``predict_interval`` of the
fixed-size and Nyström searches failing at its default method; the
fixed-size search's CV+ bounds differing between a Dask and an in-memory
fit (the in-memory best model kept the search's folds as explicit pairs,
the Dask one the int, so the fold refits chose their model sizes on other
inner folds).
"""

import threading
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_info

from lssvm import (
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVRCV,
    SearchEdgeWarning,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm._parallel import single_threaded_blas
from lssvm._threads import thread_scope


def _blas_limits():
    return sorted((d["internal_api"], d["num_threads"]) for d in threadpool_info() if d["user_api"] == "blas")


def test_scope_inside_another_threads_one_thread_section_restores_the_limit():
    """Thread B holds BLAS at one thread (as a small CV+ does); thread A's fit
    scope (n_jobs=2) starts and ends around B's exit.  The scope used to save
    B's temporary limit as the original and restore it last: one BLAS thread
    for the rest of the process."""
    before = _blas_limits()
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with single_threaded_blas():
            entered.set()
            leave.wait(10)

    b = threading.Thread(target=hold)
    b.start()
    entered.wait(10)
    with thread_scope(2):
        leave.set()
        b.join(10)
    assert _blas_limits() == before


def test_cv_plus_from_threads_beside_fits_leaves_blas_as_found():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    est = SparseLSSVR(gamma=0.5, alpha=0.01, basis=np.arange(0, 300, 6)).fit(X, y)
    Xt = rng.normal(size=(20, 3))
    ref = est.predict_interval(Xt, 0.8, "cv+", cv=KFold(5))
    before = _blas_limits()
    errs = []

    def intervals():
        for _ in range(15):
            errs.append(np.abs(est.predict_interval(Xt, 0.8, "cv+", cv=KFold(5)) - ref).max())

    def fits():
        for _ in range(15):
            SparseLSSVR(gamma=0.5, alpha=0.01, basis=np.arange(0, 300, 6), n_jobs=2).fit(X, y)

    threads = [threading.Thread(target=f) for f in (intervals, fits, intervals)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert max(errs) == 0.0
    assert _blas_limits() == before


@pytest.mark.parametrize("search", [NystromLSSVRCV, FixedSizeLSSVRCV])
def test_family_search_interval_at_its_default_method(search):
    """The searches' ``predict_interval`` passed "jackknife+" to a best model
    that offers "cv+" only: every call without ``method=`` raised."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        s = search(basis="random", n_basis=15, random_state=3, param_space={"gamma": [0.5]}, alphas=[0.1]).fit(X, y)
    Xt = rng.normal(size=(4, 3))
    np.testing.assert_array_equal(s.predict_interval(Xt, 0.8, cv=4),
                                  s.best_estimator_.predict_interval(Xt, 0.8, method="cv+", cv=4))
    with pytest.raises(ValueError, match="cv\\+' only"):
        s.predict_interval(Xt, 0.8, method="jackknife+")


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
        got = dsk.predict_interval(Xt, 0.7, cv=5)
    ref = mem.predict_interval(Xt, 0.7, cv=5)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    # and both are the intervals of a fresh fixed-size model with the chosen parameters
    fresh = FixedSizeLSSVR(**{**mem.best_estimator_.get_params()}).fit(X, y)
    np.testing.assert_allclose(fresh.predict_interval(Xt, 0.7, cv=5), ref, rtol=1e-12, atol=1e-12)


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


@pytest.mark.parametrize("search", [SparseLSSVRCV, NystromLSSVRCV, FixedSizeLSSVRCV])
def test_regression_search_with_a_stratified_splitter_is_a_clear_error(search):
    """The regression searches score folds without targets for the splitter:
    StratifiedKFold failed inside scikit-learn with a TypeError about a scalar."""
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0])
    with pytest.raises(ValueError, match="StratifiedKFold splits by class labels"):
        search(cv=StratifiedKFold(3), param_space={"gamma": [0.5]}, alphas=[0.1]).fit(X, y)
