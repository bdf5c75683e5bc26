"""Process-wide control of BLAS threads for lssvm's own thread pools.

Row blocks of kernels and CV folds run one per core on single-threaded BLAS.
``threadpoolctl.threadpool_limits`` changes a process-global setting, so two
overlapping uses (user threads, or nested lssvm calls) must not each save
and restore it: this module reference-counts a single limit and restores the
original setting when the last user leaves.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

from ._threads import current_plan
from .exceptions import with_numerical_handler

__all__ = ["single_threaded_blas", "serial_region", "in_parallel_region", "parallel_map"]

_lock = threading.Lock()
_depth = 0
_serial = 0
_controller = None


@contextmanager
def single_threaded_blas():
    """Limit BLAS to one thread while any caller is inside this context.

    The loaded BLAS libraries are found once per process (a fresh
    ``threadpool_limits`` looks them up again: about 1 ms per call), and
    BLAS is left alone where it already runs one thread."""
    global _depth, _controller
    with _lock:
        _depth += 1
        if _depth == 1:
            # what threadpoolctl's limit(limits=1) and restore_original_limits do, without rebuilding its
            # selection and limiter per call (~0.1 ms on a cold call; CV+ enters this once per call)
            saved = [(lib, lib.num_threads) for lib in _blas_controllers()]
            _controller = [(lib, n) for lib, n in saved if n != 1] or None
            for lib, _ in _controller or ():
                lib.set_num_threads(1)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _controller is not None:
                for lib, n in _controller:
                    lib.set_num_threads(n)
                _controller = None


@functools.lru_cache(maxsize=1)
def _blas_libraries():
    return ThreadpoolController()


@functools.lru_cache(maxsize=1)
def _blas_controllers():
    """The BLAS libraries' threadpoolctl controllers (of :func:`_blas_libraries`, found once)."""
    return tuple(_blas_libraries().select(user_api="blas").lib_controllers)


@contextmanager
def serial_region():
    """Run lssvm's own work serially (no thread pools) inside this context,
    without touching BLAS: for tasks of an outside scheduler (Dask), which
    supplies the parallelism.  Changing BLAS limits per task would be
    wrong there: ``threadpool_limits`` costs milliseconds and, toggled by
    concurrent tasks, serialised them."""
    global _serial
    with _lock:
        _serial += 1
    try:
        yield
    finally:
        with _lock:
            _serial -= 1


def in_parallel_region() -> bool:
    """Whether some lssvm thread pool (or outside scheduler's task) is
    running: nested work stays serial."""
    return _depth > 0 or _serial > 0


def parallel_map(func, items):
    """Call ``func`` on every item, on the threads of the call's plan
    (:func:`lssvm._threads.current_plan`: ``n_jobs``, free cores) with
    single-threaded BLAS; serially if that is one thread, there is one item,
    or we are already inside a parallel region.  ``func`` must write
    disjoint outputs."""
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
