"""Prototype pools of the fixed-size LS-SVM (Karsmakers et al. 2011) and sampled columns
of the Nyström LS-SVM (Ding & Liao 2012): shared by the estimators and by the
model-selection criteria, so that a criterion scores exactly the model the
estimator refits."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._arrays import unique_row_indices
from .._params import count_or_fraction
from ._checks import check_input, check_kernel
from ._select import check_basis_array
from .duplicates import drop_near_duplicates
from .fvs import feature_vector_selection
from .kcenter import kcenter
from .pchol import default_n_basis, pivoted_cholesky
from .random import random_basis
from .renyi import renyi_entropy_selection

__all__ = ["DEFAULT_N_PROTOTYPES", "PROTOTYPE_METHODS", "SAMPLINGS", "sampled_columns", "prototype_pool"]

PROTOTYPE_METHODS = ("pchol", "kcenter", "random", "renyi", "all")
SAMPLINGS = ("random", "kcenter", "fvs")
#: Paper 002's prototype pool (§5.3); the default pool is now :func:`lssvm.basis.default_n_basis`.
DEFAULT_N_PROTOTYPES = 2000


def _pool_size(n_basis, N, n_distinct):
    n = n_basis
    if n is None:
        return min(n_distinct, default_n_basis(N))
    if isinstance(n, Integral) and not isinstance(n, bool):
        if not 1 <= n <= N:
            raise ValueError(f"n_basis={n} must be in [1, {N}] (the training rows)")
        return int(n)
    if isinstance(n, Real) and not isinstance(n, bool) and 0 < n <= 1:
        return min(n_distinct, max(1, int(round(n * N))))
    raise ValueError(f"n_basis must be an int in [1, N], a fraction in (0, 1] or None; got {n!r}")


def prototype_pool(X, kernel, method="pchol", n_basis=None, random_state=None, weights=None):
    """The fixed-size LS-SVM's prototype pool.

    Parameters
    ----------
    X : ndarray of shape (N, d)
    kernel : Kernel
        Used by "pchol" and "renyi".
    method : {"pchol", "kcenter", "random", "renyi", "all"}, array-like of shape (M, d) or 1-D int array
        Pivoted Cholesky of the kernel matrix (the rows it reconstructs
        worst, :func:`lssvm.basis.pivoted_cholesky`; may stop before M
        points on a numerically singular kernel matrix), Gonzalez
        farthest-point clustering, uniform distinct rows, maximal
        quadratic Rényi entropy, every distinct row, given points, or
        training-row indices.
    n_basis : int, float or None
        A count, a fraction of N (capped at the distinct rows), or None:
        ``min(distinct rows, default_n_basis(N))`` (sub-linear in N, capped
        at 1,000; Karsmakers et al. 2011 used 2,000).
    random_state : RandomState
    weights : ndarray of shape (N,), optional
        Sample weights: a method draws among the rows of positive weight
        (a zero weight is a removed row); given points or rows are kept.

    Returns
    -------
    Z : ndarray of shape (M, d)
    indices : ndarray of shape (M,) or None
        Training rows of the pool (None for given points).  Given points or
        rows that duplicate or nearly duplicate another are dropped with a
        :class:`~lssvm.NumericalWarning` (:mod:`lssvm.basis.duplicates`).

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        If ``X`` is not a non-empty finite 2-D array, or ``method`` or
        ``n_basis`` is invalid.

    Notes
    -----
    pchol O(N M (d + M)), kcenter O(N M d), renyi O(N M d) plus its swaps, random O(N d).
    """
    X = check_input(X)
    kernel = check_kernel(kernel)
    if weights is not None and isinstance(method, str):
        positive = np.flatnonzero(np.asarray(weights) > 0)
        Z, rows = prototype_pool(X[positive], kernel, method, n_basis, random_state)
        return Z, None if rows is None else positive[rows]
    if isinstance(method, str):
        if method not in PROTOTYPE_METHODS:
            raise ValueError(
                f"basis must be one of {PROTOTYPE_METHODS} or an array of shape "
                f"(M, {X.shape[1]}); got {method!r}"
            )
        distinct = unique_row_indices(X)
        if method == "all":
            return drop_near_duplicates(X[distinct], kernel, distinct, what="prototype", stacklevel=3)
        M = _pool_size(n_basis, X.shape[0], distinct.size)
        if M > distinct.size:
            raise ValueError(f"n_basis={M} exceeds the {distinct.size} distinct training rows; lower n_basis")
        if method == "pchol":
            idx = pivoted_cholesky(X, kernel, M, random_state=random_state).indices
        elif method == "kcenter":
            idx = kcenter(X, M, random_state)
        elif method == "random":
            idx = random_basis(X, M, random_state)
        else:
            idx = renyi_entropy_selection(X, M, kernel, random_state=random_state).indices
        return drop_near_duplicates(X[idx], kernel, idx, what="prototype", stacklevel=3)
    if np.ndim(method) == 1:
        idx = _check_rows(method, X, "basis", distinct=False)
        return drop_near_duplicates(X[idx], kernel, idx, what="prototype", stacklevel=3)
    return drop_near_duplicates(check_basis_array(method, X.shape[1]), kernel, what="prototype", stacklevel=3)


def _check_rows(rows, X, name, distinct=True):
    """In-range integer training-row indices; if ``distinct``, also distinct
    and pointing at distinct rows."""
    idx = np.asarray(rows)
    m = X.shape[0]
    if idx.dtype.kind not in "iu":
        raise ValueError(f"a 1-D {name} must hold integer row indices into X; got dtype {idx.dtype}")
    if idx.size == 0 or idx.min() < 0 or idx.max() >= m:
        raise ValueError(f"{name} row indices must be in [0, {m}); got {idx.size} indices")
    if distinct and (np.unique(idx).size != idx.size or unique_row_indices(X[idx]).size < idx.size):
        raise ValueError(f"{name} row indices must be distinct and point at distinct rows of X")
    return idx.astype(np.intp)


def sampled_columns(X, kernel, method="random", n_basis=None, random_state=None):
    """Rows whose kernel columns the Nyström approximation samples.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    kernel : Kernel
        Used by "fvs" only.
    method : {"random", "kcenter", "fvs"} or 1-D int array
        Uniform without replacement (Ding & Liao 2012), farthest-point clustering,
        greedy feature-vector selection (may stop before c points), or the
        rows themselves (``n_basis`` is then ignored).
    n_basis : int, float or None
        c: a count or a fraction of n; default :func:`lssvm.basis.default_n_basis`
        (sub-linear in n, capped at 1,000; Ding & Liao 2012 used 0.1 n).
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of shape (c,)
        Sorted for "random"; in selection order otherwise; rows that duplicate
        or nearly duplicate another are dropped with a warning.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        If ``X`` is not a non-empty finite 2-D array, or ``method`` or
        ``n_basis`` is invalid.
    """
    X = check_input(X)
    kernel = check_kernel(kernel)
    random_state = check_random_state(random_state)
    if not isinstance(method, str):
        idx = _check_rows(method, X, "basis", distinct=False)
        return drop_near_duplicates(X[idx], kernel, idx, what="sampled column", stacklevel=3)[1]
    if method == "uniform":
        raise ValueError('the uniform draw of sampled columns is now called "random"; pass basis="random"')
    if method not in SAMPLINGS:
        raise ValueError(f"basis must be one of {SAMPLINGS} or an array of row indices; got {method!r}")
    n = X.shape[0]
    c = default_n_basis(n) if n_basis is None else count_or_fraction("n_basis", n_basis, 0.1, n)
    if method == "random":
        idx = np.sort(random_state.choice(n, c, replace=False))
    elif method == "kcenter":
        idx = kcenter(X, c, random_state)
    else:
        idx = feature_vector_selection(X, kernel, n_basis=c, random_state=random_state).indices
    return drop_near_duplicates(X[idx], kernel, idx, what="sampled column", stacklevel=3)[1]
