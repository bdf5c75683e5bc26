"""Weighted CV criteria of the Nyström and fixed-size searches: every candidate is
the weighted model (:mod:`lssvm.solvers.weighted_rls`) and its scores are the
weighted means of its exact weighted out-of-fold errors
(:class:`lssvm.cv.WeightedSparseEngine`), ``sum_i w_i r_i^2 / sum w`` and
``sum_i w_i [row i misclassified] / sum w``.  The columns or prototypes a
method draws come from the rows of positive weight, so a zero weight is a
removed row.  (The sparse criterion takes ``sample_weight`` itself,
:class:`lssvm.selection.SparseLSSVMCV`.)
"""

from __future__ import annotations

import numpy as np

from .._params import count_or_fraction
from .._threads import uses_threads
from ..basis import sampled_columns
from ..cv import WeightedSparseEngine
from ..solvers import factorize_weighted_rls
from ..solvers.nystrom import nystrom_projection
from ..solvers.weighted_rls import check_row_weights
from .criteria import NystromCV

__all__ = ["WeightedNystromCV"]


class WeightedNystromCV(NystromCV):
    """:class:`lssvm.selection.NystromCV` with row weights: the weighted rank-k
    Nyström model of each candidate, scored by its exact weighted LOO or
    k-fold errors (the fitted rank-k map kept in every fold, as the
    unweighted criterion and :meth:`lssvm.NystromLSSVR.cv_error` keep it).

    Parameters
    ----------
    X, y, n_basis, rank, basis, rcond, **kw
        As for :class:`lssvm.selection.NystromCV`.
    sample_weight : array-like of shape (n,)
        Row weights, finite and >= 0 with a positive sum.

    Notes
    -----
    Per call: O(n c) kernel values, O(c^3) for the rank-k map, O(n c k +
    n k^2) for the weighted factorisation; per alpha O(n k) for LOO, or
    O(h^2 k + h^3) per fold of h rows.
    """

    def __init__(self, X, y, *, sample_weight, n_basis=0.1, rank=0.5, basis="random", rcond=1e-10, **kw):
        self._weights_given, self._draw_spec = sample_weight, (basis, n_basis)
        super().__init__(X, y, n_basis=n_basis, rank=rank, basis=basis, rcond=rcond, **kw)

    def _init_rows(self, kernel_independent, draw):
        """The columns a method draws come from the positive-weight rows (indices given are kept)."""
        self.sample_weight = check_row_weights(self._weights_given, self.X.shape[0])
        basis, n_basis = self._draw_spec
        if isinstance(basis, str):
            positive = np.flatnonzero(self.sample_weight > 0)

            def draw(kern, rng):
                kern = kern if kern is not None else self._kernel({})
                return positive[sampled_columns(self.X[positive], kern, basis, n_basis, rng)]

        super()._init_rows(kernel_independent, draw)

    @uses_threads
    def __call__(self, **params):
        kern = self._kernel(params)
        rows, C = self._rows_and_columns(kern, params)
        W = C[rows]
        k = count_or_fraction("rank", self.rank_spec, 0.5, rows.size)
        fac = factorize_weighted_rls(C, W, self.Y, self.sample_weight, rcond=self.rcond, warn=False,
                                     whitener=nystrom_projection(W, k, self.rcond))
        engine = WeightedSparseEngine(fac, self.X, self.X[rows], rows, kern, self.rcond, self.classes, self.n_jobs)
        sums = engine.loo_sums(self.alphas) if self.loo else engine.cv_sums(self.folds, self.alphas, "keep")
        return self._path_from_sums(sums)
