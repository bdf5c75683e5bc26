"""The check that the training arrays a fitted model holds without a copy are unchanged.

A fit keeps the caller's ``X`` and targets as given (the factorisation's ``y``:
a fit of many targets holds no second m x v array), and the exact-CV methods
read them again.  Were the caller to modify them in place after the fit, those
methods would silently mix the fitted model with the new values; a digest taken
at the fit and compared before each use turns that into a clear error.
"""

from __future__ import annotations

import zlib

import numpy as np
import scipy.sparse as sp

#: bytes hashed per row block: arrays that are not C-contiguous are copied a block at a time
_BLOCK_BYTES = 1 << 22


def _update(crc, array):
    """The running CRC-32 ``crc`` continued over ``array``'s shape, type and values."""
    if array is None:
        return zlib.crc32(b"none", crc)
    if sp.issparse(array):
        array = sp.csr_array(array)
        for part in (array.data, array.indices, array.indptr):
            crc = _update(crc, part)
        return crc
    array = np.asarray(array)
    crc = zlib.crc32(repr((array.shape, array.dtype.str)).encode(), crc)
    if array.ndim == 0 or array.size == 0:
        return zlib.crc32(array.tobytes(), crc)
    row_bytes = max(1, array[:1].nbytes)
    step = max(1, _BLOCK_BYTES // row_bytes)
    for lo in range(0, array.shape[0], step):
        crc = zlib.crc32(np.ascontiguousarray(array[lo : lo + step]).data, crc)
    return crc


def training_digest(X, Y):
    """A CRC-32 of the training rows ``X`` (dense or sparse, or None) and targets ``Y`` (or None):
    O(m (d + v)) time (a few GB/s), one row block of workspace.  It guards against accidental
    in-place changes (one in 2^32 goes unseen), not against a deliberate collision."""
    return _update(_update(0, X), Y)


def remember_training_data(estimator, X, Y):
    """Record, after a fit, the arrays ``X`` and ``Y`` the model holds (references, not copies)
    and their digest."""
    estimator._training_check = (X, Y, training_digest(X, Y))


def check_training_data(estimator):
    """Raise ``ValueError`` where the training arrays of the fit have been modified since.

    A copy of the model (a restriction to some targets) holds the same record: the whole
    arrays it came from are checked."""
    check = getattr(estimator, "_training_check", None)
    if check is None:
        return
    X, Y, digest = check
    if training_digest(X, Y) != digest:
        raise ValueError(
            f"{type(estimator).__name__}: the training X or y passed to fit has been modified in place "
            "since the fit (the model holds them without a copy); its cross-validation methods would mix "
            "the fitted model with the new values. Refit on the modified data, or pass a copy to fit")
