"""The Nyström estimators on Dask input: fit, CV and the rows a
Dask fit does not hold, as a mixin of :class:`_BaseNystromLSSVM`
(:mod:`lssvm.estimators.nystrom`).  The passes are those of the sparse
model with the Nyström feature map as its whitening
(:mod:`lssvm.backends.dask.families`)."""

from __future__ import annotations

from sklearn.base import is_classifier

from ..kernels import resolve_gamma
from ._scale import is_scale

__all__ = ["NystromDaskMixin"]


class NystromDaskMixin:
    """``_fit_dask``, ``_dask_cv`` and the guards of a Dask-fitted model."""

    def _fit_dask(self, X, y, classification):
        """Fit the low-rank Nyström model on Dask collections: the columns
        drawn as in memory, one pass of feature moments
        (:mod:`lssvm.backends.dask.families`)."""
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
        fit = fam.fit_nystrom(data, kernel, (Z, S), self._rank_for(S.size), float(self.rcond), classes)
        beta, b = fit.solution.coef(float(self.alpha))
        self.n_features_in_ = data.n_features
        self.kernel_ = kernel
        self.basis_vectors_ = Z
        self.basis_indices_ = S
        self.n_basis_ = int(S.size)
        self.rank_ = int(fit.ctx.W.shape[1])
        self.factorization_ = None
        self._X_fit = None
        self._dask_fit = fit
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

    @property
    def _dask(self):
        """The Dask fit (:class:`lssvm.backends.dask.DaskSparseFit` of the
        Nyström features), or None."""
        return getattr(self, "_dask_fit", None)

    def _in_memory(self, what):
        if getattr(self, "_dask_fit", None) is not None:
            raise ValueError(f"{what} needs the training rows in memory; this model was fitted on Dask input")

    def _dask_cv(self, cv, alphas, groups, reduce):
        """Out-of-fold residuals (A, m, v), lazy, or with ``reduce`` the
        :class:`lssvm.cv.ErrorSums`, of a Dask fit."""
        fit = self._dask_fit
        if cv == "loo":
            return fit.loo_sums(alphas) if reduce else fit.loo_residuals(alphas)
        folds = fit.resolve_cv(cv, groups, is_classifier(self))
        if reduce:  # held-out columns stay: the CV of the fixed Nystrom kernel
            return fit.cv_sums(folds, alphas, "keep")
        return fit.targets()[None] - fit.cv_outputs(folds, alphas, "keep")

