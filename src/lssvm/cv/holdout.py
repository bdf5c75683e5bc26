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

Two algorithms
--------------
The engine solves each fold by one of two paths, one named dataclass each:

* :class:`HSidePath`: the h x h system ``(I - U)^-1 r`` of Pahikkala et al.
  2012, Prop. 1 (removal of basis points a Schur complement of ``P^-1``),
  O(h^2 r + h^3) per alpha.  Cheapest for small hold-out sets.
* :class:`BandPath`: the fold's own normal matrix in the training
  eigenbasis, reduced once to band form and solved per alpha by the shared
  fold solver (:func:`lssvm.cv.fold_solver.solve_fold_path`, the same one the
  Dask route uses), about 4/3 r^3 once and O(r w^2) per alpha.  Cheapest for
  large hold-out sets or many alphas.

With many alphas x targets and no more remaining rows than basis
directions (every row in the basis), :meth:`HoldoutEngine.sums` and
:meth:`HoldoutEngine.predict` solve the fold from its own kernel matrix
instead (:class:`lssvm.cv.fold_kernel.FoldKernelPath`): the band path's
centred normal matrix then has a null direction, taken over by the
intercept, that costs digits at small alphas.

A third, the push-through ("r-side") identity on ``B = [M_H, 1]``, was
dropped: timed against both (``benchmarks/holdout_paths.py``,
``docs/benchmarks.md``) it was the fastest only at ranks of a few tens,
where every path takes a millisecond or less.

Each path returns the predictions for all alphas and an estimate of their
relative error; :class:`HoldoutEngine` refits the folds
whose estimate passes ``GUARD_RTOL``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ..exceptions import warn_numerical
from ..solvers import SparseRLSFactorization, check_alphas
from ..solvers.shifted_band import DEFAULT_BANDWIDTH, BlockReflector
from ..solvers.sparse_rls import target_batches
from .fold_kernel import FoldKernelPath, fold_kernel_applies
from .fold_side import BandKernelSide
from .fold_solver import EPS, GUARD_RTOL, solve_fold_path, stable_fold_predictions, warn_inaccurate

