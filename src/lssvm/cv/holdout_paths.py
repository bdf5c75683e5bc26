"""The two algorithms of the in-memory hold-out engine (:mod:`lssvm.cv.holdout`),
one named dataclass each.

* :class:`HSidePath`: the h x h system ``(I - U)^-1 r`` of Pahikkala et al.
  2012, Prop. 1 (removal of basis points a Schur complement of ``P^-1``),
  O(h^2 r + h^3) per alpha.  Cheapest for small hold-out sets.
* :class:`BandPath`: the fold's own normal matrix in the training
  eigenbasis, reduced once to band form and solved per alpha by the shared
  fold solver (:func:`lssvm.cv.fold_solver.solve_fold_path`, the same one the
  Dask route uses), about 4/3 r^3 once and O(r w^2) per alpha.  Cheapest for
  large hold-out sets or many alphas.

A third, the push-through ("r-side") identity on ``B = [M_H, 1]``, was
dropped: timed against both (``benchmarks/holdout_paths.py``,
``docs/benchmarks.md``) it was the fastest only at ranks of a few tens,
where every path takes a millisecond or less.

Each path returns the predictions for all alphas and an estimate of their
relative error; :class:`lssvm.cv.HoldoutEngine` refits the folds
whose estimate passes ``GUARD_RTOL``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ..solvers import SparseRLSFactorization, syr2k_lower_
from ..solvers.shifted_band import DEFAULT_BANDWIDTH, BlockReflector
from .fold_solver import solve_fold_path
from .holdout_guard import EPS

__all__ = ["FoldProblem", "HSidePath", "BandPath", "PATHS", "cheapest_path"]


@dataclass(frozen=True)
class FoldProblem:
    """One hold-out call: what every path reads.

    Attributes
    ----------
    fac : SparseRLSFactorization
        The training factorisation.
    Y : ndarray of shape (m, v)
        Training targets.
    H : ndarray of shape (h,)
        Query rows.
    p : ndarray of shape (h',)
        Positions (into ``H``) of the rows left out of training.
    E : ndarray of shape (e,)
        Basis positions removed from the fold's model (may be empty).
    """

    fac: SparseRLSFactorization
    Y: np.ndarray
    H: np.ndarray
    p: np.ndarray
    E: np.ndarray


@dataclass(frozen=True)
class HSidePath:
    """Hold-out predictions through the h x h system ``I - U``.

    With removed basis points the restricted inverse is ``W = D^1/2 (I - P)
    D^1/2``, ``P`` the orthogonal projector on the range of ``D^1/2 Q_E^T``
    (from a QR factorisation, never from the Gram matrix ``Q_E D Q_E^T``,
    which loses every digit once K_BB is ill-conditioned).  ``W`` maps into
    the null space of ``Q_E``, so the rows ``M_H`` need no restriction.
    ``U = Ms Ms^T - (Ms Qp)(Ms Qp)^T`` with ``Ms = M_H D^1/2``, formed by
    SYRK when every query row is left out.

    Attributes
    ----------
    fac : SparseRLSFactorization
    M_H : ndarray of shape (h, r)
        Query rows in the training eigenbasis.
    p : ndarray of shape (h',)
        Positions of the left-out rows in ``H``.
    Y_p : ndarray of shape (h', v)
        Their targets.
    Q_E : ndarray of shape (e, r) or None
        Eigenvector rows of the removed basis points.
    """

    fac: SparseRLSFactorization
    M_H: np.ndarray
    p: np.ndarray
    Y_p: np.ndarray
    Q_E: np.ndarray | None

    @classmethod
    def of(cls, prob: FoldProblem) -> HSidePath:
        fac = prob.fac
        return cls(fac, fac.M[prob.H], prob.p, prob.Y[prob.H[prob.p]], fac.Q[prob.E] if prob.E.size else None)

    def predict(self, alphas):
        """Predictions (A, h, v) and estimated relative errors (A,).

        The estimate is ``eps kappa(Lambda + alpha) ||(I - U)^-1||_1`` (LAPACK
        ``dpocon`` on the Cholesky factor in hand, O(h^2)); NaN predictions
        and an infinite estimate where ``I - U`` is not numerically positive
        definite.
        """
        lam = self.fac.eigenvalues
        out = np.empty((alphas.size, self.M_H.shape[0], self.fac.z.shape[1]))
        inv_norm = np.empty(alphas.size)
        for k, a in enumerate(alphas):
            out[k], inv_norm[k] = self._predict_one(1.0 / (lam + a))
        # ||(C + alpha I)^-1|| <= ||(Lambda + alpha)^-1|| ||(I - U)^-1|| (C the fold's normal matrix)
        return out, EPS * (lam.max() + alphas) / (lam.min() + alphas) * inv_norm

    def _predict_one(self, d):
        fac, M_H, p = self.fac, self.M_H, self.p
        m = fac.n_samples
        sq = np.sqrt(d)
        full = p.size == M_H.shape[0]
        Ms = M_H * sq
        gs = sq[:, None] * fac.z
        U = Ms @ Ms.T if full else Ms @ (M_H[p] * sq).T  # (h, |p|)
        if self.Q_E is not None:
            Qp, _ = linalg.qr((self.Q_E * sq).T, mode="economic", check_finite=False)  # (r, |E|)
            MsQ = Ms @ Qp
            gs = gs - Qp @ (Qp.T @ gs)
            U -= MsQ @ MsQ.T if full else MsQ @ MsQ[p].T
        yL = Ms @ gs + fac.y_mean
        U += 1.0 / m
        Upp = U if full else U[p]
        r = yL[p] - Upp @ self.Y_p
        inv_norm = 1.0
        if p.size:
            A = -Upp
            A[np.diag_indices_from(A)] += 1.0
            sol, inv_norm = _spd_solve(A, r)
            if sol is None:  # I - U not numerically positive definite: the guard refits
                return np.nan, np.inf
        else:
            sol = r
        return yL - U @ (self.Y_p - sol), inv_norm


@dataclass(frozen=True)
class BandPath:
    """Hold-out predictions for all alphas from the fold's own normal matrix
    in the eigenbasis of the training fit, reduced once to band form.

    In the coordinates ``beta`` (``a = Q beta``), training on all rows but
    ``H' = H[p]`` with intercept ``b0`` solves

        [Lambda + alpha - N^T N,  -s ] [beta]   [z - N^T y_H'        ]
        [-s^T,              m - h'   ] [b0  ] = [sum of y outside H' ]

    with ``N = M_H'``, ``s = N^T 1``.  Eliminating ``b0`` leaves
    ``(C + alpha I) beta = rhs`` with ``C = Lambda - N^T N - s s^T / (m -
    h')``; removing basis points ``E`` restricts ``beta`` to the null space
    of ``Q_E`` (orthonormal, so the shift stays ``alpha I``): there ``C`` is
    ``Z^T C Z``, ``Z`` the trailing columns of the block reflector of the QR
    of ``Q_E^T``, never formed (a symmetric rank-2|E| update of ``Lambda``,
    BLAS-3 without the GIL, so the SYRK runs on r - |E| columns).

    Attributes
    ----------
    fac : SparseRLSFactorization
    H : ndarray of shape (h,)
        Query rows.
    C : ndarray of shape (r', r') or None
        The (restricted) normal matrix, lower triangle valid; None when every
        basis direction is removed (intercept-only model).
    rhs : ndarray of shape (r', v)
    reflector : BlockReflector or None
        The QR of ``Q_E^T`` when basis points are removed.
    s : ndarray of shape (r,)
        Column sums of the left-out rows.
    c_int : ndarray of shape (v,)
        Sum of the training targets outside ``H'``.
    n_train : int
        ``m - h'``.
    """

    fac: SparseRLSFactorization
    H: np.ndarray
    C: np.ndarray | None
    rhs: np.ndarray
    reflector: BlockReflector | None
    s: np.ndarray
    c_int: np.ndarray
    n_train: int

    @classmethod
    def of(cls, prob: FoldProblem) -> BandPath:
        """Form the fold's normal matrix: O(h' r^2) SYRK, plus O(h r |E| +
        |E| r^2) for removed basis points."""
        fac, Y, H, E = prob.fac, prob.Y, prob.H, prob.E
        Hp = H[prob.p]
        N = fac.M[Hp]
        s = N.sum(axis=0)
        mr = fac.n_samples - Hp.size
        c_int = Y.sum(axis=0) - Y[Hp].sum(axis=0)  # (v,)
        rhs = fac.z - N.T @ Y[Hp] + np.outer(s, c_int) / mr
        lam = fac.eigenvalues
        # C = Lambda - Na^T Na with Na = [N; s^T / sqrt(m - h')]: one SYRK
        Na_t = np.hstack([N.T, s[:, None] / np.sqrt(mr)])  # (r, h' + 1)
        refl = None
        if E.size:
            # H^T Lambda H = Lambda - X V^T - V X^T,  X = Lambda V T - V (T^T V^T Lambda V T) / 2
            refl = BlockReflector(fac.Q[E].T)
            k = refl.R.shape[0]
            V, T = refl.V, refl.T
            Xe = (lam[:, None] * V) @ T
            Xe -= 0.5 * (V @ (T.T @ (V.T @ Xe)))
            Na_t = refl.apply(Na_t, transpose=True)[k:]
            rhs = refl.apply(rhs, transpose=True)[k:]
            lam = lam[k:]
        if lam.size == 0:  # every basis direction removed: intercept-only model
            return cls(fac, H, None, rhs, refl, s, c_int, mr)
        C = Na_t @ Na_t.T  # SYRK
        C *= -1.0
        C[np.diag_indices_from(C)] += lam
        C = C.T  # the same symmetric matrix, column-major for the BLAS update
        if E.size:
            syr2k_lower_(C, Xe[k:], V[k:], -1.0)  # only the lower triangle is kept from here on
        return cls(fac, H, C, rhs, refl, s, c_int, mr)

    def predict(self, alphas):
        """Predictions (A, h, v) and estimated relative errors (A,)
        (:func:`~lssvm.cv.fold_solver.solve_fold_path`, scaled by the
        largest training eigenvalue, from which ``C`` was downdated)."""
        fac, H = self.fac, self.H
        v = self.rhs.shape[1]
        if self.C is None:
            out = np.empty((alphas.size, H.size, v))
            out[:] = self.c_int / self.n_train
            return out, np.zeros(alphas.size)
        if alphas.size * v >= _EIGEN_COLUMNS_PER_RANK * self.C.shape[0]:
            return self._predict_by_eigen(alphas)
        X, est = solve_fold_path(self.C, self.rhs, alphas, fac.eigenvalues.max())  # (r', A v)
        if self.reflector is not None:
            k = self.reflector.R.shape[0]
            X = self.reflector.apply(np.vstack([np.zeros((k, X.shape[1])), X]))
        F = fac.M[H] @ X  # (h, A v)
        b0 = (np.tile(self.c_int, alphas.size) + self.s @ X) / self.n_train
        return (F + b0).reshape(H.size, alphas.size, v).transpose(1, 0, 2), est


    def sums(self, alphas, Y_H):
        """Sums over the query rows of the squared residuals, without the predictions.

        Parameters
        ----------
        alphas : ndarray of shape (A,)
        Y_H : ndarray of shape (h, v)
            The query rows' targets; overwritten.

        Returns
        -------
        sse : ndarray of shape (A, v)
            ``sum_i (Y_H - F)_it^2`` with ``F`` the predictions of :meth:`predict`.
        est : ndarray of shape (A,)
            The estimated relative errors of :meth:`predict`.

        Notes
        -----
        On the eigen route (many alphas x targets) the residuals of one alpha
        and one bounded block of targets are formed by one GEMM, then
        squared and summed (:meth:`_sums_by_eigen`): never the A x h x v
        predictions.  Otherwise :meth:`predict`, then the sums.
        """
        v = self.rhs.shape[1]
        if self.C is not None and alphas.size * v >= _EIGEN_COLUMNS_PER_RANK * self.C.shape[0]:
            return self._sums_by_eigen(alphas, Y_H)
        F, est = self.predict(alphas)
        F -= Y_H[None]
        return np.einsum("ahv,ahv->av", F, F), est

    def _eigen_parts(self):
        """``C = U diag(mu) U^T`` (about 9 r^3 flops), the right-hand side in its
        eigenbasis ``G = U^T rhs`` (r^2 v), the query rows ``P = M_H U`` (h r^2)
        and ``sU = s^T U``."""
        mu, U = linalg.eigh(self.C, lower=True, check_finite=False, driver="evd")
        G = U.T @ self.rhs  # (r', v), in the reduced coordinates of C
        if self.reflector is not None:  # back to the full eigenbasis: the removed directions stay zero
            k = self.reflector.R.shape[0]
            U = self.reflector.apply(np.vstack([np.zeros((k, U.shape[1])), U]))
        return mu, G, self.fac.M[self.H] @ U, self.s @ U

    def _eigen_estimate(self, mu, alphas):
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = mu.min(initial=np.inf) + alphas
            return np.where(shifted > 0, EPS * (self.fac.eigenvalues.max() + alphas) / shifted, np.inf)

    def _sums_by_eigen(self, alphas, Y_H):
        """:meth:`sums` on the eigen route.  The intercept ``(c + sU G_a) / n``
        is folded into the GEMM (``P' = P + 1 sU / n``, ``Y' = Y_H - c / n``).

        With more query rows than directions (h > r', the usual case of a
        basis much smaller than a fold) ``P' = Q R`` (Householder QR) splits
        each residual orthogonally: ``||Y' - P' G_a||^2 = ||(I - Q Q^T) Y'||^2
        + ||Q^T Y' - R G_a||^2``.  The first term is one pass, the second one
        triangular product per alpha (TRMM, r'^2 |T| flops against the GEMM's
        2 h r' |T|): 4 h r' v once and r'^2 v A in all.  Otherwise one GEMM
        ``P' G_a`` per alpha (2 h r' v A).  Blocks of targets keep the buffers
        at most 32 MiB; never an A x h x v array."""
        mu, G, P, sU = self._eigen_parts()
        P += sU / self.n_train
        Y_H -= self.c_int / self.n_train
        h, v = Y_H.shape
        tall = h > mu.size
        if tall:
            Qp, P = linalg.qr(P, mode="economic", check_finite=False)  # P' = Qp R, R upper triangular
        sse = np.empty((alphas.size, v))
        rows = mu.size if tall else h
        step = max(64, _SUMS_BLOCK_BYTES // (8 * max(h + mu.size, 1)))
        buf = np.empty(rows * min(step, v))
        for lo in range(0, v, step):
            hi = min(lo + step, v)
            Gb, Yb = G[:, lo:hi], Y_H[:, lo:hi]
            Eb = buf[: rows * (hi - lo)].reshape(rows, hi - lo)  # contiguous, as TRMM in place needs
            if tall:
                Bb = Qp.T @ Yb  # (r', |T|)
                Yb -= Qp @ Bb  # the part of Y' outside the range of P'
                sse[:, lo:hi] = np.einsum("ht,ht->t", Yb, Yb)
                Yb = Bb
            else:
                sse[:, lo:hi] = 0.0
            for i, a in enumerate(alphas):
                if tall:
                    np.divide(Gb, (mu + a)[:, None], out=Eb)
                    # R Eb in place: Eb is C-ordered, so its transpose (F-ordered) times R^T from the right
                    blas.dtrmm(1.0, P, Eb.T, side=1, lower=0, trans_a=1, overwrite_b=1)
                else:
                    np.matmul(P, Gb / (mu + a)[:, None], out=Eb)
                np.subtract(Yb, Eb, out=Eb)
                sse[i, lo:hi] += np.einsum("ht,ht->t", Eb, Eb)
        return sse, self._eigen_estimate(mu, alphas)

    def _predict_by_eigen(self, alphas):
        """:meth:`predict` for many targets: ``C = U diag(mu) U^T`` once (about
        9 r^3 flops), the query rows and the right-hand side in its eigenbasis
        once (``P = M_H U``, ``G = U^T rhs``: h r^2 + r^2 v), then per alpha one
        GEMM ``P diag(1 / (mu + alpha)) G`` (h r v): no rotation of the
        solutions back per alpha, as the band route needs.  The error estimate
        is :func:`lssvm.cv.fold_solver.solve_fold_path`'s with the exact
        ``||(C + alpha I)^-1|| = 1 / (mu_min + alpha)`` (inf where not positive)."""
        v = self.rhs.shape[1]
        mu, G, P, sU = self._eigen_parts()
        out = np.empty((alphas.size, self.H.size, v))
        for i, a in enumerate(alphas):
            Ga = G / (mu + a)[:, None]
            np.matmul(P, Ga, out=out[i])
            out[i] += (self.c_int + sU @ Ga) / self.n_train
        return out, self._eigen_estimate(mu, alphas)


#: A fold's path goes by the eigendecomposition of its normal matrix, not the band reduction, when
#: alphas x targets is at least this many times its rank (the band route rotates every alpha's
#: solutions back, r^2 v per alpha; the eigen route costs about 5 r^3 more once).
_EIGEN_COLUMNS_PER_RANK = 4


#: Bytes of one block of targets in :meth:`BandPath.sums` (its residual buffer and scaled
#: right-hand side): bounded in v, and wide enough that the GEMMs run near the rate of one large
#: GEMM (blocks of 345 targets ran 10-15 % slower on one core).
_SUMS_BLOCK_BYTES = 1 << 25


#: the paths by the names ``HoldoutEngine.predict(_side=...)`` accepts
PATHS = {"h": HSidePath, "refactor": BandPath}


def cheapest_path(h, h_out, r, e, n_alphas, bandwidth=DEFAULT_BANDWIDTH):
    """Name of the hold-out path with the smaller flop count.

    SYRK and SYR2K counted once per entry pair.  Every path runs at about
    the matrix-multiply rate of one core (the band reduction is BLAS-3);
    checked on single-threaded OpenBLAS at r = 20-2500, h = 5-500, 1 and 20
    alphas (``benchmarks/holdout_paths.py``; folds run one per core).
    """
    w = bandwidth
    rr = max(r - e, 0)  # size of the refactored system
    cost = {
        "h": n_alphas * (h * h_out * r + 2 * e * h * r + 2 * r * e * e + e * h * h_out + h_out**3 / 3) + 2 * e * r * h,
        "refactor": 4 * r * e * h_out + 2 * r * e * e + h_out * rr**2 + 2 * e * rr**2 + (4 / 3) * rr**3
        + 3 * w * rr**2 + n_alphas * (2 * rr * w * w + 2 * h * r),
    }
    return min(cost, key=cost.get)


def _spd_solve(A, b):
    """Solve the symmetric positive definite ``A x = b`` by Cholesky.

    Returns ``(x, ||A^-1||_1)`` (the norm from LAPACK's ``dpocon`` estimate,
    O(n^2)), or ``(None, inf)`` if A is not numerically positive definite.
    """
    try:
        c = linalg.cho_factor(A, lower=True, check_finite=False)
    except linalg.LinAlgError:
        return None, np.inf
    anorm = np.abs(A).sum(axis=0).max()
    rcond, info = lapack.dpocon(c[0], anorm, uplo="L")
    inv_norm = np.inf if info != 0 or rcond <= 0 else 1.0 / (rcond * anorm)
    return linalg.cho_solve(c, b, check_finite=False), inv_norm
