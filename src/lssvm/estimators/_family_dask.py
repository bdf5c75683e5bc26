"""The Nyström and fixed-size estimators on Dask input: their ``_fit_dask``
and the engine of a Dask fit, as mixins of :class:`_BaseNystromLSSVM`
(:mod:`lssvm.estimators.nystrom`) and :class:`_BaseFixedSizeLSSVM`
(:mod:`lssvm.estimators.fixed_size`).

The three families are one model (the documentation's Mathematics page, §6),
so both engines are the sparse one (:class:`lssvm.backends.dask.DaskSparseFit`):

* Nyström: the sparse fit on the sampled columns with the rank-k Nyström map
  as its whitening;
* fixed size: SCDP runs on the pool's Gram sums; at its support the model is
  the sparse one on those prototypes (a Dask sparse fit on them whose
  training pass runs when a CV method first needs it).
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from .._params import count_or_fraction
from ..cv.fixed_size import scdp_seed
from ..kernels import resolve_gamma
from ..solvers.nystrom import nystrom_projection
from ._scale import is_scale

__all__ = ["NystromDaskMixin", "FixedSizeDaskMixin", "nystrom_map"]


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
        Z, S = fam.nystrom_columns(data, kernel, self.basis, self.n_basis, self.random_state)
        rcond = float(self.rcond)
        projection = nystrom_projection(kernel(Z, Z), self._rank_for(S.size), rcond)
        fit = dask_backend.fit_sparse(data, kernel, None, None, None, rcond, classes, basis_rows=(Z, S),
                                      whitener=projection, fold_whitener=partial(nystrom_map, rank=self.rank,
                                                                                 rcond=rcond))
        beta, b = fit.solution.coef(float(self.alpha))
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = S
        self.n_basis_ = int(S.size)
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

    def _dask_cv(self, cv, alphas, groups, reduce):
        """Out-of-fold residuals (A, m, v), lazy, or with ``reduce`` the
        :class:`lssvm.cv.ErrorSums`, of a Dask fit: the engine's, with the
        held-out columns kept (the CV of the fixed Nyström kernel)."""
        fit = self._dask_fit
        if cv == "loo":
            return fit.loo_sums(alphas) if reduce else fit.loo_residuals(alphas)
        folds = fit.resolve_cv(cv, groups, is_classifier(self))
        if reduce:
            return fit.cv_sums(folds, alphas, "keep")
        return fit.targets()[None] - fit.cv_outputs(folds, alphas, "keep")


class FixedSizeDaskMixin:
    """``_fit_dask`` and the engine of a Dask fit of the fixed-size models."""

    def _fit_dask(self, X, y, groups, classification):
        """Fit on Dask collections: the pool drawn as in memory, one pass of
        per-fold sums (:mod:`lssvm.backends.dask.families`), then the
        in-memory fit on the sums; the engine is the sparse model on the
        chosen support (its pass deferred to its first use)."""
        from ..backends import dask as dask_backend
        from ..backends.dask import families as fam
        from ._whole_pool import dask_whole_pool_cv

        data = dask_backend.as_row_data(X, y, groups, numeric_y=not classification)
        Xg = data.X if is_scale(self.gamma) else None  # not ==: an ARD width vector
        kernel = self._kernel_for(Xg)
        self.gamma_ = resolve_gamma(self.gamma, Xg)
        classes = None
        if classification:
            self.classes_ = classes = dask_backend.count_classes(data)
            if self._scoring == "error_rate" and self.classes_.size > 2:
                raise ValueError("scoring='error_rate' needs two classes: with more, each one-vs-rest output picks "
                                 "its own size; use scoring='mse'")
        else:
            self._y_1d = data.y.ndim == 1
        rng = check_random_state(self.random_state)
        Z, zidx = fam.prototype_pool(data, kernel, self.basis, self.n_basis, rng)
        self._check_max_size(Z.shape[0])
        seed = scdp_seed(rng)
        folds = None if self.cv is None else dask_backend.resolve_dask_cv(self.cv, data, classification)
        rows = fam.summed_rows(data, Z, kernel, classes, folds)
        self.n_features_in_ = data.n_features
        self._X_fit, self._Y_fit, self._dask_data = None, None, data  # predict_interval refits on Dask rows
        self._dask_sums = (folds, rows) if getattr(self, "calibration", None) and folds is not None else None
        whole_pool_cv = None
        if folds is not None and zidx is not None:
            whole_pool_cv = dask_whole_pool_cv(data, Z, zidx, kernel, folds, classes, self._scoring)
        self._fit_rows(kernel, Z, zidx, rows, seed, whole_pool_cv)
        # the engine: the sparse model on the support (the Mathematics page, §4, §6), its training pass deferred
        # to its first use.  The pool's sums restricted to the support hold the same moments in exact arithmetic,
        # but whitening them afterwards multiplies their rounding by cond(K_SS) (coefficients off by 5e-6 at
        # cond 1e8, against 3e-12 from the pass: benchmarks/dask_support_moments.py)
        S = self.support_
        engine = None if S.size == 0 else dask_backend.fit_sparse(
            data, kernel, None, None, None, 1e-10, classes, basis_rows=(Z[S], None if zidx is None else zidx[S]),
            deferred=True)
        self._engine = engine
        self._dask_engine = (engine, self.coef_full_)  # the fit it belongs to (an in-memory refit replaces both)
        return self

    def _fitted_engine(self):
        """The engine of a Dask fit (the sparse model on the support, a
        :class:`lssvm.backends.dask.DaskSparseFit` whose training pass runs
        at its first use); otherwise the in-memory one, where the estimator
        has it."""
        engine, fitted = getattr(self, "_dask_engine", (None, None))
        if fitted is not None and fitted is getattr(self, "coef_full_", None):
            if engine is None:
                raise ValueError("the fitted fixed-size model has no prototype in its support (its model is the "
                                 "intercept alone), so no basis to cross-validate on; lower alpha, raise max_size "
                                 "or use solver='direct'")
            return engine
        in_memory = getattr(super(), "_fitted_engine", None)
        if in_memory is None:
            raise ValueError(f"{type(self).__name__} has no engine: it was not fitted on Dask input")
        return in_memory()
