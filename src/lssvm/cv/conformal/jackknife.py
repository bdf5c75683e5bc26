"""Leave-one-out models evaluated at new points: the jackknife and jackknife+
intervals of the sparse LS-SVM, from its training factorisation.

Notation as in :mod:`lssvm.cv.holdout` and the documentation's Mathematics page, §2-3: augmented rows
``z_i = [Kc_i, 1]`` (centred kernel row, intercept), ``P = sum_i z_i z_i^T +
alpha blockdiag(K_BB, 0)`` with ``P^-1 = blockdiag(Q D Q^T, 1/m)``, ``D =
(Lambda + alpha)^-1``, ``c = sum_i y_i z_i`` and ``theta = P^-1 c`` the
full model: ``f(x) = z_x^T theta = y_mean + m_x^T D z`` with ``m_x = (k_x -
mu)^T Q`` the new point's row in the eigenbasis.

**Leave-one-out model at a new point.**  Dropping row i changes ``P`` by
``-z_i z_i^T`` and ``c`` by ``-y_i z_i``.  Sherman-Morrison gives

    theta_{-i} = theta - P^-1 z_i (y_i - z_i^T theta) / (1 - h_ii),
    h_ii = z_i^T P^-1 z_i = 1/m + m_i^T D m_i,

so with ``R_i = e_i / (1 - h_ii)`` the exact LOO residual,

    f_{-i}(x) = f(x) - u_i(x) R_i,   u_i(x) = z_x^T P^-1 z_i = 1/m + m_x^T D m_i.

The basis (and the centring ``mu``, absorbed by the unpenalised intercept)
stays fixed, as in :meth:`lssvm.solvers.SparseRLSFactorization.loo_residuals`.
Cost: O(n^2) per new point for ``m_x`` (one triangular solve and one
product with V), then O(m r) per point and output for all m LOO values;
nothing is refitted.  :func:`sparse_jackknife_plus` needs only the order
statistics of those values: it screens them (:mod:`lssvm.cv.conformal.screened`)
and forms the few per cent near the k-th smallest, O(n r + w r) per point.
"""

from __future__ import annotations

import numpy as np

from ...solvers.sparse_rls import whiten_rows
from .ranks import conformal_ranks, interval_from_values, kth_smallest
from .screened import MonotoneValues, screened_kth

__all__ = ["eigen_rows", "loo_values", "product_rows", "sparse_jackknife", "sparse_jackknife_plus", "weighted_norms", "whitened_rows"]


def eigen_rows(fac, K_x):
    """New points' centred kernel rows in the eigenbasis, ``(k_x - mu) W V``.

    Parameters
    ----------
    fac : PathSolution
    K_x : ndarray of shape (t, n)
        ``k(x, Z)`` for the new points.

    Returns
    -------
    ndarray of shape (t, r); O(t n^2).
    """
    return whiten_rows(np.asarray(K_x, dtype=float) - fac.kernel_mean, fac.whitener, fac.method) @ fac.V


def loo_values(fac, Mx, alpha, R):
    """The m leave-one-out models at new points, ``f_{-i}(x) = f(x) - u_i(x) R_i``.

    Parameters
    ----------
    fac : SparseRLSFactorization
    Mx : ndarray of shape (t, r)
        New points in the eigenbasis (:func:`eigen_rows`).
    alpha : float
    R : ndarray of shape (m, v)
        Exact LOO residuals at ``alpha``.

    Returns
    -------
    full : ndarray of shape (t, v)
        The full model ``f(x)``.
    values : ndarray of shape (t, m, v)
        ``f_{-i}(x)``.  O(t m r + t m v).
    """
    d = 1.0 / (fac.eigenvalues + float(alpha))
    full = fac.y_mean + Mx @ (d[:, None] * fac.z)
    U = (Mx * d) @ fac.M.T + 1.0 / fac.n_samples  # (t, m)
    return full, full[:, None, :] - U[:, :, None] * R[None, :, :]


#: test rows per block: a block's kernel and eigenbasis rows stay near this many floats
_BLOCK_FLOATS = 1 << 22


def product_rows(fac, K_x):
    """:func:`eigen_rows` as one product with ``Q = W V`` (n, r), formed once
    per factorisation: ``(k_x - mu) Q``, O(t n r) in one GEMM instead of a
    triangular solve and a GEMM (the same rows up to rounding)."""
    return (np.asarray(K_x, dtype=float) - fac.kernel_mean) @ fac.Q


def whitened_rows(fac, alpha):
    """``D = (Lambda + alpha)^-1`` (r,) and the norms ``||D^1/2 m_i||`` (m,)
    of the training rows: ``u_i(x) = 1/m + (D m_x) . m_i`` and, by
    Cauchy-Schwarz, ``|(D m_x) . m_i| <= ||D^1/2 m_x|| ||D^1/2 m_i||``;
    O(m r), no copy of ``M``."""
    d = 1.0 / (fac.eigenvalues + float(alpha))
    return d, np.sqrt(np.einsum("ij,j,ij->i", fac.M, d, fac.M))


