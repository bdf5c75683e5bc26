"""Kernel functions evaluated in row blocks.

Every kernel maps two sets of points to their (m, n) cross-kernel matrix.
Evaluation runs over row blocks of the first argument so that temporaries
stay O(block_size * n); the result itself is m x n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from numbers import Integral, Real

import numpy as np

from ._distances import (
    DEFAULT_BLOCK_SIZE,
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
    "KERNELS",
    "make_kernel",
]


def _check_pair(X, Z):
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    if X.ndim != 2 or Z.ndim != 2 or X.shape[1] != Z.shape[1]:
        raise ValueError(
            "kernel arguments must be 2-D with the same number of columns; "
            f"got shapes {X.shape} and {Z.shape}"
        )
    return X, Z


class Kernel:
    """Base class: a positive semi-definite kernel ``k(x, z)``.

    Subclasses implement :meth:`_block` (the kernel between a block of rows
    and all of ``Z``) and :meth:`diag`.
    """

    name = "kernel"

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
        """
        X, Z = _check_pair(X, Z)
        if out is None:
            out = np.empty((X.shape[0], Z.shape[0]))

        def work(rows):
            out[rows] = self._block(X[rows], Z)

        map_row_blocks(work, X.shape[0], Z.shape[0], block_size)
        return out

    def _block(self, X, Z):  # pragma: no cover - abstract
        raise NotImplementedError

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

    ``gamma`` is the inverse squared width: paper 000's sigma^-2, paper 001's
    gamma, 1/sigma^2 of papers 002/003 (see math.md section 1).
    """

    gamma: float = 1.0
    name = "rbf"


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
    """Laplacian kernel ``exp(-gamma * ||x - z||_1)``."""

    gamma: float = 1.0
    name = "laplacian"

    def _block(self, X, Z):
        D = manhattan_distances(X, Z)
        D *= -self.gamma
        return np.exp(D, out=D)

    def diag(self, X):
        return np.ones(np.asarray(X).shape[0])


@dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``x . z``."""

    name = "linear"

    def _block(self, X, Z):
        return X @ Z.T

    def diag(self, X):
        X = np.asarray(X, dtype=float)
        return np.einsum("ij,ij->i", X, X)


@dataclass(frozen=True)
class Polynomial(Kernel):
    """Polynomial kernel ``(gamma * x . z + coef0) ** degree``."""

    gamma: float = 1.0
    degree: int = 3
    coef0: float = 1.0
    name = "poly"

    def _block(self, X, Z):
        K = X @ Z.T
        K *= self.gamma
        K += self.coef0
        return K**self.degree

    def diag(self, X):
        X = np.asarray(X, dtype=float)
        return (self.gamma * np.einsum("ij,ij->i", X, X) + self.coef0) ** self.degree


KERNELS = {"rbf": RBF, "laplacian": Laplacian, "linear": Linear, "poly": Polynomial}


def _check_positive(name, value):
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def make_kernel(kernel="rbf", *, gamma=1.0, degree=3, coef0=1.0) -> Kernel:
    """Build a kernel object from its name and parameters, validating them.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"} or Kernel
        A name, or an already built kernel (returned unchanged).
    gamma : float > 0
        Width parameter of "rbf" / "laplacian", scale of "poly".
    degree : int >= 1
        Degree of "poly".
    coef0 : float >= 0
        Offset of "poly" (negative offsets give an indefinite kernel).

    Returns
    -------
    Kernel

    Raises
    ------
    ValueError
        For an unknown name or an invalid parameter, naming the valid choices.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if kernel not in KERNELS:
        raise ValueError(
            f"kernel must be one of {sorted(KERNELS)} or a lssvm.kernels.Kernel; got {kernel!r}"
        )
    if kernel == "linear":
        return Linear()
    gamma = _check_positive("gamma", gamma)
    if kernel == "rbf":
        return RBF(gamma=gamma)
    if kernel == "laplacian":
        return Laplacian(gamma=gamma)
    if not isinstance(degree, Integral) or isinstance(degree, bool) or degree < 1:
        raise ValueError(f"degree must be an integer >= 1; got {degree!r}")
    if not isinstance(coef0, Real) or isinstance(coef0, bool) or not np.isfinite(coef0) or coef0 < 0:
        raise ValueError(
            f"coef0 must be a finite number >= 0 (a negative offset makes the polynomial "
            f"kernel indefinite); got {coef0!r}"
        )
    return Polynomial(gamma=gamma, degree=int(degree), coef0=float(coef0))