__all__ = ["BASIS_IN_HOLDOUT", "BandKernelSide", "BandPath", "FoldProblem", "HSidePath", "HoldoutEngine", "PATHS", "check_indices",
           "cheapest_path"]

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
        held = getattr(fac, "y", None)  # targets held uncentred: rows centred on demand, no m x v copy
        self._rows = TargetRows(fac.y_centered, fac.y_mean) if held is None else HeldTargetRows(held, fac.y_mean)

    @cached_property
    def Y(self):
        """Training targets (m, v), formed on first use: the engine's own paths
        read rows of them without this m x v copy (:class:`TargetRows`)."""
        return self.fac.y_centered + self.fac.y_mean

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

    def sums(self, test_indices, alphas, basis_in_holdout="remove", fold_cache=None):
        """Sums over ``test_indices`` of the squared hold-out residuals, (A, v).

        The values of ``((Y[H] - predict(H, alphas)) ** 2).sum(axis=1)``; on the
        band path with many alphas x targets without forming the A x h x v
        predictions (:meth:`lssvm.cv.holdout.BandPath.sums`), with the
        same error estimates, stable refits and warnings as :meth:`predict`.
        With alphas x targets at least ``_EIGEN_COLUMNS_PER_RANK`` times the
        rank that path is taken whatever :func:`cheapest_path` (which counts
        no per-target work) says: per alpha and target the h x h path costs
        ``h (r + 2 h)`` flops, the band path's eigen route ``h r'``.

        ``fold_cache``: a dict kept by the caller for this fold across calls
        for batches of targets of the same fit (engines of
        :func:`lssvm.solvers.loo_block.restrict_targets`): the first call
        stores the fold's target-independent part there (its normal matrix
        or kernel and their eigendecompositions, O(h r^2 + r^3)), later calls
        take the same path with it and pay only for their targets.
        """
        fac = self.fac
        H = check_indices(test_indices, fac.n_samples)
        alphas, _ = check_alphas(alphas)
        E = self.removed_points(H) if basis_in_holdout == "remove" else np.empty(0, dtype=np.intp)
        p = np.flatnonzero(self.row_to_basis[H] < 0) if basis_in_holdout == "train" else np.arange(H.size)
        Y_H = self._rows[H]
        cached = None if fold_cache is None else fold_cache.get((basis_in_holdout, H.size))
        fused = cached is not None or (
            basis_in_holdout in BASIS_IN_HOLDOUT and E.size < fac.whitener.shape[0]
            and not (E.size and fac.method != "cholesky")
            and (alphas.size * Y_H.shape[1] >= _EIGEN_COLUMNS_PER_RANK * fac.rank
                 or cheapest_path(H.size, p.size, fac.rank, E.size, alphas.size) == "refactor"))
        if not fused:  # predict() validates and says what is wrong
            F = self.predict(H, alphas, basis_in_holdout)
            F -= Y_H[None]
            return np.einsum("ahv,ahv->av", F, F)
        prob = FoldProblem(fac, self._rows, H, p, E)
        if cached is None:
            # with no more remaining rows than directions (every row in the basis), the fold's own kernel:
            # the primal's centred normal matrix then has a null direction that costs digits at small alphas
            # many alphas x targets: BandPath.sums takes the eigen route (r' <= rank), so BandPath.of forms
            # C's eigenbasis first and the right-hand side straight into it, as for later batches
            eigen_route = alphas.size * Y_H.shape[1] >= _EIGEN_COLUMNS_PER_RANK * fac.rank
            dual = eigen_route and fold_kernel_applies(fac.n_samples, p.size, fac.rank, E.size)
            path = FoldKernelPath.of(prob) if dual else BandPath.of(prob, eigen_route=eigen_route, Y_H=Y_H)
        elif isinstance(cached, BandKernelSide):
            path = BandPath.of(prob, cached, Y_H=Y_H)
        else:
            path = FoldKernelPath.of(prob, cached)
        sse, est = path.sums(alphas, Y_H)  # overwrites Y_H
        if fold_cache is not None and cached is None:
            side = path.side if isinstance(path, BandPath) else path.kernel_side()
            if side.nbytes <= _FOLD_CACHE_BYTES:
                fold_cache[(basis_in_holdout, H.size)] = side
        bad = ~(est <= GUARD_RTOL)
        if bad.any():
            F = self._guard(np.empty((alphas.size, H.size, Y_H.shape[1])), est, H, p, E, alphas)[bad]
            F -= self._rows[H][None]
            sse[bad] = np.einsum("ahv,ahv->av", F, F)
        return sse

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
        Two algorithms (module notes, Two algorithms): the h x h system
        ``I - U`` (O(h^2 r + h^3) per alpha, for small hold-out sets), or
        the fold's own normal matrix in the training eigenbasis reduced once
        to band form (O(h r^2 + r^3), then O(h r v + r w^2) per alpha, w =
        64 the half-bandwidth; the same fold solver as the Dask route); the
        cheaper by flop count is chosen.  ``_side`` ("h" or "refactor")
        forces one, for testing.

        Every path estimates its own relative error (see
        :mod:`lssvm.cv.fold_solver`); past ``GUARD_RTOL`` = 1e-8 the fold
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
            # many alphas x targets with every row in the basis: the fold's kernel, as in sums() (both other
            # paths then carry the centred null direction: Lambda_min = 0, or C's); not for small folds,
            # where its O(|R|^3) per fold would dominate (at most _KERNEL_PATH_FOLDS folds' worth of rows)
            if (alphas.size * fac.z.shape[1] >= _EIGEN_COLUMNS_PER_RANK * fac.rank
                    and H.size * _KERNEL_PATH_FOLDS >= m - p.size
                    and fold_kernel_applies(m, p.size, fac.rank, E.size)):
                out, est = FoldKernelPath.of(FoldProblem(fac, self._rows, H, p, E)).predict(alphas)
                out = self._guard(out, est, H, p, E, alphas)
                return out[0] if scalar else out
            _side = cheapest_path(H.size, p.size, fac.rank, E.size, alphas.size)
        elif _side not in PATHS:
            raise ValueError(f"_side must be one of {list(PATHS)} or None; got {_side!r}")
        out, est = PATHS[_side].of(FoldProblem(fac, self._rows, H, p, E)).predict(alphas)
        out = self._guard(out, est, H, p, E, alphas, _side)
        return out[0] if scalar else out

    def _guard(self, out, est, H, p, E, alphas, side=None):
        """Recompute the alphas whose estimated relative error ``est`` passes
        ``GUARD_RTOL`` (or is NaN): first by the other fast path (its error
        estimate has its own cause: ``cond(I - U)`` against the fold normal
        matrix's ``||(C + alpha I)^-1||``, so one often passes where the other
        fails, at O(h^2 r + h^3) or O(h r^2 + r^3) instead of the SVD's
        O((m - h) r^2)), then by the stable route (:mod:`lssvm.cv.fold_solver`);
        warn if that route's own estimate still passes it."""
        bad = ~(est <= GUARD_RTOL)
        if not bad.any():
            return out
        for other in PATHS:
            if other == side or side is None:
                continue
            idx = np.flatnonzero(bad)
            redo, redo_est = PATHS[other].of(FoldProblem(self.fac, self._rows, H, p, E)).predict(alphas[idx])
            ok = redo_est <= GUARD_RTOL
            out[idx[ok]] = redo[ok]
            bad[idx[ok]] = False
        if not bad.any():
            return out
        fixed, err = stable_fold_predictions(self.fac, self._rows, H, p, E, alphas[bad])
        out[bad] = fixed
        if (err > GUARD_RTOL).any():
            worst = int(np.argmax(err))
            warn_inaccurate("hold-out / k-fold predictions", err[worst], alphas[bad][worst], stacklevel=5)
        return out

    def _refit(self, H, p, E, alphas):
        return _refit_fold(self, H, p, E, alphas)

