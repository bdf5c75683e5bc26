"""Two threads for a small CV+ call's fold models (issue 19, session 27).

A CV+ call at m = 2,000 with r = 100 spends about 1 ms in its ten fold
models (a SYRK and a Cholesky each, ~60 us of BLAS per fold, which release
the GIL), most of the call.  On one BLAS thread per Python thread, two
halves of the folds run side by side on two cores.  lssvm's thread rule
(:func:`lssvm._threads.current_plan`) costs ~0.8 ms to decide (three reads
of the run queue 0.2 ms apart, and this process's thread states), as much
as it would save; and :func:`lssvm._parallel.parallel_map` starts a pool
per call.  So a small call decides here, in ~20 us, and reuses one worker
thread:

* ``n_jobs`` given (the estimator's): as lssvm's rule for it (``1``:
  serial; ``k > 1`` or ``-1``: two threads where two cores are usable);
* ``n_jobs=None``: two threads only if two cores are usable (affinity and
  cgroup quota) and the run queue (``/proc/loadavg``, one read) shows no
  runnable task besides the caller: a core is free now.  Otherwise, inside
  another lssvm thread pool or a Dask task, and where ``/proc`` is missing:
  serial.

The worker runs single-threaded BLAS (the caller's scope), never spins, and
on a busy machine the two halves share a core at about the serial cost.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor, wait

from .._parallel import in_parallel_region
from .._threads import current_plan, usable_cores

__all__ = ["fold_threads", "run_split"]


def fold_threads(n_jobs=None, loadavg="/proc/loadavg"):
    """Threads (1 or 2) for a small CV+ call's fold models (module notes).

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``.
    loadavg : str
        Where the run queue is read (tests point it elsewhere).

    Returns
    -------
    int
    """
    if in_parallel_region():
        return 1
    if n_jobs is not None:
        return min(2, current_plan(n_jobs).threads)
    try:  # first the run queue (one read, ~6 us): busy machines stop here
        with open(loadavg) as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 1
    return 2 if running <= 1 and usable_cores() >= 2 else 1


@functools.lru_cache(maxsize=1)
def _worker():
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="lssvm-cvplus")


if hasattr(os, "register_at_fork"):  # a forked child has no worker thread: it must start its own, not wait
    os.register_at_fork(after_in_child=_worker.cache_clear)


def _run_range(func, start, stop):
    for k in range(start, stop):
        func(k)


def run_split(func, n, threads):
    """``func(k)`` for k = 0 .. n - 1: the second half on the worker thread
    and the first on the caller's when ``threads >= 2``, else in order.
    ``func`` must write disjoint outputs; an exception of either half is
    raised after both halves have stopped."""
    if threads < 2 or n < 2:
        _run_range(func, 0, n)
        return
    half = (n + 1) // 2
    future = _worker().submit(_run_range, func, half, n)
    try:
        _run_range(func, 0, half)
    finally:
        wait([future])
    future.result()
