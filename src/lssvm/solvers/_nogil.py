"""BLAS ``dsymm``, ``dsyr2k`` and LAPACK ``dgeqrt``, ``dpbsv`` on
sub-blocks, without holding the GIL.

Why this exists: SciPy's ``scipy.linalg.blas`` wrappers hold the GIL while
BLAS runs and copy non-contiguous arguments, so CV folds reduced on two
threads with them run one after the other, and every update of a trailing
sub-block would copy it twice.  NumPy's ``matmul`` releases the GIL but has
no symmetric products and no accumulation into its output.

SciPy's public Cython BLAS and LAPACK APIs (``scipy.linalg.cython_blas``,
``cython_lapack``) export every routine as a C function pointer.  Calling it through ``ctypes`` releases
the GIL and takes sub-blocks by leading dimension, in place (the same route
Numba uses to call SciPy's BLAS).  The pointers are used only if their C
signatures are exactly the expected LP64 ones; otherwise (another SciPy
build, e.g. ILP64) the NumPy fallbacks below are used, with the same
results, and a :class:`~lssvm.exceptions.PerformanceWarning` says so once.

Every call checks shapes, dtype, strides and writeability of its arguments
before a raw pointer reaches BLAS (which would otherwise read or write
outside a mis-shaped view): a mismatch raises ``ValueError``.

Arrays are column-major (Fortran-ordered) views: unit stride down a column,
``strides[1] >= 8 * shape[0]`` (sub-blocks of a Fortran array qualify).
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np

from ..exceptions import PerformanceWarning

__all__ = ["AVAILABLE", "symm_lower", "syr2k_lower_", "geqrt_", "pbsv_lower_"]

_SYMM = "void (char *, char *, int *, int *, d *, d *, int *, d *, int *, d *, d *, int *)"
_GEQRT = "void (int *, int *, int *, d *, int *, d *, int *, d *, int *)"
_PBSV = "void (char *, int *, int *, int *, d *, int *, d *, int *, int *)"


def _load(module, name, expected):
    try:
        from scipy.linalg import cython_blas, cython_lapack

        mod = {"blas": cython_blas, "lapack": cython_lapack}[module]
        capsule = mod.__pyx_capi__[name]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        signature = get_name(capsule)
        typedef = f"__pyx_t_5scipy_6linalg_{len('cython_' + module)}cython_{module}_d"
        if signature is None or signature.decode().replace(typedef, "d") != expected:
            return None
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        address = get_pointer(capsule, signature)
    except (ImportError, AttributeError, KeyError, ValueError):  # pragma: no cover - other SciPy builds
        return None
    if ctypes.sizeof(ctypes.c_int) != 4:  # pragma: no cover - the pointers take 32-bit ints
        return None
    return ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * expected.count("*")))(address)


_DSYMM = _load("blas", "dsymm", _SYMM)
_DSYR2K = _load("blas", "dsyr2k", _SYMM)
_DGEQRT = _load("lapack", "dgeqrt", _GEQRT)
_DPBSV = _load("lapack", "dpbsv", _PBSV)
#: whether the GIL-free path is in use (else SciPy's wrappers and NumPy)
AVAILABLE = all(f is not None for f in (_DSYMM, _DSYR2K, _DGEQRT, _DPBSV))
_MISSING = [n for n, f in (("dsymm", _DSYMM), ("dsyr2k", _DSYR2K), ("dgeqrt", _DGEQRT), ("dpbsv", _DPBSV))
            if f is None]
_warned = False


def _fast():
    """Whether to take the GIL-free path; warns once when it is unavailable."""
    global _warned
    if not AVAILABLE and not _warned:
        _warned = True
        missing = ", ".join(_MISSING) or "the Cython BLAS/LAPACK pointers"
        warnings.warn(
            f"lssvm's GIL-free BLAS/LAPACK path is unavailable ({missing}: this SciPy build's "
            "scipy.linalg.cython_blas/cython_lapack signatures are not the expected LP64 ones); "
            "results are the same, but CV folds of the fixed-basis models run slower "
            "(SciPy's wrappers hold the GIL and copy sub-blocks)",
            PerformanceWarning,
            stacklevel=3,
        )
    return AVAILABLE


def _check(name, a, shape=None, *, writeable=False):
    """Refuse an argument that does not match what the BLAS call will
    address: 2-D float64 of exactly ``shape`` (and writeable if written)."""
    if not isinstance(a, np.ndarray) or a.ndim != 2 or a.dtype != np.float64:
        got = f"{a.dtype} array of {a.ndim} dimension(s)" if isinstance(a, np.ndarray) else type(a).__name__
        raise ValueError(f"{name} must be a 2-D float64 array; got {got}")
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} to match the other arguments; got {a.shape}")
    if writeable and not a.flags.writeable:
        raise ValueError(f"{name} is updated in place and must be writeable; pass a writeable array (a copy)")


def _ld(a):
    """Leading dimension of a column-major float64 view, or None."""
    if a.dtype != np.float64 or a.ndim != 2 or a.strides[0] != 8 or a.strides[1] % 8:
        return None
    ld = a.strides[1] // 8
    return ld if ld >= max(1, a.shape[0]) else None


def _int(v):
    return ctypes.byref(ctypes.c_int(int(v)))


def _dbl(v):
    return ctypes.byref(ctypes.c_double(float(v)))


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def symm_lower(A, W):
    """``A @ W`` for symmetric ``A`` (p, p) of which only the lower triangle
    is read; ``W`` (p, s).  2 p^2 s flops.

    Returns
    -------
    ndarray of shape (p, s), Fortran-ordered
    """
    W = np.asfortranarray(W, dtype=float)
    if W.ndim != 2:
        raise ValueError(f"W must be 2-D; got shape {W.shape}")
    p, s = W.shape
    _check("A", A, (p, p))
    out = np.zeros((p, s), order="F")
    if p == 0 or s == 0:
        return out
    lda = _ld(A)
    if lda is not None and _fast():
        _DSYMM(ctypes.c_char_p(b"L"), ctypes.c_char_p(b"L"), _int(p), _int(s), _dbl(1.0), _ptr(A), _int(lda),
               _ptr(W), _int(p), _dbl(0.0), _ptr(out), _int(p))
        return out
    L = np.tril(A)
    out[:] = L @ W + np.tril(A, -1).T @ W
    return out


def syr2k_lower_(C, X, V, alpha=-1.0):
    """``C += alpha (X V^T + V X^T)`` on the lower triangle of ``C`` (p, p),
    in place; ``X``, ``V`` (p, k).  The strict upper triangle is not
    referenced (the NumPy fallback updates it too).  2 p^2 k flops."""
    X = np.asfortranarray(X, dtype=float)
    V = np.asfortranarray(V, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {X.shape}")
    p, k = X.shape
    _check("V", V, (p, k))
    _check("C", C, (p, p), writeable=True)
    if p == 0 or k == 0:
        return
    ldc = _ld(C)
    if ldc is not None and _fast():
        _DSYR2K(ctypes.c_char_p(b"L"), ctypes.c_char_p(b"N"), _int(p), _int(k), _dbl(alpha), _ptr(X), _int(p),
                _ptr(V), _int(p), _dbl(1.0), _ptr(C), _int(ldc))
        return
    C += alpha * (X @ V.T + V @ X.T)


def geqrt_(A):
    """Householder QR of ``A`` (p, q) in place, compact WY form with one
    block: on return A holds R above the diagonal and the Householder vectors
    below it (as LAPACK ``dgeqrt`` with nb = min(p, q)); 2 p q^2 flops.

    Returns
    -------
    T : ndarray of shape (k, k), k = min(p, q)
        The block factor: ``Q = I - V T V^T``.
    """
    _check("A", A, writeable=True)
    p, q = A.shape
    k = min(p, q)
    lda = _ld(A)
    if not (lda is not None and _fast()):
        from scipy.linalg import lapack

        qr, T, info = lapack.dgeqrt(k, A)
        A[...] = qr
    else:
        T = np.zeros((k, k), order="F")
        work = np.empty(k * q)
        info = ctypes.c_int(0)
        _DGEQRT(_int(p), _int(q), _int(k), _ptr(A), _int(lda), _ptr(T), _int(k), _ptr(work), ctypes.byref(info))
        info = info.value
    if info != 0:  # pragma: no cover - only on bad arguments
        raise ValueError(f"dgeqrt failed with info={info}")
    return T


def pbsv_lower_(ab, B):
    """Solve ``A X = B`` in place for symmetric positive definite banded A,
    lower band storage ``ab[i, j] = A[j + i, j]`` (w + 1, r), both
    column-major; ``ab`` is overwritten by the Cholesky factor, ``B`` (r, s)
    by X.  O(r w^2 + r w s).

    Returns
    -------
    bool
        False if A is not positive definite (then ``B`` is garbage).
    """
    _check("ab", ab, writeable=True)
    w1, r = ab.shape
    if w1 < 1:
        raise ValueError(f"ab must hold at least the diagonal (w + 1 >= 1 rows); got shape {ab.shape}")
    _check("B", B, writeable=True)
    s = B.shape[1]
    _check("B", B, (r, s))
    ldab, ldb = _ld(ab), _ld(B)
    if not (ldab is not None and ldb is not None and _fast()):
        from scipy.linalg import lapack

        _, x, info = lapack.dpbsv(ab, B, lower=1)
        if info == 0:
            B[...] = x
    else:
        info = ctypes.c_int(0)
        _DPBSV(ctypes.c_char_p(b"L"), _int(r), _int(w1 - 1), _int(s), _ptr(ab), _int(ldab), _ptr(B), _int(ldb),
               ctypes.byref(info))
        info = info.value
    if info < 0:  # pragma: no cover - only on bad arguments
        raise ValueError(f"dpbsv failed with info={info}")
    return info == 0
