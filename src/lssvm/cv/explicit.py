"""Brute-force leave-one-out by retraining: the reference the fast paths are
tested and benchmarked against.  Slow on purpose: m refits."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._arrays import as_float_matrix
from .._labels import LabelCoder
from ..basis import basis_holders
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

    Raises
    ------
    ValueError
        If ``X`` is not a 2-D numeric array, ``y`` has not one entry per
        row of ``X``, ``X`` has not the fitted model's number of features,
        a classifier's ``y`` holds labels outside ``classes_``, or leaving
        a point out removes its class from the training data.

    Notes
    -----
    Cost: m full trainings per alpha, O(m^2 n^2 + m n^3): use only for
    testing and benchmarking.
    """
    X = _check_X(X)
    y = np.asarray(y)
    if y.ndim not in (1, 2) or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must have one entry (row) per row of X ({X.shape[0]}); got shape {y.shape}"
        )
    try:
        check_is_fitted(estimator, "factorization_")
    except Exception:
        estimator = clone(estimator).fit(X, y)
    if X.shape[1] != estimator.basis_vectors_.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but the estimator was fitted with "
            f"{estimator.basis_vectors_.shape[1]}; pass the training inputs"
        )
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


def _check_X(X):
    """``X`` as a 2-D float matrix (CSR if sparse), ``ValueError`` otherwise."""
    try:
        X = as_float_matrix(X)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be a numeric 2-D array; {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array of shape (m, d); got shape {X.shape}")
    return X


def _coded_targets(estimator, y):
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D class labels among the estimator's classes_; got shape {y.shape}")
    Y = LabelCoder(estimator.classes_).encode(y)
    return Y[:, 0] if Y.shape[1] == 1 else Y


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

    Raises
    ------
    NotFittedError
        If the estimator is not fitted, or has no training factorisation
        (loaded from a file, or fitted on Dask).
    ValueError
        If ``X`` is not the (m, d) training inputs, ``test_indices`` are
        invalid (see :func:`lssvm.cv.check_indices`) or ``basis_in_holdout``
        is unknown.
    """
    from ..solvers import factorize_sparse_rls
    from .holdout import BASIS_IN_HOLDOUT, check_indices

    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    check_is_fitted(estimator, "factorization_")
    fac = estimator.factorization_
    if getattr(fac, "y_centered", None) is None:
        raise NotFittedError(
            "explicit_holdout_predict needs the in-memory training factorisation; this model has none "
            "(loaded from a file or fitted on Dask): fit it in memory on the training data first"
        )
    X = _check_X(X)
    Y = fac.y_centered + fac.y_mean
    m = Y.shape[0]
    if X.shape != (m, estimator.basis_vectors_.shape[1]):
        raise ValueError(
            f"X must be the training inputs the estimator was fitted on, of shape "
            f"({m}, {estimator.basis_vectors_.shape[1]}); got shape {X.shape}"
        )
    H = check_indices(test_indices, m)
    alphas, scalar = check_alphas(estimator.alpha if alpha is None else alpha)
    rows, points = basis_holders(X, estimator.basis_vectors_, estimator.basis_indices_)
    keep_basis = np.ones(estimator.n_basis_, dtype=bool)
    train = np.ones(m, dtype=bool)
    train[H] = False
    held = np.isin(rows, H)
    if basis_in_holdout == "remove":  # points whose every holding row is held out
        keep_basis[np.setdiff1d(points[held], points[~held])] = False
    elif basis_in_holdout == "train":
        train[rows[held]] = True
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
