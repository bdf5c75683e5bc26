"""Thread scopes attacked as a hostile user would: a scope that starts while another thread holds
BLAS at one thread, and CV+ calls from threads beside fits, leave the BLAS limits as found."""

import threading

import numpy as np
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_info

from lssvm import (
    SparseLSSVR,
)
from lssvm._threads import single_threaded_blas, thread_scope


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
