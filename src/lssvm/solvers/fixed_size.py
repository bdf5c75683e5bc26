"""The fixed-size LS-SVM linear system (Karsmakers et al. 2011, eqs. 29 and 34).

With prototypes Z (M points), ``K = k(X, Z)`` (N x M), ``K_ZZ = k(Z, Z)`` and
the augmented rows ``[K, 1]``, the system is

    A = [K 1]^T [K 1] + blockdiag(alpha K_ZZ, nu),     b = [K 1]^T y,

the normal equations of ``min ||y - K w - b0||^2 + alpha w^T K_ZZ w + nu b0^2``
(alpha = 1/gamma of the paper; nu = 1e-8 makes A positive definite,
Theorem 2).  Only the Gram part depends on the rows, so a fold's training
system is the full one minus the fold's own Gram terms (eqs. 36-37).

The system is solved sparsely by sparse conjugate directions pursuit
(SCDP, Karsmakers et al. 2011, Algorithm 3), written by hand: no maintained library offers it.  For a symmetric positive
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
from scipy import linalg
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh, lapack
from scipy.linalg.blas import dtrsv
from sklearn.utils import check_random_state

from ..exceptions import warn_numerical

__all__ = ["FixedSizeSystem", "SelectedBlock", "SelectedColumns", "GramSums", "augmented_rows", "solve_spd", "solve_guarded", "solve_by_qr",
           "normal_solve_error", "FS_GUARD_RTOL", "weighted_gram_sums", "SCDPResult", "SCDPState", "grow_to_size",
           "scdp"]

_EPS = np.finfo(float).eps

#: Estimated relative error (``eps cond(A)``, LAPACK ``dpocon``) above which
#: the normal equations are not trusted and the fixed-size problem is solved
#: by QR of the augmented least-squares matrix instead; and above which that
#: solve's own estimate (see :func:`solve_by_qr`) brings a ``NumericalWarning``.
FS_GUARD_RTOL = 1e-8


def augmented_rows(K):
    """``[K, 1]``: kernel rows with the intercept column, shape (n, M + 1)."""
    return np.hstack([K, np.ones((K.shape[0], 1))])


@dataclass(frozen=True)
class GramSums:
    """Sums over a set of rows of everything the fixed-size model needs from
    them: the row-block statistic of both the in-memory and the Dask route
    (``+`` merges disjoint row sets, ``-`` removes a subset).

    Attributes
    ----------
    gram, rhs : ndarray
        ``[K 1]^T [K 1]`` (M + 1, M + 1) and ``[K 1]^T Y`` (M + 1, v), as
        in :class:`FixedSizeSystem`.
    yy : ndarray of shape (v,)
        ``sum y^2`` per output (for validation errors from sums).
    n_samples : int
    """

    gram: np.ndarray
    rhs: np.ndarray
    yy: np.ndarray
    n_samples: int

    @classmethod
    def of_rows(cls, K, Y):
        """Sums of kernel rows ``K`` (b, M) and targets ``Y`` (b, v); O(b M^2)."""
        Ka = augmented_rows(K)
        return cls(Ka.T @ Ka, Ka.T @ Y, np.einsum("ij,ij->j", Y, Y), K.shape[0])

    def __add__(self, other):
        return GramSums(self.gram + other.gram, self.rhs + other.rhs, self.yy + other.yy,
                        self.n_samples + other.n_samples)

    def __sub__(self, other):
        return GramSums(self.gram - other.gram, self.rhs - other.rhs, self.yy - other.yy,
                        self.n_samples - other.n_samples)

    def sse(self, coef, sel, j):
        """Sum of squared errors of output ``j`` over these rows for the model
        with coefficients ``coef`` on coordinates ``sel``:
        ``y^T y - 2 w^T [K 1]^T y + w^T [K 1]^T [K 1] w``; O(k^2).

        Notes
        -----
        A difference of sums: its rounding error is about ``eps y^T y``, so
        relative to the SSE it is ``eps y^T y / SSE`` (1e-13 when the model
        explains 99.9 % of the targets' energy), far below the 1e-10 at
        which the Dask and in-memory CV curves are compared.
        """
        w = np.asarray(coef, dtype=float)
        return max(float(self.yy[j] - 2.0 * (w @ self.rhs[sel, j]) + w @ (self.gram[np.ix_(sel, sel)] @ w)), 0.0)


@dataclass(frozen=True)
class FixedSizeSystem:
    """Row-dependent parts of the fixed-size LS-SVM normal equations.

    Attributes
    ----------
    gram : ndarray of shape (M + 1, M + 1)
        ``[K 1]^T [K 1]``.
    rhs : ndarray of shape (M + 1, v)
        ``[K 1]^T Y``.
    prototype_kernel : ndarray of shape (M, M)
        ``K_ZZ``.
    n_samples : int
        Rows summed into ``gram``.
    """

    gram: np.ndarray
    rhs: np.ndarray
    prototype_kernel: np.ndarray
    n_samples: int

    @classmethod
    def from_kernel(cls, K, K_ZZ, Y):
        """Assemble from ``K`` (N, M), ``K_ZZ`` (M, M), ``Y`` (N, v).

        Cost: one SYRK-sized product, O(N M^2) flops, (M + 1)^2 memory.
        """
        return cls.from_sums(GramSums.of_rows(K, Y), K_ZZ)

    @classmethod
    def from_sums(cls, sums, K_ZZ):
        """Assemble from the :class:`GramSums` of the rows and ``K_ZZ``."""
        return cls(sums.gram, sums.rhs, K_ZZ, sums.n_samples)

    @property
    def n_coef(self):
        """M + 1: prototypes plus the intercept."""
        return self.gram.shape[0]

    def without_rows(self, K_rows, Y_rows):
        """The system of the other rows (eqs. 36-37): subtract the Gram terms
        of ``K_rows`` (h, M) and ``Y_rows`` (h, v).  O(h M^2)."""
        return self.without(GramSums.of_rows(K_rows, Y_rows))

    def without(self, sums):
        """The system of the other rows, given the :class:`GramSums` of the
        removed ones (eqs. 36-37 from sums; the Dask route's downdate)."""
        return FixedSizeSystem(self.gram - sums.gram, self.rhs - sums.rhs, self.prototype_kernel,
                               self.n_samples - sums.n_samples)

    def matrix(self, alpha, nu=1e-8):
        """The regularised matrix A of eq. (34), shape (M + 1, M + 1)."""
        A = self.gram.copy()
        M = A.shape[0] - 1
        A[:M, :M] += alpha * self.prototype_kernel
        A[M, M] += nu
        return A


def solve_spd(A, B):
    """Solve ``A X = B`` for a symmetric positive (semi)definite A.

    Cholesky when A is numerically positive definite; otherwise (A formed
    from ``K^T K`` squares the kernel's condition number) the minimum-norm
    solution through ``eigh`` dropping eigenvalues below ``D eps max|lambda|``,
    with a :class:`~lssvm.exceptions.NumericalWarning`.

    Parameters
    ----------
    A : ndarray of shape (D, D)
    B : ndarray of shape (D,) or (D, v)

    Returns
    -------
    ndarray shaped like B

    Notes
    -----
    O(D^3 / 3) (Cholesky) or about 9 D^3 (eigh).
    """
    try:
        return cho_solve(cho_factor(A, lower=True, check_finite=False), B, check_finite=False)
    except LinAlgError:
        pass
    lam, V = eigh(A, check_finite=False)
    cut = A.shape[0] * np.finfo(float).eps * max(abs(lam[-1]), abs(lam[0]))
    keep = lam > cut
    warn_numerical(f"the fixed-size system is numerically singular ({int((~keep).sum())} of {lam.size} "
        "eigenvalues below round-off); returning the minimum-norm solution. Fewer or "
        "better-spread prototypes, a larger alpha or a narrower kernel avoid this", stacklevel=2)
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ B) / (lam[keep][:, None] if np.ndim(B) == 2 else lam[keep]))


