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

import numpy as np

from ..exceptions import warn_numerical
from ..solvers import SparseRLSFactorization, check_alphas
from .holdout_guard import GUARD_RTOL, stable_fold_predictions, warn_inaccurate
from .holdout_paths import PATHS, FoldProblem, cheapest_path

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
        Two algorithms (:mod:`lssvm.cv.holdout_paths`): the h x h system
        ``I - U`` (O(h^2 r + h^3) per alpha, for small hold-out sets), or
        the fold's own normal matrix in the training eigenbasis reduced once
        to band form (O(h r^2 + r^3), then O(h r v + r w^2) per alpha, w =
        64 the half-bandwidth; the same fold solver as the Dask route); the
        cheaper by flop count is chosen.  ``_side`` ("h" or "refactor")
        forces one, for testing.

        Every path estimates its own relative error (see
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

        if E.size and fac.method != "cholesky":
            # On the range of a numerically singular K_BB, "without these basis
            # points" is a different truncation than the training one: refit.
            warn_numerical("K_BB is numerically singular (the model lives on its range): hold-out with "
                "basis points removed refits the fold on the remaining basis, O(m n^2) per fold", stacklevel=3)
            out = self._refit(H, p, E, alphas)
            return out[0] if scalar else out
        if _side is None:
            _side = cheapest_path(H.size, p.size, fac.rank, E.size, alphas.size)
        elif _side not in PATHS:
            raise ValueError(f"_side must be one of {list(PATHS)} or None; got {_side!r}")
        out, est = PATHS[_side].of(FoldProblem(fac, self.Y, H, p, E)).predict(alphas)
        out = self._guard(out, est, H, p, E, alphas, _side)
        return out[0] if scalar else out

    def _guard(self, out, est, H, p, E, alphas, side=None):
        """Recompute the alphas whose estimated relative error ``est`` passes
        ``GUARD_RTOL`` (or is NaN): first by the other fast path (its error
        estimate has its own cause: ``cond(I - U)`` against the fold normal
        matrix's ``||(C + alpha I)^-1||``, so one often passes where the other
        fails, at O(h^2 r + h^3) or O(h r^2 + r^3) instead of the SVD's
        O((m - h) r^2)), then by the stable route (:mod:`.holdout_guard`);
        warn if that route's own estimate still passes it."""
        bad = ~(est <= GUARD_RTOL)
        if not bad.any():
            return out
        for other in PATHS:
            if other == side or side is None:
                continue
            idx = np.flatnonzero(bad)
            redo, redo_est = PATHS[other].of(FoldProblem(self.fac, self.Y, H, p, E)).predict(alphas[idx])
            ok = redo_est <= GUARD_RTOL
            out[idx[ok]] = redo[ok]
            bad[idx[ok]] = False
        if not bad.any():
            return out
        fixed, err = stable_fold_predictions(self.fac, self.Y, H, p, E, alphas[bad])
        out[bad] = fixed
        if (err > GUARD_RTOL).any():
            worst = int(np.argmax(err))
            warn_inaccurate("hold-out / k-fold predictions", err[worst], alphas[bad][worst], stacklevel=5)
        return out

    def _refit(self, H, p, E, alphas):
        return _refit_fold(self, H, p, E, alphas)

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
