"""Cross-validation criteria of LS-SVMs over a path of alphas.

:class:`DenseLSSVMCV` is the exact LS-SVM (every training point a basis
function, the dual ``[K + alpha I, 1; 1^T, 0]``); :class:`NystromCV` is paper
003's approximate criterion, the same LS-SVM on a rank-k Nyström kernel
(Algorithm 2).  Both fix the folds (and Nyström's sampled columns) when
constructed, so every candidate is scored on the same partition (paper 002
Remark 7) and the criterion is a deterministic function of the parameters;
both keep the squared distances of an RBF kernel and only re-exponentiate
them per width (paper 002 Remark 6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_X_y

from .._labels import encode_classes
from .._params import count_or_fraction
from ..cv import resolve_folds
from ..kernels import RBF, make_kernel, squared_distances
from ..solvers import check_alphas
from ..solvers.nystrom import dense_factorize, nystrom_factorize

__all__ = ["CVPath", "DenseLSSVMCV", "NystromCV", "DEFAULT_ALPHAS", "PAPER003_GAMMAS"]

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
    """

    alphas: np.ndarray
    mse: np.ndarray
    error_rate: np.ndarray | None = None

    def score(self, scoring):
        """The scores to minimise: ``"mse"`` or ``"error_rate"``."""
        if scoring == "mse":
            return self.mse
        if scoring == "error_rate":
            if self.error_rate is None:
                raise ValueError("scoring='error_rate' needs a classification criterion (classification=True)")
            return self.error_rate
        raise ValueError(f"scoring must be 'mse' or 'error_rate'; got {scoring!r}")


class _LSSVMCV:
    """Common part: targets, folds, kernel construction from parameters."""

    def __init__(self, X, y, *, kernel="rbf", cv=5, alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None):
        X, y = check_X_y(X, y, dtype=np.float64, multi_output=not classification, y_numeric=not classification)
        if X.shape[0] < 3:
            raise ValueError(f"cross-validation needs at least 3 samples; got {X.shape[0]}")
        self.X = X
        self.classification = bool(classification)
        if self.classification:
            _, self.codes, self.Y = encode_classes(y, type(self).__name__)
        else:
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
            if isinstance(cv, int) and not isinstance(cv, bool) and 2 <= cv <= n:
                # one fixed, shuffled partition for every candidate (Remark 7)
                seed = self.random_state.randint(2**31 - 1)
                cv = (StratifiedKFold if self.classification else KFold)(cv, shuffle=True, random_state=seed)
            self.folds = resolve_folds(cv, n, y=self.codes, groups=groups, classifier=self.classification)
        else:
            self.folds = None
        self.n_evaluations = 0

    def _kernel(self, params):
        return make_kernel(self.kernel, **{**self.kernel_params, **params})

    def _path(self, fac):
        R = fac.loo_residuals(self.alphas) if self.loo else fac.cv_residuals(self.folds, self.alphas)
        mse = (R**2).mean(axis=(1, 2))
        err = None
        if self.classification:
            F = self.Y[None] - R
            idx = (F[..., 0] > 0).astype(int) if F.shape[-1] == 1 else np.argmax(F, axis=-1)
            err = (idx != self.codes[None]).mean(axis=1)
        self.n_evaluations += 1
        return CVPath(self.alphas, mse, err)

    def __call__(self, **params):
        """CV scores for every alpha at these kernel parameters (e.g. ``gamma=0.5``).

        Returns
        -------
        CVPath
        """
        return self._path(self._factorize(self._kernel(params)))


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
        An int draws one shuffled (stratified for classification) partition
        at construction, kept for every candidate.
    alphas : array-like of float, optional
        Default: paper 003's, ``1 / (2^-15 ... 2^9)`` in steps of 2^2 (13 values);
        its 11 RBF widths are ``PAPER003_GAMMAS``.
    classification : bool, default=False
    groups : array-like of shape (n,), optional
    random_state : int, RandomState or None
    kernel_params : dict, optional
        Fixed kernel parameters (degree, coef0, ...); the searched ones are
        passed per call.

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


class NystromCV(_LSSVMCV):
    """Paper 003's approximate CV: the LS-SVM on a rank-k Nyström kernel.

    Parameters
    ----------
    X, y, kernel, cv, alphas, classification, groups, random_state, kernel_params
        As for :class:`DenseLSSVMCV`.
    n_components : int or float, default=0.1
        c columns (a count or a fraction of n), sampled uniformly without
        replacement once, at construction (the same columns for every
        candidate, so the criterion is smooth in the parameters).
    rank : int or float, default=0.5
        k (a count or a fraction of c).

    Notes
    -----
    Per call: O(n c) kernel values (from cached distances for RBF), O(c^3)
    ``eigh``, O(n c k) features; per alpha O(n k) for LOO, or O(n k^2)
    per fold plus O(k^3 + h k) per fold and alpha.  Memory O(n c).
    """

    def __init__(self, X, y, *, n_components=0.1, rank=0.5, **kw):
        super().__init__(X, y, **kw)
        n = self.X.shape[0]
        c = count_or_fraction("n_components", n_components, 0.1, n)
        self.rank = count_or_fraction("rank", rank, 0.5, c)
        self.columns = np.sort(self.random_state.choice(n, c, replace=False))
        Z = self.X[self.columns]
        self._D = squared_distances(self.X, Z) if self.kernel == "rbf" else None

    def _factorize(self, kern):
        Z = self.X[self.columns]
        C = kern.from_squared_distances(self._D) if isinstance(kern, RBF) and self._D is not None else kern(self.X, Z)
        return nystrom_factorize(C, C[self.columns], self.Y, rank=self.rank)
