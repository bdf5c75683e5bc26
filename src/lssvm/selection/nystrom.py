"""The Nyström family's search criteria (Ding & Liao 2012, Algorithm 2): the LS-SVM on a rank-k Nyström
kernel of sampled columns, scored by its exact LOO or k-fold path over alphas (:class:`NystromCV`), and
the weighted model's exact weighted CV (:class:`WeightedNystromCV`).

The weighted criterion's scores are the weighted means of its exact weighted out-of-fold errors
(:class:`lssvm.cv.WeightedSparseEngine`), ``sum_i w_i r_i^2 / sum w`` and ``sum_i w_i [row i
misclassified] / sum w``; the columns a method draws come from the rows of positive weight, so a zero
weight is a removed row.
"""

from __future__ import annotations

import numpy as np

from .._params import count_or_fraction
from .._threads import uses_threads
from ..basis import sampled_columns
from ..cv import WeightedSparseEngine
from ..solvers import factorize_weighted_rls
from ..solvers.nystrom import nystrom_factorize, nystrom_projection
from ..solvers.weighted_rls import check_row_weights
from .criteria import _RowsCV

__all__ = ["NystromCV", "WeightedNystromCV"]


class NystromCV(_RowsCV):
    """Paper 003's approximate CV: the LS-SVM on a rank-k Nyström kernel.

    Parameters
    ----------
    X, y, kernel, cv, alphas, classification, groups, random_state, kernel_params
        As for :class:`DenseLSSVMCV`.
    n_basis : int or float, default=0.1
        c columns (a count or a fraction of n), drawn once at construction
        (the same columns for every candidate, so the criterion is smooth in
        the parameters).
    rank : int or float, default=0.5
        k (a count or a fraction of c).
    basis : {"random", "kcenter", "fvs"} or 1-D int array, default="random"
        As for :class:`lssvm.NystromLSSVR`; "fvs" depends on the kernel and
        is redrawn per candidate from a fixed seed.
    rcond : float in (0, 1), default=1e-10
        As for :class:`lssvm.NystromLSSVR`.

    Notes
    -----
    Per call: O(n c) kernel values (from cached distances for RBF), O(c^3)
    ``eigh``, O(n c k) features; per alpha O(n k) for LOO, or O(n k^2)
    per fold plus O(k^3 + h k) per fold and alpha.  Memory O(n c).
    """

    def __init__(self, X, y, *, n_basis=0.1, rank=0.5, basis="random", rcond=1e-10, **kw):
        super().__init__(X, y, **kw)
        self.rank_spec = rank
        self.rcond = float(rcond)

        def draw(kern, rng):
            return sampled_columns(self.X, kern if kern is not None else self._kernel({}), basis, n_basis, rng)

        self._init_rows(not isinstance(basis, str) or basis != "fvs", draw)
        #: k for the fixed columns (None while FVS draws them per candidate)
        self.rank = None if self._fixed is None else count_or_fraction("rank", rank, 0.5, self._fixed.size)

    def _factorize_rows(self, kern, params):
        rows, C = self._rows_and_columns(kern, params)
        k = count_or_fraction("rank", self.rank_spec, 0.5, rows.size)
        return nystrom_factorize(C, C[rows], self.Y, rank=k, rcond=self.rcond)

    @uses_threads
    def __call__(self, **params):
        fac = self._factorize_rows(self._kernel(params), params)
        return self._path(fac.loo_residuals(self.alphas) if self.loo else fac.cv_residuals(self.folds, self.alphas))

    @property
    def columns(self):
        """The sampled rows (kernel-independent sampling)."""
        return self._fixed


class WeightedNystromCV(NystromCV):
    """:class:`NystromCV` with row weights: the weighted rank-k
    Nyström model of each candidate, scored by its exact weighted LOO or
    k-fold errors (the fitted rank-k map kept in every fold, as the
    unweighted criterion and :meth:`lssvm.NystromLSSVR.cv_error` keep it).

    Parameters
    ----------
    X, y, n_basis, rank, basis, rcond, **kw
        As for :class:`NystromCV`.
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
