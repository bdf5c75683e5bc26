"""Cross-validation criteria of LS-SVMs over a path of alphas.

:class:`DenseLSSVMCV` is the exact LS-SVM (every training point a basis
function, the dual ``[K + alpha I, 1; 1^T, 0]``); :class:`~lssvm.selection.SparseLSSVMCV`
(:mod:`lssvm.selection.sparse_cv`) the sparse LS-SVM on a basis (Cawley & Talbot 2004; Pahikkala et al. 2012: exact LOO, or exact k-fold with
held-out basis points removed); :class:`lssvm.selection.fixed_size.FixedSizeCV` the SCDP fixed-size
LS-SVM scored at the size its rule picks (Karsmakers et al. 2011); :class:`lssvm.selection.nystrom.NystromCV`
the approximate criterion of Ding & Liao 2012, the LS-SVM on a rank-k Nyström kernel
(Algorithm 2).  Each fixes the folds and every kernel-independent random
draw (basis, prototypes, columns) when constructed, so every candidate is
scored on the same partition (Karsmakers et al. 2011, Remark 7) and the criterion is a
deterministic function of the parameters; kernel-dependent selections
(FVS, Rényi, greedy) are redrawn per candidate from one fixed seed.  An RBF
kernel's squared distances are kept and only re-exponentiated per width
(Karsmakers et al. 2011, Remark 6).  :meth:`rows_for` tells which training rows a
candidate used, so an estimator refitted on them is the model scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_X_y

from .._labels import LabelCoder, encode_classes
from .._sums import sum_squares, warn_if_overflow
from .._targets import check_numeric_targets
from .._threads import check_n_jobs, uses_threads
from ..basis.duplicates import near_duplicate_free, warn_dropped
from ..cv import resolve_folds
from ..kernels import RBF, make_kernel, squared_distances
from ..solvers import check_alphas, dense_factorize
from ..solvers.whitening import BLOCK as WHITENING_BLOCK

__all__ = ["CVPath", "DenseLSSVMCV", "DEFAULT_ALPHAS", "PAPER003_GAMMAS"]

# Paper 003's grid: its LS-SVM gamma in 2^-15 ... 2^9 (steps of 2^2), alpha = 1/gamma;
# its RBF sigma^2 in 2^-15 ... 2^5, our gamma = 1/sigma^2 (math.md section 1).
DEFAULT_ALPHAS = 2.0 ** np.arange(-9.0, 15.1, 2.0)
PAPER003_GAMMAS = 2.0 ** np.arange(-5.0, 15.1, 2.0)


@dataclass(frozen=True)
class CVPath:
    """CV scores of one kernel-parameter setting for every alpha.

    Attributes
    ----------
    alphas : ndarray of shape (A,)
    mse : ndarray of shape (A,)
        Mean squared out-of-fold residual, averaged over outputs.
    error_rate : ndarray of shape (A,) or None
        Out-of-fold misclassification rate (classification only).
    info : dict
        Further numbers of the candidate, each a scalar or one value per
        alpha (``n_basis``, ``model_size``, ...); searches add them to
        ``cv_results``.
    mse_per_target : ndarray of shape (A, v) or None
        Mean squared out-of-fold residual of each output (the sparse
        regression criterion, :class:`lssvm.selection.SparseLSSVMCV`).
    """

    alphas: np.ndarray
    mse: np.ndarray
    error_rate: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    mse_per_target: np.ndarray | None = None

    def score(self, scoring):
        """The scores to minimise: ``"mse"`` or ``"error_rate"``."""
        if scoring == "mse":
            return self.mse
        if scoring == "error_rate":
            if self.error_rate is None:
                raise ValueError("scoring='error_rate' needs a classification criterion (classification=True)")
            return self.error_rate
        if scoring == "mse_per_target":  # each output at its own best alpha: one value for the whole path
            if self.mse_per_target is None:
                raise ValueError("scoring='mse_per_target' needs a regression criterion that keeps each output's "
                                 "errors (the sparse one, SparseLSSVMCV)")
            best = np.min(self.mse_per_target, axis=0)
            return np.full(self.alphas.size, float(np.mean(best)) if np.all(np.isfinite(best)) else np.inf)
        if scoring in ("gcv", "evidence"):  # alpha-path criteria (lssvm.selection.evidence), to minimise
            if scoring not in self.info:
                raise ValueError(f"scoring={scoring!r} is offered by the sparse regressor's criterion only")
            return self.info[scoring] if scoring == "gcv" else -self.info[scoring]
        raise ValueError(f"scoring must be 'mse', 'error_rate', 'gcv' or 'evidence'; got {scoring!r}")


class _LSSVMCV:
    """Common part: targets, folds, kernel construction from parameters."""

    def __init__(self, X, y, *, kernel="rbf", cv=5, alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None, n_jobs=None):
        self.n_jobs = check_n_jobs(n_jobs)
        X, y = check_X_y(X, y, dtype=np.float64, multi_output=not classification, y_numeric=not classification)
        if not classification:
            y = check_numeric_targets(y)
        if X.shape[0] < 3:
            raise ValueError(f"cross-validation needs at least 3 samples; got {X.shape[0]}")
        self.X = X
        self.classification = bool(classification)
        if self.classification:
            self.classes, self.codes, self.Y = encode_classes(y, type(self).__name__)
        else:
            self.classes = None
            self.codes = None
            self.Y = y[:, None] if y.ndim == 1 else y
        self.alphas, _ = check_alphas(DEFAULT_ALPHAS if alphas is None else alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        self.random_state = check_random_state(random_state)
        n = X.shape[0]
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        if not self.loo:
            # one fixed partition for every candidate (Remark 7); an int is scikit-learn's
            # check_cv rule, unshuffled (Stratified)KFold, as everywhere in lssvm
            self.folds = resolve_folds(cv, n, y=self.codes, groups=groups, classifier=self.classification)
        else:
            self.folds = None
        self.n_evaluations = 0

    def _kernel(self, params):
        params = {**self.kernel_params, **params}
        d = params.get("degree")
        if isinstance(d, (float, np.floating)) and float(d).is_integer():  # grids hold floats: 3.0 is degree 3
            params["degree"] = int(d)
        return make_kernel(self.kernel, **params)

    @staticmethod
    def _key(params):
        return tuple(sorted((k, float(v)) for k, v in params.items()))

    def _path(self, R, info=None):
        """Scores of out-of-fold residuals ``R`` (A, n, v)."""
        mse = sum_squares(R, axis=(1, 2)) / (R.shape[1] * R.shape[2])
        warn_if_overflow(mse, "cross-validation MSE of the candidate", stacklevel=4)
        err = None
        if self.classification:
            F = self.Y[None] - R
            err = LabelCoder.misclassified(F, self.codes) / F.shape[1]
        self.n_evaluations += 1
        return CVPath(self.alphas, mse, err, dict(info or {}))

    def _path_from_sums(self, sums, info=None):
        """Scores of reduced out-of-fold errors (:class:`lssvm.cv.ErrorSums`)."""
        mse = sums.sse.sum(axis=1) / (sums.count * sums.sse.shape[1])
        warn_if_overflow(mse, "cross-validation MSE of the candidate", stacklevel=4)
        err = sums.wrong / sums.count if self.classification else None
        self.n_evaluations += 1
        per_target = None if self.classification else sums.sse / sums.count
        return CVPath(self.alphas, mse, err, dict(info or {}), per_target)

    @uses_threads
    def __call__(self, **params):
        """CV scores for every alpha at these kernel parameters (e.g. ``gamma=0.5``).

        Returns
        -------
        CVPath
        """
        fac = self._factorize(self._kernel(params))
        return self._path(fac.loo_residuals(self.alphas) if self.loo else fac.cv_residuals(self.folds, self.alphas))

    def rows_for(self, **params):
        """Training rows the model at ``params`` is built on (basis, prototype
        pool or Nyström columns; None for the dense LS-SVM)."""
        return None


#: Largest kernel buffer a criterion keeps between candidates (bytes).
_MAX_BUFFER_BYTES = 1 << 28


class _RowsCV(_LSSVMCV):
    """Criteria whose model lives on a subset of training rows: drawn once
    when kernel-independent, else per candidate from one fixed seed."""

    #: Cached distances (and so the kernel columns) in Fortran order beyond one block of columns.
    _fortran_columns = False
    #: The kernel columns are consumed by the candidate's factorisation (overwritten, no reference kept):
    #: written into one buffer for every candidate, up to ``_MAX_BUFFER_BYTES`` (a fresh m x n array per
    #: candidate paid first-touch page faults; the buffer lives as long as the criterion).
    _columns_consumed = False

    def _init_rows(self, kernel_independent, draw):
        """``draw(kernel, random_state) -> rows``."""
        self._draw = draw
        self._rows = {}
        self._fixed = draw(None, self.random_state) if kernel_independent else None
        self._seed = None if kernel_independent else self.random_state.randint(2**31 - 1)
        self._D = None
        if self._fixed is not None and self.kernel == "rbf":
            if self._fortran_columns and self._fixed.size > WHITENING_BLOCK:  # (m, n) stored by columns,
                self._D = squared_distances(self.X[self._fixed], self.X).T  # whitened in place by blocks
            else:
                self._D = squared_distances(self.X, self.X[self._fixed])

    def _rows_and_columns(self, kern, params):
        """Rows for ``params`` and the kernel ``k(X, X[rows])`` (n, len(rows))."""
        if self._fixed is not None:
            rows = self._fixed
            C = None
            if self._D is not None and isinstance(kern, RBF):
                if self._columns_consumed and self._D.nbytes <= _MAX_BUFFER_BYTES:  # overwritten by the
                    if getattr(self, "_K_buffer", None) is None:  # factorisation: one buffer for all candidates
                        self._K_buffer = np.empty_like(self._D)
                    C = kern.from_squared_distances(self._D, out=self._K_buffer)
                else:
                    C = kern.from_squared_distances(self._D)
            keep = near_duplicate_free(self.X[rows], kern)  # at this kernel, as the refitted estimator does
            if keep.size < rows.size:
                warn_dropped(rows.size, keep.size, stacklevel=4)
                rows, C = rows[keep], (None if C is None else C[:, keep])
        else:
            rows = self._draw(kern, np.random.RandomState(self._seed))
            C = None
        self._rows[self._key(params)] = rows
        return rows, (kern(self.X, self.X[rows]) if C is None else C)

    @property
    def draw_seed(self):
        """The seed of the per-candidate (kernel-dependent) draws, or None when
        the rows are drawn once: an estimator given ``random_state=draw_seed``
        and the same method draws the same rows."""
        return None if self._seed is None else int(self._seed)

    def rows_for(self, **params):
        key = self._key(params)
        if key not in self._rows:
            if self._fixed is not None:
                kern = self._kernel(params)
                self._rows[key] = self._fixed[near_duplicate_free(self.X[self._fixed], kern)]
            else:
                self._rows_and_columns(self._kernel(params), params)
        return self._rows[key]


class DenseLSSVMCV(_LSSVMCV):
    """Exact CV of the dense LS-SVM over an alpha path.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,) or (n, v)
        Targets, or class labels with ``classification=True`` (coded +1/-1,
        one-vs-rest for more than two classes).
    kernel : str, default="rbf"
    cv : "loo", int, scikit-learn splitter or iterable of (train, test), default=5
        Resolved once at construction and kept for every candidate.  An
        int k is unshuffled ``KFold(k)``, ``StratifiedKFold(k)`` for
        classification (scikit-learn's ``check_cv``); pass a splitter
        (e.g. ``KFold(k, shuffle=True, random_state=0)``) to shuffle.
    alphas : array-like of float, optional
        Default: that of Ding & Liao 2012, ``1 / (2^-15 ... 2^9)`` in steps of 2^2 (13 values);
        its 11 RBF widths are ``PAPER003_GAMMAS``.
    classification : bool, default=False
    groups : array-like of shape (n,), optional
    random_state : int, RandomState or None
    kernel_params : dict, optional
        Fixed kernel parameters (degree, coef0, ...); the searched ones are
        passed per call.
    n_jobs : int or None, default=None
        Threads per call, as for :class:`lssvm.SparseLSSVR` (every criterion).

    Notes
    -----
    Per call: the kernel matrix (O(n^2 d), or O(n^2) from the cached squared
    distances for RBF), ``eigh`` O(n^3), then per alpha O(n^2) for LOO or
    O(h^2 n + h^3) per fold of h rows.  Memory O(n^2).
    """

    def __init__(self, X, y, **kw):
        super().__init__(X, y, **kw)
        self._D = squared_distances(self.X, self.X) if self.kernel == "rbf" else None

    def _factorize(self, kern):
        K = kern.from_squared_distances(self._D) if isinstance(kern, RBF) and self._D is not None else kern(self.X, self.X)
        return dense_factorize(K, self.Y)
