"""Training rows on Dask for the shared sparse CV criterion
(:class:`lssvm.selection.SparseLSSVMCV`): what it needs of the rows, by passes."""

from __future__ import annotations

from .rows import as_row_data, count_classes
from .sparse import draw_basis, fit_sparse, resolve_dask_cv

__all__ = ["DaskRows"]


class DaskRows:
    """Dask inputs, targets and groups, checked and aligned, as a row source
    of :class:`lssvm.selection.SparseLSSVMCV` (pass it as ``X``, with ``y=None``).

    Parameters
    ----------
    X, y : Dask collections (or NumPy ``y``)
    groups : array-like of shape (m,), optional
    classification : bool

    Notes
    -----
    The classes take one pass; a criterion then draws its basis once
    (:meth:`draw_basis`) and, per candidate, trains in one pass
    (:meth:`fit_engine`) and scores in one LOO or two CV passes: the
    per-row results are reduced in the tasks, nothing of size m is held.
    """

    rows_in_memory = False

    def __init__(self, X, y, groups=None, classification=False):
        self.data = as_row_data(X, y, groups, numeric_y=not classification)
        self.classification = bool(classification)
        self.classes = count_classes(self.data) if self.classification else None

    @property
    def n_samples(self):
        return self.data.n_samples

    @property
    def n_features(self):
        return self.data.n_features

    def resolve_cv(self, cv, classifier):
        """The folds of ``cv`` (:class:`lssvm.backends.dask.DaskFolds`)."""
        return resolve_dask_cv(cv, self.data, classifier)

    def draw_basis(self, basis, n_basis, random_state, kernel_for=None):
        """Basis points and rows: "pchol" (on a row sample, at ``kernel_for(sample)``),
        "random", row indices or points."""
        return draw_basis(self.data, basis, n_basis, random_state, kernel_for=kernel_for,
                          classification=self.classification)

    def fit_engine(self, kernel, basis_rows, rcond):
        """The engine (:class:`lssvm.backends.dask.DaskSparseFit`) of the
        model on the given basis (one pass)."""
        return fit_sparse(self.data, kernel, None, None, None, rcond, self.classes, basis_rows=basis_rows)
