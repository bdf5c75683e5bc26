"""Sparse conjugate directions pursuit (Karsmakers et al. 2011, Algorithm 3).

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
from numbers import Integral, Real

import numpy as np
from scipy.linalg.blas import dtrsv
from sklearn.utils import check_random_state

__all__ = ["SCDPResult", "SCDPState", "scdp"]

DEFAULT_N_CANDIDATES = 59  # paper 002 §3.5.2: one of the top 5 % with probability 0.95


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


class SCDPState:
    """SCDP one step at a time (the engine behind :func:`scdp`).

    Parameters
    ----------
    A : ndarray of shape (D, D)
        Symmetric positive definite; only the columns of selected
        coordinates are read (each once).
    b : ndarray of shape (D,)
    n_candidates : int or None
        SCDPP's rho (see :func:`scdp`).
    random_state : int, RandomState or None
    pivot_tol : float, default=1e-12
        Relative size of ``p^T A p`` below which a coordinate counts as
        linearly dependent on the selected ones and is skipped.

    Attributes
    ----------
    k : int
        Steps taken (= non-zeros of ``w``).
    order : ndarray of shape (k,)
    coef : ndarray of shape (k,)
        ``w`` on ``order``.
    residual : ndarray of shape (D,)
        ``c = A w - b``.
    direction : ndarray of shape (k,)
        The last search direction on ``order`` (its last entry is 1).
    step_size : float
        The last step length eta: ``w`` moved by ``step_size * direction``.
    skipped : list of int
        Coordinates found numerically dependent and left out.

    Notes
    -----
    Storage grows by doubling, so memory is O(D k + k^2) for k steps, not
    O(D^2) up front.  Selected columns of A are copied into a contiguous
    D x k cache, so ``t = A p`` is one GEMV over it.
    """

    def __init__(self, A, b, n_candidates=None, random_state=None, pivot_tol=1e-12):
        self.A = A
        self.pivot_tol = float(pivot_tol)
        self.skipped = []
        self.b = b
        self.D = b.size
        self.n_candidates = n_candidates
        self._rng = check_random_state(random_state) if n_candidates is not None else None
        self.residual = -b.astype(float, copy=True)
        self._selected = np.zeros(self.D, dtype=bool)
        self.k = 0
        self._alloc(min(self.D, 16))
        self.step_size = 0.0

    def _alloc(self, cap):
        old_k = self.k
        cols = np.empty((self.D, cap), order="F")
        P = np.zeros((cap, cap))
        B = np.zeros((cap, cap))
        order = np.empty(cap, dtype=np.intp)
        w = np.zeros(cap)
        if old_k:
            cols[:, :old_k] = self._cols[:, :old_k]
            P[:old_k, :old_k] = self._P[:old_k, :old_k]
            B[:old_k, :old_k] = self._B[:old_k, :old_k]
            order[:old_k] = self._order[:old_k]
            w[:old_k] = self._w[:old_k]
        self._cols, self._P, self._B, self._order, self._w = cols, P, B, order, w

    @property
    def order(self):
        return self._order[: self.k]

    @property
    def coef(self):
        return self._w[: self.k]

    @property
    def direction(self):
        return self._P[self.k - 1, : self.k]

    def next_coordinate(self):
        """Southwell's rule over all (or rho random) unselected coordinates;
        None when every coordinate is selected."""
        c, selected = self.residual, self._selected
        if self.n_candidates is None:
            scores = np.where(selected, -np.inf, np.abs(c))
            j = int(np.argmax(scores))
            return None if selected[j] else j
        perm = self._rng.permutation(self.D)  # one draw per step, independent of A and b (Remark 8)
        cand = perm[~selected[perm]][: int(self.n_candidates)]
        if cand.size == 0:
            return None
        return int(cand[np.argmax(np.abs(c[cand]))])

    def step(self):
        """Add one coordinate; return it, or None if none is left.

        A coordinate whose Schur complement ``p^T A p`` is at most
        ``pivot_tol * A_ss`` lies numerically in the span of the selected
        ones (A formed as ``K^T K`` squares the kernel's conditioning); it is
        skipped for good (listed in ``skipped``) and the next one is tried.
        """
        while True:
            s = self.next_coordinate()
            if s is None:
                return None
            self._selected[s] = True
            if self._try_add(s):
                return s
            self.skipped.append(s)

    def _try_add(self, s):
        k = self.k
        if k == self._order.size:
            self._alloc(min(self.D, 2 * k))
        self._order[k] = s
        self._cols[:, k] = self.A[:, s]
        P, B, order = self._P, self._B, self._order
        if k:
            # new direction: p_{s_k} = 1, A-conjugate to all previous ones
            B[:k, k] = P[:k, :k] @ self._cols[order[:k], k]  # (A p_i)_{s_k}, eq. 20
            # eq. 18 by BLAS TRSV directly: scipy's solve_triangular wrapper costs more than the O(k^2) work here
            P[k, :k] = dtrsv(B[:k, :k], -B[:k, k], lower=0)
        P[k, k] = 1.0
        p = P[k, : k + 1]
        t = self._cols[:, : k + 1] @ p  # A p, O(k D)
        pAp = p @ t[order[: k + 1]]
        a_ss = self._cols[s, k]
        if not a_ss > 0 or pAp < -_INDEFINITE_TOL * a_ss:
            raise ValueError(
                f"A is not positive definite along the selected coordinates: coordinate {s} has "
                + (f"diagonal entry {a_ss:.3g} <= 0" if not a_ss > 0 else
                   f"Schur complement p^T A p = {pAp:.3g} < 0 (diagonal {a_ss:.3g})")
                + ". SCDP needs a symmetric positive definite A; the fixed-size LS-SVM system is one "
                "unless the kernel is not positive semi-definite (a 'poly' kernel with coef0 < 0) or the "
                "inputs are so large that K^T K overflows its precision: scale the features, increase "
                "alpha, or use solver='direct'"
            )
        if pAp <= self.pivot_tol * a_ss:
            # numerically in the span of the selected coordinates (a slightly
            # negative pAp is rounding in a positive semi-definite K^T K)
            P[k, : k + 1] = 0.0
            B[:k, k] = 0.0
            return False
        eta = -(self.residual[order[: k + 1]] @ p) / pAp
        self._w[: k + 1] += eta * p
        self.residual += eta * t
        B[k, k] = t[s]  # (A p_k)_{s_k}; entries left of it vanish by conjugacy
        self.step_size = float(eta)
        self.k = k + 1
        return True


#: A Schur complement below ``-_INDEFINITE_TOL * A_ss`` means A is indefinite;
#: between that and ``pivot_tol * A_ss`` the coordinate is numerically
#: dependent on the selected ones (rounding of a semi-definite Gram matrix,
#: whose error is about eps cond(A) A_ss) and is skipped.
_INDEFINITE_TOL = 1e-6


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
        SCDPP (Karsmakers et al. 2011, §3.5.2): each step considers only ``n_candidates``
        (the paper's rho, 59 in its experiments) random unselected
        coordinates.  The draws come from one random permutation of all D
        coordinates per step, seeded by ``random_state`` alone, so runs on
        different systems (other hyper-parameters) see the same draws
        (Remark 8).  ``None``: scan all coordinates (SCDP).
    random_state : int, RandomState or None
    callback : callable ``(k, order, coef, residual_norm)``, optional
        Called after each step with the step count, the selected coordinates
        so far, their values and ``||A w - b||``.  Returning ``True`` stops.
    tol : float >= 0, default=0.0
        Stop once ``||A w - b|| <= tol * ||b||``.

    Returns
    -------
    SCDPResult

    Raises
    ------
    ValueError
        If ``A`` is not a square, symmetric (to ``1e-10 max|A|``), finite
        matrix of the size of ``b`` (at least 1), ``b`` is not finite,
        ``max_nonzero`` is not an integer in [1, D], ``n_candidates`` not a
        positive integer, ``tol`` not a finite number >= 0, or ``A`` turns
        out not positive definite along the selected coordinates.
    TypeError
        If ``callback`` is not callable.

    Notes
    -----
    Step k costs O(k D) for ``t = A p`` (p has k non-zeros), O(k^2) to extend
    the upper-triangular matrix ``B`` (Karsmakers et al. 2011, eq. 20: ``B_ij = (A p_i)_{s_j}``)
    and O(k^2) for the back-substitution giving the next direction (eq. 18).
    Memory: O(D k + k^2), growing with the steps taken.
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    if b.ndim > 1 and b.size != b.shape[0]:
        raise ValueError(f"b must be 1-D (one right-hand side); got shape {b.shape}")
    b = b.ravel()
    D = b.size
    if A.shape != (D, D):
        raise ValueError(f"A must be square with the size of b ({D}); got shape {A.shape}")
    if D == 0:
        raise ValueError("A and b are empty; scdp needs a system with at least one unknown")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("A and b must be finite (they contain NaN or infinity)")
    asym = float(np.max(np.abs(A - A.T)))
    if asym > 1e-10 * float(np.max(np.abs(A))):
        raise ValueError(
            f"A must be symmetric (positive definite); max |A - A^T| = {asym:.3g} exceeds "
            "1e-10 max|A|. Symmetrise it, e.g. (A + A.T) / 2, if the asymmetry is rounding"
        )
    K = D if max_nonzero is None else max_nonzero
    if not isinstance(K, Integral) or isinstance(K, bool) or not 1 <= K <= D:
        raise ValueError(f"max_nonzero must be an integer in [1, {D}] or None; got {max_nonzero!r}")
    K = int(K)
    check_n_candidates(n_candidates)
    if not isinstance(tol, Real) or isinstance(tol, bool) or not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0 (a relative residual norm); got {tol!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (k, order, coef, residual_norm) or None; got {callback!r}")
    state = SCDPState(A, b, n_candidates, random_state)
    coefs = []
    norms = [float(np.linalg.norm(state.residual))]
    b_norm = np.linalg.norm(b)
    while state.k < K and norms[-1] > tol * b_norm:
        if state.step() is None:
            break
        coefs.append(state.coef.copy())
        norms.append(float(np.linalg.norm(state.residual)))
        if callback is not None and callback(state.k, state.order.copy(), state.coef.copy(), norms[-1]):
            break
    k = state.k
    path = np.zeros((k, k))
    for i, c in enumerate(coefs):
        path[i, : i + 1] = c
    return SCDPResult(state.order.copy(), path, np.asarray(norms), D)


def check_n_candidates(n_candidates):
    """Validate SCDPP's rho (None or a positive integer)."""
    if n_candidates is not None and (
        not isinstance(n_candidates, Integral) or isinstance(n_candidates, bool) or n_candidates < 1
    ):
        raise ValueError(f"n_candidates must be a positive integer or None; got {n_candidates!r}")
    return None if n_candidates is None else int(n_candidates)
