"""Leave-one-out error sums of many targets over a whole alpha path, by
GEMMs over batches of targets (the documentation's Mathematics page, §2).

For the factorised sparse RLS problem (:class:`~lssvm.solvers.SparseRLSFactorization`:
``M = Kc Q`` (m x r), eigenvalues ``lambda``, ``z = M^T Yc``), the LOO
residual of row i and target t at ``alpha`` is

    R_it = (Yc_it - sum_j M_ij z_jt / (lambda_j + alpha)) / (1 - h_i),
    h_i  = 1/m + sum_j M_ij^2 / (lambda_j + alpha)

(the ``1/m`` is the unpenalised intercept, exact).  ``h`` depends on the
row and alpha only (m x r work per alpha, independent of the number of
targets); the fitted values are one GEMM per alpha and batch of targets,
``M (D_alpha z_T)`` (m r |T| flops); the sum of squares over rows is then
a weighted column sum ``(1 - h)^-2 . E^2``.  Nothing of size m x v is held:
one m x |T| buffer per batch, ``|T|`` sized from the free memory.

The rounding guard of :meth:`PathSolution.loo_rows` (residuals whose
estimated relative error from the eigenvalues' rounding passes
``LOO_RTOL``) is kept, with its element-wise bound evaluated only for the
alphas where a bound on whole rows and targets trips, which is rare.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .sparse_rls import _EPS, LEVERAGE_TOL, LOO_RTOL, target_batches

__all__ = ["loo_sums_by_targets", "targets_batch_size", "available_memory", "restrict_targets", "coef_per_target"]

#: Most bytes one target batch's buffers may take when the batch size is chosen automatically: with
#: the n x v arrays of a fit of many targets (``z``, the coefficients) this keeps the memory above the
#: targets near 1 GiB at n = 500, v = 10^5.
BATCH_BYTES_CAP = 1 << 28
#: Bytes of the one buffer of a bounded batch (:func:`targets_batch_size`).  The LOO sums at
#: m = 2000, r = 448, v = 10^4, 15 alphas took 11.3 / 10.0 / 8.4-9.2 s of one core with 512 / 2048 /
#: 10^4 targets per batch (a loaded machine): wide GEMMs run faster, so the buffer is large, but
#: bounded in v.
BLOCK_BYTES = 1 << 25
#: m-sized buffers per target in a batch (fitted values, their squares, the guard's temporaries).
_BUFFERS_PER_TARGET = 4
#: Bytes of each m x a array of the hat diagonal over a chunk of a alphas in :func:`loo_sums_by_targets`.
_ALPHA_CHUNK_BYTES = 1 << 20


def available_memory():
    """Free memory in bytes (``MemAvailable`` of ``/proc/meminfo``; 2 GiB where unreadable)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2 << 30


