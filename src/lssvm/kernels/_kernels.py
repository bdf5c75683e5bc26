"""Kernel functions evaluated in row blocks.

Every kernel maps two sets of points to their (m, n) cross-kernel matrix.
Evaluation runs over row blocks of the first argument so that temporaries
stay O(block_size * n); the result itself is m x n.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ._distances import (
    DEFAULT_BLOCK_SIZE,
    all_finite,
    check_finite_result,
    manhattan_distances,
    map_row_blocks,
    squared_distances,
)

__all__ = [
    "Kernel",
    "RBF",
    "Linear",
    "Polynomial",
    "Laplacian",
    "Normalized",
    "KERNELS",
    "kernel_from_dict",
    "make_kernel",
]


def _as_matrix(A, sparse_ok):
    if sp.issparse(A):
        if not sparse_ok:
            raise ValueError(
                "sparse input is supported only by the dot-product kernels ('linear', 'poly'); "
                "pass a dense array for distance kernels"
            )
        return sp.csr_matrix(A, dtype=float)
    return np.asarray(A, dtype=float)


def _check_pair(X, Z, sparse_ok=False):
    """Both kernel arguments as float matrices: 2-D, the same number of
    columns, finite (O((m + n) d), once per kernel call)."""
    X = _as_matrix(X, sparse_ok)
    Z = _as_matrix(Z, sparse_ok)
    if X.ndim != 2 or Z.ndim != 2 or X.shape[1] != Z.shape[1]:
        raise ValueError(
            "kernel arguments must be 2-D with the same number of columns; "
            f"got shapes {X.shape} and {Z.shape} (reshape a single point with x.reshape(1, -1))"
        )
    for name, A in (("X", X), ("Z", Z)):
        if not all_finite(A.data if sp.issparse(A) else A):
            raise ValueError(f"kernel argument {name} contains NaN or infinity; remove or impute those values")
    return X, Z


class Kernel:
    """Base class: a positive semi-definite kernel ``k(x, z)``.

    Subclasses implement :meth:`_block` (the kernel between a block of rows
    and all of ``Z``) and :meth:`diag`.
    """

    name = "kernel"
    #: Whether scipy sparse inputs are accepted (dot-product kernels).
    accepts_sparse = False
    #: ``sup_x k(x, x)`` over all inputs, or None where unbounded; then
    #: ``|k(x, z)| <= max_diag`` for every pair (Cauchy-Schwarz).
    max_diag = None

    def __call__(self, X, Z, *, block_size: int = DEFAULT_BLOCK_SIZE, out=None):
        """Cross-kernel matrix ``K[i, j] = k(X[i], Z[j])``.

        Parameters
        ----------
        X : ndarray of shape (m, d)
        Z : ndarray of shape (n, d)
        block_size : int, default=2048
            Largest number of rows of ``X`` evaluated at once; blocks are
        made smaller to stay in cache and are spread over the CPU cores.
        out : ndarray of shape (m, n), optional
            Where to write the result.

        Returns
        -------
        K : ndarray of shape (m, n)

        Raises
        ------
        ValueError
            If ``X`` or ``Z`` is not 2-D, their numbers of columns differ,
            they hold NaN or infinity, or the kernel values overflow (inputs
            too large: scale them, e.g. with ``StandardScaler``).
        """
        X, Z = _check_pair(X, Z, self.accepts_sparse)
        return self._evaluate(X, Z, block_size, out)

    def _evaluate(self, X, Z, block_size=DEFAULT_BLOCK_SIZE, out=None):
        """:meth:`__call__` without the O((m + n) d) argument checks, for
        inner loops over inputs validated once (see :func:`unchecked`)."""
        if out is None:
            out = np.empty((X.shape[0], Z.shape[0]))
        # |k| is bounded by max_diag, or from the row norms (Cauchy-Schwarz, O((m + n) d)); only when
        # that bound may overflow are the computed blocks scanned (O(m n)).
        bounded = self.max_diag is not None or _below_overflow(self, X, Z)

        def work(rows):
            if bounded:
                out[rows] = self._block(X[rows], Z)
                return
            with np.errstate(over="ignore", invalid="ignore"):  # overflow is raised as ValueError below
                out[rows] = self._block(X[rows], Z)
            check_finite_result(out[rows], X, Z, f"{self.name} kernel values")

        map_row_blocks(work, X.shape[0], Z.shape[0], block_size)
        return out

    def _block(self, X, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    def _value_bound(self, x_norm, z_norm):
        """An upper bound of ``|k(x, z)|`` for ``||x|| <= x_norm``,
        ``||z|| <= z_norm``, or None if unknown."""
        return None

    def diag(self, X):
        """Diagonal ``k(x_i, x_i)`` for the rows of ``X``, shape (m,), O(m d)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def to_dict(self) -> dict:
        """Kernel parameters as a JSON-serialisable dict, name included;
        ``make_kernel(**d)`` rebuilds the kernel.  (Not ``get_params``: that
        name would make scikit-learn treat the kernel as a nested estimator.)"""
        params = {"kernel": self.name}
        params.update(asdict(self))
        return params


