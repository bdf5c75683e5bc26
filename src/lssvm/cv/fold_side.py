"""The part of a fold's band path (:class:`lssvm.cv.holdout.BandPath`) that does not
depend on the targets: the fold's normal matrix in the training eigenbasis and, on
first use, its eigendecomposition with the query rows in that eigenbasis.  Formed
once per fold and shared by every batch of targets of one fit, so that a k-fold or
grouped pass over many targets in batches pays the folds' O(h r^2 + r^3) work once
(the documentation's Mathematics page, §3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..solvers import syr2k_lower_
from ..solvers.shifted_band import BlockReflector

__all__ = ["BandKernelSide"]


@dataclass
class BandKernelSide:
    """What a fold's :class:`BandPath` needs that does not depend on the targets:
    built once per fold and shared by every batch of targets of one fit
    (:meth:`HoldoutEngine.sums` with a ``fold_cache``).

    Attributes
    ----------
    C : ndarray of shape (r', r') or None
        The (restricted) normal matrix, lower triangle valid; None when every
        basis direction is removed.
    reflector : BlockReflector or None
    s : ndarray of shape (r,)
    n_train : int
    eigen : tuple or None
        Filled on the first use of the eigen route (:meth:`BandPath.eigen_kernel`):
        ``mu`` (r',), ``U`` (r', r') the eigenvectors of ``C``, ``P = M_H U_full``
        (h, r'), ``sU = s^T U_full`` (r',) and ``U_full^T`` (r', r), ``U_full`` the
        eigenvectors taken back to the full training eigenbasis.
    sums_basis : tuple or None
        Filled on the first use of :meth:`BandPath._sums_by_eigen`: the QR of
        ``P' = P + 1 sU / n_train`` (module notes of that method).
    """

    C: np.ndarray | None
    reflector: BlockReflector | None
    s: np.ndarray
    n_train: int
    eigen: tuple | None = None
    sums_basis: tuple | None = None

    @classmethod
    def of(cls, fac, Hp, E) -> BandKernelSide:
        """The fold's normal matrix for left-out rows ``Hp`` and removed basis
        points ``E``: O(h' r^2) SYRK, plus O(h r |E| + |E| r^2) for removed
        basis points."""
        N = fac.M[Hp]
        s = N.sum(axis=0)
        mr = fac.n_samples - Hp.size
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
            lam = lam[k:]
        if lam.size == 0:  # every basis direction removed: intercept-only model
            return cls(None, refl, s, mr)
        C = Na_t @ Na_t.T  # SYRK
        C *= -1.0
        C[np.diag_indices_from(C)] += lam
        C = C.T  # the same symmetric matrix, column-major for the BLAS update
        if E.size:
            syr2k_lower_(C, Xe[k:], V[k:], -1.0)  # only the lower triangle is kept from here on
        return cls(C, refl, s, mr)

    @property
    def nbytes(self):
        """Bytes held (the matrices of the cache included)."""
        parts = [self.C, self.s] + list(self.eigen or ()) + list(self.sums_basis or ())
        if self.reflector is not None:
            parts += [self.reflector.V, self.reflector.T, self.reflector.R]
        return sum(getattr(a, "nbytes", 0) for a in parts)