def solve_guarded(A, B, K_rows, K_ZZ, Y_rows, alpha, nu, call="FixedSizeLSSVR", gram=None, weights=None):
    """Solve the fixed-size normal equations ``A W = B`` unless they are too
    ill-conditioned, then the least-squares problem they come from by QR.

    Parameters
    ----------
    A : ndarray of shape (M + 1, M + 1)
        ``[K 1]^T [K 1] + blockdiag(alpha K_ZZ, nu)`` of the rows ``K_rows``.
    B : ndarray of shape (M + 1, v)
        ``[K 1]^T Y``.
    K_rows : ndarray of shape (N, M)
    K_ZZ : ndarray of shape (M, M)
    Y_rows : ndarray of shape (N, v)
    alpha, nu : float
    call : str
        Named in the warning.
    gram : ndarray of shape (M + 1, M + 1), optional
        ``[K 1]^T [K 1]`` of the rows, when the rows themselves are not in
        memory (Dask input: ``K_rows`` and ``Y_rows`` are None).  The error
        estimate is then formed from it, and past the threshold the normal
        equations' solution is kept with a ``NumericalWarning``: the QR
        re-solve needs the rows.
    weights : ndarray of shape (N,), optional
        Row weights of ``K_rows`` (A and B are then the weighted sums): the
        guard and the QR re-solve use the rows scaled by ``sqrt(w)``.

    Returns
    -------
    ndarray of shape (M + 1, v)

    Notes
    -----
    The normal equations square the condition number of the least-squares
    matrix, and their Cholesky factorisation can succeed while the solution
    has lost every digit (30 % above the minimum objective was seen at
    ``cond(A) ~ 1e17``).  A condition estimate of the Cholesky factor (LAPACK
    ``dpocon``, O(M^2)) decides: past ``eps cond(A) > FS_GUARD_RTOL``, times
    the cancellation ``||[K 1]|| ||w|| / ||[K 1] w||`` of the fitted values, the
    problem is re-solved by :func:`solve_by_qr` (O(N M^2), about twice the
    cost of forming A), whose error grows with ``cond(A)^1/2`` only.
    """
    if gram is not None:
        W = solve_spd(A, B)
        err = normal_solve_error(A, None, W, gram=gram)
        if not err <= FS_GUARD_RTOL:
            warn_numerical(f"{call}: the fixed-size normal equations have an estimated relative error of {err:.1e} "
                f"(alpha={alpha:g}), and on Dask input the rows are not in memory for the QR re-solve; "
                "increase alpha, use fewer or better-spread prototypes, or a narrower kernel", stacklevel=3)
        return W
    try:
        c = cho_factor(A, lower=True, check_finite=False)
        W = cho_solve(c, B, check_finite=False)
        Ka = augmented_rows(K_rows) if weights is None else np.sqrt(weights)[:, None] * augmented_rows(K_rows)
        if normal_solve_error(A, Ka, W, c[0]) <= FS_GUARD_RTOL:
            return W
    except LinAlgError:
        pass
    W, err = solve_by_qr(K_rows, K_ZZ, Y_rows, alpha, nu, call=call, weights=weights)
    if not err <= FS_GUARD_RTOL:
        warn_numerical(f"{call}: the fixed-size system is so ill-conditioned that even its QR solve has an estimated "
            f"relative error of {err:.1e} (alpha={alpha:g}); increase alpha, use fewer or better-spread "
            "prototypes, or a narrower kernel", stacklevel=3)
    return W


