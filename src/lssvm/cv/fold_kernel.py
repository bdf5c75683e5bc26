"""A fold's model from its own kernel matrix: the dual route of the k-fold
paths, for folds with no more remaining rows than basis directions (every
row in the basis, kernel ridge regression; the documentation's Mathematics
page, §3 and §6).

Why a dual route
----------------
The primal routes of :mod:`lssvm.cv.holdout` solve the fold's model in the
training eigenbasis, ``(C + alpha I) beta = rhs`` with ``C`` the *centred*
scatter matrix of the remaining rows.  When the basis functions can
represent a constant on the remaining rows (every row in the basis: the
fold's model is kernel ridge regression on ``R``), centring leaves ``C`` a
null direction that the intercept takes over.  In exact arithmetic the
right-hand side has no component there; in floating point it has one of
about ``eps ||rhs||``, which ``(C + alpha I)^-1`` multiplies by ``1 /
alpha``: at alpha = 1e-7 the predictions lose eight digits and the guard
sends the fold to the SVD route.

The dual keeps the intercept out of the kernel.  With ``Phi`` the
remaining rows' *uncentred* kernel rows in the training eigenbasis
(restricted to the null space of the removed basis points' eigenvector
rows, as in :class:`lssvm.cv.holdout.BandPath`), ``K = Phi_R Phi_R^T``
(for every row in the basis, the fold's kernel matrix ``K_RR``) and the
model trained on ``R`` solves the bordered system

    [K + alpha I, 1] [a ]   [y_R]
    [1^T,         0] [b0] = [0  ],     f_H = K_HR a + b0.

From ``K = V diag(kappa) V^T``, ``t = V^T y_R`` and ``e = V^T 1`` (once per
fold), each alpha costs ``b0 = e^T D t / e^T D e`` with ``D = (kappa +
alpha)^-1`` and one GEMM ``f_H = (K_HR V) D (t - e b0) + b0`` (2 h |R| v
flops): the operations himalaya performs on the fold kernel.

Error model: ``K`` carries an absolute error of about ``eps kappa_max``
(products of rows of norm at most ``kappa_max^1/2``), amplified by
``||(K + alpha I)^-1|| = 1 / (kappa_min + alpha)``; the Schur complement
``e^T D e`` is a sum of positive terms.  The estimate is therefore
``eps (kappa_max + alpha) / (kappa_min + alpha)``; past
:data:`~lssvm.cv.fold_solver.GUARD_RTOL` the hold-out engine recomputes
the fold by the SVD route.  Here ``kappa_min`` is the smallest eigenvalue of
the *uncentred* fold kernel, bounded away from zero for a kernel that is
positive definite on the remaining rows, where the centred primal matrix
has an eigenvalue at rounding level.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg

from ..solvers import SparseRLSFactorization
from ..solvers.shifted_band import BlockReflector
from .fold_solver import EPS

__all__ = ["FoldKernelPath", "fold_kernel_applies"]

#: Bytes of one block of targets in :meth:`FoldKernelPath.sums` (as ``BandPath.sums``).
_BLOCK_BYTES = 1 << 25


def fold_kernel_applies(n_samples, n_left_out, rank, n_removed):
    """Whether a fold's own kernel is no larger than its normal matrix:
    ``m - h' <= r - |E|`` remaining rows against remaining directions, O(1)."""
    n_train = n_samples - n_left_out
    return 0 < n_train <= rank - n_removed


