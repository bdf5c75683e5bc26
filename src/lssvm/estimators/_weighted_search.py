"""``sample_weight`` for the ``*CV`` searches: the fit signature that
declares it (so scikit-learn's metadata routing sees it) and its checks."""

from __future__ import annotations

from sklearn.base import _fit_context

from .._threads import uses_threads
from ._base import check_sample_weight

__all__ = ["WeightedSearchMixin"]


class WeightedSearchMixin:
    """A search whose ``fit`` takes ``sample_weight`` (before the search base class in the MRO)."""

    @_fit_context(prefer_skip_nested_validation=False)
    @uses_threads
    def fit(self, X, y, groups=None, callback=None, sample_weight=None):
        """Search, then refit the best model on all data.

        Parameters
        ----------
        X, y, groups, callback
            As for the searches without weights (:meth:`lssvm.estimators.search_cv.FamilySearchCV.fit`).
        sample_weight : array-like of shape (n,), optional
            Row weights (rows in memory; grid, Nelder-Mead or CSA search):
            every candidate is scored by the weighted mean of its exact
            weighted out-of-fold errors (the weighted model refitted without
            the held-out rows, :class:`lssvm.cv.WeightedSparseEngine`; the
            fixed-size search with ``size_search="refit"`` only, its size then
            by the refit's weighted v-fold CV), and the best is refitted with
            the weights (the family's ``fit``, e.g. :meth:`lssvm.SparseLSSVR.fit`).

        Returns
        -------
        self
        """
        return self._fit_stages(X, y, groups, callback, sample_weight)

    def _check_weights(self, sample_weight, X, y):
        """Validated weights (:func:`check_sample_weight`), or a clear error for a gradient search."""
        if self.search == "gradient":
            raise ValueError("sample_weight is not available with search='gradient'; use search='grid', "
                             "'nelder-mead' or 'csa'")
        return check_sample_weight(self, sample_weight, X, y)
