"""The Nyström search criterion on Dask data: the interface of
:class:`lssvm.selection.nystrom.NystromCV`, computed by the sparse fit with the
rank-k Nyström map as its whitener (:func:`lssvm.backends.dask.fit_sparse`).

The columns are drawn as the in-memory criterion draws them from the same
``random_state``, so that a search on Dask scores and refits the model the
in-memory search would, on the same folds.  Per candidate: two to three passes
(the training pass, then LOO or the two k-fold passes), each reduced to sums in
the tasks.
"""

from __future__ import annotations

from ..._params import count_or_fraction
from ...solvers.nystrom import nystrom_projection
from .families import sampled_columns
from .family_cv import _DaskRowsCV
from .sparse import fit_sparse

__all__ = ["DaskNystromCV"]


class DaskNystromCV(_DaskRowsCV):
    """:class:`lssvm.selection.nystrom.NystromCV` on Dask data ("random" or given
    columns, drawn once; exact LOO or k-fold with the columns kept)."""

    def __init__(self, X, y, *, n_basis=None, rank=0.5, basis="random", rcond=1e-10, **kw):
        super().__init__(X, y, **kw)
        self.rank_spec, self.rcond = rank, float(rcond)
        self._Z, self._idx = sampled_columns(self.data, self._kernel({}), basis, n_basis, self.random_state)
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