@dataclass(frozen=True)
class FoldKernelPath:
    """Hold-out predictions for all alphas from the fold's kernel matrix (module notes).

    Attributes
    ----------
    fac : SparseRLSFactorization
    kappa : ndarray of shape (n_R,)
        Eigenvalues of the fold kernel ``K = Phi_R Phi_R^T``, ascending.
    P : ndarray of shape (h, n_R)
        ``K_HR V``: the query rows against the remaining rows, in K's eigenbasis.
    e : ndarray of shape (n_R,)
        ``V^T 1``.
    t : ndarray of shape (n_R, v) or None
        ``V^T (y_R - y_mean)``, the remaining rows' centred targets in K's
        eigenbasis; None in a :meth:`kernel_side`.
    V : ndarray of shape (n_R, n_R)
        K's eigenvectors.
    R : ndarray of shape (n_R,)
        The remaining rows.
    """

    fac: SparseRLSFactorization
    kappa: np.ndarray
    P: np.ndarray
    e: np.ndarray
    t: np.ndarray | None
    V: np.ndarray | None = None
    R: np.ndarray | None = None

    @classmethod
    def of(cls, prob, side=None) -> FoldKernelPath:
        """Form and eigendecompose the fold kernel.

        ``prob`` is a :class:`lssvm.cv.holdout.FoldProblem`.  Cost: 4 r |E| (h +
        |R|) for the restriction (when basis points are removed), |R|^2 r'
        (SYRK) + 2 h |R| r' for the kernel blocks, about 9 |R|^3 for the
        eigendecomposition, 2 h |R|^2 for ``P`` and 2 |R|^2 v for ``t``.
        ``side``: the same fold's :meth:`kernel_side` from an earlier batch of
        targets of the same fit, reused: then only ``t`` is formed.
        """
        if side is None:
            side = cls._kernel_of(prob)
        Yc = getattr(prob.Y, "centered", None)  # the engine's TargetRows, or a plain (m, v) array
        Yc = prob.Y - prob.fac.y_mean if Yc is None else Yc
        V, R = side.V, side.R
        v = Yc.shape[1]
        t = np.empty((R.size, v))
        step = max(64, _BLOCK_BYTES // (8 * max(R.size, 1)))
        for lo in range(0, v, step):
            hi = min(lo + step, v)
            t[:, lo:hi] = V.T @ Yc[R, lo:hi]
        return replace(side, fac=prob.fac, t=t)

    @classmethod
    def _kernel_of(cls, prob) -> FoldKernelPath:
        fac, H, E = prob.fac, prob.H, prob.E
        m = fac.n_samples
        train = np.ones(m, dtype=bool)
        train[H[prob.p]] = False
        R = np.flatnonzero(train)
        # uncentred kernel rows in the eigenbasis: M = Kc Q, and K Q = M + 1 (mu Q); any constant shift
        # of the rows is absorbed by the intercept, this one keeps K away from the centred null direction
        shift = fac.kernel_mean @ fac.Q
        Phi_R = (fac.M[R] + shift).T  # (r, |R|)
        Phi_H = (fac.M[H] + shift).T  # (r, h)
        if E.size:
            refl = BlockReflector(fac.Q[E].T)
            k = refl.R.shape[0]
            Phi_R = refl.apply(Phi_R, transpose=True)[k:]
            Phi_H = refl.apply(Phi_H, transpose=True)[k:]
        K = Phi_R.T @ Phi_R  # SYRK
        kappa, V = linalg.eigh(K, lower=True, check_finite=False, driver="evd", overwrite_a=True)
        P = (Phi_H.T @ Phi_R) @ V
        return cls(fac, kappa, P, V.sum(axis=0), None, V, R)

    def kernel_side(self):
        """This path without its targets (``t`` None): what a later batch of targets of the same fit
        reuses (:meth:`of`)."""
        return replace(self, t=None)

    @property
    def nbytes(self):
        """Bytes held by the target-independent arrays."""
        return sum(a.nbytes for a in (self.kappa, self.P, self.e, self.V, self.R) if a is not None)

    def estimate(self, alphas):
        """Estimated relative error per alpha, ``eps (kappa_max + alpha) /
        (kappa_min + alpha)`` (inf where not positive); O(A)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = self.kappa[0] + alphas
            return np.where(shifted > 0, EPS * (self.kappa[-1] + alphas) / shifted, np.inf)

    def _coef(self, a, t):
        """``G = D (t - e b0)`` and ``b0`` for one alpha and a block of targets, O(|R| |T|)."""
        d = 1.0 / (self.kappa + a)
        w = self.e * d
        b0 = (w @ t) / (w @ self.e)
        return d[:, None] * t - np.outer(w, b0), b0

    def predict(self, alphas):
        """Predictions (A, h, v) and estimated relative errors (A,); one
        GEMM of 2 h |R| v flops per alpha."""
        h, v = self.P.shape[0], self.t.shape[1]
        out = np.empty((alphas.size, h, v))
        for i, a in enumerate(alphas):
            G, b0 = self._coef(a, self.t)
            np.matmul(self.P, G, out=out[i])
            out[i] += b0 + self.fac.y_mean
        return out, self.estimate(alphas)

    def sums(self, alphas, Y_H):
        """Sums over the query rows of the squared residuals, (A, v), and the
        estimates (A,), without the A x h x v predictions.

        ``Y_H`` (h, v), the query rows' targets, is overwritten.  Blocks of
        targets keep the buffer at most 32 MiB.
        """
        Y_H -= self.fac.y_mean
        h, v = Y_H.shape
        sse = np.empty((alphas.size, v))
        step = max(64, _BLOCK_BYTES // (8 * max(h + self.kappa.size, 1)))
        buf = np.empty(h * min(step, v))
        for lo in range(0, v, step):
            hi = min(lo + step, v)
            tb, Yb = self.t[:, lo:hi], Y_H[:, lo:hi]
            Fb = buf[: h * (hi - lo)].reshape(h, hi - lo)
            for i, a in enumerate(alphas):
                G, b0 = self._coef(a, tb)
                np.matmul(self.P, G, out=Fb)
                Fb += b0
                np.subtract(Yb, Fb, out=Fb)
                sse[i, lo:hi] = np.einsum("ht,ht->t", Fb, Fb)
        return sse, self.estimate(alphas)
