"""The check that the training arrays a fitted model holds without a copy are unchanged.

A fit keeps the caller's ``X`` and targets as given (the factorisation's ``y``:
a fit of many targets holds no second m x v array), and the exact-CV methods
read them again.  Were the caller to modify them in place after the fit, those
methods would silently mix the fitted model with the new values; a digest taken
at the fit and compared before each use turns that into a clear error.
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

#: bytes hashed per row block: arrays that are not C-contiguous are copied a block at a time
_BLOCK_BYTES = 1 << 22


def _update(digest, array):
    if array is None:
        digest.update(b"none")
        return
    if sp.issparse(array):
        array = sp.csr_array(array)
        for part in (array.data, array.indices, array.indptr):
            _update(digest, part)
        return
    array = np.asarray(array)
    digest.update(repr((array.shape, array.dtype.str)).encode())
    if array.ndim == 0 or array.size == 0:
        digest.update(array.tobytes())
        return
    row_bytes = max(1, array[:1].nbytes)
    step = max(1, _BLOCK_BYTES // row_bytes)
    for lo in range(0, array.shape[0], step):
        digest.update(np.ascontiguousarray(array[lo : lo + step]).data)


def training_digest(X, factorization):
    """A digest of the training rows ``X`` (dense or sparse, or None) and the factorisation's
    held targets (its ``y``, where it has one): O(m (d + v)) time, one row block of workspace."""
    digest = hashlib.blake2b(digest_size=16)
    _update(digest, X)
    _update(digest, getattr(factorization, "y", None))
    return digest.digest()


def remember_training_data(estimator, X):
    """Record the digest of the arrays ``estimator.factorization_`` and ``X`` hold (after a fit)."""
    fac = estimator.factorization_
    estimator._training_check = (fac, training_digest(X, fac))


def check_training_data(estimator, X):
    """Raise ``ValueError`` where the training arrays of the fit have been modified since.

    Only the factorisation the digest was taken of is checked (a restriction to some
    targets is a new one, checked through the model it came from)."""
    check = getattr(estimator, "_training_check", None)
    fac = getattr(estimator, "factorization_", None)
    if check is None or fac is None or check[0] is not fac:
        return
    if training_digest(X, fac) != check[1]:
        raise ValueError(
            f"{type(estimator).__name__}: the training X or y passed to fit has been modified in place "
            "since the fit (the model holds them without a copy); its cross-validation methods would mix "
            "the fitted model with the new values. Refit on the modified data, or pass a copy to fit")