def normal_solve_error(A, Ka, W, chol=None, gram=None):
    """Estimated relative error of fitted values ``Ka W`` whose coefficients
    solve the normal equations ``A W = B`` (``A ~ Ka^T Ka + penalty``):
    ``eps cond(A) ||Ka|| ||w|| / ||Ka w||`` (the coefficients' error, LAPACK
    ``dpocon`` estimate, amplified by the cancellation in the fitted values).
    ``chol``: the lower Cholesky factor of A if known.  ``gram``:
    ``Ka^T Ka`` instead of ``Ka`` (rows not in memory; the norms are then
    ``sqrt(tr G)`` and ``sqrt(w^T G w)``).  O(D^2 + N D v), or O(D^2 v).
    """
    if chol is None:
        try:
            chol = cho_factor(A, lower=True, check_finite=False)[0]
        except LinAlgError:
            return np.inf
    rcond, info = lapack.dpocon(chol, np.abs(A).sum(axis=0).max(), uplo="L")
    if info != 0 or not rcond > 0:
        return np.inf
    W = W.reshape(W.shape[0], -1)
    if gram is None:
        ka_norm, fit = np.linalg.norm(Ka), np.linalg.norm(Ka @ W, axis=0)
    else:
        ka_norm = np.sqrt(max(float(np.trace(gram)), 0.0))
        fit = np.sqrt(np.maximum(np.einsum("iv,iv->v", W, gram @ W), 0.0))
    fit = np.maximum(fit, np.finfo(float).tiny)
    return float(np.max(_EPS / rcond * ka_norm * np.linalg.norm(W, axis=0) / fit))


