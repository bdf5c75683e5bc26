"""Prototype selection by maximal quadratic Rényi entropy (the classic
prototype choice of Suykens et al. 2002 and De Brabanter et al. 2010;
cited by Karsmakers et al. 2011, §4.2).

Written by hand: no maintained library offers it.  The quadratic Rényi
entropy of a set Z = {z_1..z_n} under a Parzen estimate with kernel k is
``H(Z) = -log(sum_ij k(z_i, z_j) / n^2)``; a set with large entropy spreads
over the data.  The search is the usual random-swap one: draw a prototype
and a candidate row, swap them if the entropy rises.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import Kernel
from ._checks import check_count, check_input, check_kernel, unchecked
from .random import random_basis

__all__ = ["RenyiResult", "renyi_entropy_selection"]


@dataclass(frozen=True)
class RenyiResult:
    """Outcome of :func:`renyi_entropy_selection`.

    Attributes
    ----------
    indices : ndarray of shape (n,)
        Rows of X, sorted.
    entropy : float
        Final quadratic Rényi entropy ``-log(sum_ij K_ij / n^2)``.
    entropy_trace : ndarray of shape (n_accepted + 1,)
        Entropy after the initial draw and after each accepted swap
        (non-decreasing).
    n_iter : int
        Swaps tried.
    """

    indices: np.ndarray
    entropy: float
    entropy_trace: np.ndarray
    n_iter: int


def renyi_entropy_selection(X, n, kernel: Kernel, n_iter=None, random_state=None) -> RenyiResult:
    """Choose ``n`` rows of ``X`` whose quadratic Rényi entropy is (locally) maximal.

    Parameters
    ----------
    X : ndarray of shape (N, d)
    n : int
        Number of prototypes, 1 <= n <= number of distinct rows.
    kernel : Kernel
        The Parzen window; use the model's kernel (as LS-SVMlab does).
    n_iter : int, optional
        Swaps tried; default ``max(N, 20 n)``.
    random_state : int, RandomState or None
        Initial draw (uniform, distinct rows) and the swap proposals.

    Returns
    -------
    RenyiResult

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        If ``X`` is not a non-empty finite 2-D array, ``n`` is not an
        integer in [1, number of distinct rows] or ``n_iter`` is not None
        or an integer >= 0.

    Notes
    -----
    Keeps the row sums ``r_j = sum_l k(z_j, z_l)``; a proposed swap of
    prototype i for row x changes ``S = sum_jl K_jl`` by
    ``2 (sum_{j != i} k(x, z_j) - (r_i - K_ii)) + k(x, x) - K_ii``, so a
    proposal costs two kernel rows, O(n d), and an accepted one an O(n)
    update.  A proposal that duplicates a current prototype is rejected.
    Total O(n_iter n d) time, O(n) memory beyond the prototypes.
    """
    X = check_input(X, sparse_ok=False)  # the entropy swaps index dense rows
    N = X.shape[0]
    n = check_count("n", n)
    kernel = check_kernel(kernel, X)
    kern = unchecked(kernel)  # X was validated once: no per-call checks in the loops
    if n_iter is not None and (not isinstance(n_iter, Integral) or isinstance(n_iter, bool) or n_iter < 0):
        raise ValueError(f"n_iter must be an integer >= 0 or None; got {n_iter!r}")
    rng = check_random_state(random_state)  # one stream for the first draw and the swaps
    idx = random_basis(X, n, rng)  # distinct rows; raises if n is too large
    n_iter = max(N, 20 * n) if n_iter is None else int(n_iter)
    Z = X[idx].copy()
    K = kern(Z, Z)
    r = K.sum(axis=1)
    diag = np.diag(K).copy()
    S = float(r.sum())
    in_set = np.zeros(N, dtype=bool)
    in_set[idx] = True
    trace = [_entropy(S, n)]
    for _ in range(n_iter):
        i = int(rng.randint(n))
        j = int(rng.randint(N))
        if in_set[j]:
            continue
        x = X[j : j + 1]
        kx = kern(x, Z)[0]
        kxx = float(kernel.diag(x)[0])
        kx_no_i = kx.sum() - kx[i]
        if np.any(np.all(Z == x, axis=1)):
            continue  # a repeated point would make the basis kernel singular
        delta = 2.0 * (kx_no_i - (r[i] - diag[i])) + kxx - diag[i]
        if delta >= 0:
            continue
        ki = kern(Z[i : i + 1], Z)[0]
        r += kx - ki
        r[i] = kx_no_i + kxx
        diag[i] = kxx
        S += delta
        in_set[idx[i]] = False
        in_set[j] = True
        idx[i] = j
        Z[i] = x[0]
        trace.append(_entropy(S, n))
    order = np.argsort(idx)
    return RenyiResult(idx[order], trace[-1], np.asarray(trace), n_iter)


def _entropy(S, n):
    return float(-np.log(S / n**2))
