"""Sparse conjugate directions pursuit (paper 002, Algorithm 3).

Written by hand: no maintained library offers it.  For a symmetric positive
definite ``A`` (D x D), SCDP grows a sparse solution of ``A w = b`` one
coordinate at a time: it adds the unselected coordinate with the largest
``|c_i|``, ``c = A w - b`` (Southwell's rule), builds a search direction that
is A-conjugate to all previous ones and non-zero only on the selected
coordinates, and takes the exact step along it.  After k steps ``w`` is the
minimiser of ``w^T A w / 2 - b^T w`` over the k chosen coordinates, i.e. the
least-squares solution on them -- the same path as orthogonal matching
pursuit on the normal equations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["SCDPResult", "scdp"]


@dataclass(frozen=True)
class SCDPResult:
    """Outcome of :func:`scdp`.

    Attributes
    ----------
    order : ndarray of shape (K,)
        Selected coordinates, in selection order.
    coef_path : ndarray of shape (K, K)
        ``coef_path[k, :k + 1]`` are the solution's values on
        ``order[:k + 1]`` after ``k + 1`` steps (lower triangular).
    residual_norms : ndarray of shape (K + 1,)
        ``||A w - b||_2`` before the first step and after each step.
    n_features : int
        D.
    """

    order: np.ndarray
    coef_path: np.ndarray
    residual_norms: np.ndarray
    n_features: int

    def coef(self, k=None):
        """Dense solution after ``k`` steps (default: the last), shape (D,)."""
        k = self.order.size if k is None else int(k)
        if not 0 <= k <= self.order.size:
            raise ValueError(f"k must be in [0, {self.order.size}]; got {k}")
        w = np.zeros(self.n_features)
        if k:
            w[self.order[:k]] = self.coef_path[k - 1, :k]
        return w


def scdp(A, b, max_nonzero=None, n_candidates=None, random_state=None, callback=None, tol=0.0):
    """Sparse conjugate directions pursuit for ``A w = b``, A symmetric positive definite.

    Parameters
    ----------
    A : ndarray of shape (D, D)
        Symmetric positive definite.
    b : ndarray of shape (D,)
    max_nonzero : int, optional
        Number of steps (non-zeros) at most; default D.
    n_candidates : int, optional
        SCDPP (paper 002 §3.5.2): each step considers only ``n_candidates``
        (the paper's rho, 59 in its experiments) random unselected
        coordinates.  The draws come from one random permutation of all D
        coordinates per step, seeded by ``random_state`` alone, so runs on
        different systems (other hyper-parameters) see the same draws
        (Remark 8).  ``None``: scan all coordinates (SCDP).
    random_state : int, RandomState or None
    callback : callable ``(k, order, coef, residual_norm)``, optional
        Called after each step with the step count, the selected coordinates
        so far, their values and ``||A w - b||``.  Returning ``True`` stops.
    tol : float, default=0.0
        Stop once ``||A w - b|| <= tol * ||b||``.

    Returns
    -------
    SCDPResult

    Notes
    -----
    Step k costs O(k D) for ``t = A p`` (p has k non-zeros), O(k^2) to extend
    the upper-triangular matrix ``B`` (paper 002 eq. 20: ``B_ij = (A p_i)_{s_j}``)
    and O(k^2) for the back-substitution giving the next direction (eq. 18).
    Memory: the k x k triangular matrices of directions and of ``B``.
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float).ravel()
    D = b.size
    if A.shape != (D, D):
        raise ValueError(f"A must be square with the size of b ({D}); got shape {A.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("A and b must be finite")
    K = D if max_nonzero is None else int(max_nonzero)
    if not 1 <= K <= D:
        raise ValueError(f"max_nonzero must be in [1, {D}]; got {max_nonzero!r}")
    if n_candidates is not None and (int(n_candidates) != n_candidates or n_candidates < 1):
        raise ValueError(f"n_candidates must be a positive integer or None; got {n_candidates!r}")
    rng = check_random_state(random_state) if n_candidates is not None else None

    c = -b.copy()
    selected = np.zeros(D, dtype=bool)
    order = np.empty(K, dtype=np.intp)
    Pm = np.zeros((K, K))  # Pm[i, j] = (p_i)_{s_j}: direction i on the selected coordinates
    B = np.zeros((K, K))  # B[i, j] = (A p_i)_{s_j}, upper triangular
    coefs = np.zeros((K, K))
    w_sel = np.zeros(K)
    norms = [float(np.linalg.norm(c))]
    b_norm = np.linalg.norm(b)
    k = 0
    s = _next_coordinate(c, selected, n_candidates, rng)
    while True:
        order[k] = s
        selected[s] = True
        # new direction: p_{s_k} = 1, conjugate to all previous ones (eq. 18)
        if k:
            B[:k, k] = Pm[:k, :k] @ A[order[:k], s]  # (A p_i)_{s_k}, eq. 20
            Pm[k, :k] = _back_substitute(B[:k, :k], -B[:k, k])
        Pm[k, k] = 1.0
        p_idx = order[: k + 1]
        p_val = Pm[k, : k + 1]
        t = A[:, p_idx] @ p_val  # A p, O(k D)
        pAp = p_val @ t[p_idx]
        if not pAp > 0:
            raise ValueError("A is not positive definite along the selected coordinates")
        eta = -(c[p_idx] @ p_val) / pAp
        w_sel[: k + 1] += eta * p_val
        c += eta * t
        B[k, k] = t[s]  # (A p_k)_{s_k}; entries left of it vanish by conjugacy
        coefs[k, : k + 1] = w_sel[: k + 1]
        norms.append(float(np.linalg.norm(c)))
        k += 1
        stop = callback(k, order[:k].copy(), w_sel[:k].copy(), norms[-1]) if callback else False
        if stop or k == K or norms[-1] <= tol * b_norm:
            break
        s = _next_coordinate(c, selected, n_candidates, rng)
        if s is None:
            break
    return SCDPResult(order[:k].copy(), coefs[:k, :k].copy(), np.asarray(norms), D)


def _next_coordinate(c, selected, n_candidates, rng):
    """Southwell's rule: the unselected coordinate with the largest |c_i|."""
    if n_candidates is None:
        scores = np.where(selected, -np.inf, np.abs(c))
        j = int(np.argmax(scores))
        return None if selected[j] else j
    perm = rng.permutation(c.size)  # one draw per step, independent of A and b
    cand = perm[~selected[perm]][: int(n_candidates)]
    if cand.size == 0:
        return None
    return int(cand[np.argmax(np.abs(c[cand]))])


def _back_substitute(U, rhs):
    """Solve the upper-triangular ``U x = rhs`` (k x k) in O(k^2)."""
    from scipy.linalg import solve_triangular

    return solve_triangular(U, rhs, lower=False, check_finite=False)
