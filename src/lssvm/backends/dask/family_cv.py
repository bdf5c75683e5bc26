"""The common part of the search criteria on Dask data (:class:`_DaskRowsCV`): data, classes, alphas,
folds and kernels from parameters.  The families' criteria build on it in their own modules
(:mod:`lssvm.backends.dask.nystrom`, :mod:`lssvm.backends.dask.fixed_size`), drawing the rows as the
in-memory criteria draw them from the same ``random_state``, so that a search on Dask scores and refits
the model the in-memory search would, on the same folds.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ...basis import near_duplicate_free
from ...selection.criteria import CVPath
from ...solvers import check_alphas
from .rows import as_row_data, count_classes
from .sparse import resolve_dask_cv

__all__: list[str] = []  # the families' criteria import _DaskRowsCV from this module


class _DaskRowsCV:
    """Common part: data, classes, alphas, folds and kernels from parameters."""

    def __init__(self, X, y, *, kernel="rbf", cv=10, alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None):
        from ...kernels import make_kernel

        self._make_kernel = make_kernel
        self.data = as_row_data(X, y, groups, numeric_y=not classification)
        self.classification = bool(classification)
        self.classes = count_classes(self.data) if self.classification else None
        self.alphas, _ = check_alphas(alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        self.random_state = check_random_state(random_state)
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        self.cv = cv
        self.spec = None if self.loo else resolve_dask_cv(cv, self.data, self.classification)
        self.folds = None  # the fold of every row is not kept in memory
        self.draw_seed = None
        self.n_evaluations = 0

    def _kernel(self, params):
        params = {**self.kernel_params, **params}
        d = params.get("degree")
        if isinstance(d, (float, np.floating)) and float(d).is_integer():  # grids hold floats
            params["degree"] = int(d)
        return self._make_kernel(self.kernel, **params)

    def _rows(self, kern):
        """The drawn rows kept at ``kern`` (near-duplicates dropped, as the refit does)."""
        keep = near_duplicate_free(self._Z, kern)
        return self._Z[keep], self._idx[keep]

    def rows_for(self, **params):
        """Training rows of the model at ``params``."""
        return self._rows(self._kernel(params))[1]

    def _finish(self, sse, wrong, info):
        m, v = self.data.n_samples, sse.shape[1]
        err = wrong / m if (self.classification and wrong is not None) else None
        self.n_evaluations += 1
        return CVPath(self.alphas, sse.sum(axis=1) / (m * v), err, info)