@dataclass(frozen=True)
class RBF(Kernel):
    """Gaussian kernel ``exp(-gamma * ||x - z||^2)``.

    ``gamma`` is the inverse squared width: larger values give narrower
    kernels.  Raises ``ValueError`` unless it is a finite number > 0 (as
    :func:`make_kernel`).

    Notes
    -----
    ``gamma`` is sigma^-2 in Cawley & Talbot (2004), gamma in Pahikkala et
    al. (2012), 1/sigma^2 in Karsmakers et al. (2011) and Ding & Liao
    (2012); LS-SVMlab 1.8's ``sig2`` is ``1 / (2 gamma)``.
    """

    gamma: float = 1.0
    name = "rbf"
    max_diag = 1.0

    def __post_init__(self):
        _validate_params(self)

    def from_squared_distances(self, D, out=None):
        """Kernel values from precomputed squared distances ``D`` (any shape).

        Lets one distance matrix serve a whole range of widths.
        """
        if out is None:
            out = np.empty_like(D, dtype=float)
        np.multiply(D, -self.gamma, out=out)
        return np.exp(out, out=out)

    def _block(self, X, Z):
        return self.from_squared_distances(squared_distances(X, Z))

    def diag(self, X):
        return np.ones(np.asarray(X).shape[0])


@dataclass(frozen=True)
class Laplacian(Kernel):
    """Laplacian kernel ``exp(-gamma * ||x - z||_1)``; ``gamma`` must be a
    finite number > 0 (``ValueError`` otherwise, as :func:`make_kernel`)."""

    gamma: float = 1.0
    name = "laplacian"
    max_diag = 1.0

    def __post_init__(self):
        _validate_params(self)

    def _block(self, X, Z):
        D = manhattan_distances(X, Z)
        D *= -self.gamma
        return np.exp(D, out=D)

    def diag(self, X):
        return np.ones(np.asarray(X).shape[0])


@dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``x @ z`` (the dot product)."""

    name = "linear"
    accepts_sparse = True

    def _block(self, X, Z):
        return _dense(X @ Z.T)

    def _value_bound(self, x_norm, z_norm):
        return x_norm * z_norm

    def diag(self, X):
        return _row_sq_norms(X)


@dataclass(frozen=True)
class Polynomial(Kernel):
    """Polynomial kernel ``(gamma * (x @ z) + coef0) ** degree``.

    Raises ``ValueError`` unless ``gamma`` is a finite number > 0, ``degree``
    an integer >= 1 and ``coef0`` a finite number >= 0 (as :func:`make_kernel`).
    """

    gamma: float = 1.0
    degree: int = 3
    coef0: float = 1.0
    name = "poly"
    accepts_sparse = True

    def __post_init__(self):
        _validate_params(self)

    def _block(self, X, Z):
        K = _dense(X @ Z.T)
        K *= self.gamma
        K += self.coef0
        return K**self.degree

    def _value_bound(self, x_norm, z_norm):
        return (self.gamma * x_norm * z_norm + self.coef0) ** self.degree

    def diag(self, X):
        return (self.gamma * _row_sq_norms(X) + self.coef0) ** self.degree


@dataclass(frozen=True)
class Normalized(Kernel):
    """Cosine-normalised kernel ``k(x, z) / sqrt(k(x, x) k(z, z))`` (Pahikkala et al. 2012, §6.4).

    ``k(x, x) = 1`` for every x; points with ``k(x, x) = 0`` cannot be
    normalised and raise ``ValueError``.  ``base`` must be a :class:`Kernel`
    (``TypeError`` otherwise).
    """

    base: Kernel
    name = "normalized"
    max_diag = 1.0

    def __post_init__(self):
        if not isinstance(self.base, Kernel):
            raise TypeError(
                "Normalized needs a Kernel to normalise, e.g. Normalized(lssvm.kernels.RBF(0.5)) "
                f"or make_kernel(..., normalize=True); got {self.base!r}"
            )

    @property
    def accepts_sparse(self):
        return self.base.accepts_sparse

    def __call__(self, X, Z, *, block_size: int = DEFAULT_BLOCK_SIZE, out=None):
        X, Z = _check_pair(X, Z, self.accepts_sparse)
        return self._evaluate(X, Z, block_size, out)

    def _evaluate(self, X, Z, block_size=DEFAULT_BLOCK_SIZE, out=None):
        K = unchecked(self.base)(X, Z, block_size, out)
        K /= self._scale(X)[:, None]
        K /= self._scale(Z)[None, :]
        return K

    def _scale(self, A):
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.asarray(self.base.diag(A), dtype=float)
        check_finite_result(d, A, A[:0], f"{self.base.name} kernel values k(x, x)")
        if np.any(d <= 0):
            raise ValueError(
                f"{int(np.sum(d <= 0))} point(s) have k(x, x) = 0 and cannot be normalised "
                "(e.g. all-zero rows with the linear kernel); drop them or do not normalise"
            )
        return np.sqrt(d)

    def diag(self, X):
        return np.ones(X.shape[0])

    def to_dict(self) -> dict:
        return {"kernel": self.name, "base": self.base.to_dict()}


def unchecked(kernel):
    """``kernel``'s evaluation ``(X, Z, block_size, out) -> K`` without the
    per-call argument checks, for inner loops whose inputs were validated
    once (float matrices, finite, the same number of columns); overflow is
    still detected.  A kernel class that overrides ``__call__`` is called
    as is."""
    if type(kernel).__call__ in (Kernel.__call__, Normalized.__call__):
        return kernel._evaluate
    return lambda X, Z, block_size=DEFAULT_BLOCK_SIZE, out=None: kernel(X, Z, block_size=block_size, out=out)


def _below_overflow(kernel, X, Z, limit=1e300):
    """Whether ``kernel``'s values on ``X`` x ``Z`` provably stay below ``limit``."""
    if X.shape[0] == 0 or Z.shape[0] == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        x_norm = np.float64(np.sqrt(_row_sq_norms(X).max()))
        z_norm = np.float64(np.sqrt(_row_sq_norms(Z).max()))
        bound = kernel._value_bound(x_norm, z_norm)
    return bound is not None and bool(np.isfinite(bound)) and bound < limit


def _dense(K):
    return K.toarray() if sp.issparse(K) else K


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    X = np.asarray(X, dtype=float)
    return np.einsum("ij,ij->i", X, X)


KERNELS = {"rbf": RBF, "laplacian": Laplacian, "linear": Linear, "poly": Polynomial}


