"""The Nyström and fixed-size estimators on Dask input: the engine of a Dask
fit (and Nyström's ``_fit_dask``), as mixins of :class:`_BaseNystromLSSVM`
(:mod:`lssvm.estimators.nystrom`) and :class:`_BaseFixedSizeLSSVM`
(:mod:`lssvm.estimators.fixed_size`).

The three families are one model (the documentation's Mathematics page, §6),
so both engines are the sparse one (:class:`lssvm.backends.dask.DaskSparseFit`):

* Nyström: the sparse fit on the sampled columns with the rank-k Nyström map
  as its whitening;
* fixed size: SCDP runs on the pool's Gram sums; at its support the model is
  the sparse one on those prototypes (a Dask sparse fit on them whose
  training pass runs when a CV method first needs it; its ``_fit_dask`` is
  in :mod:`lssvm.estimators.fixed_size`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FixedSizeDaskMixin"]


class FixedSizeDaskMixin:
    """The engine of a Dask fit of the fixed-size models (their ``_fit_dask``
    sets it: :func:`lssvm.backends.dask.families.support_engine`)."""

    def _fitted_engine(self):
        """The engine of a Dask fit: the sparse model on the support, a
        :class:`lssvm.backends.dask.DaskSparseFit` whose training pass runs
        at its first use; otherwise the in-memory one, where the estimator
        has it.

        Raises
        ------
        ValueError
            Where no one sparse model is the fitted one (outputs on different
            prototypes, the intercept left out, no prototype).
        """
        engine, fitted = getattr(self, "_dask_engine", (None, None))
        if fitted is not None and fitted is getattr(self, "coef_full_", None):  # not refitted in memory since
            if isinstance(engine, str):
                raise ValueError(engine)
            return engine
        in_memory = getattr(super(), "_fitted_engine", None)
        if in_memory is None:
            raise ValueError(f"{type(self).__name__} has no engine: it was not fitted on Dask input")
        return in_memory()

    def _dask_group_engine(self, targets):
        """The engine of a Dask-fitted regressor's outputs ``targets``, which share a support: the sparse
        model on that support fitted to those outputs (its training pass deferred to its first use, then
        kept with the fit)."""
        from ..backends.dask import RowData
        from ..backends.dask import families as fam

        cache = self.__dict__.setdefault("_group_engines", {})
        key = (id(self.coef_full_), np.asarray(targets).tobytes())
        if key not in cache:
            data = self._dask_data
            rows = RowData(data.X, data.y[:, targets], data.groups, data.offsets)
            W = self.coef_full_[:, targets]
            support = np.flatnonzero(W[:self.n_basis_, 0] != 0)
            cache[key] = fam.support_engine(rows, self.kernel_, self.basis_vectors_, self.basis_indices_, W, support)
        return cache[key]