def solve_by_qr(K_rows, K_ZZ, Y_rows, alpha, nu, call="FixedSizeLSSVR", weights=None):
    """Minimise ``||Y - K w - 1 b||^2 + alpha w^T K_ZZ w + nu b^2`` (with
    ``weights``, ``sum_i w_i ||y_i - k_i w - b||^2 + ...``: the rows scaled by ``sqrt(w_i)``) by a
    column-pivoted Householder QR of the augmented matrix (columns scaled to
    unit norm)

        [K                1          ]
        [sqrt(alpha) R^T  0          ],   K_ZZ = R R^T,
        [0                sqrt(nu)   ]

    which never forms ``K^T K``.  ``R`` is the Cholesky factor of K_ZZ, or
    ``U sqrt(max(s, 0))`` from its eigendecomposition if K_ZZ is not
    numerically positive definite.  O(N M^2 + M^3).

    Returns
    -------
    W : ndarray of shape (M + 1, v)
    rel_err : float
        Estimated relative error of the fitted values, ``4 eps sqrt(M + 1)
        ||w|| / ||G w||`` in the scaled problem (large only when the
        coefficients cancel).

    Notes
    -----
    A prototype whose column is a combination of the others to rounding
    (``|R_kk| <= (N + M + 1) eps |R_11|`` in the pivoted factor, or a column
    of norm below ``(N + M + 1) eps`` times the largest: e.g. a point with
    ``k(z, z) = 0`` for the linear or polynomial kernel, whose column is
    zero) carries no information the others lack: it gets weight 0 (the
    basic solution) with a ``NumericalWarning``, instead of the triangular
    solve failing on a zero pivot.
    """
    N, M = K_rows.shape
    Y_rows = np.asarray(Y_rows, dtype=float).reshape(N, -1)
    try:
        R = linalg.cholesky(K_ZZ, lower=True, check_finite=False)
    except LinAlgError:
        s, U = eigh(K_ZZ, check_finite=False)
        # eigenvalues at rounding level are zero: their square roots (~1e-8) would be taken for data
        s = np.where(s > M * _EPS * max(float(s[-1]), 0.0), s, 0.0)
        R = U * np.sqrt(s)
    G = np.zeros((N + M + 1, M + 1))
    G[:N, :M] = K_rows
    G[:N, M] = 1.0
    root_w = None if weights is None else np.sqrt(np.asarray(weights, dtype=float))
    if root_w is not None:
        G[:N] *= root_w[:, None]
    G[N : N + M, :M] = np.sqrt(alpha) * R.T
    G[N + M, M] = np.sqrt(nu)
    scale = np.linalg.norm(G, axis=0)
    # a column at rounding level against the largest (e.g. k(z, z) = 0, whose penalty row is K_ZZ's
    # eigenvector noise) is numerically zero: scaling it to unit norm would turn that noise into data
    negligible = ~(scale > G.shape[0] * _EPS * scale.max())
    G[:, negligible] = 0.0
    scale[negligible] = 1.0
    G /= scale
    Q, Rq, piv = linalg.qr(G, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(Rq))
    rank = int(np.sum(diag > G.shape[0] * _EPS * diag[0])) if diag.size and diag[0] > 0 else 0
    if rank < M + 1:
        warn_numerical(
            f"{call}: {M + 1 - rank} of the {M + 1} coefficients (prototypes and intercept) are numerically "
            "dependent on the others in the least-squares problem (duplicated or near-duplicated prototypes, or "
            "points with k(z, z) = 0 for the linear or polynomial kernel); they get weight 0 and the model is "
            "the minimiser over the others. Drop those prototypes, or use a larger alpha",
            stacklevel=3,
        )
    rhs = np.zeros((N + M + 1, Y_rows.shape[1]))
    rhs[:N] = Y_rows if root_w is None else root_w[:, None] * Y_rows
    Ws = np.zeros((M + 1, Y_rows.shape[1]))
    if rank:
        Ws[piv[:rank]] = linalg.solve_triangular(Rq[:rank, :rank], (Q.T @ rhs)[:rank], check_finite=False)
    # QR is backward stable: the fitted values G Ws carry an error of about
    # eps ||G|| ||Ws|| (||G||_2 <= sqrt(M + 1) with unit columns), large
    # relative to them only when the coefficients cancel
    fit = np.linalg.norm(G @ Ws, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.linalg.norm(Ws, axis=0) / fit
    ratio = np.where(fit > 0, ratio, 1.0)
    err = 4 * _EPS * np.sqrt(M + 1) * float(np.max(ratio)) if np.all(np.isfinite(Ws)) else np.inf
    return Ws / scale[:, None], err


def weighted_gram_sums(K, Y, weights):
    """The fixed-size model's row sums with row weights: ``[K 1]^T W [K 1]``,
    ``[K 1]^T W Y``, ``sum_i w_i y_i^2`` and ``n_samples = sum w``, so that
    the normal equations built on them (:class:`FixedSizeSystem`)
    are those of ``sum_i w_i (y_i - f(x_i))^2 + alpha w^T K_ZZ w + nu b^2``
    and a validation SSE from them (``GramSums.sse``) is the weighted one.

    Parameters
    ----------
    K : ndarray of shape (b, M)
    Y : ndarray of shape (b, v)
    weights : ndarray of shape (b,)

    Returns
    -------
    GramSums
        O(b M^2).  A zero weight adds nothing: the row is removed.
    """
    Ka = augmented_rows(K)
    w = np.asarray(weights, dtype=float)
    WKa = w[:, None] * Ka
    return GramSums(Ka.T @ WKa, WKa.T @ Y, np.einsum("i,ij,ij->j", w, Y, Y), float(w.sum()))


# ------------------------------------------------------------------ SCDP
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


def grow_to_size(A, rhs, size, n_candidates, seed, fit_error, name):
    """SCDP on the system ``A w = rhs`` (one output) to ``size`` non-zeros, with its guards.

    A :class:`lssvm.NumericalWarning` says where numerically dependent coordinates stop it early, and where
    the solution's fitted values have an estimated relative error above :data:`FS_GUARD_RTOL` (SCDP solves
    the normal equations, which square the kernel's conditioning).

    Parameters
    ----------
    A : ndarray of shape (D, D)
    rhs : ndarray of shape (D,)
    size : int
        Non-zeros wanted.
    n_candidates, seed
        As for :class:`SCDPState`.
    fit_error : callable
        ``fit_error(A_sel, sel, coef)``: the estimated relative error of the fitted values on coordinates
        ``sel`` (the rows' ``fit_error``, in memory or from sums).
    name : str
        The estimator, for the warnings.

    Returns
    -------
    SCDPState
        ``order``, ``coef`` and ``k`` (the non-zeros kept); O(size D) per step, plus ``fit_error``.
    """
    state = SCDPState(A, rhs, n_candidates, seed)
    while state.k < size and state.step() is not None:
        pass
    if state.k < size and state.skipped:
        warn_numerical(f"{name}: SCDP kept {state.k} of the {int(size)} requested "
            f"non-zeros: {len(state.skipped)} coordinate(s) are numerically dependent on the selected "
            "ones in the normal equations (K^T K squares the kernel's conditioning), so the model "
            "is the minimiser over the kept prototypes only. solver='direct' (solved by QR when "
            "ill-conditioned), a larger alpha or a narrower kernel avoid this", stacklevel=4)
    if state.k:
        err = fit_error(A[np.ix_(state.order, state.order)], state.order, state.coef)
        if err > FS_GUARD_RTOL:
            warn_numerical(f"{name}: the SCDP solution's fitted values have an estimated "
                f"relative error of {err:.1e} (the normal equations square the kernel's "
                "conditioning); solver='direct' re-solves by QR, or increase alpha", stacklevel=4)
    return state


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
        ``lssvm.solvers.fixed_size.SCDPResult``: ``order`` (the coordinates in the order chosen),
        ``coef_path`` (the solution after each step), ``residual_norms`` and ``n_features``.

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


class SelectedBlock:
    """The block ``G[sel, sel]`` of a symmetric matrix on SCDP's growing selection, kept contiguous.

    SCDP only appends coordinates, so each call copies the new rows and columns (O(k) per
    coordinate) instead of gathering the whole k x k block (``G[np.ix_(sel, sel)]``, O(k^2)
    scattered reads per step: most of a fold curve's time on a pool of 500).  Storage grows by
    doubling: O(k^2) for k steps.

    Parameters
    ----------
    G : ndarray of shape (D, D)
        Symmetric.
    """

    def __init__(self, G):
        self.G = G
        self.k = 0
        self._buf = np.empty((0, 0))

    def at(self, sel):
        """``G[np.ix_(sel, sel)]`` for ``sel`` extending every earlier call's selection; a view."""
        k = sel.size
        if k > self._buf.shape[0]:
            buf = np.empty((max(k, 2 * self._buf.shape[0], 16),) * 2)
            buf[: self.k, : self.k] = self._buf[: self.k, : self.k]
            self._buf = buf
        for i in range(self.k, k):
            row = self.G[sel[i], sel[: i + 1]]
            self._buf[i, : i + 1] = row
            self._buf[: i + 1, i] = row
        self.k = k
        return self._buf[:k, :k]


class SelectedColumns:
    """The columns ``C[:, sel]`` of a matrix on SCDP's growing selection, kept contiguous (as
    :class:`SelectedBlock`: O(h) per new coordinate instead of an O(h k) gather per step).

    Parameters
    ----------
    C : ndarray of shape (h, D)
    """

    def __init__(self, C):
        self.C = C
        self.k = 0
        self._buf = np.empty((C.shape[0], 0))

    def at(self, sel):
        """``C[:, sel]`` for ``sel`` extending every earlier call's selection; a view."""
        k = sel.size
        if k > self._buf.shape[1]:
            buf = np.empty((self.C.shape[0], max(k, 2 * self._buf.shape[1], 16)))
            buf[:, : self.k] = self._buf[:, : self.k]
            self._buf = buf
        for i in range(self.k, k):
            self._buf[:, i] = self.C[:, sel[i]]
        self.k = k
        return self._buf[:, :k]
