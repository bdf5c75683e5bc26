"""Execution backends beyond in-memory NumPy.

:mod:`lssvm.backends.dask` runs the sparse estimators on Dask collections,
block by block; it is imported only when Dask input is given.
"""

__all__ = ["is_dask_collection"]


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series), tested
    without importing Dask."""
    return callable(getattr(obj, "__dask_graph__", None))
