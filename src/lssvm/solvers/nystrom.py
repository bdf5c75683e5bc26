"""LS-SVM on a rank-k Nyström kernel by the Woodbury identity (Ding & Liao 2012, Alg. 1).

With c sampled columns ``C = K[:, S]`` (n x c), ``W = K[S, S]`` and the top-k
eigenpairs ``W ~ U_k L_k U_k^T``, the Nyström kernel is ``K~ = V V^T``,
``V = C U_k L_k^(-1/2)`` (n x k).  The LS-SVM dual

    [K~ + delta I, 1; 1^T, 0] [a; b] = [y; 0]          (delta = alpha = 1/gamma)

is solved with ``H = K~ + delta I``: ``eta = H^-1 1``, ``nu = H^-1 y``,
``b = 1^T nu / 1^T eta``, ``a = nu - b eta``.  Instead of the paper's
``(delta I + V^T V)^-1`` per delta, V is orthogonalised once (QR, then the SVD
of the k x k factor): ``K~ = Q diag(s2) Q^T`` with orthonormal Q, so that

    H^-1 x = Q ((Q^T x) / (s2 + delta)) + (x - Q Q^T x) / delta

costs O(n k) per right-hand side and per delta: a whole regularisation path
for the price of one factorisation, O(c^3 + n c k + n k^2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh, qr, svd

from .._params import count_or_fraction
from ..exceptions import warn_numerical
from .sparse_rls import LEVERAGE_TOL, warn_tiny_leverage

__all__ = ["NystromFactorization", "NystromMap", "dense_factorize", "model_error_bound", "nystrom_factorize", "nystrom_kernel_error",
           "nystrom_projection"]


def nystrom_projection(W, rank=None, rcond=1e-10):
    """The Nyström feature map of the sampled block ``W`` (c, c):
    ``U_k L_k^(-1/2)`` (c, k'), top-k eigenpairs with eigenvalues below
    ``rcond`` times the largest dropped, so that the features of x are
    ``k(x, X_S) @ projection``.  Shared by the in-memory factorisation and
    the Dask route (:mod:`lssvm.backends.dask.families`), which sums the
    features' moments over row blocks.  O(c^3).

    Raises
    ------
    ValueError
        If ``rank`` is not in [1, c] or W has no positive eigenvalue.
    """
    c = W.shape[0]
    k = c if rank is None else int(rank)
    if not 1 <= k <= c:
        raise ValueError(f"rank must be in [1, {c}] (the number of sampled columns); got {rank!r}")
    lam, U = eigh(W, check_finite=False)
    lam, U = lam[::-1], U[:, ::-1]
    if k < c:
        _warn_unseparated(lam, k)
    lam, U = lam[:k], U[:, :k]
    keep = lam > rcond * max(lam[0], 0.0)
    if not np.any(keep):
        raise ValueError("the sampled kernel block W has no positive eigenvalue; choose other columns")
    lam, U = lam[keep], U[:, keep]
    return U / np.sqrt(lam)


@dataclass(frozen=True)
class NystromMap:
    """The rule that gives c sampled columns their Nyström feature map:
    :func:`nystrom_projection` at the rank ``rank`` resolves to for c
    columns.  The fit applies it to its columns; a hold-out that removes
    columns applies it to the kept ones (a count above them is capped to
    them), so that the fold's model is the one fitted on its rows at the
    reduced basis.

    Attributes
    ----------
    rank : int, float or None
        A count, a fraction of c, or None (half of c, Ding & Liao 2012).
    rcond : float
        Relative floor of the kept eigenvalues.
    """

    rank: object = None
    rcond: float = 1e-10

    def rank_for(self, c):
        """k for c columns."""
        rank = self.rank
        if isinstance(rank, Integral) and not isinstance(rank, bool):
            rank = min(int(rank), c)
        return count_or_fraction("rank", rank, 0.5, c)

    def __call__(self, W):
        """``U_k L_k^(-1/2)`` (c, k') of the sampled block ``W`` (c, c); O(c^3)."""
        return nystrom_projection(W, self.rank_for(W.shape[0]), self.rcond)


def nystrom_factorize(C, W, Y, rank=None, rcond=1e-10):
    """Factorise the rank-k Nyström kernel of the columns ``C`` (n, c), ``W`` (c, c).

    Parameters
    ----------
    C : ndarray of shape (n, c)
    W : ndarray of shape (c, c)
        ``C[S]``: the sampled block.
    Y : ndarray of shape (n, v)
    rank : int, optional
        k <= c; default c.  Eigenvalues of W below ``rcond * max`` are
        dropped as well (``W_k^+`` is a pseudo-inverse).
    rcond : float

    Returns
    -------
    NystromFactorization

    Notes
    -----
    O(c^3) for ``eigh(W)``, O(n c k) for V, O(n k^2) for its QR.
    """
    proj = nystrom_projection(W, rank, rcond)  # c x k': V = C @ proj
    V = C @ proj
    Qv, R = qr(V, mode="economic", check_finite=False)
    Ur, s, Vrt = svd(R, check_finite=False)
    keep = s > 0
    Q = Qv @ Ur[:, keep]
    s = s[keep]
    fac = NystromFactorization(Q=Q, s2=s**2, Y=np.asarray(Y, dtype=float), projection=proj, rank=int(proj.shape[1]))
    fac.feature_rotation = Vrt[keep].T  # V = Q diag(s) feature_rotation^T
    return fac


#: ``c eps lambda_1 / gap`` (a bound on the angle by which rounding can turn
#: the kept eigen-subspace of W) above which the rank-k truncation is called
#: arbitrary in a ``NumericalWarning``.
SUBSPACE_TOL = 1e-6


def _warn_unseparated(lam, k):
    """Warn when the eigenvalues ``lam`` (descending) of W have no gap at k:
    the top-k subspace is then not determined (the same columns in another
    order can give another one, and other predictions)."""
    if lam[0] <= 0:
        return
    gap = lam[k - 1] - lam[k]
    angle = lam.size * np.finfo(float).eps * lam[0] / gap if gap > 0 else np.inf
    if angle > SUBSPACE_TOL:
        warn_numerical(f"rank={k} cuts through a cluster of equal eigenvalues of the sampled kernel block W "
            f"(lambda_{k} - lambda_{k + 1} = {gap:.2e}, {gap / lam[0]:.1e} of lambda_1): the kept subspace is "
            f"separated from the dropped one only to within {min(angle, 1.0):.1e} rad of rounding, so which "
            "directions are kept is arbitrary (another column order can change the model). Use "
            "rank=None (all columns), a rank at a gap of the spectrum, or a wider kernel", stacklevel=5)


@dataclass
class NystromFactorization:
    """``K~ = Q diag(s2) Q^T`` and the targets, serving every delta.

    Attributes
    ----------
    Q : ndarray of shape (n, k)
        Orthonormal basis of the range of K~.
    s2 : ndarray of shape (k,)
        Eigenvalues of K~.
    Y : ndarray of shape (n, v)
    projection : ndarray of shape (c, k)
        ``U_k L_k^(-1/2)``: the Nyström feature map is ``k(x, X_S) @ projection``.
    rank : int
        k after dropping non-positive eigenvalues of W.
    """

    Q: np.ndarray
    s2: np.ndarray
    Y: np.ndarray
    projection: np.ndarray
    rank: int
    feature_rotation: np.ndarray = None
    _QtY: np.ndarray = field(init=False, repr=False)
    _Qt1: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self._QtY = self.Q.T @ self.Y
        self._Qt1 = self.Q.sum(axis=0)

    @property
    def n_samples(self):
        return self.Q.shape[0]

    def warn_conditioning(self, deltas, stacklevel=3, what="cross-validation residuals"):
        """Warn when ``K~ + delta I`` is so ill-conditioned (condition number
        above 1e10) that ``what`` (residuals, or the dual coefficients the
        exact predictor uses) lose most of their digits: its smallest
        eigenvalue is delta whenever the rank is below n."""
        d = float(np.min(deltas))
        low = d + (float(self.s2.min()) if self.s2.size == self.n_samples else 0.0)
        kappa = (float(self.s2.max(initial=0.0)) + d) / low
        if kappa > 1e10:
            warn_numerical(f"alpha={d:g} is tiny next to the largest kernel eigenvalue ({self.s2.max():.3g}): the system's "
                f"condition number is {kappa:.1e}, so {what} may lose about "
                f"{np.log10(kappa):.0f} of 16 digits; use alpha >= {1e-10 * self.s2.max():.1g}", stacklevel=stacklevel)

    def kernel(self):
        """K~ as a dense (n, n) matrix (for tests and small problems)."""
        return (self.Q * self.s2) @ self.Q.T

    def _hinv(self, X, QtX, delta):
        """``(K~ + delta I)^-1 X`` given ``Q^T X``; O(n k v)."""
        return self.Q @ (QtX * (1.0 / (self.s2 + delta) - 1.0 / delta)[:, None]) + X / delta

    def solve(self, delta):
        """Dual coefficients ``a`` (n, v), intercept ``b`` (v,), and ``eta = H^-1 1`` (n,)."""
        delta = float(delta)
        ones = np.ones((self.n_samples, 1))
        eta = self._hinv(ones, self._Qt1[:, None], delta)[:, 0]
        nu = self._hinv(self.Y, self._QtY, delta)
        b = nu.sum(axis=0) / eta.sum()
        return nu - np.outer(eta, b), b, eta

    def feature_coef(self, delta, b):
        """``V^T a`` (k, v) of the solution with intercept ``b``, without
        forming ``a``: ``feature_rotation diag(s / (s2 + delta)) Q^T (Y - 1 b^T)``.

        The low-rank predictor is ``k(x, X_S) projection V^T a + b``.  Forming
        ``V^T a`` from the dual coefficients cancels: for small delta, ``a``
        holds components of size ``|y| / delta`` outside the range of K~ that
        V^T annihilates, so ``C^T a`` loses ``log10(s2_max / delta)`` digits
        (1.7 % off at s2_max / delta ~ 1e13).  This route has no cancellation.  O(k (k + v)).
        """
        s = np.sqrt(self.s2)
        return self.feature_rotation @ ((s / (self.s2 + delta))[:, None] * (self._QtY - np.outer(self._Qt1, b)))

    def hinv_diag(self, delta, q2=None):
        """Diagonal of ``(K~ + delta I)^-1``, O(n k); ``q2 = Q**2`` may be passed in."""
        q2 = self.Q**2 if q2 is None else q2
        return q2 @ (1.0 / (self.s2 + delta) - 1.0 / delta) + 1.0 / delta

    def loo_residuals(self, deltas):
        """Exact LOO residuals of the LS-SVM on K~ (the low-rank predictor),
        ``r_i = a_i / (C^-1)_ii`` with ``(C^-1)_ii = (H^-1)_ii - eta_i^2 / 1^T eta``.

        Returns
        -------
        ndarray of shape (len(deltas), n, v)
        """
        self.warn_conditioning(deltas)
        out = np.empty((len(deltas), self.n_samples, self.Y.shape[1]))
        q2 = self.Q**2
        tiny = np.zeros(self.n_samples, dtype=bool)
        for i, delta in enumerate(deltas):
            a, _, eta = self.solve(delta)
            d = self.hinv_diag(delta, q2) - eta**2 / eta.sum()
            tiny |= delta * d <= LEVERAGE_TOL  # delta (C^-1)_ii = 1 - h_ii: the training residual is delta a_i
            with np.errstate(divide="ignore", invalid="ignore"):  # said by warn_tiny_leverage
                out[i] = a / d[:, None]
        warn_tiny_leverage(np.flatnonzero(tiny))
        return out

    def holdout_residuals(self, test, deltas):
        """Residuals on rows ``test`` of the LS-SVM on K~ trained on the other
        rows (predicting with ``K~[test, train]``), by the block identity
        ``r_T = ((C^-1)_TT)^-1 a_T``; O(n k + h^2 k + h^3) per delta.

        Returns
        -------
        ndarray of shape (len(deltas), h, v)
        """
        return self.cv_residuals([np.asarray(test)], deltas)[:, np.asarray(test)]

    def cv_residuals(self, folds, deltas):
        """Out-of-fold residuals for test sets ``folds`` (disjoint index
        arrays), one full solve per delta shared by all folds.

        The residuals of fold T are ``r_T = M^-1 a_T`` with
        ``M = (C^-1)_TT = I/delta + Q_T D Q_T^T - eta_T eta_T^T / 1^T eta``,
        ``D = diag(1/(s2 + delta) - 1/delta)``.  When the rank k is below
        the fold size h, M is inverted in k-space: by Woodbury,
        ``(I/delta + Q_T D Q_T^T)^-1 = delta (I + Q_T P^-1 Q_T^T)`` with the
        SPD ``P = Q_R^T Q_R + diag(delta / s2)`` (R: the training rows; no
        cancellation, as ``Q^T Q = I``), then Sherman-Morrison for the
        ``eta`` term: O(n k^2) per fold plus O(k^3 + h k v) per fold and
        delta.  Otherwise M (h x h) is formed and solved: O(h^2 k + h^3).

        Returns
        -------
        ndarray of shape (len(deltas), n, v)
            Rows outside every fold are left zero.
        """
        self.warn_conditioning(deltas)
        out = np.zeros((len(deltas), self.n_samples, self.Y.shape[1]))
        sols = [self.solve(delta) for delta in deltas]
        Q, s2, k = self.Q, self.s2, self.s2.size
        for test in folds:
            test = np.asarray(test)
            QT = Q[test]
            if k < test.size:
                train = np.ones(self.n_samples, dtype=bool)
                train[test] = False
                QR = Q[train]
                G = QR.T @ QR
            for i, delta in enumerate(deltas):
                a, _, eta = sols[i]
                u = eta[test]
                if k < test.size:
                    P = G.copy()
                    P[np.diag_indices_from(P)] += delta / s2
                    cf = cho_factor(P, check_finite=False)
                    Z = np.column_stack([a[test], u])
                    Z = delta * (Z + QT @ cho_solve(cf, QT.T @ Z, check_finite=False))
                    m_a, m_u = Z[:, :-1], Z[:, -1]
                    out[i, test] = m_a + np.outer(m_u, u @ m_a) / (eta.sum() - u @ m_u)
                else:
                    M = (QT * (1.0 / (s2 + delta) - 1.0 / delta)) @ QT.T
                    M[np.diag_indices_from(M)] += 1.0 / delta
                    M -= np.outer(u, u) / eta.sum()
                    out[i, test] = np.linalg.solve(M, a[test])
        return out


def dense_factorize(K, Y):
    """The exact LS-SVM as the Nyström model with every column: ``K = U L U^T``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix (PSD).  Eigenvalues up to ``n eps lambda_max`` (the
        rounding error of the eigendecomposition) are dropped: the model
        lives on the numerical range of K.
    Y : ndarray of shape (n, v)

    Returns
    -------
    NystromFactorization
        Whose ``solve``, ``loo_residuals`` and ``cv_residuals`` are those of
        the dense LS-SVM, for every delta.

    Notes
    -----
    O(n^3) for ``eigh`` (LAPACK syevd); each delta then costs O(n^2) for a
    solve, O(n^2) for LOO and O(h^2 n + h^3) per fold of h rows.
    """
    lam, U = eigh(K, check_finite=False)
    # eigenvalues within rounding of zero (|error| <= n eps lambda_max) carry
    # no information, only noise: cut them
    keep = lam > lam.size * np.finfo(float).eps * max(lam[-1], 0.0)
    return NystromFactorization(Q=np.ascontiguousarray(U[:, keep]), s2=lam[keep], Y=np.asarray(Y, dtype=float),
                                projection=None, rank=int(keep.sum()))


# ---------------------------------------------------------------------------
# Model-approximation error bound (paper 003, Section 4 / Theorem 3)
# ---------------------------------------------------------------------------
# The paper bounds how far the Nyström LS-SVM's decision function can move
# from the exact LS-SVM's in terms of ||K - K~||_2, then bounds that norm in
# probability (its Theorem 2, after Kumar, Mohri & Talwalkar).  The extracted
# text lost the formulas, so the deterministic part is re-derived here in a
# form whose every quantity is known after fitting the approximate model
# (a-posteriori), with E = K - K~ (positive semi-definite for Nyström) and
# eps >= ||E||_2:
#
#   eta - eta~ = H^-1 E eta~,  nu - nu~ = H^-1 E nu~,  ||H^-1|| <= 1/delta
#     => ||d eta|| <= eps ||eta~|| / delta,  ||d nu_j|| <= eps ||nu~_j|| / delta
#   b - b~ = (1^T d nu - b~ 1^T d eta) / 1^T eta, and
#     1^T eta >= max(n / (lambda_max(K~) + eps + delta), 1^T eta~ - sqrt(n) ||d eta||)
#   a - a~ = d nu - b~ d eta - (b - b~) eta,  ||eta|| <= ||eta~|| + ||d eta||
#   |f(x) - f~(x)| <= ||k_x|| ||a - a~|| + |b - b~|          (same exact k_x)
#
# With sup_x k(x, x) = kappa, ||k_x|| <= sqrt(kappa sum_i K_ii) <= kappa sqrt(n):
# the paper's uniform form.  The probabilistic Theorem 2 bound on ||E|| is not
# offered: for unit-diagonal kernels it exceeds (64 k / c)^(1/4) n >= 2.4 n at
# the paper's k = c / 2, more than ||K||_2 <= n itself, so it can never be
# informative; ||E||_2 is measured (Lanczos) or bounded by tr(E) instead.


def nystrom_kernel_error(fac, kernel_diag, kernel_matvec=None, method="trace", tol=1e-10, random_state=0):
    """An upper bound (or measurement) of ``||K - K~||_2`` for a fitted factorisation.

    Parameters
    ----------
    fac : NystromFactorization
    kernel_diag : ndarray of shape (n,)
        ``K_ii``.
    kernel_matvec : callable, optional
        ``v -> K v`` for v of shape (n,); needed for ``method="spectral"``.
    method : {"trace", "spectral"}
        "trace": ``tr(K - K~) = sum K_ii - sum s2``, a guaranteed upper bound
        (K - K~ is PSD), O(n).  "spectral": the largest eigenvalue of K - K~
        by Lanczos (``scipy.sparse.linalg.eigsh``) plus its residual norm,
        O(n^2 d) per iteration through ``kernel_matvec``; capped by the trace.
    tol : float
        Lanczos tolerance.
    random_state : int
        Seeds the Lanczos start vector.

    Returns
    -------
    float
    """
    trace = max(float(np.sum(kernel_diag) - np.sum(fac.s2)), 0.0)
    if method == "trace":
        return trace
    if method != "spectral":
        raise ValueError(f"method must be 'trace' or 'spectral'; got {method!r}")
    if kernel_matvec is None:
        raise ValueError("method='spectral' needs kernel_matvec (v -> K v)")
    from scipy.sparse.linalg import LinearOperator, eigsh

    Q, s2, n = fac.Q, fac.s2, fac.n_samples

    def matvec(v):
        v = np.ravel(v)
        return kernel_matvec(v) - Q @ (s2 * (Q.T @ v))

    if n <= 2 or trace == 0.0:
        return trace
    op = LinearOperator((n, n), matvec=matvec, dtype=float)
    v0 = np.random.default_rng(random_state).standard_normal(n)
    theta, u = eigsh(op, k=1, which="LA", tol=tol, v0=v0)
    u = u[:, 0]
    resid = float(np.linalg.norm(matvec(u) - theta[0] * u))
    return min(max(float(theta[0]), 0.0) + resid, trace)


def model_error_bound(fac, delta, kernel_error):
    """Bounds on the change of the LS-SVM solution from ``K~`` to the exact K.

    Parameters
    ----------
    fac : NystromFactorization
    delta : float
        The regularisation alpha (= 1/gamma of Ding & Liao 2012).
    kernel_error : float
        An upper bound of ``||K - K~||_2`` (:func:`nystrom_kernel_error`).

    Returns
    -------
    coef_bound : ndarray of shape (v,)
        ``||a - a~||_2 <=`` this, per output.
    intercept_bound : ndarray of shape (v,)
        ``|b - b~| <=`` this.

    Notes
    -----
    Derivation in the comment above; O(n v) after one solve.
    """
    delta, eps = float(delta), float(kernel_error)
    n = fac.n_samples
    a, b, eta = fac.solve(delta)
    nu = a + np.outer(eta, b)
    n_eta = np.linalg.norm(eta)
    d_eta = eps * n_eta / delta
    d_nu = eps * np.linalg.norm(nu, axis=0) / delta
    lam_max = float(fac.s2.max()) if fac.s2.size else 0.0
    denom = max(n / (lam_max + eps + delta), eta.sum() - np.sqrt(n) * d_eta)
    db = np.sqrt(n) * (d_nu + np.abs(b) * d_eta) / denom
    da = d_nu + np.abs(b) * d_eta + db * (n_eta + d_eta)
    return da, db
