"""Fast v-fold CV of SCDP-grown fixed-size LS-SVMs, per model size
(Karsmakers et al. 2011, §4.4-4.5, Algorithm 4).

All folds share the prototypes, so a fold's training system is the full
system minus the fold's own Gram terms (eqs. 36-37): one O(h M^2) product
per fold instead of O((N - h) M^2).  SCDP is then run on each fold's
system; after every step the model of that size predicts the fold, giving
a validation curve over sizes 1..k_m at the cost of one SCDP run per fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._parallel import parallel_map
from ..solvers.fixed_size import FixedSizeSystem, augmented_rows
from ..solvers.scdp import SCDPState

__all__ = ["SizeCurves", "chosen_sizes", "fixed_size_cv_curves", "scdp_seed", "select_model_size", "stop_rule_met"]

METRICS = ("mse", "error_rate")


@dataclass(frozen=True)
class SizeCurves:
    """Validation results per regularisation value, output, fold and model size.

    Attributes
    ----------
    sse : ndarray of shape (n_alphas, v, n_folds, K)
        Sum of squared errors on each fold of the model with k + 1
        non-zeros.  A fold whose run stopped early (rule (38)) keeps its
        last value for the larger sizes.
    n_wrong : ndarray of shape (n_alphas, v, n_folds, K)
        Sign errors (targets coded +1/-1) on each fold, padded likewise.
    fold_sizes : ndarray of shape (n_folds,)
    stopped_at : ndarray of shape (n_alphas, v, n_folds)
        Steps each run took.
    """

    sse: np.ndarray
    n_wrong: np.ndarray
    fold_sizes: np.ndarray
    stopped_at: np.ndarray

    def curve(self, scoring="mse"):
        """Pooled CV score per size and the spread of the per-fold scores.

        Parameters
        ----------
        scoring : {"mse", "error_rate"}
            Mean squared error of all out-of-fold predictions (the PRESS
            criterion of Karsmakers et al. 2011, eq. 35, divided by N), or the misclassification rate.

        Returns
        -------
        mean : ndarray of shape (n_alphas, v, K)
        std : ndarray of shape (n_alphas, v, K)
            Standard deviation (ddof=1) over folds of the per-fold scores.
        """
        if scoring not in METRICS:
            raise ValueError(f"scoring must be one of {METRICS}; got {scoring!r}")
        total = self.sse if scoring == "mse" else self.n_wrong
        mean = total.sum(axis=2) / self.fold_sizes.sum()
        per_fold = total / self.fold_sizes[:, None]
        std = per_fold.std(axis=2, ddof=1) if self.fold_sizes.size > 1 else np.zeros_like(mean)
        return mean, std


def stop_rule_met(scores, window, tol):
    """Paper 002's rule (38): the last score is within relative ``tol`` of the
    mean of the ``window`` scores before it.

    Parameters
    ----------
    scores : sequence of float
        Validation scores for sizes 1..k.
    window : int
        Delta_k.
    tol : float or None
        epsilon; None never stops.
    """
    if tol is None or len(scores) <= window:
        return False
    last = scores[-1]
    if last == 0:
        return True
    return abs(sum(scores[-window - 1 : -1]) / window - last) / abs(last) < tol


def fixed_size_cv_curves(
    system: FixedSizeSystem,
    K,
    Y,
    folds,
    alphas,
    *,
    nu=1e-8,
    max_size=None,
    n_candidates=None,
    seed=0,
    stop_window=10,
    stop_tol=None,
    stop_scoring="mse",
) -> SizeCurves:
    """Validation curves over model sizes for every fold, alpha and output.

    Parameters
    ----------
    system : FixedSizeSystem
        The full-data system (Gram terms of all N rows).
    K : ndarray of shape (N, M)
        Kernel between the rows and the prototypes.
    Y : ndarray of shape (N, v)
    folds : list of ndarray
        Test indices of each fold.
    alphas : ndarray of shape (n_alphas,)
    nu : float
        Intercept regularisation.
    max_size : int, optional
        k_m, steps at most; default M + 1.
    n_candidates : int, optional
        SCDPP's rho; None is SCDP.
    seed : int
        Seeds SCDPP's draws, the same for every fold, alpha and output
        (Karsmakers et al. 2011, Remark 8).
    stop_window, stop_tol : int, float or None
        Rule (38) on the fold's own validation score (``stop_scoring``);
        ``stop_tol=None`` runs to ``max_size``.
    stop_scoring : {"mse", "error_rate"}

    Returns
    -------
    SizeCurves

    Notes
    -----
    Per fold: O(h M^2) for the downdate, then per alpha and output an SCDP
    run of k steps, O(k^2 M) in all, plus O(h k^2) for the predictions.
    Folds run in parallel.
    """
    if stop_scoring not in METRICS:
        raise ValueError(f"stop_scoring must be one of {METRICS}; got {stop_scoring!r}")
    D = system.n_coef
    kmax = D if max_size is None else int(max_size)
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    v = Y.shape[1]
    shape = (alphas.size, v, len(folds), kmax)
    sse = np.zeros(shape)
    wrong = np.zeros(shape)
    stopped = np.zeros(shape[:3], dtype=np.intp)

    def work(f):
        test = folds[f]
        Kv, Yv = K[test], Y[test]
        train_system = system.without_rows(Kv, Yv)
        Kva = augmented_rows(Kv)
        for a, alpha in enumerate(alphas):
            A = train_system.matrix(alpha, nu)
            for j in range(v):
                state = SCDPState(A, train_system.rhs[:, j], n_candidates, seed)
                y = Yv[:, j]
                scores = []
                while state.k < kmax and state.step() is not None:
                    k = state.k
                    pred = Kva[:, state.order] @ state.coef
                    e = y - pred
                    sse[a, j, f, k - 1] = e @ e
                    wrong[a, j, f, k - 1] = np.count_nonzero((pred > 0) != (y > 0))
                    scores.append((sse if stop_scoring == "mse" else wrong)[a, j, f, k - 1] / y.size)
                    if stop_rule_met(scores, stop_window, stop_tol):
                        break
                k = state.k
                stopped[a, j, f] = k
                if 0 < k < kmax:
                    sse[a, j, f, k:] = sse[a, j, f, k - 1]
                    wrong[a, j, f, k:] = wrong[a, j, f, k - 1]

    parallel_map(work, range(len(folds)))
    sizes = np.array([len(t) for t in folds], dtype=float)
    return SizeCurves(sse, wrong, sizes, stopped)


def select_model_size(mean, std, fraction=0.1):
    """Smallest size whose score is within ``fraction`` standard deviations
    of the best (Karsmakers et al. 2011, §4.5; Hastie et al.'s one-standard-error rule
    with one tenth).

    Parameters
    ----------
    mean, std : ndarray of shape (K,)
        CV score and its spread over folds for sizes 1..K.
    fraction : float, default=0.1

    Returns
    -------
    int
        The chosen size (1-based).
    """
    mean = np.asarray(mean, dtype=float)
    if mean.size == 0 or not np.all(np.isfinite(mean)) or not np.all(np.isfinite(std)):
        raise ValueError(
            "the cross-validation curve over model sizes is empty or not finite (overflow): scale the "
            "targets and inputs (e.g. StandardScaler) or raise alpha"
        )
    best = int(np.argmin(mean))
    threshold = mean[best] + fraction * std[best]
    return int(np.flatnonzero(mean <= threshold)[0]) + 1


def chosen_sizes(curves: SizeCurves, scoring="mse", size_rule=0.1):
    """The model size the ``size_rule`` picks per alpha and output, on the
    CV curves cut at the longest fold run of that alpha.

    Returns
    -------
    ndarray of int of shape (n_alphas, v)
        1-based sizes.
    """
    mean, std = curves.curve(scoring)
    A, v = mean.shape[:2]
    sizes = np.empty((A, v), dtype=np.intp)
    for a in range(A):
        last = int(curves.stopped_at[a].max())
        for j in range(v):
            sizes[a, j] = select_model_size(mean[a, j, :last], std[a, j, :last], size_rule)
    return sizes


def scdp_seed(rng):
    """The seed of SCDPP's candidate draws, taken from ``rng`` (shared by the
    estimator and the selection criterion so that both draw the same)."""
    return int(rng.randint(np.iinfo(np.int32).max))
