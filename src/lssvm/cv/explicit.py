"""Brute-force leave-one-out by retraining: the reference the fast paths are
tested and benchmarked against.  Slow on purpose: m refits."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import check_is_fitted

from .._arrays import as_float_matrix
from ..solvers import check_alphas

__all__ = ["explicit_loo_residuals"]


def explicit_loo_residuals(estimator, X, y, alpha=None):
    """Leave-one-out residuals by retraining the model m times.

    Parameters
    ----------
    estimator : SparseLSSVR or SparseLSSVC
        If unfitted it is first fitted on ``(X, y)``.  Each refit keeps the
        basis points chosen on the full data (``basis_vectors_``), as the
        closed-form LOO does.
    X : array-like of shape (m, d)
    y : array-like of shape (m,) or (m, v)
        Targets (labels for a classifier).
    alpha : float or array-like of shape (A,), optional
        Regularisation value(s); default the estimator's ``alpha``.

    Returns
    -------
    ndarray
        Shaped like ``estimator.loo_residuals(alpha)``: ``y_i - f_{-i}(x_i)``
        (for a classifier, of the +1/-1 coded targets).

    Notes
    -----
    Cost: m full trainings per alpha, O(m^2 n^2 + m n^3): use only for
    testing and benchmarking.  Raises ``ValueError`` for a classifier when
    leaving a point out removes its class from the training data.
    """
    X = as_float_matrix(X)
    y = np.asarray(y)
    try:
        check_is_fitted(estimator, "factorization_")
    except Exception:
        estimator = clone(estimator).fit(X, y)
    alphas, scalar = check_alphas(estimator.alpha if alpha is None else alpha)
    classifier = is_classifier(estimator)
    targets = _coded_targets(estimator, y) if classifier else y.astype(float)
    m = X.shape[0]
    out = np.empty((alphas.size,) + targets.shape)
    keep = np.ones(m, dtype=bool)
    for k, a in enumerate(alphas):
        for i in range(m):
            keep[i] = False
            if classifier and not np.any(y[keep] == y[i]):
                raise ValueError(
                    f"leaving out sample {i} removes class {y[i]!r} from the training "
                    "data; explicit LOO is undefined for a class with one sample"
                )
            model = clone(estimator).set_params(basis=estimator.basis_vectors_, alpha=float(a))
            model.fit(X[keep], y[keep])
            keep[i] = True
            if classifier:
                out[k, i] = targets[i] - model.decision_function(X[i : i + 1])[0]
            else:
                out[k, i] = targets[i] - model.predict(X[i : i + 1])[0]
    return out[0] if scalar else out


def _coded_targets(estimator, y):
    codes = np.searchsorted(estimator.classes_, y)
    if estimator.classes_.size == 2:
        return np.where(codes == 1, 1.0, -1.0)
    Y = -np.ones((y.shape[0], estimator.classes_.size))
    Y[np.arange(y.shape[0]), codes] = 1.0
    return Y


def explicit_holdout_predict(estimator, X, test_indices, alpha=None, basis_in_holdout="remove"):
    """Hold-out predictions by retraining on the other rows (slow reference).

    Parameters
    ----------
    estimator : fitted SparseLSSVR or SparseLSSVC
        Supplies the kernel, the basis and the (coded) training targets.
    X : array-like of shape (m, d)
        The training inputs the estimator was fitted on.
    test_indices : array-like of int
    alpha : float or array-like of shape (A,), optional
    basis_in_holdout : {"remove", "keep", "train"}
        As in :meth:`lssvm.cv.HoldoutEngine.predict`.

    Returns
    -------
    ndarray of shape (h, v) or (A, h, v)
        Outputs (decision values of the coded targets for a classifier) of
        a model refitted from scratch on the training rows, by a dense
        factorisation of the smaller problem.
    """
    from ..solvers import factorize_sparse_rls
    from .holdout import BASIS_IN_HOLDOUT, check_indices

    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    fac = estimator.factorization_
    X = as_float_matrix(X)
    Y = fac.y_centered + fac.y_mean
    m = Y.shape[0]
    H = check_indices(test_indices, m)
    alphas, scalar = check_alphas(estimator.alpha if alpha is None else alpha)
    rows = estimator.basis_indices_
    keep_basis = np.ones(estimator.n_basis_, dtype=bool)
    train = np.ones(m, dtype=bool)
    train[H] = False
    if rows is not None:
        held_basis = np.isin(rows, H)
        if basis_in_holdout == "remove":
            keep_basis &= ~held_basis
        elif basis_in_holdout == "train":
            train[rows[held_basis]] = True
    Z = estimator.basis_vectors_[keep_basis]
    kern = estimator.kernel_
    out = np.empty((alphas.size, H.size, Y.shape[1]))
    if Z.shape[0] == 0:  # every basis point removed: intercept-only model
        out[:] = Y[train].mean(axis=0)
    else:
        refit = factorize_sparse_rls(kern(X[train], Z), kern(Z, Z), Y[train], rcond=estimator.rcond)
        K_H = kern(X[H], Z)
        for k, a in enumerate(alphas):
            coef, b = refit.coef(a)
            out[k] = K_H @ coef + b
    return out[0] if scalar else out
