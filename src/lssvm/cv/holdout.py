"""Exact hold-out predictions from a trained sparse model, without retraining
(Pahikkala et al. 2012, Prop. 1 and Cor. 2; the documentation's Mathematics page, §3).

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

import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..exceptions import NumericalWarning
from ..solvers import SparseRLSFactorization, check_alphas, syr2k_lower_
from ..solvers.shifted_band import DEFAULT_BANDWIDTH, BlockReflector, ShiftedBandSolver
from .holdout_guard import EPS, GUARD_RTOL, stable_fold_predictions, warn_inaccurate

__all__ = ["BASIS_IN_HOLDOUT", "HoldoutEngine", "check_indices"]

BASIS_IN_HOLDOUT = ("remove", "keep", "train")


def check_indices(indices, n_samples, name="test_indices"):
    """Validate a set of row indices: 1-D, integer, unique, in range, non-empty.

    Returns
    -------
    ndarray of shape (h,), intp

    Raises
    ------
    ValueError
        For anything else (an out-of-range index or a boolean mask of the
        wrong length raises a subclass of both ``ValueError`` and
        ``IndexError``), saying what is wrong.
    """
    idx = np.asarray(indices)
    if idx.dtype == bool:
        if idx.shape != (n_samples,):
            raise ValueError(
                f"{name}: a boolean mask must have length {n_samples} (one entry per row); got shape {idx.shape}"
            )
        idx = np.flatnonzero(idx)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices; got shape {idx.shape}")
    if idx.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer row indices; got dtype {idx.dtype}")
    bad = idx[(idx < 0) | (idx >= n_samples)]
    if bad.size:
        raise ValueError(
            f"{name} contains index {int(bad[0])} outside [0, {n_samples}); pass row numbers "
            f"0 .. {n_samples - 1} (negative indices are not accepted)"
        )
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
    kernel_block : callable ``(rows, basis_cols) -> ndarray (len(rows), len(basis_cols))``
        Kernel entries ``k(x_rows, z_cols)`` (needed only when basis points
        are removed).
    basis_rows : ndarray of shape (n,), tuple (rows, points) or None
        Training row of each basis point; or pairs of arrays saying that
        training row ``rows[k]`` holds basis point ``points[k]`` (several
        rows may hold one point: see :func:`lssvm.basis.basis_holders`);
        None: no basis point is a training row, so nothing is ever removed.
        A basis point is removed only when every row holding it is held
        out.
    basis_kernel : callable ``(basis_cols) -> ndarray``, optional
        ``k(z_cols, z_cols)``; with ``rcond``, used to refit a fold when
        basis points are removed from a numerically singular K_BB.
    rcond : float
        The training factorisation's ``rcond``.
    """

    def __init__(self, fac: SparseRLSFactorization, kernel_block, basis_rows=None, basis_kernel=None, rcond=1e-10):
        self.fac = fac
        self._kernel_block = kernel_block
        self._basis_kernel = basis_kernel
        self._rcond = rcond
        m = fac.n_samples
        self.row_to_basis = np.full(m, -1, dtype=np.intp)
        n = fac.whitener.shape[0]
        if isinstance(basis_rows, tuple):
            rows, points = (np.asarray(a, dtype=np.intp) for a in basis_rows)
        elif basis_rows is not None:
            rows, points = np.asarray(basis_rows, dtype=np.intp), np.arange(len(basis_rows), dtype=np.intp)
        else:
            rows = points = np.empty(0, dtype=np.intp)
        self.row_to_basis[rows] = points
        #: how many training rows hold each basis point
        self.n_holders = np.bincount(points, minlength=n)
        self.Y = fac.y_centered + fac.y_mean

    @classmethod
    def from_kernel(cls, fac, X, Z, kernel, basis_rows=None, rcond=1e-10):
        """The engine of a model with basis points ``Z`` (n, d) fitted on
        ``X`` (m, d) with ``kernel``; ``basis_rows`` are their training rows."""

        def kernel_block(rows, cols):
            return kernel(X[rows], Z[cols])

        def basis_kernel(cols):
            return kernel(Z[cols], Z[cols])

        return cls(fac, kernel_block, basis_rows, basis_kernel, rcond)

    def removed_points(self, H):
        """Basis points whose every holding row is in ``H`` (sorted), O(h + n)."""
        held = self.row_to_basis[H]
        held = held[held >= 0]
        if held.size == 0:
            return held
        count = np.bincount(held, minlength=self.n_holders.size)
        return np.flatnonzero((count > 0) & (count == self.n_holders))

    def predict(self, test_indices, alpha, basis_in_holdout="remove", _side=None):
        """Predictions for rows ``test_indices`` of the model trained without them.

        Parameters
        ----------
        test_indices : array-like of int, shape (h,)
        alpha : float or array-like of shape (A,)
        basis_in_holdout : {"remove", "keep", "train"}
            "remove": held-out basis points leave the basis; "keep": they
            stay basis functions, only their loss terms go (Pahikkala et al. 2012,
            Cor. 2); "train": held-out rows that are basis points stay in
            the training set.

        Returns
        -------
        ndarray of shape (h, v) or (A, h, v)

        Notes
        -----
        The (I - U) system is solved on the smaller side: directly
        (O(h^2 r + h^3) per alpha) when the held-out rows are fewer than the
        rank r, otherwise through ``(I - B W B^T)^-1 = I + B (I - W B^T B)^-1
        W B^T`` with ``B = [M_H, 1]`` (O(h r v + r^3) per alpha after an
        O(h r^2) product shared by all alphas).  With many alphas it is
        cheaper still to reduce the fold's own normal matrix, in the training
        eigenbasis, to band form once (O(h r^2 + r^3), then O(h r v + r w^2)
        per alpha, w = 64 the half-bandwidth); the cheapest of the three is
        chosen from their flop counts.  ``_side`` ("h", "r" or
        "refactor") forces one, for testing.

        Every path estimates its own relative error (issue 21; see
        :mod:`lssvm.cv.holdout_guard`); past ``GUARD_RTOL`` = 1e-8 the fold
        is refitted on the whitened factor by an SVD, and a
        :class:`~lssvm.exceptions.NumericalWarning` is issued if even that
        route's estimate passes it.
        """
        fac = self.fac
        m = fac.n_samples
        H = check_indices(test_indices, m)
        alphas, scalar = check_alphas(alpha)
        if basis_in_holdout not in BASIS_IN_HOLDOUT:
            raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
        in_basis = self.row_to_basis[H]
        E = self.removed_points(H) if basis_in_holdout == "remove" else np.empty(0, dtype=np.intp)
        if E.size and E.size == fac.whitener.shape[0]:
            raise ValueError(
                f"the hold-out set holds every basis vector ({E.size}): with basis_in_holdout='remove' "
                "its model would have no basis; use basis_in_holdout='keep', more basis vectors or "
                "smaller folds"
            )
        # positions (within H) of the rows actually left out of training
        p = np.flatnonzero(in_basis < 0) if basis_in_holdout == "train" else np.arange(H.size)

        M_H = fac.M[H]
        qc = fac.z
        Q_E = fac.Q[E] if E.size else None  # (|E|, r)
        r = fac.rank
        if _side is None:
            _side = _cheapest_method(H.size, p.size, r, E.size, alphas.size)
        if E.size and fac.method != "cholesky":
            # On the range of a numerically singular K_BB, "without these basis
            # points" is a different truncation than the training one: refit.
            warnings.warn(
                "K_BB is numerically singular (the model lives on its range): hold-out with "
                "basis points removed refits the fold on the remaining basis, O(m n^2) per fold",
                NumericalWarning,
                stacklevel=3,
            )
            out = self._refit(H, p, E, alphas)
            return out[0] if scalar else out
        if _side == "refactor":
            out, inv_norm = self._refactor(H, p, E, alphas)
            est = EPS * (fac.eigenvalues.max() + alphas) * inv_norm
            out = self._guard(out, est, H, p, E, alphas)
            return out[0] if scalar else out
        Y_p = self.Y[H[p]]
        use_r_side = _side == "r"
        predict_alpha = self._r_side if use_r_side else self._h_side
        ctx = {"M_H": M_H, "qc": qc, "p": p, "Y_p": Y_p, "Q_E": Q_E}
        if not use_r_side:
            ctx["M_p"] = M_H[p] if p.size < H.size else M_H
        else:
            B = np.hstack([M_H, np.ones((H.size, 1))])
            ctx.update(B=B, Bp=B[p], Gp=B[p].T @ B[p], BpY=B[p].T @ Y_p)
        out = np.empty((alphas.size, H.size, qc.shape[1]))
        inv_norm = np.empty(alphas.size)
        for k, a in enumerate(alphas):
            out[k], inv_norm[k] = predict_alpha(1.0 / (fac.eigenvalues + a), **ctx)
        # ||(C + alpha I)^-1|| <= ||(Lambda + alpha)^-1|| ||(I - U)^-1|| (C the fold's normal matrix)
        lam = fac.eigenvalues
        est = EPS * (lam.max() + alphas) / (lam.min() + alphas) * inv_norm
        out = self._guard(out, est, H, p, E, alphas)
        return out[0] if scalar else out

    def _guard(self, out, est, H, p, E, alphas):
        """Recompute the alphas whose estimated relative error ``est`` passes
        ``GUARD_RTOL`` (or is NaN) by the stable route (:mod:`.holdout_guard`);
        warn if that route's own estimate still passes it."""
        bad = ~(est <= GUARD_RTOL)
        if not bad.any():
            return out
        fixed, err = stable_fold_predictions(self.fac, self.Y, H, p, E, alphas[bad])
        out[bad] = fixed
        if (err > GUARD_RTOL).any():
            worst = int(np.argmax(err))
            warn_inaccurate("hold-out / k-fold predictions", err[worst], alphas[bad][worst], stacklevel=5)
        return out

    def _h_side(self, d, *, M_H, M_p, qc, p, Y_p, Q_E):
        """Hold-out predictions for one alpha through the h x h system.

        With removed basis points the restricted inverse is
        ``W = D^1/2 (I - P) D^1/2``, ``P`` the orthogonal projector on the
        range of ``D^1/2 Q_E^T`` (from a QR factorisation, never from the
        Gram matrix ``Q_E D Q_E^T``, which loses every digit once K_BB is
        ill-conditioned).  ``W`` maps into the null space of ``Q_E``, so the
        rows ``M_H`` need no restriction.  ``U = Ms Ms^T - (Ms Qp)(Ms Qp)^T``
        with ``Ms = M_H D^1/2``, formed by SYRK when every query row is left
        out.
        """
        m = self.fac.n_samples
        sq = np.sqrt(d)
        full = M_p is M_H
        Ms = M_H * sq
        gs = sq[:, None] * qc
        U = Ms @ Ms.T if full else Ms @ (M_p * sq).T  # (h, |p|)
        if Q_E is not None:
            Qp, _ = linalg.qr((Q_E * sq).T, mode="economic", check_finite=False)  # (r, |E|)
            MsQ = Ms @ Qp
            gs = gs - Qp @ (Qp.T @ gs)
            U -= MsQ @ MsQ.T if full else MsQ @ MsQ[p].T
        yL = Ms @ gs + self.fac.y_mean
        U += 1.0 / m
        Upp = U if full else U[p]
        r = yL[p] - Upp @ Y_p
        inv_norm = 1.0
        if p.size:
            A = -Upp
            A[np.diag_indices_from(A)] += 1.0
            sol, inv_norm = _spd_solve(A, r)
            if sol is None:  # I - U not numerically positive definite: the guard refits
                return np.nan, np.inf
        else:
            sol = r
        return yL - U @ (Y_p - sol), inv_norm

    def _r_side(self, d, *, M_H, qc, p, Y_p, Q_E, B, Bp, Gp, BpY):
        """Hold-out predictions for one alpha through an (r+1) x (r+1) system."""
        m = self.fac.n_samples
        rank = d.size
        W = np.zeros((rank + 1, rank + 1))  # blockdiag(W_basis, 1/m), W_basis = D - D Q_E^T S^-1 Q_E D
        W[:rank, :rank] = np.diag(d)
        if Q_E is not None:  # D^1/2 (I - P) D^1/2, P by QR (see _h_side)
            sq = np.sqrt(d)
            Qp, _ = linalg.qr((Q_E * sq).T, mode="economic", check_finite=False)
            SQ = sq[:, None] * Qp
            W[:rank, :rank] -= SQ @ SQ.T
        W[rank, rank] = 1.0 / m
        yL = M_H @ (W[:rank, :rank] @ qc) + self.fac.y_mean
        WBpY = W @ BpY
        r = yL[p] - Bp @ WBpY
        # (I - W Gp)^-1 W = S (I - S^T Gp S)^-1 S^T with W = S S^T: a symmetric
        # system whose eigenvalues are those of I - U_pp (and ones)
        S = np.zeros((rank + 1, rank + 1))
        S[:rank, :rank] = np.diag(np.sqrt(d))
        if Q_E is not None:
            S[:rank, :rank] -= SQ @ Qp.T
        S[rank, rank] = 1.0 / np.sqrt(m)
        T = -(S.T @ Gp @ S)
        T[np.diag_indices_from(T)] += 1.0
        inner, inv_norm = _spd_solve(T, S.T @ (Bp.T @ r))
        if inner is None:
            return np.nan, np.inf
        sol = r + Bp @ (S @ inner)
        return yL - B @ WBpY + B @ (W @ (Bp.T @ sol)), inv_norm

    def _refit(self, H, p, E, alphas):
        return _refit_fold(self, H, p, E, alphas)

    def _refactor(self, H, p, E, alphas):
        """Hold-out predictions for all alphas from one orthogonal reduction to
        band form of the fold's normal matrix in the eigenbasis of the
        training fit (``ShiftedBandSolver``).

        In the coordinates ``beta`` (``a = Q beta``), training on all rows but
        ``H' = H[p]`` with intercept ``b0`` solves

            [Lambda + alpha - N^T N,  -s ] [beta]   [z - N^T y_H'        ]
            [-s^T,              m - h'   ] [b0  ] = [sum of y outside H' ]

        with ``N = M_H'``, ``s = N^T 1``.  Eliminating ``b0`` leaves
        ``(C + alpha I) beta = rhs`` with ``C = Lambda - N^T N - s s^T / (m -
        h')``; removing basis points ``E`` restricts ``beta`` to the null
        space of ``Q_E`` (orthonormal, so the shift stays ``alpha I``).
        """
        fac = self.fac
        m = fac.n_samples
        Hp = H[p]
        N = fac.M[Hp]
        s = N.sum(axis=0)
        mr = m - Hp.size
        c_int = self.Y.sum(axis=0) - self.Y[Hp].sum(axis=0)  # (v,)
        rhs = fac.z - N.T @ self.Y[Hp] + np.outer(s, c_int) / mr
        lam = fac.eigenvalues
        s_full = s
        # C = Lambda - Na^T Na with Na = [N; s^T / sqrt(m - h')]: one SYRK
        Na_t = np.hstack([N.T, s[:, None] / np.sqrt(mr)])  # (r, h' + 1)
        if E.size:
            # restrict to null(Q_E) = span of the trailing columns Z of the block
            # reflector H = I - V T V^T of the QR of Q_E^T, never formed:
            #   Z^T C Z = [H^T Lambda H]_22 - (Na Z)^T (Na Z),
            #   H^T Lambda H = Lambda - X V^T - V X^T,  X = Lambda V T - V (T^T V^T Lambda V T) / 2
            # (a symmetric rank-2|E| update, BLAS-3 without the GIL), so the
            # SYRK runs on r - |E| columns: O(h r |E| + (h + 2|E|)(r - |E|)^2)
            refl_e = BlockReflector(fac.Q[E].T)
            k = refl_e.R.shape[0]
            V, T = refl_e.V, refl_e.T
            Xe = (lam[:, None] * V) @ T
            Xe -= 0.5 * (V @ (T.T @ (V.T @ Xe)))
            Na_t = refl_e.apply(Na_t, transpose=True)[k:]
            rhs = refl_e.apply(rhs, transpose=True)[k:]
            lam = lam[k:]
        C = Na_t @ Na_t.T  # SYRK
        C *= -1.0
        C[np.diag_indices_from(C)] += lam
        C = C.T  # the same symmetric matrix, column-major for the BLAS update
        if E.size:
            syr2k_lower_(C, Xe[k:], V[k:], -1.0)  # only the lower triangle is kept from here on
        if C.shape[0] == 0:  # every basis direction removed: intercept-only model
            out = np.empty((alphas.size, H.size, rhs.shape[1]))
            out[:] = c_int / mr
            return out, np.zeros(alphas.size)
        # C = Ho B Ho^T with B banded (about 4/3 r^3 flops, BLAS-3 without the
        # GIL, so folds reduce side by side): every alpha is then a banded solve
        X, inv_norm = ShiftedBandSolver(C).solve(alphas, rhs, inverse_norms=True)  # (r', A v)
        v = rhs.shape[1]
        if E.size:
            X = refl_e.apply(np.vstack([np.zeros((k, X.shape[1])), X]))
        F = fac.M[H] @ X  # (h, A v)
        b0 = (np.tile(c_int, alphas.size) + s_full @ X) / mr
        out = (F + b0).reshape(H.size, alphas.size, v).transpose(1, 0, 2)
        return out, inv_norm