class TargetRows:
    """Rows of the training targets ``Yc + y_mean`` without forming all m x v
    of them: what the hold-out paths read (rows by index, column sums).

    Parameters
    ----------
    centered : ndarray of shape (m, v)
        The centred targets (held by the factorisation, not copied).
    mean : ndarray of shape (v,)
    """

    def __init__(self, centered, mean):
        self.centered, self.mean = centered, mean
        self._column_sums = None

    @property
    def shape(self):
        return self.centered.shape

    def __getitem__(self, rows):
        """``Y[rows]`` (a fresh array): O(|rows| v)."""
        return self.centered[rows] + self.mean

    def sum(self, axis=0):
        """Column sums ``sum_i Y_i`` (only ``axis=0``): O(m v) on the first call, no copy of the rows."""
        if axis != 0:
            raise ValueError("TargetRows sums over the rows only (axis=0)")
        if self._column_sums is None:  # once per engine: every fold of a k-fold pass reads them
            self._column_sums = self.centered.sum(axis=0) + self.centered.shape[0] * self.mean
        return self._column_sums.copy()


#: Bytes of the centred columns formed at once by :meth:`HeldTargetRows.sum` (once per fold).
_ROW_SUMS_BYTES = 1 << 22


class HeldTargetRows(TargetRows):
    """:class:`TargetRows` of targets held uncentred (``SparseRLSFactorization.y``): the same values
    (``(y - mean)[rows] + mean``), each row centred when read, so that no m x v array is formed
    but by :attr:`centered` (the fold kernel's path).

    Parameters
    ----------
    y : ndarray of shape (m, v)
        The targets as given (held, not copied).
    mean : ndarray of shape (v,)
    """

    def __init__(self, y, mean):
        self.y, self.mean = y, mean
        self._column_sums = None

    @property
    def shape(self):
        return self.y.shape

    @property
    def centered(self):
        """The centred targets (m, v): a fresh array."""
        return self.y - self.mean

    def __getitem__(self, rows):
        """``Y[rows]`` (a fresh array): O(|rows| v)."""
        out = self.y[rows] - self.mean
        out += self.mean
        return out

    def sum(self, axis=0):
        """Column sums ``sum_i Y_i`` (only ``axis=0``): O(m v) on the first call, by batches of targets."""
        if axis != 0:
            raise ValueError("TargetRows sums over the rows only (axis=0)")
        if self._column_sums is None:  # once per engine: every fold of a k-fold pass reads them
            m, v = self.y.shape
            out = np.empty(v)
            for cols in target_batches(m, v, _ROW_SUMS_BYTES):
                out[cols] = (self.y[:, cols] - self.mean[cols]).sum(axis=0)
            self._column_sums = out + m * self.mean
        return self._column_sums.copy()


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
    side : BandKernelSide, optional
        The target-independent part (``C``, the reflector, ``s``, and on
        first use the eigendecomposition of ``C`` with the query rows in its
        eigenbasis), shared by the batches of targets of one fold.
    G : ndarray of shape (r', v), optional
        The right-hand side in the eigenbasis of ``C``, formed directly where
        :attr:`side` already holds that eigenbasis, or where :meth:`of` was
        asked for the eigen route and formed it first (``rhs`` is then None:
        only :meth:`sums` is offered).
    """

    fac: SparseRLSFactorization
    H: np.ndarray
    C: np.ndarray | None
    rhs: np.ndarray
    reflector: BlockReflector | None
    s: np.ndarray
    c_int: np.ndarray
    n_train: int
    side: BandKernelSide | None = None
    G: np.ndarray | None = None

    @classmethod
    def of(cls, prob: FoldProblem, side: BandKernelSide | None = None, *, eigen_route=False,
           Y_H=None) -> BandPath:
        """Form the fold's normal matrix: O(h' r^2) SYRK, plus O(h r |E| +
        |E| r^2) for removed basis points; then its right-hand side, O(h' r v
        + r |E| v).  ``side``: the fold's target-independent part from an
        earlier batch of targets of the same fit (:attr:`side`), reused.

        ``eigen_route``: the caller takes :meth:`sums` by the eigen route (many
        alphas x targets): the eigendecomposition of ``C`` is then formed first
        and the right-hand side goes straight into its eigenbasis (2 r r' v +
        2 h' r' v flops, against 2 h' r v + 4 r |E| v + 2 r'^2 v through the
        reflector and the reduced coordinates); only :meth:`sums` is offered.
        ``Y_H``: the query rows' targets ``Y[H]`` where the caller has read
        them (not modified here), so that they are not read twice."""
        fac, Y, H, E = prob.fac, prob.Y, prob.H, prob.E
        Hp = H[prob.p]
        if side is None:
            side = BandKernelSide.of(fac, Hp, E)
        # read once, freed before the rank-one term: one h' x v array at a time
        Y_Hp = (Y_H if prob.p.size == H.size else Y_H[prob.p]) if Y_H is not None else Y[Hp]
        c_int = Y.sum(axis=0) - Y_Hp.sum(axis=0)  # (v,)
        if side.C is not None and side.eigen is None and eigen_route:
            cls(fac, H, side.C, None, side.reflector, side.s, c_int, side.n_train, side).eigen_kernel()
        if side.C is not None and side.eigen is not None:
            # a later batch of targets: the right-hand side straight into C's eigenbasis,
            # G = U_full^T z - (M_H' U_full)^T y_H' + (s^T U_full)^T c / n (2 r r' v + 2 h' r' v flops,
            # against 2 h' r v + 4 r |E| v + 2 r'^2 v through the reduced coordinates)
            _, _, P, sU, Ut = side.eigen
            G = Ut @ fac.z
            G -= (P if prob.p.size == H.size else P[prob.p]).T @ Y_Hp
            del Y_Hp
            G += np.outer(sU, c_int / side.n_train)
            return cls(fac, H, side.C, None, side.reflector, side.s, c_int, side.n_train, side, G)
        rhs = fac.M[Hp].T @ Y_Hp
        del Y_Hp
        np.subtract(fac.z, rhs, out=rhs)
        rhs += np.outer(side.s, c_int / side.n_train)
        if side.reflector is not None:
            rhs = side.reflector.apply(rhs, transpose=True)[side.reflector.R.shape[0]:]
        return cls(fac, H, side.C, rhs, side.reflector, side.s, c_int, side.n_train, side)

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
        v = Y_H.shape[1]
        eigen_known = self.side is not None and self.side.eigen is not None  # then the cheaper route for any v
        if self.C is not None and (eigen_known or alphas.size * v >= _EIGEN_COLUMNS_PER_RANK * self.C.shape[0]):
            return self._sums_by_eigen(alphas, Y_H)
        F, est = self.predict(alphas)
        F -= Y_H[None]
        return np.einsum("ahv,ahv->av", F, F), est

    def eigen_kernel(self):
        """``C = U diag(mu) U^T`` (about 9 r^3 flops), the query rows ``P = M_H U``
        (h r^2) and ``sU = s^T U`` (``U`` taken back to the full eigenbasis),
        once per fold: kept on :attr:`side` for later batches of targets.
        Returns ``(mu, U, P, sU)`` with ``U`` in the reduced coordinates of C; not to be modified."""
        side = self.side
        if side is not None and side.eigen is not None:
            return side.eigen[:4]
        mu, U = linalg.eigh(self.C, lower=True, check_finite=False, driver="evd")
        U_full = U
        if self.reflector is not None:  # back to the full eigenbasis: the removed directions stay zero
            k = self.reflector.R.shape[0]
            U_full = self.reflector.apply(np.vstack([np.zeros((k, U.shape[1])), U]))
        parts = (mu, U, self.fac.M[self.H] @ U_full, self.s @ U_full)
        if side is not None:  # with U_full^T, which takes later batches' right-hand sides into C's eigenbasis
            side.eigen = parts + (np.ascontiguousarray(U_full.T),)
        return parts

    def _eigen_parts(self):
        """The eigen route's parts (:meth:`eigen_kernel`) with the right-hand side in
        C's eigenbasis ``G = U^T rhs`` (r^2 v): ``(mu, G, P, sU)``, ``P`` a fresh array."""
        mu, U, P, sU = self.eigen_kernel()
        return mu, U.T @ self.rhs, P.copy(), sU

    def _sums_basis(self, P, sU):
        """The orthogonal split of the residuals in :meth:`_sums_by_eigen`, once per
        fold (kept on :attr:`side`): ``(Q, R)`` of ``P' = P + 1 sU / n``; ``Q`` None where
        h <= r' (one GEMM per alpha); ``Q`` square (h, h), the full QR, where h < 2 r'
        (its trailing columns span the part of the targets outside the range of ``P'``:
        2 h (h - r') flops per target against the projection's 4 h r'); else ``Q`` (h, r')."""
        side = self.side
        if side is not None and side.sums_basis is not None:
            return side.sums_basis
        P = P + sU / self.n_train
        h, rr = P.shape
        if h <= rr:
            basis = (None, P)
        else:
            Q, R = linalg.qr(P, mode="full" if h < 2 * rr else "economic", check_finite=False)
            basis = (Q, np.ascontiguousarray(R[:rr]))  # P' = Q R, R upper triangular
        if side is not None:
            side.sums_basis = basis
        return basis

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
        mu, U, P, sU = self.eigen_kernel()
        G = U.T @ self.rhs if self.G is None else self.G
        Q, R = self._sums_basis(P, sU)
        Y_H -= self.c_int / self.n_train
        h, v = Y_H.shape
        rr = mu.size
        tall, full = Q is not None, Q is not None and Q.shape[1] == h
        sse = np.empty((alphas.size, v))
        rows = rr if tall else h
        step = max(64, _SUMS_BLOCK_BYTES // (8 * max(h + rr, 1)))
        buf = np.empty(rows * min(step, v))
        scale = 1.0 / (mu[None, :] + alphas[:, None])  # (A, r'): one multiply per entry instead of a divide
        for lo in range(0, v, step):
            hi = min(lo + step, v)
            Gb, Yb = G[:, lo:hi], Y_H[:, lo:hi]
            Eb = buf[: rows * (hi - lo)].reshape(rows, hi - lo)  # contiguous, as TRMM in place needs
            if full:
                Bb = Q.T @ Yb  # (h, |T|): the first r' rows in the range of P', the rest outside it
                sse[:, lo:hi] = np.einsum("ht,ht->t", Bb[rr:], Bb[rr:])
                Yb = Bb[:rr]
            elif tall:
                Bb = Q.T @ Yb  # (r', |T|)
                Yb -= Q @ Bb  # the part of Y' outside the range of P'
                sse[:, lo:hi] = np.einsum("ht,ht->t", Yb, Yb)
                Yb = Bb
            else:
                sse[:, lo:hi] = 0.0
            for i in range(alphas.size):
                if tall:
                    np.multiply(Gb, scale[i][:, None], out=Eb)
                    # R Eb in place: Eb is C-ordered, so its transpose (F-ordered) times R^T from the right
                    blas.dtrmm(1.0, R, Eb.T, side=1, lower=0, trans_a=1, overwrite_b=1)
                else:
                    np.matmul(R, Gb * scale[i][:, None], out=Eb)
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


#: Most bytes of one fold's target-independent part that :meth:`HoldoutEngine.sums` keeps in a
#: ``fold_cache`` for later batches of targets (a larger one is recomputed per batch): at r = 500 and
#: h = 1,000 a band side takes about 6 MiB, at every one of 2,000 rows in the basis a fold kernel's 25 MiB.
_FOLD_CACHE_BYTES = 1 << 27


#: ``HoldoutEngine.predict`` takes the fold-kernel route for folds of at least 1 / this share of the
#: remaining rows (k-fold, grouped), not for folds of a few rows, whose h x h path is far cheaper.
_KERNEL_PATH_FOLDS = 32


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
