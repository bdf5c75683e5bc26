"""Gaussian kernel with one width per input feature (automatic relevance
determination, ARD).

``k(x, z) = exp(-sum_j gamma_j (x_j - z_j)^2)``: with all ``gamma_j``
equal it is the RBF kernel.  The squared distance is weighted by scaling
both arguments by ``sqrt(gamma)`` and then reusing the blocked Euclidean
distances of :mod:`._distances`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._distances import squared_distances
from ._kernels import KERNELS, Kernel

__all__ = ["ARD", "check_ard_gamma", "resolve_ard_gamma"]


def check_ard_gamma(gamma, n_features=None):
    """Validate ARD widths: a number or a 1-D array of finite numbers > 0.

    Parameters
    ----------
    gamma : float or array-like of shape (d,)
    n_features : int, optional
        When given, a vector must have this length.

    Returns
    -------
    ndarray of shape () or (d,), float, read-only

    Raises
    ------
    ValueError
        If a value is not a finite number > 0, the array is not 0-D or 1-D,
        is empty, or has the wrong length.
    """
    if isinstance(gamma, str) or isinstance(gamma, (bool, np.bool_)):
        raise ValueError(f"gamma of the 'ard' kernel must be a number > 0 or a 1-D array of them; got {gamma!r}")
    try:
        g = np.array(gamma, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"gamma of the 'ard' kernel must be a number > 0 or a 1-D array of them (one per feature); got {gamma!r}"
        ) from None
    if g.ndim > 1 or g.size == 0:
        raise ValueError(f"gamma of the 'ard' kernel must be a number or a non-empty 1-D array; got shape {g.shape}")
    if not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError(f"gamma of the 'ard' kernel must hold finite numbers > 0; got {gamma!r}")
    if n_features is not None and g.ndim == 1 and g.size != n_features:
        raise ValueError(
            f"gamma of the 'ard' kernel has {g.size} widths but the data have {n_features} features; "
            "pass one width per feature (or a single number for all)"
        )
    g.setflags(write=False)
    return g


def resolve_ard_gamma(gamma, X):
    """ARD widths for data ``X`` (m, d) as a vector of length d.

    ``"scale"`` is ``1 / (d X.var())`` for every feature (scikit-learn's
    SVC convention, the same scalar as the isotropic ``gamma="scale"``); a
    number is broadcast to all features; a vector is checked.
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    if isinstance(gamma, str) and gamma == "scale":
        var = float(X.var())
        gamma = 1.0 / (d * var) if var > 0 else 1.0
    g = check_ard_gamma(gamma, d)
    return np.array(np.broadcast_to(g, (d,)), dtype=float)


@dataclass(frozen=True, eq=False)
class ARD(Kernel):
    """ARD Gaussian kernel ``exp(-sum_j gamma_j (x_j - z_j)^2)``.

    ``gamma`` is a number (then it equals :class:`RBF`) or one inverse
    squared width per feature; ``ValueError`` unless every value is a
    finite number > 0, or when a vector's length differs from the number
    of features of the arguments.  ``1 / gamma_j`` large means feature j
    hardly matters.  Cost: O(m n d) per evaluation, like RBF.
    """

    gamma: object = 1.0
    name = "ard"
    max_diag = 1.0

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_ard_gamma(self.gamma))

    def _scaled(self, A):
        check_ard_gamma(self.gamma, A.shape[1])
        return A * np.sqrt(self.gamma)

    def _evaluate(self, X, Z, block_size=2048, out=None):
        # scale once for all row blocks (O((m + n) d)), then the RBF evaluation
        check_ard_gamma(self.gamma, X.shape[1])
        return _UnitRBF()._evaluate(self._scaled(X), self._scaled(Z), block_size, out)

    def _block(self, X, Z):
        D = squared_distances(self._scaled(X), self._scaled(Z))
        return np.exp(-D, out=D)

    def diag(self, X):
        return np.ones(np.asarray(X).shape[0])

    def to_dict(self) -> dict:
        g = self.gamma
        return {"kernel": self.name, "gamma": float(g) if g.ndim == 0 else [float(v) for v in g]}

    def __eq__(self, other):
        return type(other) is ARD and self.gamma.shape == other.gamma.shape and bool(np.all(self.gamma == other.gamma))

    __hash__ = None

    def __repr__(self):
        return f"ARD(gamma={self.to_dict()['gamma']!r})"


class _UnitRBF(Kernel):
    """``exp(-||x - z||^2)`` on pre-scaled inputs (internal)."""

    name = "ard"
    max_diag = 1.0

    def _block(self, X, Z):
        D = squared_distances(X, Z)
        return np.exp(-D, out=D)


KERNELS["ard"] = ARD
