"""How many threads lssvm uses: one rule, from the cores this process may
use, the load other processes put on them, an outer scheduler, and the
estimator's ``n_jobs``.

Why: on a shared machine (a server, a laptop running other work, a Dask
worker beside others) OpenBLAS threads that find no free core busy-wait for
one, and the memory-bound and small-panel LAPACK steps (above all the
tridiagonalisation inside ``eigh``) then run many times slower than on one
thread (``docs/benchmarks.md``).  So the default counts the cores
that are free *now*, not ``os.cpu_count()``.

The rule (:func:`plan_threads`, pure and unit-tested; :func:`current_plan`
gathers its inputs from the system):

* usable cores ``U``: ``len(os.sched_getaffinity(0))``, capped by the cgroup
  CPU quota (``/sys/fs/cgroup/cpu.max``, v2, or ``cpu.cfs_quota_us`` /
  ``cpu.cfs_period_us``, v1) rounded up;
* ``n_jobs=None`` (the default): ``U`` minus the cores other processes keep
  busy (runnable tasks now, from ``/proc/loadavg``, excluding the calling
  thread, scaled by ``U / os.cpu_count()``), at least 1; divided among the
  workers of an outer scheduler (a Dask worker's threads, Dask's threaded
  scheduler, a joblib parallel loop: 1 thread each), and never above a BLAS
  limit already in force (``threadpoolctl``, e.g. set by joblib's process
  workers).  lssvm's thread pools run single-threaded BLAS, so lssvm
  threads x BLAS threads <= ``U`` always holds for the default;
* ``n_jobs=-1``: ``U``; ``n_jobs=k > 0``: ``k``; ``n_jobs=-k``: ``U + 1 - k``
  (scikit-learn's meaning), at least 1.

Load is read from ``/proc/loadavg``'s count of runnable tasks (an
instantaneous count, the minimum of three reads 0.2 ms apart), not from the
1-minute load average, which takes about a minute to notice a new busy
process; where ``/proc`` is missing the load is taken as zero.

Hand-written: no library computes this rule (``joblib.cpu_count`` knows
affinity and quota but not load, ``threadpoolctl`` only sets limits).

Running on those threads: row blocks of kernels and CV folds run one per
core on single-threaded BLAS (:func:`parallel_map`).  ``threadpoolctl``'s
limit is a process-global setting, so two overlapping one-thread sections
(user threads, or nested lssvm calls) must not each save and restore it:
:func:`single_threaded_blas` reference-counts a single limit and restores
the original setting when the last user leaves, and thread scopes respect it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral

from .exceptions import with_numerical_handler

__all__ = [
    "ThreadPlan",
    "plan_threads",
    "current_plan",
    "usable_cores",
    "cgroup_cpu_quota",
    "other_runnable",
    "thread_scope",
    "uses_threads",
    "eigh_threads",
    "check_n_jobs",
    "EIGH_SERIAL_BELOW",
    "single_threaded_blas",
    "serial_region",
    "in_parallel_region",
    "parallel_map",
]

#: ``eigh`` of an n x n matrix runs on one BLAS thread below this n (the
#: tridiagonalisation is memory-bound; measured in ``docs/benchmarks.md``).
#: Right after a NumPy product (as in the factorisation) two threads lose up to
#: n = 1000: NumPy's and SciPy's OpenBLAS each keep their own threads, which
#: spin after a call; at n = 700 one thread took 0.05 s and two 0.08-0.15 s
#: inside the default search.
EIGH_SERIAL_BELOW = 1000


@dataclass(frozen=True)
class ThreadPlan:
    """Threads for one call.

    Attributes
    ----------
    threads : int
        Workers of lssvm's own thread pools (each on one BLAS thread), and
        BLAS threads for the compute-bound products outside them.
    usable : int
        Cores this process may use.
    """

    threads: int
    usable: int


def check_n_jobs(n_jobs):
    """Validate ``n_jobs`` (None or a non-zero integer); returns it."""
    if n_jobs is None or (isinstance(n_jobs, Integral) and not isinstance(n_jobs, bool) and n_jobs != 0):
        return n_jobs
    raise ValueError(
        f"n_jobs must be None (lssvm's rule: the free cores), -1 (all usable cores) or a non-zero "
        f"integer; got {n_jobs!r}"
    )


def plan_threads(n_jobs=None, *, usable=1, online=None, busy=0.0, outer=1, blas_limit=None):
    """The thread count for given circumstances (pure; see the module notes).

    Parameters
    ----------
    n_jobs : None or int
    usable : int
        Cores this process may use (affinity and quota).
    online : int, optional
        Cores of the machine (default ``usable``); ``busy`` is spread over them.
    busy : float
        Runnable tasks of other processes (and other threads of this one).
    outer : int
        Workers of an outer scheduler sharing ``usable``.
    blas_limit : int, optional
        A BLAS thread limit already in force.

    Returns
    -------
    ThreadPlan
    """
    check_n_jobs(n_jobs)
    usable = max(1, int(usable))
    if n_jobs is not None:
        threads = n_jobs if n_jobs > 0 else usable + 1 + n_jobs
        return ThreadPlan(max(1, int(threads)), usable)
    online = max(usable, int(online or usable))
    busy_here = max(0.0, float(busy)) * usable / online
    free = max(1, math.floor(usable - busy_here + 0.5))
    threads = min(free, max(1, usable // max(1, int(outer))))
    if blas_limit is not None:
        threads = min(threads, max(1, int(blas_limit)))
    return ThreadPlan(threads, usable)


def cgroup_cpu_quota(root="/sys/fs/cgroup"):
    """CPU quota of this process's cgroup in cores (float), or None.

    Reads ``{root}/cpu.max`` (cgroup v2: ``"quota period"`` or ``"max
    period"``), else ``{root}/cpu/cpu.cfs_quota_us`` and ``cpu.cfs_period_us``
    (v1; quota -1 means none).
    """
    try:
        with open(os.path.join(root, "cpu.max")) as f:
            quota, period = f.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as f:
            quota = int(f.read())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as f:
            period = int(f.read())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None


def usable_cores(*, affinity=None, quota=None, root="/sys/fs/cgroup"):
    """Cores this process may use: its CPU affinity, capped by the cgroup
    quota (rounded up).  ``affinity`` (a set) and ``quota`` (cores) override
    the system's values."""
    if affinity is None:
        try:
            affinity = os.sched_getaffinity(0)
        except AttributeError:  # pragma: no cover - macOS, Windows
            affinity = range(os.cpu_count() or 1)
    n = max(1, len(affinity))
    if quota is None:
        quota = cgroup_cpu_quota(root)
    if quota is not None and quota > 0:
        n = min(n, max(1, math.ceil(quota)))
    return n


def other_runnable(path="/proc/loadavg", reads=3, tasks="/proc/self/task"):
    """Runnable tasks of *other processes*, now: the minimum over ``reads``
    reads of the running count in ``/proc/loadavg`` (fourth field,
    ``running/total``) minus this process's own running threads (the
    calling thread, and BLAS threads that still spin after a product: they
    would otherwise read as another busy process and halve the next call's
    threads), from the states in ``tasks/*/stat``; 0.0 where ``path`` is
    missing."""
    best = None
    for i in range(reads):
        if i:
            time.sleep(2e-4)
        own = _own_running(tasks)  # before and after: a spinning thread may sleep or wake between the reads
        try:
            with open(path) as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        others = running - max(1, own, _own_running(tasks))
        best = others if best is None else min(best, others)
    return float(max(0, best))


def _own_running(tasks):
    """Threads of this process in state R (running or runnable), from
    ``tasks/<tid>/stat``; 1 (the caller) where they cannot be read."""
    try:
        names = os.listdir(tasks)
    except OSError:
        return 1
    count = 0
    for tid in names:
        try:
            with open(os.path.join(tasks, tid, "stat")) as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) S ...": the state follows the last ")" (comm may hold spaces and parentheses)
        if stat[stat.rfind(")") + 2: stat.rfind(")") + 3] == "R":
            count += 1
    return count