def targets_batch_size(n_targets_batch, n_rows, n_targets, buffers_per_target=None, bounded=False):
    """Targets per batch.

    Parameters
    ----------
    n_targets_batch : "auto" or int >= 1
        "auto": as many as fit in a quarter of the free memory, at most
        ``BATCH_BYTES_CAP`` (256 MiB), with ``buffers_per_target`` buffers of
        ``n_rows`` floats each per target.
    n_rows, n_targets : int
    buffers_per_target : int, optional
        Buffers of ``n_rows`` floats per target (default ``_BUFFERS_PER_TARGET``).
    bounded : bool, default=False
        With "auto": one buffer of at most ``BLOCK_BYTES`` (32 MiB), at
        least 64 targets: a bounded buffer, not a copy of the targets.

    Returns
    -------
    int in [1, n_targets]
    """
    if isinstance(n_targets_batch, str):
        if n_targets_batch != "auto":
            raise ValueError(f"n_targets_batch must be 'auto' or an int >= 1; got {n_targets_batch!r}")
        budget = min(available_memory() // 4, BATCH_BYTES_CAP)
        buffers = _BUFFERS_PER_TARGET if buffers_per_target is None else buffers_per_target
        size = budget // (8 * buffers * max(n_rows, 1))
        if bounded:
            size = min(size, max(64, BLOCK_BYTES // (8 * max(n_rows, 1))))
    else:
        if isinstance(n_targets_batch, bool) or not float(n_targets_batch).is_integer() or n_targets_batch < 1:
            raise ValueError(f"n_targets_batch must be 'auto' or an int >= 1; got {n_targets_batch!r}")
        size = int(n_targets_batch)
    return int(max(1, min(size, n_targets)))


def loo_sums_by_targets(fac, alphas, n_targets_batch="auto", per_alpha=False):
    """Sums over the rows of the squared exact LOO residuals, for every alpha and target.

    Parameters
    ----------
    fac : lssvm.solvers.SparseRLSFactorization
        The training factorisation (``M``, ``z``, ``y_centered``, ``eigenvalues``).
    alphas : ndarray of shape (A,)
        Validated regularisation values (:func:`check_alphas`).
    n_targets_batch : "auto" or int, default="auto"
        Targets per GEMM batch (:func:`targets_batch_size`, bounded with "auto").
    per_alpha : bool, default=False
        Also return which alphas the unreliable rows concern.

    Returns
    -------
    sse : ndarray of shape (A, v)
        ``sum_i R_it^2`` (inf or NaN where ``h_i`` rounds to 1).
    unreliable_rows : ndarray of int
        Rows whose ``1 - h_i`` is at most ``LEVERAGE_TOL`` for some alpha, or
        whose residual's estimated relative error passes ``LOO_RTOL`` for some
        alpha and target (see :meth:`PathSolution.loo_rows`; the error bound
        uses each target's root mean square over all rows as its scale).
    bad_alphas : ndarray of shape (A,) of bool
        Only with ``per_alpha``: the alphas at which some row is unreliable
        (a search asks whether it chose one).

    Notes
    -----
    Cost: ``2 m r v`` flops per alpha (one GEMM per batch of targets: the
    floor of exact LOO sums, since each row's weight ``(1 - h_i)^-2`` changes
    with alpha), ``m r`` per alpha for the hat diagonal, and three passes over
    an m x |T| buffer per alpha and batch (at most 32 MiB with "auto").  Memory: that buffer, m x a
    arrays for the hat diagonal of a chunk of alphas (each at most ``_ALPHA_CHUNK_BYTES``), the
    batch's centred targets (m x |T|, formed per batch from the held ``y``), r x A and A x |T| arrays:
    nothing of size m x v or m x A.
    """
    M, z = fac.M, fac.z
    m, r = M.shape
    v = z.shape[1]
    A = alphas.size
    M2 = M * M
    scale = _EPS * max(float(fac.eigenvalues.max(initial=0.0)), 0.0)  # eigenvalue rounding, eps lambda_max
    sse = np.empty((A, v))
    unreliable = np.zeros(m, dtype=bool)
    bad_alphas = np.zeros(A, dtype=bool)
    batch = targets_batch_size(n_targets_batch, m, v, bounded=True)
    E = np.empty((m, batch))
    # the m x A arrays of the hat diagonal go in chunks of alphas (each array at most _ALPHA_CHUNK_BYTES):
    # a long alpha path of one target then never holds several m x A arrays at once
    chunk = max(1, _ALPHA_CHUNK_BYTES // (8 * m))
    for a_lo in range(0, A, chunk):
        cols = slice(a_lo, min(a_lo + chunk, A))
        D = 1.0 / (fac.eigenvalues[:, None] + alphas[None, cols])  # (r, a)
        D2, d_max = D * D, D.max(axis=0, initial=0.0)
        # 1 - h_i for every row and alpha of the chunk: O(m r a), m x a (never m x v)
        denoms = (1.0 - 1.0 / m) - M2 @ D
        weights = np.empty_like(denoms)
        with np.errstate(divide="ignore", over="ignore"):
            np.divide(1.0, denoms * denoms, out=weights)
        near_one = denoms <= LEVERAGE_TOL
        unreliable |= near_one.any(axis=1)
        bad_alphas[cols] |= near_one.any(axis=0)
        H = np.maximum(1.0 - 1.0 / m - denoms, 0.0) * d_max  # (m, a), >= sum_j M_ij^2 D_j^2
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            h_ratio = np.nanmax(scale * H / np.abs(denoms), axis=0, initial=0.0)  # (a,)
            sqrt_h_ratio = np.nanmax(scale * np.sqrt(H) / np.abs(denoms), axis=0, initial=0.0)
        for lo in range(0, v, batch):
            hi = min(lo + batch, v)
            zb, Yb, Eb = z[:, lo:hi], _centred_columns(fac, slice(lo, hi)), E[:, : hi - lo]
            y_scale = np.sqrt(np.einsum("ij,ij->j", Yb, Yb) / m)  # each target's RMS, no m x |T| temporary
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                Sz = D2.T @ (zb * zb)  # (a, |T|)
                ratio_max = np.nanmax(np.sqrt(Sz) / y_scale, axis=1, initial=0.0)  # (a,)
            for k in range(D.shape[1]):
                np.matmul(M, zb * D[:, k : k + 1], out=Eb)
                np.subtract(Yb, Eb, out=Eb)  # training residuals E = Yc - M D z
                # rounding guard (as PathSolution.loo_rows).  Cheap test first: both terms of its bound below
                # LOO_RTOL / 2 of max(|R|, y_scale) for every row and target; else the element-wise bound
                if not (h_ratio[k] <= LOO_RTOL / 2 and sqrt_h_ratio[k] * ratio_max[k] <= LOO_RTOL / 2):
                    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                        flagged = _guard(fac, M2, D2[:, k], denoms[:, k], H[:, k], Sz[k], scale, Eb, y_scale, zb)
                    unreliable |= flagged
                    bad_alphas[a_lo + k] |= bool(np.any(flagged))
                with np.errstate(over="ignore", invalid="ignore"):
                    np.multiply(Eb, Eb, out=Eb)
                    sse[a_lo + k, lo:hi] = weights[:, k] @ Eb
    if per_alpha:
        return sse, np.flatnonzero(unreliable), bad_alphas
    return sse, np.flatnonzero(unreliable)


def _centred_columns(fac, targets):
    """The centred targets of some columns, (m, |targets|): formed from the held targets of a
    :class:`~lssvm.solvers.SparseRLSFactorization`, cut from a factorisation that holds them centred."""
    if getattr(fac, "y", None) is not None:
        return fac.centred_columns(targets)
    return fac.y_centered[:, targets]


def _guard(fac, M2, d2, denom, H, Sz, scale, E, y_scale, zb):
    """Rows (m,) whose LOO residual at one alpha has an estimated relative
    error above ``LOO_RTOL`` for some target of the batch: the free bound of
    :meth:`PathSolution.loo_rows` element-wise, then its estimate where the
    bound trips (one more GEMM)."""
    R = E / denom[:, None]
    absR = np.abs(R)
    limit = LOO_RTOL * np.maximum(absR, y_scale)
    bound = scale * (np.sqrt(H[:, None] * Sz[None]) + absR * H[:, None]) / np.abs(denom)[:, None]
    if not (bound > limit).any():
        return np.zeros(E.shape[0], dtype=bool)
    dF = np.abs(fac.M) @ (np.abs(zb) * d2[:, None])
    err = scale * (dF + absR * (M2 @ d2)[:, None]) / np.abs(denom)[:, None]
    return (err > limit).any(axis=1)


def restrict_targets(fac, targets):
    """The same factorisation for some targets only (the kernel side is shared, not copied).

    Parameters
    ----------
    fac : PathSolution or SparseRLSFactorization
    targets : slice or ndarray of int
        Output columns to keep.

    Returns
    -------
    PathSolution or SparseRLSFactorization
        Of the same class, with the per-target arrays (``z``, ``y_mean`` and,
        where present, ``y`` (or ``y_centered``) and the block Grams'
        ``cross``) cut to ``targets``; O(m |targets|) copies at most.
    """
    cut = {"z": fac.z[:, targets], "y_mean": fac.y_mean[targets]}
    for name in ("y", "y_centered"):
        if name in fac.__dataclass_fields__ and getattr(fac, name) is not None:
            cut[name] = getattr(fac, name)[:, targets]
    blocks = getattr(fac, "block_grams", None)
    if blocks is not None:
        cut["block_grams"] = replace(blocks, cross=blocks.cross[:, :, targets])
    return replace(fac, **cut)


def coef_per_target(sol, alphas):
    """Dual coefficients and intercepts with one alpha per target.

    Parameters
    ----------
    sol : PathSolution
    alphas : ndarray of shape (v,)
        Validated, one per output column.

    Returns
    -------
    a : ndarray of shape (n, v)
    b : ndarray of shape (v,)

    Notes
    -----
    Column t is :meth:`PathSolution.coef` at ``alphas[t]``:
    ``a_t = W V (Lambda + alpha_t)^-1 z_t``, ``b_t = mean(y_t) - mu^T a_t``,
    by one product with ``Q = W V`` (:attr:`PathSolution.Q`, n x r, formed
    once in O(n^2 r)): 2 n r v flops, without the n^2 v of taking every
    target back through the whitener.  Memory: the result and, per batch
    of targets (each n x |T| array at most ``TARGET_BATCH_BYTES``), the
    batch's temporaries: no other array of size n x v.
    """
    n, v = sol.kernel_mean.size, sol.z.shape[1]
    a = np.empty((n, v))
    Q = sol.Q
    for cols in target_batches(max(n, sol.rank), v):
        C = sol.z[:, cols] / (sol.eigenvalues[:, None] + alphas[None, cols])  # (r, |T|)
        np.matmul(Q, C, out=a[:, cols])
    return a, sol.y_mean - sol.kernel_mean @ a
