"""Exact hold-out predictions from a trained sparse model, without retraining
(paper 001, Prop. 1 and Cor. 2; math.md §3).

Notation: rows ``z_i = [Kc_i, 1]`` (centred kernel row and intercept),
``P = sum_i z_i z_i^T + alpha blockdiag(K_BB, 0)`` with
``P^-1 = blockdiag(Q D Q^T, 1/m)``, ``D = (Lambda + alpha)^-1``, and
``c = sum_i y_i z_i``.  Holding out rows ``H'`` and removing basis columns
``E`` (keeping columns ``L``), the model trained on the rest predicts, for
query rows ``H``,

    f_H = yL_H - U_{H H'} y_H' + U_{H H'} (I - U_{H'H'})^-1 r,
    r   = yL_H' - U_{H'H'} y_H',

where ``W = (P_LL)^-1`` (a Schur complement of ``P^-1`` when E is not
empty), ``U = Z_HL W Z_H'L^T`` and ``yL = Z_HL W c_L``.  Everything is
computed in the eigenbasis of the training factorisation: O(|H|^2 r +
|H|^3 + |H| |E| r + |E|^3) per alpha, never a refit.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..solvers import SparseRLSFactorization, check_alphas

__all__ = ["BASIS_IN_HOLDOUT", "HoldoutEngine", "check_indices"]

BASIS_IN_HOLDOUT = ("remove", "keep", "train")


def check_indices(indices, n_samples, name="test_indices"):
    """Validate a set of row indices: 1-D, integer, unique, in range, non-empty."""
    idx = np.asarray(indices)
    if idx.dtype == bool:
        if idx.shape != (n_samples,):
            raise IndexError(f"{name}: a boolean mask must have length {n_samples}; got shape {idx.shape}")
        idx = np.flatnonzero(idx)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices; got shape {idx.shape}")
    if idx.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer row indices; got dtype {idx.dtype}")
    bad = idx[(idx < 0) | (idx >= n_samples)]
    if bad.size:
        raise IndexError(f"{name} contains index {int(bad[0])} outside [0, {n_samples})")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{name} contains duplicate indices")
    if idx.size >= n_samples:
        raise ValueError(f"{name} holds out all {n_samples} rows; at least one must remain for training")
    return idx.astype(np.intp)


class HoldoutEngine:
    """Hold-out predictions of a fitted sparse model.

    Parameters
    ----------
    fac : SparseRLSFactorization
        The training factorisation.
    centred_kernel : callable ``(rows, basis_cols) -> ndarray (len(rows), len(basis_cols))``
        Centred kernel entries ``k(x_rows, z_cols) - mu_cols`` (needed only
        when basis points are removed).
    basis_rows : ndarray of shape (n,) or None
        Training row of each basis point (None: no basis point is a
        training row, so nothing is ever removed).
    """

    def __init__(self, fac: SparseRLSFactorization, centred_kernel, basis_rows=None):
        self.fac = fac
        self._centred_kernel = centred_kernel
        m = fac.n_samples
        self.row_to_basis = np.full(m, -1, dtype=np.intp)
        if basis_rows is not None:
            self.row_to_basis[np.asarray(basis_rows)] = np.arange(len(basis_rows))
        self.Y = fac.y_centered + fac.y_mean

    def predict(self, test_indices, alpha, basis_in_holdout="remove"):
        """Predictions for rows ``test_indices`` of the model trained without them.

        Parameters
        ----------
        test_indices : array-like of int, shape (h,)
        alpha : float or array-like of shape (A,)
        basis_in_holdout : {"remove", "keep", "train"}
            "remove": held-out basis points leave the basis; "keep": they
            stay basis functions, only their loss terms go (paper 001
            Cor. 2); "train": held-out rows that are basis points stay in
            the training set.

        Returns
        -------
        ndarray of shape (h, v) or (A, h, v)
        """
        fac = self.fac
        m = fac.n_samples
        H = check_indices(test_indices, m)
        alphas, scalar = check_alphas(alpha)
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
        in_basis = self.row_to_basis[H]
        E = in_basis[in_basis >= 0] if basis_in_holdout == "remove" else np.empty(0, dtype=np.intp)
        # positions (within H) of the rows actually left out of training
        p = np.flatnonzero(in_basis < 0) if basis_in_holdout == "train" else np.arange(H.size)

        M_H = fac.M[H]
        qc = fac.z
        if E.size:
            Q_E = fac.Q[E]  # (|E|, r)
            M_H = M_H - self._centred_kernel(H, E) @ Q_E  # rows restricted to the kept columns
            qc = qc - Q_E.T @ fac.KcT_y[E]  # Q^T c restricted to the kept columns
        Y_p = self.Y[H[p]]
        out = np.empty((alphas.size, H.size, qc.shape[1]))
        for k, a in enumerate(alphas):
            d = 1.0 / (fac.eigenvalues + a)
            MD = M_H * d
            g = d[:, None] * qc
            yL = M_H @ g + fac.y_mean
            U = MD @ M_H[p].T + 1.0 / m  # (h, |p|)
            if E.size:
                T = MD @ Q_E.T  # (h, |E|)
                S = (Q_E * d) @ Q_E.T  # (|E|, |E|), SPD
                cS = linalg.cho_factor(S, lower=True, check_finite=False)
                yL -= T @ linalg.cho_solve(cS, Q_E @ g, check_finite=False)
                U -= T @ linalg.cho_solve(cS, T[p].T, check_finite=False)
            Upp = U[p]
            r = yL[p] - Upp @ Y_p
            A_mat = np.eye(p.size) - Upp
            sol = linalg.solve(A_mat, r, assume_a="pos", check_finite=False) if p.size else r
            out[k] = yL - U @ Y_p + U @ sol
        return out[0] if scalar else out
