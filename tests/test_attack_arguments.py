"""Bad arguments attacked as a hostile user would: each is refused with a clear error before
any work (``noise``, ``coverage``, ``n_jobs``, a ``scoring`` that is an array)."""

import inspect

import numpy as np
import pytest

import lssvm.estimators as E
from lssvm import SparseLSSVR, SparseLSSVRCV


def _regression_data(m=40, d=2, seed=1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.sin(X[:, 0]) + 0.3 * r.normal(size=m), r.normal(size=(7, d))


def _data_with_labels(m=40, d=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=m)
    return X, y, (y > 0).astype(int)


@pytest.mark.filterwarnings("ignore")
def test_predict_std_noise_must_be_bool():
    # was: noise="no" silently meant noise=True
    X, y, Xt = _regression_data()
    with pytest.raises(TypeError, match="noise"):
        SparseLSSVR(n_basis=10).fit(X, y).predict_std(Xt, noise="no")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("coverage", [0, 1, float("nan"), 0.999])
def test_interval_coverage_refused(coverage):
    X, y, Xt = _regression_data(m=20)
    with pytest.raises(ValueError, match="coverage"):
        SparseLSSVR(n_basis=10).fit(X, y).predict_interval(Xt, coverage)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("n_jobs", [0, 2.5, "x"])
def test_bad_n_jobs(n_jobs):
    X, y, _ = _regression_data(m=20)
    with pytest.raises(ValueError, match="n_jobs"):
        SparseLSSVRCV(n_jobs=n_jobs).fit(X, y)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", [n for n in E.__all__ if isinstance(getattr(E, n), type)
                                  and "n_jobs" in inspect.signature(getattr(E, n)).parameters])
def test_n_jobs_zero_is_refused_before_fit(name):
    # was: n_jobs=0 refused only by the in-memory fit's thread scope, so a Dask fit took it
    with pytest.raises(ValueError, match="n_jobs"):
        getattr(E, name)(n_jobs=0)._validate_params()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["SparseLSSVR", "SparseLSSVC", "NystromLSSVR", "NystromLSSVC"])
def test_cv_error_with_an_array_as_scoring_names_the_allowed_values(name):
    # groups passed by position lands in scoring: the error names the allowed values and the
    # argument's type, not the whole array; groups is keyword-only
    X, y, yc = _data_with_labels()
    est = getattr(E, name)(gamma=1.0, alpha=0.1, basis="random", n_basis=10, random_state=0)
    est.fit(X, yc if "SVC" in name else y)
    groups = np.arange(len(X)) % 4
    with pytest.raises(ValueError, match="scoring must be one of .*got a ndarray$"):
        est.cv_error(5, None, groups)
    with pytest.raises(TypeError, match="positional argument"):
        est.cv_error(5, None, groups, "keep")
    assert est.cv_error(5, None, None, groups=groups) == est.cv_error(5, groups=groups)
