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
  training pass runs when a CV method first needs it; its ``_fit_dask`` and
  engine are in :mod:`lssvm.estimators.fixed_size`).
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

from .._params import count_or_fraction
from ..kernels import resolve_gamma
from ..solvers.nystrom import nystrom_projection
from ._scale import is_scale

__all__ = ["NystromDaskMixin", "nystrom_map"]


def nystrom_map(W, rank, rcond):
    """The Nyström map of c columns with kernel block ``W`` (c, c) at the
    estimator's ``rank`` (a count, capped to c; a fraction of c; None: half):
    what a fold that removes columns refits on its kept ones with."""
    c = W.shape[0]
    if isinstance(rank, Integral) and not isinstance(rank, bool):
        rank = min(int(rank), c)
    return nystrom_projection(W, count_or_fraction("rank", rank, 0.5, c), rcond)


class NystromDaskMixin:
    """``_fit_dask``, the engine of a Dask fit and the guards of a Dask-fitted model."""

    def _fit_dask(self, X, y, classification):
        """Fit the low-rank Nyström model on Dask collections: the columns
        drawn as in memory, then one pass of feature moments
        (:func:`lssvm.backends.dask.fit_sparse` with the map
        ``nystrom_projection(K_SS, k)``)."""
        from ..backends import dask as dask_backend
        from ..backends.dask import families as fam

        if self.predictor != "low-rank":
            raise ValueError(f"predictor={self.predictor!r} needs every training row and its dual coefficient in "
                             "memory; on Dask input use predictor='low-rank' (the model the CV methods score)")
        data = dask_backend.as_row_data(X, y, numeric_y=not classification)
        Xg = data.X if is_scale(self.gamma) else None  # not ==: an ARD width vector
        kernel = self._kernel_for(Xg)
        self.gamma_ = resolve_gamma(self.gamma, Xg)
        classes = dask_backend.count_classes(data) if classification else None
        given = self._given_points(data.n_features, kernel, stacklevel=6)  # points stay the basis
        Z, S = given if given is not None else fam.nystrom_columns(data, kernel, self.basis, self.n_basis,
                                                                   self.random_state)
        rcond = float(self.rcond)
        projection = nystrom_projection(kernel(Z, Z), self._rank_for(Z.shape[0]), rcond)
        fit = dask_backend.fit_sparse(data, kernel, None, None, None, rcond, classes, basis_rows=(Z, S),
                                      whitener=projection, fold_whitener=partial(nystrom_map, rank=self.rank,
                                                                                 rcond=rcond))
        beta, b = fit.solution.coef(float(self.alpha))
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = S
        self.n_basis_ = int(Z.shape[0])
        self.rank_ = int(projection.shape[1])
        self.factorization_ = None
        self._X_fit = None
        self._dask_fit = self._engine = fit  # the engine (lssvm.cv.SparseEngine protocol)
        self._a, self._b, self._beta = None, b, beta
        if classification:
            self.classes_ = classes
        else:
            self._y_1d = data.y.ndim == 1
        # a = (y - f(x)) / alpha, lazily: the dual coefficients are the scaled training residuals
        a = (fit.targets() - self._decision_2d(data.X)) / float(self.alpha)
        single = self._single_output
        self.dual_coef_ = a[:, 0] if single else a
        self.intercept_ = float(b[0]) if single else b
        return self

    def _fitted_engine(self):
        """The engine of a Dask fit (:class:`lssvm.backends.dask.DaskSparseFit`
        on the Nyström features); otherwise the in-memory one, where the
        estimator has it."""
        engine = getattr(self, "_dask_fit", None)
        if engine is not None:
            return engine
        in_memory = getattr(super(), "_fitted_engine", None)
        if in_memory is None:
            raise ValueError(f"{type(self).__name__} has no engine: it was not fitted on Dask input")
        return in_memory()

    def _in_memory(self, what):
        if getattr(self, "_dask_fit", None) is not None:
            raise ValueError(f"{what} needs the training rows in memory; this model was fitted on Dask input")
