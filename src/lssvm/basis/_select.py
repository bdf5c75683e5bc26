"""Turn the estimators' ``basis=`` argument into basis points."""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np

from .._arrays import all_finite, as_float_matrix, unique_row_indices
from ..kernels import Kernel
from ._checks import check_input, check_kernel
from .duplicates import drop_near_duplicates
from .fvs import feature_vector_selection
from .greedy import greedy_selection
from .kcenter import kcenter
from .pchol import DEFAULT_REGRESSION_BASIS_CAP, default_n_basis, pivoted_cholesky
from .random import DEFAULT_N_BASIS, random_basis
from .renyi import renyi_entropy_selection

__all__ = ["BasisSelection", "BASIS_METHODS", "select_basis", "check_n_basis", "default_basis_size"]

BASIS_METHODS = ("pchol", "fvs", "random", "greedy", "kcenter", "renyi")


@dataclass(frozen=True)
class BasisSelection:
    """Basis points chosen for a sparse model.

    Attributes
    ----------
    vectors : ndarray of shape (n, d)
    indices : ndarray of shape (n,) or None
        Rows of the training inputs, when the basis came from them.
    error_curve : ndarray of shape (n + 1,) or None
        Mean relative reconstruction error after each FVS step.
    stop_reason : str or None
        Why FVS or greedy selection stopped.
    training_error : ndarray of shape (n + 1,) or None
        Greedy selection's training error after each addition.
    """

    vectors: np.ndarray
    indices: np.ndarray | None = None
    error_curve: np.ndarray | None = None
    stop_reason: str | None = None
    training_error: np.ndarray | None = None


def check_n_basis(n_basis, n_samples):
    """Validate ``n_basis`` (None or an int in [1, n_samples])."""
    if n_basis is None:
        return None
    if not isinstance(n_basis, Integral) or isinstance(n_basis, bool) or n_basis < 1:
        raise ValueError(f"n_basis must be a positive integer or None; got {n_basis!r}")
    if n_basis > n_samples:
        raise ValueError(
            f"n_basis={n_basis} is larger than the number of training samples "
            f"({n_samples}); choose n_basis <= {n_samples}"
        )
    return int(n_basis)


def default_basis_size(basis, n_basis, m, classification):
    """``n_basis`` of a sparse LS-SVM: as given, or for the default "pchol"
    of a regressor ``default_n_basis(m, DEFAULT_REGRESSION_BASIS_CAP)``
    (500 points at most; classifiers keep the general default, 700)."""
    if n_basis is None and isinstance(basis, str) and basis == "pchol" and not classification:
        return default_n_basis(m, DEFAULT_REGRESSION_BASIS_CAP)
    return n_basis


def select_basis(
    X,
    kernel: Kernel,
    basis="pchol",
    n_basis=None,
    *,
    y=None,
    alpha=None,
    tol: float = 0.0,
    pivot_tol: float = 1e-10,
    rcond: float = 1e-10,
    n_candidates=None,
    random_state=None,
) -> BasisSelection:
    """Choose basis points from ``X`` or validate an explicit set.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (m, d)
        Training inputs.
    kernel : Kernel
    basis : {"pchol", "fvs", "random", "greedy", "kcenter", "renyi"}, array-like of shape (n, d), or 1-D int array
        Selection method, the basis points themselves, or row indices
        into ``X`` (then ``indices`` is set, so hold-out can remove them).
        "pchol": pivoted incomplete Cholesky (:func:`lssvm.basis.pivoted_cholesky`,
        O(m (d + k)) for the k-th point).
    n_basis : int or None
        Number of points (a cap for "pchol", default :func:`lssvm.basis.default_n_basis`,
        and for "fvs"; for "random" default min(200, distinct rows)).
    tol, pivot_tol, rcond, n_candidates : see :func:`lssvm.basis.feature_vector_selection`.
    y, alpha : targets (m, v) and regularisation, used by "greedy".
    random_state : int, RandomState or None

    Returns
    -------
    BasisSelection
        Without duplicate or near-duplicate points: any are dropped (the
        first of each group kept) with a :class:`~lssvm.NumericalWarning`
        saying how many (:mod:`lssvm.basis.duplicates`, O(n^2 d)).

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        ``X`` not a non-empty finite 2-D array, unknown method, invalid
        ``n_basis`` (or another parameter of the method), or an explicit
        basis with the wrong shape, non-finite values or out-of-range indices.
    """
    X = check_input(X)
    kernel = check_kernel(kernel)
    sel = _select(X, kernel, basis, n_basis, y=y, alpha=alpha, tol=tol, pivot_tol=pivot_tol, rcond=rcond,
                  n_candidates=n_candidates, random_state=random_state)
    Z, idx = drop_near_duplicates(sel.vectors, kernel, sel.indices, stacklevel=4)
    if Z is sel.vectors:
        return sel
    return replace(sel, vectors=Z, indices=idx)