def weighted_norms(Mx, d):
    """``||D^1/2 m_x||`` (t,) of rows ``Mx`` (t, r)."""
    return np.sqrt(np.einsum("ij,j,ij->i", Mx, d, Mx))


def sparse_jackknife_plus(fac, kernel, basis_vectors, X, coverage, alpha, block_size=None):
    """Jackknife+ bounds of the sparse LS-SVM at many new points, without the
    (t x m) matrix of leave-one-out values.

    Parameters
    ----------
    fac : SparseRLSFactorization
    kernel : callable
        ``kernel(X, Z)``, the fitted kernel.
    basis_vectors : ndarray of shape (n, d)
    X : ndarray of shape (t, d)
    coverage : float in (0, 1)
    alpha : float
    block_size : int, optional
        Most test rows per block of kernel rows.

    Returns
    -------
    ndarray of shape (t, 2, v)
        The ``floor(alpha_c (m + 1))``-th smallest of ``f_{-i}(x) - |R_i|``
        and the ``ceil((1 - alpha_c)(m + 1))``-th smallest of ``f_{-i}(x) +
        |R_i|`` (Barber et al. 2021), ``f_{-i}(x) = f(x) - u_i(x) R_i``
        (module docstring).

    Notes
    -----
    Each candidate is ``f(x)`` plus ``(+-|R_i| - R_i / m) - R_i g_i``,
    affine in the cross-leverage ``g_i = a_x . a_i``: the order statistics
    are screened (:mod:`lssvm.cv.conformal.screened`), and only the rows
    whose candidates may be the k-th smallest, a few per cent, get their
    ``g_i``.  Cost: O(n r) per new point for its eigenbasis row (one
    product with ``Q = W V``), then O(w r + m / 256) for w window rows;
    memory O(block x n).  The same
    bounds as :func:`loo_values` with :func:`lssvm.cv.conformal.interval_from_values`
    up to rounding; non-finite LOO residuals take that direct route.
    """
    m = fac.n_samples
    a = float(alpha)
    R = fac.loo_residuals(a)
    v = R.shape[1]
    k_lo, k_hi = conformal_ranks(coverage, m)
    d, norms = whitened_rows(fac, a)
    coef = d[:, None] * fac.z
    absR = np.abs(R)
    direct = not (np.all(np.isfinite(R)) and np.all(np.isfinite(norms)))
    selections = []
    for j in range(v):
        shift = R[:, j] / m
        selections.append((MonotoneValues(-absR[:, j] - shift, -R[:, j]), k_lo))
        selections.append((MonotoneValues(absR[:, j] - shift, -R[:, j]), k_hi))
    out = np.empty((X.shape[0], 2, v))
    step = max(1, _BLOCK_FLOATS // max(basis_vectors.shape[0], d.size, 1))
    if block_size is not None:
        step = min(step, int(block_size))
    direct_step = max(1, _BLOCK_FLOATS // (m * v))  # the direct route holds (t, m, v) values
    for start in range(0, X.shape[0], step):
        rows = slice(start, min(start + step, X.shape[0]))
        Mx = product_rows(fac, kernel(X[rows], basis_vectors))
        if direct or not np.all(np.isfinite(Mx)):
            for lo in range(0, Mx.shape[0], direct_step):
                values = loo_values(fac, Mx[lo:lo + direct_step], a, R)[1]
                out[start + lo:start + lo + direct_step] = interval_from_values(values, absR, coverage)
            continue
        full = fac.y_mean + Mx @ coef
        got, _ = screened_kth(Mx * d, fac.M, norms, selections, x_norms=weighted_norms(Mx, d))  # affine: all screened
        out[rows] = full[:, None, :] + got.reshape(-1, v, 2).transpose(0, 2, 1)
    return out


def sparse_jackknife(fac, kernel, basis_vectors, X, coverage, alpha, block_size=None):
    """Jackknife bounds of the sparse LS-SVM, ``f(x) +- q`` with ``q`` the
    ``ceil((1 - alpha_c)(m + 1))``-th smallest exact LOO residual ``|R_i|``.

    Parameters
    ----------
    fac, kernel, basis_vectors, X, coverage, alpha, block_size
        As :func:`sparse_jackknife_plus`.

    Returns
    -------
    ndarray of shape (t, 2, v)

    Notes
    -----
    ``f(x)`` from the dual coefficients, ``k(x, Z) a + b``: O(n) per new
    point and output after its kernel row, no eigenbasis row; O(m) for the
    selection once.
    """
    m = fac.n_samples
    R = fac.loo_residuals(float(alpha))
    q = kth_smallest(np.abs(R), conformal_ranks(coverage, m)[1], axis=0)  # (v,)
    coef, intercept = fac.coef(float(alpha))
    out = np.empty((X.shape[0], 2, R.shape[1]))
    step = max(1, _BLOCK_FLOATS // max(basis_vectors.shape[0], 1))
    if block_size is not None:
        step = min(step, int(block_size))
    for start in range(0, X.shape[0], step):
        rows = slice(start, min(start + step, X.shape[0]))
        full = kernel(X[rows], basis_vectors) @ coef + intercept
        out[rows, 0], out[rows, 1] = full - q, full + q
    return out
