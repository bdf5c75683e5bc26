"""The pass runner: how one pass over Dask row blocks is computed.

A pass is a list of per-block tasks reduced by a tree of merges
(:func:`tree_reduce`) and computed with :func:`run_pass`, which limits
BLAS to one thread around ``dask.compute`` (tasks of the threaded
scheduler share this process) and enters the reporters registered with
:func:`report_passes` (progress bars of the CLI).

The reporters live in a :class:`contextvars.ContextVar`, not a module
list: a ``report_passes`` block affects the passes run by its own thread
(or asyncio task) only, so two threads fitting side by side do not see
each other's progress bars.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from contextvars import ContextVar

import dask

from ..._threads import single_threaded_blas

__all__ = ["FAN_IN", "report_passes", "run_pass", "tree_reduce", "shared"]

#: Parts merged per node of the reduction tree.
FAN_IN = 8

# the reporters of the current context (thread / asyncio task), innermost last
_reporters: ContextVar[tuple] = ContextVar("lssvm_dask_pass_reporters", default=())


@contextmanager
def report_passes(factory):
    """Call ``factory(label)`` around every pass over the data run by this
    thread inside the block; it returns a context manager (e.g. a progress
    bar) entered while the pass runs."""
    token = _reporters.set((*_reporters.get(), factory))
    try:
        yield
    finally:
        _reporters.reset(token)


def run_pass(label, obj):
    """Compute ``obj`` (a Dask collection or delayed) as one pass named
    ``label``: BLAS limited to one thread, the reporters entered."""
    # tasks of the local threaded scheduler share this process: one BLAS
    # thread each (distributed workers start with one BLAS thread already)
    with ExitStack() as stack:
        stack.enter_context(single_threaded_blas())
        for factory in _reporters.get():
            stack.enter_context(factory(label))
        (out,) = dask.compute(obj)
    return out


def tree_reduce(parts, merge):
    """Delayed tree reduction of ``parts`` by ``merge(*parts)``, ``FAN_IN`` at a time."""
    parts = list(parts)
    while len(parts) > 1:
        parts = [dask.delayed(merge, pure=True)(*parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


def shared(obj):
    """One graph node for a value every task reads (sent once per worker)."""
    return dask.delayed(obj, traverse=False)
