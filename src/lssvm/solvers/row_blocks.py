"""The sparse RLS path from sums over row blocks (map-reduce).

Training the sparse model needs only n x n sums over the rows: with a
whitening ``W`` of the basis metric (fixed by the basis alone, before any
data is seen) every row contributes its whitened kernel row
``psi = (k(x, Z) - c) W`` (r values, ``c`` a fixed shift), and the path
solution is the eigendecomposition of the centred sum of ``psi psi^T``.
So a pass over row blocks computes per-block moments, they merge exactly,
and the reduced problem is solved in O(n^3); leave-one-out residuals then
need a second pass of per-row work.  This module is the NumPy arithmetic of
those passes; :mod:`lssvm.backends.dask` schedules them over the blocks of
a Dask array (or anything else that maps a function over row blocks and
reduces with ``+``).

Moments are merged with the pairwise update of Chan, Golub and LeVeque
(each block is centred by its own mean), so no sum of squares about zero
is ever formed: the rounding is that of centring with the exact mean, as
in the in-memory :func:`lssvm.solvers.factorize_sparse_rls`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .._labels import LabelCoder
from .._threads import serial_region
from .sparse_rls import PathSolution, basis_whitener

__all__ = ["RowMoments", "BlockContext", "block_moments", "block_loo", "block_rows_in_eigenbasis", "code_targets",
           "solution_from_moments", "merge_moments", "merge_sums", "check_block", "whitened_rows", "misclassified",
           "SUB_ROWS"]

#: Rows whitened at once inside a block: bounds a task's memory at about
#: ``SUB_ROWS * n_basis`` float64 values (twice that at the peak).
SUB_ROWS = 8192


@dataclass(frozen=True)
class RowMoments:
    """Count, means and centred co-moments of whitened kernel rows and targets
    over a set of rows; ``+`` merges two disjoint sets exactly.

    Attributes
    ----------
    count : int
    psi_mean : ndarray of shape (r,)
    k_mean : ndarray of shape (n,)
        Mean of the raw kernel rows ``k(x, Z)``.
    y_mean : ndarray of shape (v,)
    psi_cov : ndarray of shape (r, r)
        ``sum (psi - psi_mean)(psi - psi_mean)^T``.
    psi_y : ndarray of shape (r, v)
        ``sum (psi - psi_mean)(y - y_mean)^T``.
    """

    count: int
    psi_mean: np.ndarray
    k_mean: np.ndarray
    y_mean: np.ndarray
    psi_cov: np.ndarray
    psi_y: np.ndarray

    @classmethod
    def of_rows(cls, psi, k_mean, Y):
        """Moments of rows with whitened kernel rows ``psi`` (b, r), raw kernel
        row mean ``k_mean`` (n,) and targets ``Y`` (b, v); O(b r^2) (SYRK)."""
        b = psi.shape[0]
        pm = psi.mean(axis=0)
        ym = Y.mean(axis=0)
        P = psi - pm
        Yc = Y - ym
        return cls(b, pm, k_mean, ym, P.T @ P, P.T @ Yc)

    def __add__(self, other):
        if other.count == 0:
            return self
        if self.count == 0:
            return other
        na, nb = self.count, other.count
        n = na + nb
        wa, wb = na / n, nb / n
        dp = other.psi_mean - self.psi_mean
        dy = other.y_mean - self.y_mean
        f = na * nb / n
        return RowMoments(
            n,
            self.psi_mean + wb * dp,
            wa * self.k_mean + wb * other.k_mean,
            self.y_mean + wb * dy,
            self.psi_cov + other.psi_cov + f * np.outer(dp, dp),
            self.psi_y + other.psi_y + f * np.outer(dp, dy),
        )

    @classmethod
    def empty(cls, r, n, v):
        z = np.zeros
        return cls(0, z(r), z(n), z(v), z((r, r)), z((r, v)))


@dataclass(frozen=True)
class BlockContext:
    """What every row-block task needs: the basis, kernel, whitening and shift.

    Attributes
    ----------
    basis : ndarray of shape (n, d)
    kernel : lssvm.kernels.Kernel
    whitener : ndarray
        ``L`` or ``W`` (see :func:`lssvm.solvers.basis_whitener`).
    method : {"cholesky", "eigh"}
    W : ndarray of shape (n, r)
        The whitening itself (``L^-T`` formed explicitly on the Cholesky
        path).  Blocks whiten with a NumPy product, not a triangular
        solve: SciPy's BLAS wrappers hold the GIL, so triangular solves in
        threaded tasks run one at a time, while ``matmul`` runs on every
        core; the product costs 2 n r flops per row instead of n^2, at
        GEMM's higher rate.
    shift : ndarray of shape (n,)
        Subtracted from kernel rows before whitening; any fixed vector near
        the mean kernel row (the mean of ``K_BB``'s rows) keeps the
        whitened rows small.
    classes : ndarray or None
        Class labels to code targets with (+1/-1, one-vs-rest), or None for
        numeric targets.
    n_features : int
    """

    basis: np.ndarray
    kernel: object
    whitener: np.ndarray
    method: str
    W: np.ndarray
    shift: np.ndarray
    classes: np.ndarray | None
    n_features: int

    @classmethod
    def of_basis(cls, Z, kernel, rcond=1e-10, classes=None, n_features=None, *, stacklevel=3, whitener=None):
        """Context of basis points ``Z`` (n, d): ``K_BB``, its whitening and the
        shift (O(n^3)); a ``NumericalWarning`` if ``K_BB`` is singular.  A
        given feature map ``whitener`` (n, k) replaces the whitening, as in
        :func:`lssvm.solvers.factorize_sparse_rls` (the rank-k Nyström map
        makes the rows the Nyström model's features)."""
        K_BB = kernel(Z, Z)
        if whitener is not None:
            W = np.ascontiguousarray(whitener, dtype=float)
            if W.ndim != 2 or W.shape[0] != K_BB.shape[0] or W.shape[1] == 0:
                raise ValueError(f"expected a whitener of shape (n, k) with n = {K_BB.shape[0]}, k >= 1; got {W.shape}")
            d = Z.shape[1] if n_features is None else n_features
            return cls(Z, kernel, W, "eigh", W, K_BB.mean(axis=0), classes, d)
        whitener, method = basis_whitener(K_BB, rcond, stacklevel=stacklevel + 1)
        if method == "cholesky":
            n = whitener.shape[0]
            W = np.ascontiguousarray(linalg.solve_triangular(whitener, np.eye(n), lower=True, check_finite=False).T)
        else:
            W = whitener
        d = Z.shape[1] if n_features is None else n_features
        return cls(Z, kernel, whitener, method, W, K_BB.mean(axis=0), classes, d)



def code_targets(y, classes, row0=None):
    """Targets of a block as a float (b, v) array: numeric ``y`` as is, labels
    coded +1/-1 against ``classes`` (one column for two classes).  ``row0``
    (the block's first global row) lets errors name the row."""
    if classes is None:
        Y = np.asarray(y, dtype=float)
        Y = Y[:, None] if Y.ndim == 1 else Y
        if not np.all(np.isfinite(Y)):
            first = int(np.flatnonzero(~np.isfinite(Y).all(axis=1))[0])
            where = "" if row0 is None else f" (first at row {row0 + first})"
            raise ValueError(f"y contains NaN or infinity{where}; remove or impute those rows")
        return Y
    return LabelCoder(classes).encode(y)


def check_block(X, ctx, row0):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != ctx.n_features:
        raise ValueError(f"expected blocks of shape (rows, {ctx.n_features}); got {X.shape}")
    if not np.all(np.isfinite(X)):
        bad = row0 + int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise ValueError(f"X contains NaN or infinity (first at row {bad}); remove or impute those rows")
    return X


def whitened_rows(X, ctx):
    """Raw kernel row mean (n,) and whitened rows ``(k - shift) W`` (b, r)."""
    K = ctx.kernel(X, ctx.basis)
    k_mean = K.mean(axis=0)
    K -= ctx.shift
    return k_mean, K @ ctx.W


def block_moments(X, y, folds, row0, ctx, train_only=None):
    """Moments of one row block, split by fold.

    Parameters
    ----------
    X : ndarray of shape (b, d)
    y : ndarray of shape (b,) or (b, v)
    folds : ndarray of shape (b,) of int, or None
        Fold of each row (None: all rows in fold 0).
    row0 : int
        Global index of the block's first row (for messages and ``train_only``).
    ctx : BlockContext
    train_only : ndarray of int, optional
        Sorted global rows that are never held out (their moments go to
        fold -1).

    Returns
    -------
    dict of int -> RowMoments

    Notes
    -----
    Per row: the kernel row O(n d), whitening 2 n r (GEMM), its share of
    the SYRK r^2.  Memory O(SUB_ROWS n) beyond the block.
    """
    with serial_region():
        if np.shape(X)[0] == 0:
            return {}
        X = check_block(X, ctx, row0)
        Y = code_targets(y, ctx.classes, row0)
        f = np.zeros(X.shape[0], dtype=np.int64) if folds is None else np.asarray(folds, dtype=np.int64).ravel()
        if train_only is not None and train_only.size:
            rows = np.arange(row0, row0 + X.shape[0])
            f = np.where(np.isin(rows, train_only), -1, f)
        out = {}
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            fs = f[sl]
            Xs, Ys = X[sl], Y[sl]
            for fold in np.unique(fs):
                sel = fs == fold
                k_mean, psi = whitened_rows(Xs if sel.all() else Xs[sel], ctx)
                mom = RowMoments.of_rows(psi, k_mean, Ys[sel])
                out[int(fold)] = out[int(fold)] + mom if int(fold) in out else mom
        return out


def merge_moments(*parts):
    """Merge dicts fold -> RowMoments (the reduction of :func:`block_moments`)."""
    out = {}
    for part in parts:
        for fold, mom in part.items():
            out[fold] = out[fold] + mom if fold in out else mom
    return out


def solution_from_moments(mom, ctx):
    """The path solution of the rows summarised by ``mom``.

    Parameters
    ----------
    mom : RowMoments
    ctx : BlockContext

    Returns
    -------
    PathSolution

    Notes
    -----
    ``eigh`` of the r x r centred Gram matrix: about 4 r^3 flops.
    """
    lam, V = linalg.eigh(mom.psi_cov, driver="evd", check_finite=False)
    return PathSolution(
        V=V,
        whitener=ctx.whitener,
        eigenvalues=np.maximum(lam, 0.0),
        z=V.T @ mom.psi_y,
        y_mean=mom.y_mean,
        kernel_mean=mom.k_mean,
        method=ctx.method,
        n_samples=mom.count,
    )


def block_rows_in_eigenbasis(X, ctx, Q, offset):
    """``M = (psi - psi_mean) V`` for a block (b, r): the centred kernel rows in
    the eigenbasis of the solution, as ``SparseRLSFactorization.M``, formed
    as ``(k - shift) Q - offset`` with ``Q = W V`` and ``offset = psi_mean V``
    (one GEMM, 2 n r flops per row)."""
    K = ctx.kernel(X, ctx.basis)
    K -= ctx.shift
    M = K @ Q
    M -= offset
    return M


def block_loo(X, y, row0, ctx, sol, psi_mean, alphas, reduce=False):
    """Exact LOO residuals of one block's rows under the full-data solution.

    Parameters
    ----------
    X : ndarray of shape (b, d)
    y : ndarray of shape (b,) or (b, v)
    row0 : int
    ctx : BlockContext
    sol : PathSolution
        The solution of all rows.
    psi_mean : ndarray of shape (r,)
        Mean whitened kernel row of all rows.
    alphas : ndarray of shape (A,)
    reduce : bool, default=False
        Return sums instead of residuals.

    Returns
    -------
    R : ndarray of shape (A, b, v)
        LOO residuals (``reduce=False``); or a dict with ``"sse"`` (A, v),
        ``"wrong"`` (A,) misclassified rows (classes only), ``"tiny"`` (how
        many rows have a hat-matrix diagonal within LEVERAGE_TOL = 1e-8 of 1) and
        ``"tiny_rows"`` (the first :data:`TINY_ROWS_KEPT` of them, global
        row numbers), merged by :func:`merge_sums`.
    tiny_rows : ndarray of int
        Global numbers of the rows whose hat-matrix diagonal is within
        1e-12 of 1 (``reduce=False``).

    Notes
    -----
    Per row O(n d + 2 n r + r A v): kernel, the eigenbasis product, then
    the residuals.
    """
    with serial_region():
        X = check_block(X, ctx, row0)
        Y = code_targets(y, ctx.classes, row0)
        A, v = alphas.size, Y.shape[1]
        R = None if reduce else np.empty((A, X.shape[0], v))
        sse = np.zeros((A, v))
        wrong = np.zeros(A, dtype=np.int64)
        tiny = []
        Q = ctx.W @ sol.V
        offset = psi_mean @ sol.V
        for lo in range(0, X.shape[0], SUB_ROWS):
            sl = slice(lo, lo + SUB_ROWS)
            M = block_rows_in_eigenbasis(X[sl], ctx, Q, offset)
            Rs, t = sol.loo_rows(M, Y[sl] - sol.y_mean, alphas)
            tiny.append(row0 + lo + t)
            if not reduce:
                R[:, sl] = Rs
                continue
            sse += (Rs * Rs).sum(axis=1)
            if ctx.classes is not None:
                wrong += misclassified(Y[sl][None] - Rs, Y[sl])
        tiny = np.concatenate(tiny) if tiny else np.zeros(0, dtype=np.int64)
        if reduce:
            return {"sse": sse, "wrong": wrong, "tiny": tiny.size, "tiny_rows": tiny[:TINY_ROWS_KEPT],
                    "count": X.shape[0]}
        return R, tiny


def misclassified(F, Y):
    """Misclassified rows per alpha from outputs ``F`` (A, b, v) and codes ``Y`` (b, v)."""
    return LabelCoder.misclassified(F, LabelCoder.index_of(Y))


#: How many row numbers of tiny leverage a reduced pass carries back (the count is exact).
TINY_ROWS_KEPT = 10


def merge_sums(*parts):
    """Add dicts of arrays / numbers key by key (the reduction of reduced
    passes); ``"tiny_rows"`` keeps the smallest :data:`TINY_ROWS_KEPT` row numbers."""
    out = dict(parts[0])
    for part in parts[1:]:
        for k, v in part.items():
            if k == "tiny_rows":
                out[k] = np.sort(np.concatenate([out[k], v]))[:TINY_ROWS_KEPT]
            else:
                out[k] = out[k] + v
    return out