def _outer_workers():
    """Workers of an outer scheduler running this call: a Dask worker's
    threads, Dask's threaded scheduler, or a joblib parallel loop (taken as
    sharing every core); 1 outside them."""
    dist = sys.modules.get("distributed")
    if dist is not None:
        try:
            return max(1, int(dist.get_worker().state.nthreads))
        except (ValueError, AttributeError):
            pass
    threaded = sys.modules.get("dask.threaded")
    if threaded is not None:
        # a pool's threads are named after it (its ``_threads`` set is
        # filled only after a thread has started, too late to look in)
        me = threading.current_thread().name
        pools = [getattr(threaded, "default_pool", None)]
        pools += [p for d in list(getattr(threaded, "pools", {}).values()) for p in list(d.values())]
        for pool in pools:
            prefix = getattr(pool, "_thread_name_prefix", None)
            if prefix and me.startswith(prefix + "_"):
                return max(1, int(pool._max_workers))
    jl = sys.modules.get("joblib.parallel")
    if jl is not None:
        try:
            backend, _ = jl.get_active_backend()
            if getattr(backend, "nesting_level", 0) >= 1:
                return 1 << 16  # a worker of a joblib loop: one thread
        except Exception:  # pragma: no cover - other joblib versions
            pass
    return 1


@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _blas_threads_now():
    """The smallest BLAS thread count now in force, or None."""
    counts = [lib.num_threads for lib in _controller().select(user_api="blas").lib_controllers]
    return min(counts) if counts else None


