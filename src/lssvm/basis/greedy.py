"""Randomized greedy forward basis selection (Pahikkala et al. 2012, Algorithm 1).

Written by hand: no maintained library offers it.  Each step draws
``n_candidates`` (60) points not yet chosen and adds the one whose inclusion
lowers the training error of the regularised sparse model the most.  The 60
trial models are not retrained: in whitened coordinates (``K_SS = L L^T``,
features ``Phi = Kc_S L^-T``, penalty ``alpha ||beta||^2``) adding a point is a
bordering of the ridge system, so each candidate costs O(m (k + d) + k^2)
(Smola & Bartlett 2001), done for all candidates at once with matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from ..kernels import Kernel
from ._checks import check_count, check_fraction, check_input, check_kernel, check_positive, unchecked

__all__ = ["GreedyResult", "greedy_selection"]


@dataclass(frozen=True)
class GreedyResult:
    """Outcome of :func:`greedy_selection`.

    Attributes
    ----------
    indices : ndarray of shape (n,)
        Selected rows, in order.
    training_error : ndarray of shape (n + 1,)
        Sum of squared training residuals (all outputs) of the regularised
        model before any point (intercept only) and after each addition.
    stop_reason : str
        "n_basis" or "singular" (no candidate left that is numerically
        independent of the chosen points).
    """

    indices: np.ndarray
    training_error: np.ndarray
    stop_reason: str


def greedy_selection(
    X,
    Y,
    kernel: Kernel,
    n_basis: int,
    alpha: float,
    *,
    n_candidates: int = 60,
    pivot_tol: float = 1e-10,
    random_state=None,
) -> GreedyResult:
    """Select ``n_basis`` basis points by randomized greedy forward selection.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        Training targets.
    kernel : Kernel
    n_basis : int >= 1
        Number of points to select (at most m).
    alpha : float > 0
        Regularisation of the models whose training error is compared.
    n_candidates : int >= 1, default=60
        Random candidates per step (Pahikkala et al. 2012: 60, enough for a point among
        the best 5 % with probability 0.95); ``>= m`` gives the exact greedy
        choice.
    pivot_tol : float in (0, 1), default=1e-10
        Candidates whose relative residual ``(k_hh - K_Sh^T K_SS^-1 K_Sh) /
        k_hh`` is at most this are skipped (they would make K_SS singular).
    random_state : int, RandomState or None

    Returns
    -------
    GreedyResult
        With at least one point.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~lssvm.kernels.Kernel`.
    ValueError
        If ``X`` is not a non-empty finite 2-D array, ``Y`` is not finite
        numeric with one row per row of ``X``, ``n_basis`` or
        ``n_candidates`` is not a positive integer, ``alpha`` is not a
        finite number > 0, ``pivot_tol`` is not in (0, 1), or no point can be
        selected (every point has ``k(x, x) = 0``).

    Notes
    -----
    With the current whitened features ``Phi`` (m x k), ``A = Phi^T Phi +
    alpha I``, coefficients ``beta = A^-1 Phi^T yc`` and residuals ``e``, a
    candidate's whitened column ``phi`` gives ``s = Phi^T phi``,
    ``sigma = phi^T phi + alpha - s^T A^-1 s``, ``u = phi - Phi A^-1 s``,
    ``gamma = phi^T e / sigma`` and new residuals ``e - u gamma^T``; the
    training error changes by ``-2 gamma^T u^T e + ||u||^2 ||gamma||^2``.
    Cost per step O(c m (k + d) + c k^2) for c candidates; O(c m n^2) in all.
    """
    X = check_input(X)
    m = X.shape[0]
    Y = _check_targets(Y, m)
    kernel = check_kernel(kernel, X)
    kern = unchecked(kernel)  # X was validated once: no per-call checks in the loops
    n_basis = min(check_count("n_basis", n_basis), m)
    alpha = check_positive("alpha", alpha)
    n_candidates = check_count("n_candidates", n_candidates)
    pivot_tol = check_fraction("pivot_tol", pivot_tol, meaning=" (a relative residual, e.g. 1e-10)")
    rng = check_random_state(random_state)
    kdiag = kernel.diag(X)
    E = Y - Y.mean(axis=0)  # residuals of the intercept-only model
    Phi = np.zeros((m, n_basis))
    L = np.zeros((n_basis, n_basis))
    Ainv = np.zeros((n_basis, n_basis))
    beta = np.zeros((n_basis, Y.shape[1]))
    chosen = np.zeros(m, dtype=bool)
    dependent = np.zeros(m, dtype=bool)
    selected: list[int] = []
    errors = [float(np.sum(E**2))]
    stop = "n_basis"
    while len(selected) < n_basis:
        k = len(selected)
        while True:
            pool = np.flatnonzero(~chosen & ~dependent)
            if pool.size == 0:
                break
            cand = pool if pool.size <= n_candidates else rng.choice(pool, n_candidates, replace=False)
            if k:
                K_Sc = kern(X[selected], X[cand])  # (k, c)
                lc = linalg.solve_triangular(L[:k, :k], K_Sc, lower=True, check_finite=False)
                delta2 = kdiag[cand] - np.einsum("kc,kc->c", lc, lc)
            else:
                lc = np.zeros((0, cand.size))
                delta2 = kdiag[cand].astype(float)
            ok = delta2 > pivot_tol * np.maximum(kdiag[cand], 1e-300)
            # a point dependent on the chosen ones stays dependent as the basis
            # grows: drop it for good and draw again rather than stop early
            dependent[cand[~ok]] = True
            if ok.any():
                break
        if pool.size == 0:
            stop = "singular"
            break
        cand, lc, delta2 = cand[ok], lc[:, ok], delta2[ok]
        Kc = kern(X, X[cand])
        Kc -= Kc.mean(axis=0)  # centred kernel columns (the intercept is free)
        delta = np.sqrt(delta2)
        phi = (Kc - Phi[:, :k] @ lc) / delta  # whitened new columns (m, c)
        S = Phi[:, :k].T @ phi  # (k, c)
        AinvS = Ainv[:k, :k] @ S
        sigma = np.einsum("mc,mc->c", phi, phi) + alpha - np.einsum("kc,kc->c", S, AinvS)
        U = phi - Phi[:, :k] @ AinvS
        gamma = (phi.T @ E) / sigma[:, None]  # (c, v)
        uTe = U.T @ E  # (c, v)
        change = -2.0 * np.sum(gamma * uTe, axis=1) + np.einsum("mc,mc->c", U, U) * np.sum(gamma**2, axis=1)
        b = int(np.argmin(change))
        j = int(cand[b])
        # commit: Cholesky border, features, bordered inverse of A, coefficients
        L[k, :k] = lc[:, b]
        L[k, k] = delta[b]
        Phi[:, k] = phi[:, b]
        a_s = AinvS[:, b]
        Ainv[:k, :k] += np.outer(a_s, a_s) / sigma[b]
        Ainv[:k, k] = Ainv[k, :k] = -a_s / sigma[b]
        Ainv[k, k] = 1.0 / sigma[b]
        beta[:k] -= np.outer(a_s, gamma[b])
        beta[k] = gamma[b]
        E = E - np.outer(U[:, b], gamma[b])
        chosen[j] = True
        selected.append(j)
        errors.append(float(np.sum(E**2)))
    if not selected:
        raise ValueError(
            "greedy selection found no usable basis point: every point has k(x, x) = 0 "
            "(e.g. all-zero rows with the linear kernel); check X and the kernel"
        )
    return GreedyResult(np.asarray(selected, dtype=np.intp), np.asarray(errors), stop)


def _check_targets(Y, m):
    """Targets as a finite float (m, v) array, ``ValueError`` otherwise."""
    try:
        Y = np.asarray(Y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Y (the targets) must be numeric; {exc}") from None
    if Y.ndim not in (1, 2) or Y.shape[0] != m or Y.size == 0:
        raise ValueError(f"Y (the targets) must have shape ({m},) or ({m}, n_outputs), one row per row of X; got shape {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y (the targets) contains NaN or infinity; remove or impute those values")
    return Y.reshape(m, -1)