def _select(X, kernel, basis, n_basis, *, y, alpha, tol, pivot_tol, rcond, n_candidates, random_state):
    m = X.shape[0]
    if isinstance(basis, str):
        n_basis = check_n_basis(n_basis, m)
        if basis == "pchol":
            res = pivoted_cholesky(X, kernel, n_basis, tol=tol, pivot_tol=pivot_tol, rcond=rcond,
                                   random_state=random_state)
            return BasisSelection(X[res.indices], res.indices, res.error_curve, res.stop_reason)
        if basis == "fvs":
            res = feature_vector_selection(
                X,
                kernel,
                n_basis=n_basis,
                tol=tol,
                pivot_tol=pivot_tol,
                rcond=rcond,
                n_candidates=n_candidates,
                random_state=random_state,
            )
            return BasisSelection(X[res.indices], res.indices, res.error_curve, res.stop_reason)
        if basis == "greedy":
            if y is None or alpha is None:
                raise ValueError('basis="greedy" selects by training error: it needs y and alpha')
            n = min(DEFAULT_N_BASIS, m) if n_basis is None else n_basis
            res = greedy_selection(
                X, y, kernel, n, alpha,
                n_candidates=60 if n_candidates is None else n_candidates,
                pivot_tol=pivot_tol, random_state=random_state,
            )
            return BasisSelection(X[res.indices], res.indices, stop_reason=res.stop_reason,
                                  training_error=res.training_error)
        if basis == "kcenter":
            n = min(DEFAULT_N_BASIS, unique_row_indices(X).size) if n_basis is None else n_basis
            idx = kcenter(X, n, random_state)
            return BasisSelection(X[idx], idx)
        if basis == "renyi":
            n = min(DEFAULT_N_BASIS, unique_row_indices(X).size) if n_basis is None else n_basis
            idx = renyi_entropy_selection(X, n, kernel, random_state=random_state).indices
            return BasisSelection(X[idx], idx)
        if basis == "random":
            idx = random_basis(X, n_basis, random_state)
            return BasisSelection(X[idx], idx)
        raise ValueError(
            f"basis must be one of {list(BASIS_METHODS)} or an array of basis points "
            f"of shape (n_basis, {X.shape[1]}); got {basis!r}"
        )
    if isinstance(basis, (list, tuple, np.ndarray)) and np.ndim(basis) == 1:
        idx = np.asarray(basis)
        if idx.dtype.kind not in "iu":
            raise ValueError(
                f"a 1-D basis must hold integer row indices into X; got dtype {idx.dtype} "
                f"(pass basis points as a 2-D array of shape (n_basis, {X.shape[1]}))"
            )
        if idx.size == 0 or idx.min() < 0 or idx.max() >= m:
            raise ValueError(f"basis row indices must be in [0, {m}); got {idx.size} indices"
                             + (f" from {idx.min()} to {idx.max()}" if idx.size else ""))
        return BasisSelection(X[idx], idx.astype(np.intp))  # repeats are dropped by the caller
    Z = check_basis_array(basis, X.shape[1])
    return BasisSelection(Z)


def check_basis_array(basis, n_features):
    """Validate an explicit array (dense or scipy sparse) of basis points."""
    try:
        Z = as_float_matrix(basis)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"basis array must be numeric; {exc}") from None
    if Z.ndim != 2 or Z.shape[1] != n_features or Z.shape[0] < 1:
        raise ValueError(
            f"basis array must have shape (n_basis, {n_features}) with n_basis >= 1; "
            f"got shape {Z.shape}"
        )
    if not all_finite(Z):
        raise ValueError("basis array contains NaN or infinity")
    return Z
