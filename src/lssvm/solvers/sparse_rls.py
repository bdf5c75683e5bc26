"""Sparse regularised least squares with an unpenalised intercept, factorised
once for a whole path of regularisation values (the documentation's Mathematics page, §2).

The model is

    minimise over a (n), b (v):  ||Y - K_mn a - 1 b^T||^2 + alpha * tr(a^T K_BB a)

with ``K_mn = k(X, Z)`` (m x n) and ``K_BB = k(Z, Z)``.  Centring the kernel
columns separates the intercept exactly; the centred problem is diagonalised
by the generalised eigenproblem ``Kc^T Kc Q = K_BB Q Lambda`` with
``Q^T K_BB Q = I``, after which every alpha costs O(m n).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from .._threads import cholesky_threads, eigh_threads
from ..exceptions import warn_numerical
from .block_gram import gram_by_blocks, times_in_place
from .whitening import whiten_rows

__all__ = ["PathSolution", "SparseRLSFactorization", "LEVERAGE_TOL", "warn_tiny_leverage", "factorize_sparse_rls", "check_alphas", "basis_whitener", "whiten_rows"]


def check_alphas(alpha):
    """Validate regularisation values.

    Parameters
    ----------
    alpha : float or array-like of shape (A,)

    Returns
    -------
    alphas : ndarray of shape (A,)
    scalar : bool
        Whether ``alpha`` was a scalar (callers squeeze the alpha axis).

    Raises
    ------
    ValueError
        If any value is not a finite number > 0, or the array is empty or
        not 1-D.
    """
    scalar = np.ndim(alpha) == 0
    raw = np.asarray(alpha)
    if raw.dtype.kind not in "biuf" or raw.dtype.kind == "b":
        raise ValueError(f"alpha must be a number > 0 or a 1-D array of them; got {alpha!r}")
    alphas = np.atleast_1d(raw.astype(float))
    if alphas.ndim != 1 or alphas.size == 0:
        raise ValueError(f"alpha must be a number or a non-empty 1-D array; got shape {alphas.shape}")
    if not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError(
            f"alpha must be finite and > 0 (it is the ridge penalty; use a small value "
            f"such as 1e-8 for almost no regularisation); got {alpha!r}"
        )
    return alphas, scalar


@dataclass(frozen=True)
class PathSolution:
    """The solution of the sparse RLS problem for every alpha, in the
    eigenbasis of the whitened centred Gram matrix: what predicts, without
    the per-row arrays (a model trained block by block keeps only this).

    Attributes
    ----------
    V : ndarray of shape (r, r)
        Eigenvectors of the whitened Gram matrix ``Phi^T Phi``.
    whitener : ndarray
        ``L`` (n x n, lower Cholesky factor of K_BB, ``W = L^-T``) when
        ``method == "cholesky"``, else ``W`` itself (n x r).
    eigenvalues : ndarray of shape (r,)
        ``Lambda``, non-negative.
    z : ndarray of shape (r, v)
        ``M^T Yc``.
    y_mean : ndarray of shape (v,)
    kernel_mean : ndarray of shape (n,)
        Column means ``mu`` of ``K_mn``.
    method : str
        ``"cholesky"`` or ``"eigh"`` (range of K_BB, used when K_BB is
        numerically singular).
    n_samples : int
        Number of training rows m.
    """

    V: np.ndarray
    whitener: np.ndarray
    eigenvalues: np.ndarray
    z: np.ndarray
    y_mean: np.ndarray
    kernel_mean: np.ndarray
    method: str
    n_samples: int

    @property
    def rank(self) -> int:
        return self.V.shape[1]

    def whiten_back(self, B):
        """``W B`` for an r x k matrix ``B``: from the eigenbasis to basis-point
        coefficients; O(n^2 k)."""
        if self.method == "cholesky":
            return linalg.solve_triangular(self.whitener, B, lower=True, trans="T", check_finite=False)
        return self.whitener @ B

    @cached_property
    def Q(self):
        """Generalised eigenvectors ``Q = W V`` (n x r), ``Q^T K_BB Q = I``,
        ``Kc^T Kc Q = K_BB Q Lambda``; formed on first use, O(n^3)."""
        return np.ascontiguousarray(self.whiten_back(self.V))

    def _inv_shift(self, alphas):
        return 1.0 / (self.eigenvalues[:, None] + alphas[None, :])  # (r, A)

    def _eigen_coef(self, alphas):
        """Coefficients ``c = (Lambda + alpha)^-1 z`` in the eigenbasis, (r, A, v); ``a = Q c``."""
        return self._inv_shift(alphas)[:, :, None] * self.z[:, None, :]

    def coef(self, alpha):
        """Dual coefficients and intercept.

        Parameters
        ----------
        alpha : float or array-like of shape (A,)

        Returns
        -------
        a : ndarray of shape (n, v) or (A, n, v)
        b : ndarray of shape (v,) or (A, v)

        Notes
        -----
        ``a = W V (Lambda + alpha)^-1 z``, ``b = mean(y) - mu^T a``; O(n^2 v)
        per alpha.
        """
        alphas, scalar = check_alphas(alpha)
        C = self._eigen_coef(alphas)  # (r, A, v)
        r, A, v = C.shape
        VC = (self.V @ C.reshape(r, A * v))
        a = self.whiten_back(VC).reshape(-1, A, v).transpose(1, 0, 2)
        b = self.y_mean[None, :] - np.einsum("n,anv->av", self.kernel_mean, a)
        return (a[0], b[0]) if scalar else (a, b)

    def loo_rows(self, M, Yc, alphas, per_alpha=False, y_scale=None):
        """Leave-one-out residuals of some training rows.

        Parameters
        ----------
        M : ndarray of shape (b, r)
            The rows' centred kernel rows in the eigenbasis, ``(k - mu) W V``.
        Yc : ndarray of shape (b, v)
            Their centred targets.
        alphas : ndarray of shape (A,)
        per_alpha : bool, default=False
        y_scale : ndarray of shape (v,), optional
            The targets' scale for the rounding guard (:meth:`rounding_guard`); default
            :meth:`target_rms`: over all training rows for a :class:`SparseRLSFactorization`, so
            that which rows are flagged does not depend on the blocks the rows come in.

        Returns
        -------
        R : ndarray of shape (A, b, v)
        tiny_rows : ndarray of int
            Positions (into these b rows) whose hat-matrix diagonal is within
            ``LEVERAGE_TOL`` (1e-8) of 1, or whose residual's estimated
            relative error passes ``LOO_RTOL``, for some alpha: their residuals are unreliable, and
            inf or NaN where ``h_ii`` rounds to 1.
        bad_alphas : ndarray of bool of shape (A,)
            With ``per_alpha=True`` only: the alphas at which some row is.

        Notes
        -----
        ``(y_i - f(x_i)) / (1 - h_ii)`` with ``h_ii = 1/m + sum_j M_ij^2 /
        (lambda_j + alpha)``; O(b r (A v + A)).
        """
        C = self._eigen_coef(alphas)  # (r, A, v)
        r, A, v = C.shape
        D = self._inv_shift(alphas)  # (r, A)
        E = Yc[:, None, :] - (M @ C.reshape(r, A * v)).reshape(-1, A, v)
        denom = (1.0 - 1.0 / self.n_samples) - (M * M) @ D  # (b, A)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # said by warn_tiny_leverage
            R = E / denom[:, :, None]
        if y_scale is None:
            y_scale = self.target_rms(Yc)
        unreliable, bad_alphas = self.rounding_guard(M, R, denom, D, y_scale)
        bad_alphas |= (denom <= LEVERAGE_TOL).any(axis=0)
        tiny_rows = np.flatnonzero((denom <= LEVERAGE_TOL).any(axis=1) | unreliable)
        return (R.transpose(1, 0, 2), tiny_rows, bad_alphas) if per_alpha else (R.transpose(1, 0, 2), tiny_rows)

    def target_rms(self, Yc):
        """Each target's root mean square, the scale of :meth:`rounding_guard`: here of the rows
        ``Yc`` (b, v) given, since a :class:`PathSolution` keeps no targets (a fit by row blocks
        measures against its block's); a :class:`SparseRLSFactorization` gives that of all m rows.
        O(b v), without overflow; ones where there is no row."""
        return _rms(Yc)

    def rounding_guard(self, M, R, denom, D, y_scale):
        """Rows whose leave-one-out residual has an estimated relative error above ``LOO_RTOL``.

        Parameters
        ----------
        M : ndarray of shape (b, r)
            The rows in the eigenbasis (only the rows whose cheap bound trips are read again).
        R : ndarray of shape (b, A, v)
            Their LOO residuals (any strides: a transposed view is read as is).
        denom : ndarray of shape (b, A)
            ``1 - h_ii``.
        D : ndarray of shape (r, A)
            ``1 / (lambda_j + alpha)``.
        y_scale : ndarray of shape (v,)
            Each target's scale (its RMS over all training rows): the error is measured against
            ``max(|R_i|, y_scale)``.

        Returns
        -------
        unreliable : ndarray of bool of shape (b,)
        bad_alphas : ndarray of bool of shape (A,)
            The alphas at which some row is unreliable.

        Notes
        -----
        Eigenvalue rounding (``eps lambda_max``) moves the fit by ``sum_j |M_ij z_j| D_j^2`` and
        ``h_ii`` by ``sum_j M_ij^2 D_j^2`` per unit, over ``1 - h_ii``.  Each row's verdict reads only
        that row and global scalars, so it does not depend on how the rows are split into blocks.
        The exact estimate costs as much as the residuals, so only rows where a free bound trips get it:
        ``sum_j M_ij^2 D_j^2 <= max_j D_j (h_ii - 1/m)`` and, by Cauchy-Schwarz, ``sum_j |M_ij z_j| D_j^2 <=
        sqrt(max_j D_j (h_ii - 1/m) sum_j z_j^2 D_j^2)``.  O(b A v) element-wise, plus O(s r A v) for
        the s rows whose bound trips.
        """
        b, A, v = R.shape
        unreliable, bad_alphas = np.zeros(b, dtype=bool), np.zeros(A, dtype=bool)
        if b == 0:
            return unreliable, bad_alphas
        scale = _EPS * max(float(self.eigenvalues.max(initial=0.0)), 0.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            absR = np.abs(R)
            limit = np.maximum(absR, y_scale)
            limit *= LOO_RTOL  # (b, A, v)
            D2 = D * D
            H = np.maximum(1.0 - 1.0 / self.n_samples - denom, 0.0)
            H *= D.max(axis=0, initial=0.0)  # >= sum_j M_ij^2 D_j^2, (b, A)
            over_denom = scale / np.abs(denom)  # (b, A)
            Sz = D2.T @ (self.z * self.z)  # (A, v)
            bound = np.sqrt(H[:, :, None] * Sz[None])
            bound += absR * H[:, :, None]
            bound *= over_denom[:, :, None]
            trips = (bound > limit) | np.isnan(bound)  # NaN: overflowed
            rows = np.flatnonzero(trips.reshape(b, -1).any(axis=1))
            if rows.size:
                Ms = M[rows]
                r = Ms.shape[1]
                dF = (np.abs(Ms) @ (np.abs(self.z)[:, None, :] * D2[:, :, None]).reshape(r, -1)).reshape(rows.size, A, v)
                err = (dF + absR[rows] * ((Ms * Ms) @ D2)[:, :, None]) * over_denom[rows][:, :, None]
                over = (err > limit[rows]) | np.isnan(err)
                unreliable[rows] = over.any(axis=(1, 2))
                bad_alphas |= over.any(axis=(0, 2))
        return unreliable, bad_alphas


#: ``1 - h_ii`` at or below this makes a leave-one-out residual unreliable:
#: ``1 - h_ii`` is formed with an absolute rounding error of a few eps, so
#: the residual ``e_i / (1 - h_ii)`` carries a relative error of about
#: ``eps / (1 - h_ii)``, 2e-8 here (at 1e-12, residuals 1e-4 off passed
#: silently).
LEVERAGE_TOL = 1e-8

#: Estimated relative error of a leave-one-out residual (from the rounding
#: of the eigenvalues, see :meth:`PathSolution.loo_rows`) above which it is
#: reported as unreliable.
LOO_RTOL = 1e-8
_EPS = np.finfo(float).eps


def warn_tiny_leverage(rows, n_rows=None, stacklevel=3, alphas=None):
    """Warn that the training ``rows`` have a hat-matrix diagonal within
    ``LEVERAGE_TOL`` of 1 (see :meth:`PathSolution.loo_rows`).

    Parameters
    ----------
    rows : array-like of int
        The rows (all of them, or the first few when ``n_rows`` is given).
    n_rows : int, optional
        How many rows there are in all (default ``len(rows)``).
    stacklevel : int
    alphas : array-like of float, optional
        Where known, the alphas concerned: the warning's ``.alphas`` (a search asks if it chose one).
    """
    rows = np.asarray(rows, dtype=np.int64)
    n_rows = rows.size if n_rows is None else int(n_rows)
    if n_rows == 0:
        return
    shown = ", ".join(str(int(i)) for i in rows[:10])
    more = f" and {n_rows - min(rows.size, 10)} more" if n_rows > min(rows.size, 10) else ""
    warn_numerical(f"leave-one-out: the hat-matrix diagonal of training row(s) {shown}{more} is within "
        f"{LEVERAGE_TOL:g} of 1, or their residual's estimated relative error passes {LOO_RTOL:g}, for some "
        "alpha: these rows are fitted almost exactly or lambda_max / alpha is too large, and their "
        "leave-one-out residuals are unreliable (inf or NaN where h_ii rounds to 1); increase alpha, "
        "or check these rows for duplicates of basis points with conflicting targets", stacklevel=stacklevel, alphas=alphas)


@dataclass(frozen=True)
class SparseRLSFactorization(PathSolution):
    """Everything needed to solve, predict on the training set and
    cross-validate for any alpha in O(m r) per alpha.

    Attributes
    ----------
    V, whitener, eigenvalues, z, y_mean, kernel_mean, method, n_samples
        As for :class:`PathSolution`.
    M : ndarray of shape (m, r)
        ``Kc Q``: the training kernel rows in the eigenbasis.
    y : ndarray of shape (m, v)
        The training targets as given (float64), held without a copy: the
        centred targets ``y - y_mean`` are formed on demand, by rows or
        by target columns (:meth:`centred_rows`, :meth:`centred_columns`),
        so that a fit of many targets holds no m x v array beyond ``Y``.
    block_grams : BlockGrams or None
        The Gram's shares of K contiguous row blocks (:mod:`lssvm.solvers.block_gram`), if asked for.
    """

    M: np.ndarray = None
    y: np.ndarray = None
    block_grams: object = None

    @property
    def y_centered(self):
        """The centred targets ``y - y_mean``, (m, v): a fresh array on every call (O(m v) time and
        memory); the many-target paths read rows or target columns of it instead."""
        return self.y - self.y_mean

    def centred_rows(self, rows):
        """``y_centered[rows]`` without the m x v array: O(|rows| v)."""
        return self.y[rows] - self.y_mean

    def centred_columns(self, targets):
        """``y_centered[:, targets]`` (a slice or integer array) without the m x v array: O(m |targets|)."""
        return self.y[:, targets] - self.y_mean[targets]

    def centred_sum_squares(self):
        """``(y_centered ** 2).sum(axis=0)``, (v,), by batches of targets (each at most
        ``TARGET_BATCH_BYTES``): the same sums, no m x v temporary."""
        m, v = self.y.shape
        out = np.empty(v)
        for cols in target_batches(m, v):
            out[cols] = (self.centred_columns(cols) ** 2).sum(axis=0)
        return out

    def residuals(self, alpha):
        """Training residuals ``y - f(x)``, shape (m, v) or (A, m, v); O(m r v) per alpha."""
        alphas, scalar = check_alphas(alpha)
        E = self._residuals(alphas)
        return E[0] if scalar else E

    def _residuals(self, alphas):
        C = self._eigen_coef(alphas)
        r, A, v = C.shape
        F = (self.M @ C.reshape(r, A * v)).reshape(self.n_samples, A, v)
        return self.y_centered[None, :, :] - F.transpose(1, 0, 2)

    def hat_diag(self, alpha):
        """Diagonal of the hat matrix, shape (m,) or (A, m).

        Notes
        -----
        ``h_ii = 1/m + sum_j M_ij^2 / (lambda_j + alpha)`` (the 1/m is the
        intercept); O(m r) per alpha, the m x m hat matrix is never formed.
        """
        alphas, scalar = check_alphas(alpha)
        H = self._hat_diag(alphas)
        return H[0] if scalar else H

    def _hat_diag(self, alphas):
        return (1.0 / self.n_samples + (self.M * self.M) @ self._inv_shift(alphas)).T

    def target_rms(self, Yc=None):
        """Each target's root mean square over all m training rows, (v,): the scale of the rounding
        guard, the same whatever block of rows is checked (``Yc`` is ignored).  O(m v) once, by
        batches of targets; cached."""
        rms = self.__dict__.get("_target_rms")
        if rms is None:
            m, v = self.n_samples, self.z.shape[1]
            rms = np.empty(v)
            for cols in target_batches(m, v):
                rms[cols] = _rms(self.centred_columns(cols))
            object.__setattr__(self, "_target_rms", rms)  # frozen dataclass: a cache, as cached_property
        return rms

    def loo_residuals(self, alpha):
        """Exact leave-one-out residuals ``y_i - f_{-i}(x_i)``.

        Parameters
        ----------
        alpha : float or array-like of shape (A,)

        Returns
        -------
        ndarray of shape (m, v) or (A, m, v)

        Notes
        -----
        ``e_i / (1 - h_ii)`` (Cawley & Talbot 2004, §2.6 and App. A.4; Pahikkala et al. 2012, §4):
        O(m r v) per alpha after the factorisation.  The basis stays fixed:
        a left-out point that is a basis point remains a basis function.  One pass over ``M`` in
        cache-sized row blocks gives the fitted values and the hat diagonal together (memory traffic,
        not flops, bounds it; the blocks' squares go to one reused buffer, whose pages stay mapped
        and cached: half the pass's time against a fresh temporary per block); the rounding guard
        (:meth:`rounding_guard`) then runs once over large chunks of rows, its verdict per row
        independent of the chunks.
        """
        alphas, scalar = check_alphas(alpha)
        m, r, A, v = self.n_samples, self.rank, alphas.size, self.z.shape[1]
        R = np.empty((A, m, v))
        denom = np.empty((m, A))
        C = self._eigen_coef(alphas).reshape(r, A * v)
        D = self._inv_shift(alphas)  # (r, A)
        # 256 KiB of M per block: the block and its squares stay in a 1 MiB L2 (1 MiB blocks: 10-25 % slower)
        step = max(1, (1 << 18) // (8 * max(r, 1)))
        squares = np.empty((min(step, m), r))  # reused: a fresh block per step costs as much as the products
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # said by warn_tiny_leverage
            for lo in range(0, m, step):
                rows = slice(lo, lo + step)
                Mb = self.M[rows]
                E = self.centred_rows(rows)[:, None, :] - (Mb @ C).reshape(-1, A, v)
                Sb = np.multiply(Mb, Mb, out=squares[:Mb.shape[0]])
                d = np.subtract(1.0 - 1.0 / m, Sb @ D, out=denom[rows])
                np.divide(E, d[:, :, None], out=R[:, rows].transpose(1, 0, 2))
        y_scale = self.target_rms()
        unreliable = np.zeros(m, dtype=bool)
        bad = (denom <= LEVERAGE_TOL).any(axis=0)
        chunk = max(1, _GUARD_CHUNK // (A * v))  # elements per temporary of the guard
        for lo in range(0, m, chunk):
            rows = slice(lo, lo + chunk)
            flagged, b = self.rounding_guard(self.M[rows], R[:, rows].transpose(1, 0, 2), denom[rows], D, y_scale)
            unreliable[rows] = flagged
            bad |= b
        warn_tiny_leverage(np.flatnonzero((denom <= LEVERAGE_TOL).any(axis=1) | unreliable), alphas=alphas[bad])
        return R[0] if scalar else R


#: Elements of each temporary of the rounding guard in :meth:`SparseRLSFactorization.loo_residuals`.
_GUARD_CHUNK = 1 << 18


def factorize_sparse_rls(K_mn, K_BB, Y, *, rcond: float = 1e-10, overwrite_k: bool = False, warn: bool = True,
                         fold_blocks: int = 0, whitener=None):
    """Factorise the sparse RLS problem once for all alphas.

    Parameters
    ----------
    K_mn : ndarray of shape (m, n)
        Kernel between the training points and the basis.
    K_BB : ndarray of shape (n, n)
        Kernel between basis points.
    Y : ndarray of shape (m, v)
        Targets (2-D).
    rcond : float, default=1e-10
        If the reciprocal condition number of ``K_BB`` (LAPACK estimate) is
        below ``rcond``, the problem is solved on the range of ``K_BB``:
        eigen-directions with eigenvalue <= rcond * max are dropped and a
        :class:`~lssvm.exceptions.NumericalWarning` says how many.
    overwrite_k : bool, default=False
        Centre ``K_mn`` in place (saves one m x n copy).
    warn : bool, default=True
        Issue the ``NumericalWarning`` about a singular ``K_BB``.
    fold_blocks : int, default=0
        Keep the Gram's shares of this many contiguous row blocks (CV+ on them needs no SYRK per fold);
        if kept, ``M`` is formed in the buffer of ``Phi`` (``K_mn``'s with ``overwrite_k``: not reused after).
    whitener : ndarray of shape (n, k), optional
        A given feature map ``W`` of the basis (``Phi = Kc W``) in place of
        :func:`basis_whitener`'s: for example the rank-k Nyström map
        ``U_k S_k^-1/2`` (:func:`lssvm.solvers.nystrom_projection`), which
        makes this the Nyström LS-SVM's ridge on its k features
        (the documentation's Mathematics page, §6).  ``K_BB`` then only
        sets the shapes.

    Returns
    -------
    SparseRLSFactorization

    Raises
    ------
    ValueError
        If the shapes do not match (``K_mn`` (m, n), ``K_BB`` (n, n), ``Y``
        (m, v)), there is no row, basis column or output, or ``K_mn``,
        ``K_BB`` or ``Y`` holds NaN or infinity.

    Notes
    -----
    With a whitening ``W`` of the basis metric (``W = L^-T`` from the
    Cholesky factor ``K_BB = L L^T``, or ``U S^-1/2`` on the range of K_BB),
    the problem becomes ridge regression on ``Phi = Kc W``:
    ``Phi^T Phi = V Lambda V^T``, ``Q = W V``, ``M = Phi V``.  Whitening the
    m x n kernel rows *before* forming the n x n Gram matrix, rather than
    reducing ``Kc^T Kc`` by ``L`` afterwards, keeps rounding at eps
    ``||Phi||^2`` instead of eps ``||Kc||^2 / lambda_min(K_BB)``: orders of
    magnitude more accurate on the ill-conditioned bases RBF kernels give.

    Flops (float64): centring O(m n); whitening m n^2 (triangular solve);
    ``Phi^T Phi`` m n^2 (SYRK); Cholesky n^3/3; divide-and-conquer eigh about
    4 n^3 (half of it memory-bound tridiagonalisation); ``M`` 2 m n^2.
    ``Q = W V`` (n^3) is only formed if asked for; ``z`` 2 m n v.  Memory: ``Kc`` is
    whitened in place; ``Y`` is held, not copied, and its centred columns are
    formed by batches of targets (at most ``TARGET_BATCH_BYTES`` each); peak two m x n arrays
    (``Phi`` and ``M``; one with ``fold_blocks``), ``M`` afterwards.
    """
    K_mn = np.asarray(K_mn, dtype=float)
    Y = np.asarray(Y, dtype=float)
    K_BB = np.asarray(K_BB, dtype=float)
    if K_mn.ndim != 2 or Y.ndim != 2 or Y.shape[0] != K_mn.shape[0] or K_BB.shape != (K_mn.shape[1],) * 2:
        raise ValueError(
            "expected K_mn (m, n), K_BB (n, n) and 2-D Y (m, v); got shapes "
            f"{K_mn.shape}, {K_BB.shape} and {Y.shape}"
        )
    if 0 in K_mn.shape or Y.shape[1] == 0:
        raise ValueError(
            "factorize_sparse_rls needs at least one training row, one basis point and one output; "
            f"got K_mn of shape {K_mn.shape} and Y of shape {Y.shape}"
        )
    hint = "check the inputs for NaN or infinity, and scale them if the kernel values overflow"
    for name, A, what in (("K_mn", K_mn, hint), ("K_BB", K_BB, hint), ("Y", Y, "remove or impute those targets")):
        if not _all_finite(A):
            raise ValueError(f"{name} contains NaN or infinity; {what}")
    mu = K_mn.mean(axis=0)
    Kc = K_mn if overwrite_k else K_mn.copy()
    Kc -= mu
    y_mean = Y.mean(axis=0)
    v = Y.shape[1]
    # the Gram's block shares hold K x n x v cross products (and one copy of the targets while formed):
    # kept only while they are small, so that many targets hold nothing of size m x v or K x n x v
    if fold_blocks and 8 * fold_blocks * (K_mn.shape[1] + 1) * v > FOLD_BLOCKS_BYTES:
        fold_blocks = 0
    if whitener is None:
        Phi, W, method = _whiten(Kc, K_BB, rcond, warn)
    else:
        W = np.asarray(whitener, dtype=float)
        if W.ndim != 2 or W.shape[0] != K_BB.shape[0] or W.shape[1] == 0:
            raise ValueError(f"expected a whitener of shape (n, k) with n = {K_BB.shape[0]}, k >= 1; got {W.shape}")
        Phi, method = whiten_rows(Kc, W, "eigh"), "eigh"
    del Kc
    G, blocks = gram_by_blocks(Phi, Y - y_mean if fold_blocks else None, fold_blocks)
    with eigh_threads(G.shape[0]):  # memory-bound tridiagonalisation: one thread when small
        lam, V = linalg.eigh(G, driver="evd", check_finite=False)
    del G
    M = times_in_place(Phi, V) if blocks is not None else Phi @ V  # over Phi: no fresh pages (fold_blocks)
    del Phi
    if blocks is None:  # z = M^T Yc by batches of targets: the centred targets are never all formed
        z = np.empty((M.shape[1], v))
        for cols in target_batches(M.shape[0], v):
            np.matmul(M.T, Y[:, cols] - y_mean[cols], out=z[:, cols])
    else:
        z = V.T @ blocks.cross.sum(axis=0)  # M^T Yc = V^T Phi^T Yc
    return SparseRLSFactorization(
        V=V,
        whitener=W,
        eigenvalues=np.maximum(lam, 0.0),
        M=M,
        z=z,
        y_mean=y_mean,
        y=Y,
        kernel_mean=mu,
        method=method,
        n_samples=K_mn.shape[0],
        block_grams=blocks,
    )


#: Most bytes of the centred targets formed at once for one batch of targets (:func:`target_batches`).
TARGET_BATCH_BYTES = 1 << 26
#: Most bytes of the Gram's block shares' cross products (K x n x v) that a factorisation keeps.
FOLD_BLOCKS_BYTES = 1 << 27


def target_batches(n_rows, n_targets, batch_bytes=None):
    """Slices of consecutive targets whose ``n_rows`` x |batch| float64 arrays take at most
    ``batch_bytes`` (default ``TARGET_BATCH_BYTES``, 64 MiB), at least one target each."""
    size = max(1, (TARGET_BATCH_BYTES if batch_bytes is None else batch_bytes) // (8 * max(n_rows, 1)))
    return [slice(lo, min(lo + size, n_targets)) for lo in range(0, n_targets, size)]


def _rms(Yc):
    """Root mean square of each column of ``Yc`` (b, v), scaled by its largest magnitude so that
    it does not overflow; ones for no row."""
    if Yc.shape[0] == 0:
        return np.ones(Yc.shape[1])
    big = np.maximum(np.abs(Yc).max(axis=0), np.finfo(float).tiny)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.sqrt(np.mean((Yc / big) ** 2, axis=0)) * big


def _all_finite(A):
    """Whether every entry of the float array ``A`` is finite: one summation,
    no m x n temporary (an element-wise check only if the sum is not finite,
    which also happens when finite values overflow it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(A)):
            return True
    return bool(np.all(np.isfinite(A)))


def _whiten(Kc, K_BB, rcond, warn=True):
    """``Phi = Kc W`` with ``W^T K_BB W = I`` (on the range of K_BB).

    Returns ``Phi`` (m x r; overwrites ``Kc`` on the Cholesky path), the
    whitener and the method name (see :func:`basis_whitener`).
    """
    W, method = basis_whitener(K_BB, rcond, warn, stacklevel=4)
    return whiten_rows(Kc, W, method, overwrite=True), W, method


def basis_whitener(K_BB, rcond=1e-10, warn=True, *, stacklevel=3):
    """A whitening of the basis metric, ``W^T K_BB W = I`` on its range.

    Parameters
    ----------
    K_BB : ndarray of shape (n, n)
    rcond : float
    warn : bool
        Issue a :class:`~lssvm.exceptions.NumericalWarning` when ``K_BB`` is
        numerically singular.

    Returns
    -------
    whitener : ndarray
        ``L`` (n x n, lower Cholesky factor, ``W = L^-T``) when K_BB is well
        conditioned (LAPACK condition estimate above ``rcond``); otherwise
        ``W = U S^-1/2`` (n x r) from the eigendecomposition of K_BB with
        eigenvalues below ``rcond`` times the largest dropped (the ``W_k^+``
        of Ding & Liao 2012).
    method : {"cholesky", "eigh"}

    Notes
    -----
    O(n^3): Cholesky n^3/3, or eigh about 4 n^3 on the singular path.
    """
    n = K_BB.shape[0]
    try:
        with cholesky_threads(n):  # one thread: 4 ms at n = 700, where two took ~80 ms
            L = linalg.cholesky(K_BB, lower=True, check_finite=False)
            est, info = lapack.dpocon(L, np.abs(K_BB).sum(axis=0).max(), uplo="L")
        ok = info == 0 and est > rcond
    except linalg.LinAlgError:
        ok = False
    if ok:
        return L, "cholesky"
    with eigh_threads(n):
        s, U = linalg.eigh(K_BB, check_finite=False)
    keep = s > rcond * s.max()
    if warn and keep.sum() < n:
        warn_numerical(f"the basis kernel matrix K_BB is numerically singular (rank {int(keep.sum())} "
            f"of {n} at rcond={rcond:g}); the model is fitted on its range, which drops "
            f"{n - int(keep.sum())} redundant direction(s). Fewer or more distinct basis "
            "points, or a narrower kernel, avoid this.", stacklevel=stacklevel)
    return U[:, keep] / np.sqrt(s[keep]), "eigh"
