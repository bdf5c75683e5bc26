"""The fixed-size model at its support as the sparse model: its engine and
the routes of the shared methods (:mod:`lssvm.estimators._exact_cv`).

At its support (the prototypes that carry a weight) the fitted fixed-size
model is the sparse model on those prototypes at the same alpha (the
documentation's Mathematics page, §4 and §6; SCDP's solution after k steps is
the exact least-squares solution on its k coordinates), up to the intercept's
regulariser ``nu`` (1e-8 by default, moving predictions by about 1e-10 of the
targets' spread).
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from ..cv import MemorySparseEngine, TargetGroupsEngine, WeightedSparseEngine
from ..exceptions import NotFittedError
from ..solvers import factorize_sparse_rls, factorize_weighted_rls
from ._base import assemble_target_groups

__all__ = ["InterceptOnlyEngine", "SupportEngineMixin"]


class SupportEngineMixin:
    """``_fitted_engine()`` of a fitted fixed-size estimator (needs ``coef_full_``, ``support_``,
    ``basis_vectors_``, ``basis_indices_``, ``kernel_`` and the fit's ``_X_fit`` / ``_Y_fit``)."""

    #: the support groups of a regressor's outputs hold at every alpha (per_target_alpha runs them all)
    _groups_at_any_alpha = True

    def _support_groups(self):
        """A regressor's outputs grouped by the prototypes their SCDP runs chose, as ``(alpha, outputs)``
        pairs (the groups :func:`lssvm.estimators._base.per_target_alpha` runs the shared methods on, one
        engine each, at the fitted alpha or any other); None where every output has the same support, and
        for classifiers (whose error rates need every output's values together)."""
        W, M = self.coef_full_, self.n_basis_
        if is_classifier(self) or W.shape[1] == 1:
            return None
        keys = [np.flatnonzero(W[:M, j] != 0).tobytes() for j in range(W.shape[1])]
        if len(set(keys)) == 1:
            return None
        groups = {}
        for j, key in enumerate(keys):
            groups.setdefault(key, []).append(j)
        return [(float(self.alpha), np.array(cols)) for cols in groups.values()]

    def _target_subset(self, targets, alpha):
        """A shallow copy of this fitted regressor restricted to outputs ``targets`` that share a support."""
        sub = copy.copy(self)
        sub._alpha_groups, sub._y_1d, sub._engine = None, False, None
        sub.coef_full_ = self.coef_full_[:, targets]
        sub._coef_2d = sub._intercept_2d = None  # the group's expansion is not needed by the engine's methods
        sub.support_ = np.flatnonzero(sub.coef_full_[:self.n_basis_, 0] != 0)
        sub._Y_fit = None if self._Y_fit is None else self._Y_fit[:, targets]
        if self._Y_fit is None and getattr(self, "_dask_data", None) is not None:  # fitted on Dask
            sub._dask_engine = (self._dask_group_engine(targets), sub.coef_full_)
        return sub

    def _per_target_alpha_call(self, method, args, kwargs):
        """``method`` of each group of outputs that share a support, assembled along the output axis."""
        return assemble_target_groups(self, method, args, kwargs, self.coef_full_.shape[1])

    def _fitted_engine(self):
        """The engine of the fitted model (:class:`lssvm.cv.SparseEngine`): the sparse model on the
        supported prototypes at the fitted alpha, built on first use (O(m s d + m s^2 + s^3) for s
        supported prototypes).

        Raises
        ------
        ValueError
            Where no sparse model is the fitted one: an output without the intercept among its
            coordinates, no prototype, or a fit on Dask collections (the rows are not in memory).  A
            regressor's outputs on different prototypes run their methods group by group
            (:meth:`_support_groups`), each group on its own engine.  A classifier's outputs on different prototypes get one engine per
            group (:class:`lssvm.cv.TargetGroupsEngine`).
        """
        check_is_fitted(self, "coef_full_")
        engine = getattr(self, "_engine", None)
        if engine is not None:
            return engine
        X, Y = getattr(self, "_X_fit", None), getattr(self, "_Y_fit", None)
        if X is None or Y is None:
            if getattr(self, "_dask_data", None) is not None:
                raise ValueError(
                    f"{type(self).__name__} fitted on Dask collections has no exact cross-validation engine at its "
                    "support (its rows are not in memory); fit on a NumPy sample")
            raise NotFittedError("this model keeps no training data (it was loaded from a file); fit it on the "
                                 "training data to get cross-validation results")
        W, M = self.coef_full_, self.n_basis_
        chosen = W[:M] != 0  # (M, v): the prototypes each output's SCDP run gave a weight
        if np.any(W[M] == 0):
            raise ValueError(
                "SCDP left the intercept out of this model (its coefficient is 0), while the exact CV engine's "
                "model has an unpenalised intercept; use a larger max_size or solver='direct'")
        classes = self.classes_ if is_classifier(self) else None
        if np.all(chosen == chosen[:, :1]) and (classes is None or chosen[:, 0].any()):
            support = np.asarray(self.support_, dtype=np.intp) if W.shape[1] == 1 else np.flatnonzero(chosen[:, 0])
            self._engine = self._support_engine(X, Y, support, classes)
            return self._engine
        if classes is None:
            raise ValueError(
                f"the {W.shape[1]} outputs of this {type(self).__name__} use different prototypes (each output's "
                "SCDP run chooses its own), so no one sparse model is the fitted one: its methods run output "
                "group by output group; fit one output at a time, or use solver='direct'")
        # a classifier's one-vs-rest outputs on their own supports (an output's may be the intercept alone):
        # one engine per group, assembled
        groups = {}
        for j in range(W.shape[1]):
            groups.setdefault(chosen[:, j].tobytes(), []).append(j)
        cols = [np.array(g) for g in groups.values()]
        engines = [self._support_engine(X, Y[:, g], np.flatnonzero(chosen[:, g[0]]), None) for g in cols]
        self._engine = TargetGroupsEngine(engines, cols, Y, classes, weights=getattr(self, "_fit_weights", None))
        return self._engine

    def _support_engine(self, X, Y, support, classes):
        """The sparse model's engine on prototypes ``support`` for targets ``Y``: O(m s d + m s^2 + s^3)."""
        if support.size == 0 and is_classifier(self):  # an output that predicts its training mean
            return InterceptOnlyEngine(Y)
        if support.size == 0:
            raise ValueError(
                "this model uses no prototype (SCDP stopped at the intercept alone), so it has no basis to "
                "cross-validate; its out-of-sample outputs are the training mean's: use a larger max_size, "
                "size_rule=0 or solver='direct'")
        Z = self.basis_vectors_[support]
        rows = None if self.basis_indices_ is None else np.asarray(self.basis_indices_)[support]
        K = self.kernel_(X, Z, block_size=self.block_size)
        K_SS = K[rows] if rows is not None else self.kernel_(Z, Z)
        weights = getattr(self, "_fit_weights", None)
        if weights is not None:  # the weighted sparse model on the support (a weighted fit)
            fac = factorize_weighted_rls(K, K_SS, Y, weights)
            return WeightedSparseEngine(fac, X, Z, rows, self.kernel_, 1e-10, classes, self.n_jobs)
        fac = factorize_sparse_rls(K, K_SS, Y, overwrite_k=True)
        return MemorySparseEngine(fac, X, Z, rows, self.kernel_, 1e-10, classes, self.n_jobs)


class InterceptOnlyEngine:
    """The engine of outputs whose SCDP run kept the intercept alone (no prototype): their model is the
    training rows' mean at every alpha, so a held-out row's value is the mean of the rows trained on
    (no basis point to remove or keep).  Rows in memory; the per-row methods of the protocol
    (:class:`lssvm.cv.SparseEngine`) that :class:`lssvm.cv.TargetGroupsEngine` assembles, O(m v) each.

    Parameters
    ----------
    Y : ndarray of shape (m, v)
        The outputs' training targets (coded for classifiers).
    """

    rows_in_memory = True
    n_basis = 0

    def __init__(self, Y):
        self.Y = Y

    @property
    def n_samples(self):
        return self.Y.shape[0]

    def in_memory(self, what, hint=""):
        return self

    def targets(self):
        return self.Y

    def _per_alpha(self, F, alphas):
        return np.broadcast_to(F, (np.size(alphas),) + F.shape).copy()

    def _trained_without(self, test):
        train = np.ones(self.n_samples, dtype=bool)
        train[test] = False
        return self.Y[train].mean(axis=0)

    def loo_residuals(self, alphas):
        m = self.n_samples
        return self._per_alpha((self.Y - self.Y.mean(axis=0)) * (m / (m - 1.0)), alphas)

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        F = np.empty(self.Y.shape)
        for test in folds:
            F[test] = self._trained_without(test)
        return self._per_alpha(F, alphas)

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        test = np.asarray(test_indices)
        test = np.flatnonzero(test) if test.dtype == bool else test
        return self._per_alpha(np.tile(self._trained_without(test), (test.size, 1)), alphas)
