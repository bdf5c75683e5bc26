"""Argument checks shared by the basis-selection functions: every public
function of :mod:`lssvm.basis` validates its inputs here, so that bad input
raises one clear error instead of an empty basis, NaN prototypes or an
obscure error deep inside."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .._arrays import all_finite, as_float_matrix
from ..kernels import Kernel, unchecked

__all__ = ["check_input", "check_kernel", "check_count", "check_fraction", "check_positive", "unchecked"]


def check_input(X, name="X", *, sparse_ok=True):
    """``X`` as a float matrix (CSR if sparse): 2-D, non-empty and finite.

    O(m d).  Raises ``ValueError`` naming ``name`` otherwise.
    """
    if sp.issparse(X) and not sparse_ok:
        raise ValueError(f"{name} must be a dense array here; convert it with {name}.toarray()")
    try:
        X = as_float_matrix(X)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array; {exc}") from None
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array of shape (n_samples, n_features); got shape {X.shape}")
    if not all_finite(X):
        raise ValueError(f"{name} contains NaN or infinity; remove or impute those values")
    return X


def check_kernel(kernel, X=None):
    """``kernel`` must be a :class:`lssvm.kernels.Kernel` (``TypeError``
    otherwise) that accepts ``X`` (``ValueError`` for sparse ``X`` with a
    distance kernel)."""
    if not isinstance(kernel, Kernel):
        raise TypeError(
            "kernel must be a lssvm.kernels.Kernel object, e.g. lssvm.kernels.RBF(gamma) or "
            f"lssvm.kernels.make_kernel('rbf', gamma=...); got {kernel!r}"
        )
    if X is not None and sp.issparse(X) and not kernel.accepts_sparse:
        raise ValueError(
            "sparse input is supported only by the dot-product kernels ('linear', 'poly'); "
            "pass a dense array for distance kernels"
        )
    return kernel


def _scalar(value):
    """A 0-d NumPy array as its scalar (anything else unchanged)."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def check_count(name, value, *, allow_none=False):
    """A positive integer (or None if ``allow_none``), as ``int``; ``ValueError`` otherwise."""
    if value is None and allow_none:
        return None
    value = _scalar(value)
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(
            f"{name} must be a positive integer{' or None' if allow_none else ''}; got {value!r}"
        )
    return int(value)


def check_fraction(name, value, *, low_open=True, meaning=""):
    """A finite number in (0, 1) (``low_open``) or [0, 1), as ``float``; ``ValueError`` otherwise."""
    value = _scalar(value)
    ok = isinstance(value, Real) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > 0 if low_open else value >= 0) and value < 1
    if not ok:
        interval = "(0, 1)" if low_open else "[0, 1)"
        raise ValueError(f"{name} must be a number in {interval}{meaning}; got {value!r}")
    return float(value)


def check_positive(name, value):
    """A finite number > 0, as ``float``; ``ValueError`` otherwise."""
    value = _scalar(value)
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)