_one_thread_lock = threading.Lock()
_one_thread_depth = 0
_one_thread_restore = None
_serial_depth = 0


@contextmanager
def single_threaded_blas():
    """Limit BLAS to one thread while any caller is inside this context.

    The loaded BLAS libraries are found once per process (a fresh
    ``threadpool_limits`` looks them up again: about 1 ms per call), and
    BLAS is left alone where it already runs one thread."""
    global _one_thread_depth, _one_thread_restore
    with _one_thread_lock:
        _one_thread_depth += 1
        if _one_thread_depth == 1:
            # what threadpoolctl's limit(limits=1) and restore_original_limits do, without rebuilding its
            # selection and limiter per call (~0.1 ms on a cold call; CV+ enters this once per call)
            saved = [(lib, lib.num_threads) for lib in _blas_controllers()]
            _one_thread_restore = [(lib, n) for lib, n in saved if n != 1] or None
            for lib, _ in _one_thread_restore or ():
                lib.set_num_threads(1)
    try:
        yield
    finally:
        with _one_thread_lock:
            _one_thread_depth -= 1
            if _one_thread_depth == 0 and _one_thread_restore is not None:
                for lib, n in _one_thread_restore:
                    lib.set_num_threads(n)
                _one_thread_restore = None


@functools.lru_cache(maxsize=1)
def _blas_controllers():
    """The BLAS libraries' threadpoolctl controllers (of :func:`_controller`, found once)."""
    return tuple(_controller().select(user_api="blas").lib_controllers)


@contextmanager
def serial_region():
    """Run lssvm's own work serially (no thread pools) inside this context,
    without touching BLAS: for tasks of an outside scheduler (Dask), which
    supplies the parallelism.  Changing BLAS limits per task would be
    wrong there: ``threadpool_limits`` costs milliseconds and, toggled by
    concurrent tasks, serialised them."""
    global _serial_depth
    with _one_thread_lock:
        _serial_depth += 1
    try:
        yield
    finally:
        with _one_thread_lock:
            _serial_depth -= 1


def in_parallel_region() -> bool:
    """Whether some lssvm thread pool (or outside scheduler's task) is
    running: nested work stays serial."""
    return _one_thread_depth > 0 or _serial_depth > 0


