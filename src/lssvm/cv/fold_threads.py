"""Two threads for a small CV+ call's fold models, on request.

A CV+ call at m = 2,000 with r = 100 spends about 1 ms in its ten fold
models (a SYRK and a Cholesky each, ~60 us of BLAS per fold; BLAS and LAPACK
release the GIL).  On one BLAS thread per Python thread, two halves of the
folds can run side by side, on one reused worker thread
(:func:`lssvm._parallel.parallel_map` starts a pool per call, and lssvm's
thread rule, :func:`lssvm._threads.current_plan`, costs ~0.8 ms to decide
for ``n_jobs=None``: three reads of the run queue 0.2 ms apart).

* ``n_jobs=None`` (the default): serial.  On this project's 2-core machine
  two threads never beat one, even in moments when the run queue showed a
  free core (pinned to one core they cost 6 %, under partial load 5-15 %,
  and two-thread DGEMM ran at 66 against 82 GFlop/s on one thread), so a
  cheap load test was not enough to take them by default.
* ``n_jobs`` given (the estimator's): as lssvm's rule for it (``1``:
  serial; ``k > 1`` or ``-1``: two threads where two cores are usable).
* Inside another lssvm thread pool or a Dask task: serial.

The worker runs single-threaded BLAS (the caller's scope) and never spins.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor, wait

from .._threads import current_plan, in_parallel_region
from ..exceptions import with_numerical_handler

__all__ = ["fold_threads", "run_split"]


def fold_threads(n_jobs=None):
    """Threads (1 or 2) for a small CV+ call's fold models (module notes).

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``; None (the default) is serial.

    Returns
    -------
    int
    """
    if n_jobs is None or in_parallel_region():
        return 1
    return min(2, current_plan(n_jobs).threads)


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
    future = _worker().submit(with_numerical_handler(_run_range), func, half, n)
    try:
        _run_range(func, 0, half)
    finally:
        wait([future])
    future.result()
