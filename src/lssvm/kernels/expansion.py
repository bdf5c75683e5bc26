"""The kernel expansion every fitted model of the package predicts with.

Every model family predicts ``f(x) = k(x, Z) W + b``, with Z its basis
points (a basis, prototypes, sampled columns, or all training rows for an
exact-kernel predictor).  :class:`KernelExpansion` holds that and
evaluates it in row blocks; the estimators' ``kernel_expansion()`` return one,
``predict`` and ``decision_function`` evaluate it, and :mod:`lssvm.io` saves
it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._distances import DEFAULT_BLOCK_SIZE, iter_row_blocks
from ._kernels import Kernel

__all__ = ["KernelExpansion"]


@dataclass(frozen=True)
class KernelExpansion:
    """``f(x) = k(x, Z) W + b``: what a fitted model predicts with.

    Attributes
    ----------
    centres : ndarray or scipy CSR matrix of shape (n, d)
        The points ``Z`` the kernel is evaluated against (the model's basis
        points, or training rows).
    coef : ndarray of shape (n, v)
        ``W``, one column per output (per one-vs-rest class for more than
        two classes).
    intercept : ndarray of shape (v,)
        ``b``.
    kernel : lssvm.kernels.Kernel
        The fitted kernel (``gamma`` resolved).
    single_output : bool
        Whether the model's outputs are 1-D (one target, or two classes):
        ``v == 1`` and ``predict`` returns shape (m,).
    """

    centres: object
    coef: np.ndarray
    intercept: np.ndarray
    kernel: Kernel
    single_output: bool

    def __post_init__(self):
        n, v = np.shape(self.coef)
        if self.centres.shape[0] != n or np.shape(self.intercept) != (v,):
            raise ValueError(
                f"a kernel expansion needs centres (n, d), coef (n, v) and intercept (v,); got "
                f"{self.centres.shape}, {np.shape(self.coef)} and {np.shape(self.intercept)}"
            )
        if self.single_output and v != 1:
            raise ValueError(f"a single-output expansion has one coefficient column; got {v}")

    @property
    def n_outputs(self) -> int:
        """``v``, the number of output columns."""
        return self.coef.shape[1]

    def __call__(self, X, block_size=DEFAULT_BLOCK_SIZE):
        """Outputs at validated inputs ``X`` (m, d): ``k(X, Z) W + b``, shape (m, v).

        Cost O(m n (d + v)), memory O(block_size n) for the kernel block.
        """
        out = np.empty((X.shape[0], self.coef.shape[1]))
        for rows in iter_row_blocks(X.shape[0], block_size):
            out[rows] = self.kernel(X[rows], self.centres) @ self.coef
        out += self.intercept
        return out
