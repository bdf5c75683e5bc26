"""The fixed-size and Nyström search criteria on Dask data: the
interface of :class:`lssvm.selection.FixedSizeCV` and
:class:`lssvm.selection.NystromCV`, computed by the passes of
:mod:`lssvm.backends.dask.fixed_size` (fixed size; its criterion,
:class:`~lssvm.backends.dask.fixed_size.DaskFixedSizeCV`, is there) and the sparse fit with the
Nyström map (:func:`lssvm.backends.dask.fit_sparse`).

The rows are drawn as those criteria draw them from the same
``random_state`` (the refit seed first for fixed size, then the pool; the
columns for Nyström), so that a search on Dask scores and refits the model
the in-memory search would, on the same folds.  Per candidate: one pass
(fixed size: the folds' sums; the CV curves, SCDP runs and size rule are
then in memory; with the error rate one more pass counts the
misclassified rows of every fold's SCDP path) or two to three (Nyström: the training pass, then LOO or
the two k-fold passes), each reduced to sums in the tasks.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..._params import count_or_fraction
from ...basis import near_duplicate_free
from ...selection.criteria import CVPath
from ...solvers import check_alphas
from ...solvers.nystrom import nystrom_projection
from .families import nystrom_columns
from .rows import as_row_data, count_classes
from .sparse import fit_sparse, resolve_dask_cv

__all__ = ["DaskNystromCV"]


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


class DaskNystromCV(_DaskRowsCV):
    """:class:`lssvm.selection.NystromCV` on Dask data ("random" or given
    columns, drawn once; exact LOO or k-fold with the columns kept)."""

    def __init__(self, X, y, *, n_basis=None, rank=0.5, basis="random", rcond=1e-10, **kw):
        super().__init__(X, y, **kw)
        self.rank_spec, self.rcond = rank, float(rcond)
        self._Z, self._idx = nystrom_columns(self.data, self._kernel({}), basis, n_basis, self.random_state)
        self.rank = count_or_fraction("rank", rank, 0.5, self._idx.size)

    def __call__(self, **params):
        kern = self._kernel(params)
        Z, idx = self._rows(kern)
        k = count_or_fraction("rank", self.rank_spec, 0.5, idx.size)
        fit = fit_sparse(self.data, kern, None, None, None, self.rcond, self.classes, basis_rows=(Z, idx),
                         whitener=nystrom_projection(kern(Z, Z), k, self.rcond))
        sums = fit.loo_sums(self.alphas) if self.loo else fit.cv_sums(self.spec, self.alphas, "keep")
        return self._finish(sums.sse, sums.wrong, {})

    @property
    def columns(self):
        return self._idx