def _check_positive(name, value):
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _check_degree(value):
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"degree must be an integer >= 1; got {value!r}")
    return int(value)


def _check_coef0(value):
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value) or value < 0:
        raise ValueError(
            f"coef0 must be a finite number >= 0 (a negative offset makes the polynomial "
            f"kernel indefinite); got {value!r}"
        )
    return float(value)


#: Validator of each kernel parameter: the single rule set shared by the
#: kernel classes and :func:`make_kernel`.
_PARAM_CHECKS = {"gamma": lambda v: _check_positive("gamma", v), "degree": _check_degree, "coef0": _check_coef0}


def _validate_params(kernel):
    """Check (and normalise to float / int) the parameters of a kernel
    dataclass in place, raising ``ValueError`` for an invalid one."""
    for name, check in _PARAM_CHECKS.items():
        if hasattr(kernel, name):
            object.__setattr__(kernel, name, check(getattr(kernel, name)))


def kernel_from_dict(d: dict) -> Kernel:
    """Inverse of :meth:`Kernel.to_dict`.

    Raises
    ------
    TypeError
        If ``d`` is not a dict.
    ValueError
        If the ``"kernel"`` key (or a normalised kernel's ``"base"``) is
        missing, a key is unknown, or a parameter is invalid.
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"a kernel dict such as {{'kernel': 'rbf', 'gamma': 0.5}} is needed; got {d!r}")
    d = dict(d)
    if "kernel" not in d:
        raise ValueError(f"kernel dict is missing the 'kernel' key (the kernel's name, e.g. 'rbf'); got {d!r}")
    name = d.pop("kernel")
    if name == "normalized":
        if "base" not in d:
            raise ValueError("a 'normalized' kernel dict is missing the 'base' key (the dict of the kernel it normalises)")
        if set(d) != {"base"}:
            raise ValueError(f"unknown key(s) {sorted(set(d) - {'base'})} in a 'normalized' kernel dict; expected only 'base'")
        return Normalized(kernel_from_dict(d["base"]))
    unknown = sorted(str(k) for k in set(d) - set(_PARAM_CHECKS))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in kernel dict; expected 'kernel' and some of {sorted(_PARAM_CHECKS)}")
    return make_kernel(name, **d)


def make_kernel(kernel="rbf", *, gamma=1.0, degree=3, coef0=1.0, normalize=False) -> Kernel:
    """Build a kernel object from its name and parameters, validating them.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly", "ard"} or Kernel
        A name, or an already built kernel (returned unchanged).
    gamma : float > 0, or array of shape (n_features,) for "ard"
        Width parameter of "rbf" / "laplacian", scale of "poly", widths of
        "ard" (one per feature, or one number for all).
    degree : int >= 1
        Degree of "poly".
    coef0 : float >= 0
        Offset of "poly" (negative offsets give an indefinite kernel).
    normalize : bool, default=False
        Wrap the kernel in :class:`Normalized`.

    Returns
    -------
    Kernel

    Raises
    ------
    ValueError
        For an unknown name or an invalid parameter, naming the valid choices.
    """
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize (normalize_kernel) must be True or False; got {normalize!r}")
    if normalize:
        base = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0)
        return base if isinstance(base, Normalized) else Normalized(base)
    if isinstance(kernel, Kernel):
        return kernel
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(
            f"kernel must be one of {sorted(KERNELS)} or a lssvm.kernels.Kernel; got {kernel!r}"
        )
    if kernel == "linear":
        return Linear()
    # the kernel classes validate their parameters (_validate_params)
    if kernel == "rbf":
        return RBF(gamma=gamma)
    if kernel == "laplacian":
        return Laplacian(gamma=gamma)
    if kernel == "ard":  # registered in KERNELS by its own module (kernels/ard.py)
        return KERNELS["ard"](gamma=gamma)
    return Polynomial(gamma=gamma, degree=degree, coef0=coef0)