def _refit_fold(engine, H, p, E, alphas):
    """Predictions for H from a model refitted without rows H[p] and basis E."""
    from ..solvers import factorize_sparse_rls

    fac = engine.fac
    m, n = fac.n_samples, fac.kernel_mean.size
    train = np.setdiff1d(np.arange(m), H[p])
    keep = np.setdiff1d(np.arange(n), E)
    out = np.empty((alphas.size, H.size, fac.z.shape[1]))
    if keep.size == 0:
        out[:] = engine.Y[train].mean(axis=0)
        return out
    refit = factorize_sparse_rls(
        engine._kernel_block(train, keep), engine._basis_kernel(keep), engine.Y[train], rcond=engine._rcond, warn=False
    )
    A, b = refit.coef(alphas)
    return np.einsum("hn,anv->ahv", engine._kernel_block(H, keep), A) + b[:, None, :]


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


def _cheapest_method(h, h_out, r, e, n_alphas, bandwidth=DEFAULT_BANDWIDTH):
    """Pick the hold-out algorithm with the smallest estimated time.

    Flop counts of each path (SYRK and SYR2K counted once per entry pair).
    Every path runs at about the matrix-multiply rate of one core since the
    refactorisation reduces to band form with BLAS-3 updates (it used to
    reduce to tridiagonal form with LAPACK ``dsytrd``, memory-bound and
    holding the GIL); checked on single-threaded OpenBLAS at r = 500-2500,
    h = 500, 1 and 20 alphas (folds run one per core).
    """
    w = bandwidth
    rr = max(r - e, 0)  # size of the refactored system
    cost = {
        "h": n_alphas * (h * h_out * r + 2 * e * h * r + 2 * r * e * e + e * h * h_out + h_out**3 / 3) + 2 * e * r * h,
        "r": 2 * h_out * r * r + n_alphas * (2 * h * r + 4 * r**3 + 2 * r * e * e) + 2 * e * r * h,
        "refactor": 4 * r * e * h_out + 2 * r * e * e + h_out * rr**2 + 2 * e * rr**2 + (4 / 3) * rr**3
        + 3 * w * rr**2 + n_alphas * (2 * rr * w * w + 2 * h * r),
    }
    return min(cost, key=cost.get)