def parallel_map(func, items):
    """Call ``func`` on every item, on the threads of the call's plan
    (:func:`current_plan`: ``n_jobs``, free cores) with single-threaded
    BLAS; serially if that is one thread, there is one item, or we are
    already inside a parallel region.  ``func`` must write disjoint
    outputs."""
    items = list(items)
    workers = min(current_plan().threads, len(items)) if len(items) > 1 and not in_parallel_region() else 1
    if workers <= 1 or in_parallel_region():
        for item in items:
            func(item)
        return
    func = with_numerical_handler(func)  # a search's raise / collect reaches its workers' warnings too
    with single_threaded_blas(), ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(func, items):
            pass


def current_plan(n_jobs=None):
    """:func:`plan_threads` with this process's circumstances (the active
    :func:`thread_scope`'s plan if there is one)."""
    active = _active.get()
    if active is not None:
        return active
    if n_jobs is not None:
        return plan_threads(n_jobs, usable=usable_cores())
    usable = usable_cores()
    return plan_threads(
        None, usable=usable, online=os.cpu_count(), busy=other_runnable(), outer=_outer_workers(),
        blas_limit=_blas_threads_now(),
    )


_active = contextvars.ContextVar("lssvm_thread_plan", default=None)
_lock = threading.Lock()
_scopes = 0
_limits = None


@contextmanager
def thread_scope(n_jobs=None):
    """Decide the threads once for a whole call and set the BLAS limit once.

    Inside, :func:`current_plan` returns this plan (lssvm's thread pools use
    it); nested scopes keep the outer plan.  The BLAS limit (process-wide)
    is set by the first scope to enter and restored by the last to leave,
    and only if it differs from the limit in force.
    """
    global _scopes, _limits
    if _active.get() is not None:
        yield _active.get()
        return
    plan = current_plan(check_n_jobs(n_jobs))
    token = _active.set(plan)
    with _lock:
        _scopes += 1
        # not while another thread holds BLAS at one thread (single_threaded_blas, outside
        # any scope): it restores its saved limit when it leaves, and this scope, leaving later, would
        # restore that one-thread limit for good
        if _scopes == 1 and _blas_threads_now() != plan.threads and not in_parallel_region():
            _limits = _controller().limit(limits=plan.threads, user_api="blas")
    try:
        yield plan
    finally:
        _active.reset(token)
        with _lock:
            _scopes -= 1
            if _scopes == 0 and _limits is not None:
                _limits.restore_original_limits()
                _limits = None


def uses_threads(method):
    """Run an estimator method inside :func:`thread_scope` of its ``n_jobs``."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with thread_scope(getattr(self, "n_jobs", None)):
            return method(self, *args, **kwargs)

    return wrapper


@contextmanager
def eigh_threads(n):
    """One BLAS thread for an ``eigh`` of order ``n`` below
    :data:`EIGH_SERIAL_BELOW` (:func:`single_threaded_blas`,
    reference-counted with the other one-thread sections, which thread scopes
    respect); else leave the limit (the call's plan) alone."""
    if n >= EIGH_SERIAL_BELOW or _blas_threads_now() == 1:
        yield
        return
    with single_threaded_blas():
        yield


#: A Cholesky factorisation (with its condition estimate) of order below this
#: runs on one BLAS thread: at n = 700 it takes 4 ms there, and in a profile
#: of the default search on two threads about 80 ms.
CHOLESKY_SERIAL_BELOW = 2000


def cholesky_threads(n):
    """One BLAS thread for a Cholesky of order ``n`` below
    :data:`CHOLESKY_SERIAL_BELOW` (:func:`single_threaded_blas`:
    reference-counted with the other one-thread sections, which thread scopes
    respect); else the limit in force.  A context manager.

    OpenBLAS's hand-off to a second thread costs more than a small Cholesky:
    at n = 700 it took 4 ms on one thread, and about 80 ms a call on two in a
    profile of the default search."""
    return single_threaded_blas() if n < CHOLESKY_SERIAL_BELOW else contextlib.nullcontext()


def blas_threads_now():
    """The BLAS thread limit in force (the smallest over the BLAS
    libraries loaded), or None when there is none."""
    return _blas_threads_now()
