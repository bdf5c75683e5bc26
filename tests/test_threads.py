"""The thread-count rule and ``n_jobs``, given quota,
affinity, load and outer schedulers; no timing."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVC,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVC,
    SparseLSSVCCV,
    SparseLSSVR,
    SparseLSSVRCV,
    _threads,
)
from lssvm._threads import cgroup_cpu_quota, other_runnable, plan_threads, thread_scope, usable_cores

ESTIMATORS = [SparseLSSVR, SparseLSSVC, FixedSizeLSSVR, FixedSizeLSSVC, NystromLSSVR, NystromLSSVC,
              SparseLSSVRCV, SparseLSSVCCV, FixedSizeLSSVRCV, FixedSizeLSSVCCV, NystromLSSVRCV, NystromLSSVCCV]


@pytest.mark.parametrize(
    "n_jobs, kw, expected",
    [
        (None, dict(usable=8), 8),  # idle: every usable core
        (None, dict(usable=8, busy=3), 5),  # three cores held by others
        (None, dict(usable=2, busy=1), 1),
        (None, dict(usable=2, busy=2), 1),  # never below one
        (None, dict(usable=2, busy=0.4), 2),  # a passing task is rounded away
        (None, dict(usable=4, online=16, busy=8), 2),  # others spread over 16 cores, 4 of them ours
        (None, dict(usable=8, outer=4), 2),  # a Dask worker with 4 threads
        (None, dict(usable=8, outer=1 << 16), 1),  # inside a joblib loop
        (None, dict(usable=8, blas_limit=3), 3),  # a BLAS limit in force (joblib's process workers)
        (-1, dict(usable=8, busy=6, outer=4), 8),  # -1: all usable cores, whatever the load
        (-2, dict(usable=8), 7),
        (-20, dict(usable=8), 1),
        (3, dict(usable=2, busy=2), 3),  # k: exactly k
    ],
)
def test_plan_threads(n_jobs, kw, expected):
    plan = plan_threads(n_jobs, **kw)
    assert plan.threads == expected
    if n_jobs is None:
        # lssvm's pools run single-threaded BLAS: threads x BLAS threads <= usable cores
        assert plan.threads * 1 <= kw["usable"] and plan.threads <= kw["usable"]


@pytest.mark.parametrize("bad", [0, 1.5, "all", True])
def test_bad_n_jobs(bad):
    with pytest.raises(ValueError, match="n_jobs must be None"):
        plan_threads(bad, usable=4)
    X, y = np.random.default_rng(0).standard_normal((30, 2)), np.arange(30.0)
    with pytest.raises(ValueError, match="n_jobs must be None|'n_jobs' parameter of SparseLSSVR must be an int"):
        SparseLSSVR(gamma=1.0, basis="random", n_basis=5, n_jobs=bad).fit(X, y)


def test_cgroup_quota_v2_and_v1(tmp_path):
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_quota(tmp_path) == 1.5
    assert usable_cores(affinity={0, 1, 2, 3}, root=tmp_path) == 2  # 1.5 cores rounded up
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_quota(tmp_path) is None
    assert usable_cores(affinity={0, 1, 2}, root=tmp_path) == 3
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(v1) == 3.0
    assert usable_cores(affinity=set(range(8)), root=v1) == 3
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_quota(v1) is None
    assert cgroup_cpu_quota(tmp_path / "missing") is None
    assert usable_cores(affinity={0}, quota=4.0) == 1  # affinity caps the quota


def _tasks(tmp_path, states):
    """A fake /proc/self/task with one thread per state letter."""
    d = tmp_path / "task"
    for tid, state in enumerate(states, start=100):
        (d / str(tid)).mkdir(parents=True)
        (d / str(tid) / "stat").write_text(f"{tid} (python3 (x) y) {state} 1 2 3\n")
    return d


def test_other_runnable(tmp_path):
    f = tmp_path / "loadavg"
    alone = _tasks(tmp_path / "a", "RSS")  # the caller runs, two threads sleep
    f.write_text("0.50 0.40 0.30 3/512 12345\n")
    assert other_runnable(f, tasks=alone) == 2.0  # the calling thread is not "other"
    f.write_text("0.00 0.00 0.00 1/512 12345\n")
    assert other_runnable(f, tasks=alone) == 0.0
    assert other_runnable(tmp_path / "missing") == 0.0
    # this process's own BLAS threads still spinning after a product are not other processes' load
    spinning = _tasks(tmp_path / "b", "RRS")
    f.write_text("2.00 0.40 0.30 2/512 12345\n")
    assert other_runnable(f, tasks=spinning) == 0.0
    f.write_text("2.00 0.40 0.30 3/512 12345\n")
    assert other_runnable(f, tasks=spinning) == 1.0
    assert other_runnable(f, tasks=tmp_path / "no-tasks") == 2.0  # unreadable: only the caller is ours


def test_thread_scope_sets_blas_once_and_restores():
    before = [p["num_threads"] for p in threadpool_info()]
    with thread_scope(1) as plan:
        assert plan.threads == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
        with thread_scope(4) as inner:  # nested scopes keep the outer plan
            assert inner is plan
    assert [p["num_threads"] for p in threadpool_info()] == before


def test_parallel_map_uses_n_jobs():
    seen = set()

    def work(i):
        seen.add(threading.get_ident())
        threading.Event().wait(0.01)

    with thread_scope(1):
        _threads.parallel_map(work, range(6))
    assert len(seen) == 1
    seen.clear()
    with thread_scope(3):
        _threads.parallel_map(work, range(6))
    assert 1 < len(seen) <= 3


def test_default_respects_outer_blas_limit(monkeypatch):
    monkeypatch.setattr(_threads, "usable_cores", lambda **kw: 8)
    monkeypatch.setattr(_threads, "other_runnable", lambda *a, **kw: 0.0)
    assert _threads.current_plan().threads == min(8, min(p["num_threads"] for p in threadpool_info()
                                                        if p["user_api"] == "blas"))
    with threadpool_limits(2, user_api="blas"):
        assert _threads.current_plan().threads == 2


def test_default_inside_joblib_threads(monkeypatch):
    joblib = pytest.importorskip("joblib")
    monkeypatch.setattr(_threads, "usable_cores", lambda **kw: 8)
    monkeypatch.setattr(_threads, "other_runnable", lambda *a, **kw: 0.0)
    out = joblib.Parallel(n_jobs=2, backend="threading")(
        joblib.delayed(lambda: _threads.current_plan().threads)() for _ in range(2)
    )
    assert out == [1, 1]


def test_default_inside_dask_threads(monkeypatch):
    dask = pytest.importorskip("dask")
    monkeypatch.setattr(_threads, "usable_cores", lambda **kw: 8)
    monkeypatch.setattr(_threads, "other_runnable", lambda *a, **kw: 0.0)
    monkeypatch.setattr(_threads, "_blas_threads_now", lambda: None)
    tasks = [dask.delayed(lambda: _threads.current_plan().threads)() for _ in range(4)]
    out = dask.compute(*tasks, scheduler="threads", num_workers=4)
    assert set(out) == {2}  # 8 cores shared by 4 scheduler threads


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_estimators_take_n_jobs(cls):
    assert cls().get_params()["n_jobs"] is None
    assert cls(n_jobs=2).get_params()["n_jobs"] == 2


def test_n_jobs_does_not_change_results():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(300)
    fits = [SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=40, random_state=0, block_size=64,
                        n_jobs=j).fit(X, y) for j in (1, 2, None)]
    for f in fits[1:]:
        np.testing.assert_allclose(f.dual_coef_, fits[0].dual_coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(f.cv_error(cv=5), fits[0].cv_error(cv=5), rtol=1e-9)
        np.testing.assert_allclose(f.predict(X), fits[0].predict(X), rtol=1e-9, atol=1e-12)


def test_default_inside_dask_worker(monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(_threads, "usable_cores", lambda **kw: 8)
    monkeypatch.setattr(_threads, "other_runnable", lambda *a, **kw: 0.0)
    monkeypatch.setattr(_threads, "_blas_threads_now", lambda: None)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=4, dashboard_address=None) as client:
        assert client.submit(lambda: _threads.current_plan().threads).result() == 2


def test_criteria_take_n_jobs():
    from lssvm.selection import DenseLSSVMCV, SparseLSSVMCV
    from lssvm.selection.fixed_size import FixedSizeCV
    from lssvm.selection.nystrom import NystromCV

    rng = np.random.default_rng(4)
    X = rng.standard_normal((80, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(80)
    for make in (lambda j: DenseLSSVMCV(X, y, cv=4, random_state=0, n_jobs=j),
                 lambda j: SparseLSSVMCV(X, y, cv=4, basis="random", n_basis=20, random_state=0, n_jobs=j),
                 lambda j: FixedSizeCV(X, y, cv=4, basis="random", n_basis=20, random_state=0, n_jobs=j),
                 lambda j: NystromCV(X, y, cv=4, n_basis=20, rank=10, random_state=0, n_jobs=j)):
        a, b = make(1)(gamma=0.5), make(2)(gamma=0.5)
        np.testing.assert_allclose(a.mse, b.mse, rtol=1e-9)
        with pytest.raises(ValueError, match="n_jobs"):
            make(0)
