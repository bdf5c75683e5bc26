"""Model selection of the fixed-size LS-SVM (Karsmakers et al. 2011): :class:`FixedSizeCV`, the search
criterion that scores each alpha at the model size SCDP's size rule picks on the fast v-fold curves
(:mod:`lssvm.cv.fixed_size`), and the model on the whole prototype pool: the last size of SCDP's curve,
scored directly where SCDP's runs stop before it (:func:`whole_pool_outputs`, used by
:class:`lssvm.FixedSizeLSSVR`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._params import check_int
from .._threads import uses_threads
from ..basis import prototype_pool
from ..cv.fixed_size import SizeCurves, fixed_size_cv_curves
from ..cv.fixed_size import scdp_seed as _scdp_seed
from ..kernels import gamma_scale
from ..solvers.fixed_size import DEFAULT_N_CANDIDATES, FixedSizeSystem, augmented_rows, solve_guarded
from ..solvers.row_blocks import misclassified
from .criteria import CVPath, _RowsCV

__all__ = ["FixedSizeCV", "chosen_sizes", "select_model_size", "size_on_folds", "WHOLE_POOL_RCOND", "complete_curve_sizes", "whole_pool_fold_scores", "whole_pool_outputs"]


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


class FixedSizeCV(_RowsCV):
    """CV of the SCDP fixed-size LS-SVM (Karsmakers et al. 2011), each alpha scored at the
    model size the 0.1-std rule picks on the fast v-fold curves.

    Parameters
    ----------
    X, y, kernel, alphas, classification, groups, random_state, kernel_params
        As for :class:`DenseLSSVMCV`.
    cv : int, splitter or iterable of (train, test), default=10
        Folds (no "loo").
    basis : {"pchol", "kcenter", "random", "renyi", "all"} or 1-D int array, default="pchol"
        The pool, drawn once ("pchol" at the fixed width, or at the "scale" width when the width is
        searched; "renyi" depends on the kernel: per candidate).
    n_basis, solver, max_size, n_candidates, nu, stop_window, stop_tol, size_rule
        As for :class:`lssvm.FixedSizeLSSVR`.
    size_scoring : {"mse", "error_rate"}, default="mse"
        Score of the size rule and of stopping rule (38).

    Attributes
    ----------
    refit_random_state : int
        Drawn from ``random_state``: a :class:`lssvm.FixedSizeLSSVR` given
        this ``random_state``, ``basis=rows_for(...)`` and these folds
        makes the same SCDPP draws, so it refits the model scored here.

    Notes
    -----
    Per call: O(N M d) kernel values, O(N M^2) for the system, then per fold
    an O(h M^2) downdate and per alpha one SCDP run of k steps, O(k^2 M)
    (:func:`lssvm.cv.fixed_size.fixed_size_cv_curves`).  The error rate is
    given for two classes only.
    """

    def __init__(self, X, y, *, cv=10, basis="pchol", n_basis=None, solver="scdp", max_size=None,
                 n_candidates=None, nu=1e-8, stop_window=10, stop_tol=1e-4, size_rule=0.1, size_scoring="mse",
                 **kw):
        n_candidates = DEFAULT_N_CANDIDATES if n_candidates is None else n_candidates
        if isinstance(cv, str):
            raise ValueError(f"FixedSizeCV needs folds (an int, a splitter or (train, test) pairs); got cv={cv!r}")
        for name, value in (("stop_window", stop_window), ("n_candidates", n_candidates)):
            check_int(name, value)
        if max_size is not None:
            check_int("max_size", max_size)
        if not (isinstance(nu, Real) and np.isfinite(nu) and nu > 0):
            raise ValueError(f"nu must be a finite number > 0; got {nu!r}")
        if not (isinstance(size_rule, Real) and np.isfinite(size_rule) and size_rule >= 0):
            raise ValueError(f"size_rule must be a finite number >= 0; got {size_rule!r}")
        if stop_tol is not None and not (isinstance(stop_tol, Real) and np.isfinite(stop_tol) and stop_tol >= 0):
            raise ValueError(f"stop_tol must be a finite number >= 0 or None; got {stop_tol!r}")
        super().__init__(X, y, cv=cv, **kw)
        if size_scoring == "error_rate" and (not self.classification or self.Y.shape[1] != 1):
            raise ValueError("size_scoring='error_rate' is for two-class problems; use 'mse'")
        if solver not in ("scdp", "scdpp", "direct"):
            raise ValueError(f"solver must be 'scdp', 'scdpp' or 'direct'; got {solver!r}")
        if size_scoring not in ("mse", "error_rate"):
            raise ValueError(f"size_scoring must be 'mse' or 'error_rate'; got {size_scoring!r}")
        self.solver, self.max_size, self.nu = solver, max_size, float(nu)
        self.n_candidates = n_candidates if solver == "scdpp" else None
        self.stop = (stop_window, stop_tol)
        self.size_rule, self.size_scoring = size_rule, size_scoring
        self.refit_random_state = int(self.random_state.randint(2**31 - 1))
        self.scdp_seed = _scdp_seed(np.random.RandomState(self.refit_random_state))

        def draw(kern, rng):
            if kern is None:  # drawn once: "pchol" at the scale width when the width is searched
                kern = self._kernel({} if "gamma" in self.kernel_params else {"gamma": gamma_scale(self.X)})
            rows = prototype_pool(self.X, kern, basis, n_basis, rng)[1]
            if rows is None:
                raise ValueError("the basis (prototype pool) must come from the training rows: a method name or row indices "
                                 "(a search scores every candidate on its own rows)")
            return rows

        independent = not isinstance(basis, str) or basis != "renyi"
        self._init_rows(independent, draw)

    @uses_threads
    def __call__(self, **params):
        kern = self._kernel(params)
        rows, K = self._rows_and_columns(kern, params)
        system = FixedSizeSystem.from_kernel(K, K[rows], self.Y)
        D = system.n_coef
        A, v = self.alphas.size, self.Y.shape[1]
        if self.max_size is not None and self.max_size > D:
            raise ValueError(f"max_size={self.max_size} exceeds the {D} coefficients (M={D - 1} prototypes + intercept)")
        if self.solver == "direct":
            R = np.empty((A,) + self.Y.shape)
            for test in self.folds:
                sub = system.without_rows(K[test], self.Y[test])
                Ka = augmented_rows(K[test])
                train = np.ones(K.shape[0], dtype=bool)
                train[test] = False
                for a, alpha in enumerate(self.alphas):
                    W = solve_guarded(sub.matrix(float(alpha), self.nu), sub.rhs, K[train], K[rows], self.Y[train],
                                      float(alpha), self.nu, call="fixed-size direct CV")
                    R[a, test] = self.Y[test] - Ka @ W
            return self._path(R, {"model_size": D})
        curves = fixed_size_cv_curves(
            system, K, self.Y, self.folds, self.alphas, nu=self.nu, max_size=self.max_size,
            n_candidates=self.n_candidates, seed=self.scdp_seed, stop_window=self.stop[0], stop_tol=self.stop[1],
            stop_scoring=self.size_scoring,
        )
        sizes = chosen_sizes(curves, self.size_scoring, self.size_rule)
        pick = (np.arange(A)[:, None], np.arange(v)[None], sizes - 1)
        mse = curves.curve("mse")[0][pick].mean(axis=1)
        err = None
        if self.classification and v == 1:
            err = curves.curve("error_rate")[0][pick][:, 0]
        self.n_evaluations += 1
        return CVPath(self.alphas, mse, err, {"model_size": sizes.mean(axis=1)})


def size_on_folds(est, rows, system, kmax, rho, seed, whole_pool_cv=None, keep_paths=False):
    """The fixed-size fit's model size per output, chosen on SCDP's fast v-fold curves at the
    estimator's alpha (Karsmakers et al. 2011, §4.4-4.5).

    One run of the fold curves (:meth:`rows.curves`, one pass over the rows), the size rule
    (:func:`chosen_sizes`), and, where every fold run stopped before the whole pool, the rule on the
    curve completed by the whole pool (:func:`whole_pool_outputs`).

    Parameters
    ----------
    est : FixedSizeLSSVR or FixedSizeLSSVC
        Gives ``alpha``, ``nu``, ``stop_window``, ``stop_tol``, ``size_rule`` and the scoring.
    rows : RowsInMemory, SummedRows or WeightedRowsInMemory
    system : FixedSizeSystem
    kmax : int
        The largest size.
    rho : int or None
        SCDPP's candidates per step (None: SCDP).
    seed : int
        SCDPP's draws (:func:`lssvm.cv.fixed_size.scdp_seed`).
    whole_pool_cv : callable, optional
        The whole pool's fold scores (:func:`whole_pool_outputs`).
    keep_paths : bool, default=False
        Keep each fold run's coefficients in the curves (the held-out values of the fold models).

    Returns
    -------
    mean, std : ndarray of shape (v, K)
        The CV curve and its spread over folds, cut at the longest fold run.
    sizes : ndarray of int of shape (v,)
        1-based sizes (the whole pool's where it completed the curve).
    score : ndarray of shape (v,)
        The curve's score at each output's size.
    full : tuple or None
        :func:`whole_pool_outputs`'s result where the whole pool completed the curve.
    curves : SizeCurves
    """
    scoring = est._scoring
    curves = rows.curves(
        system, [float(est.alpha)], nu=float(est.nu), max_size=kmax, n_candidates=rho, seed=seed,
        stop_window=est.stop_window, stop_tol=est.stop_tol, stop_scoring=scoring,
        **({"keep_paths": True} if keep_paths else {}),
    )
    mean, std = curves.curve(scoring)
    last = int(curves.stopped_at.max())
    mean, std = mean[0, :, :last], std[0, :, :last]
    sizes = chosen_sizes(curves, scoring, est.size_rule)[0]
    full = None
    if last < kmax and kmax == system.rhs.shape[0]:
        full = whole_pool_outputs(est, rows, system, mean, std, type(est).__name__, whole_pool_cv)
        if full is not None:  # the size rule on the curve completed by the whole pool
            sizes = full[3]
    return mean, std, sizes, mean[np.arange(mean.shape[0]), sizes - 1], full, curves


def whole_pool_outputs(est, rows, system, mean, std, name, whole_pool_cv=None):
    """The size rule on SCDP's curve completed by the whole pool, per output.

    SCDP's curve ends before the whole pool when its runs stop (rule (38)) or when the next
    coordinates are numerically dependent on the chosen ones (small alpha, wide kernel: the normal
    equations square the kernel's conditioning).  The whole pool is the curve's last size; it is
    scored on the same folds, and the size rule (Karsmakers et al. 2011, §4.5) is applied to the
    complete curve: the smallest size whose CV score is within ``size_rule`` standard deviations of
    the best size's, the whole pool included.  Where the whole pool scores best, the threshold is its
    score plus ``size_rule`` times the spread of its own fold scores; the whole pool is kept where no
    SCDP size is within it, else the smallest SCDP size that is.  Where an SCDP size scores best, the
    rule on SCDP's curve stands.

    Decided by: friedman1 (m = 2,000, alpha 1e-6), SCDP stopped at 107 of 449 coefficients with CV
    MSE 2.77; the whole pool scored 1.32.  Elevators (8,752 rows, pool 500, gamma 0.0074, alpha 0.01):
    SCDP's best size (217) scored 5.448e-6, the whole pool 5.171e-6 (fold spread 2.72e-6); comparing
    the whole pool against SCDP's best minus a margin, then applying the rule to SCDP's curve alone,
    kept 106 prototypes scoring 5.74e-6 (test MSE 1.13x the whole pool's); the rule on the complete
    curve keeps the whole pool (threshold 5.443e-6).

    Rows in memory and one output: the fold scores by the sparse family's exact hold-out formulas and
    the coefficients from the same factorisation (``whole_pool_cv``, :func:`whole_pool_fold_scores`:
    the sparse model on the prototypes, equal to the direct solves to 1e-7 and ten times cheaper than
    their QR; a search's refit passes the factorisation it scored).  Otherwise one direct (guarded,
    QR when ill-conditioned) solve per fold, and the spread of SCDP's best size stands in for the
    whole pool's (its fold scores are not kept).

    Parameters
    ----------
    est : FixedSizeLSSVR or FixedSizeLSSVC
        Gives ``alpha``, ``nu``, ``size_rule`` and the scoring.
    rows, system
        The fit's rows and normal equations (:class:`lssvm.cv.fixed_size.RowsInMemory` or the
        Dask sums).
    mean, std : ndarray of shape (v, K)
        SCDP's CV curve and the spread of its fold scores, cut where its runs stopped.
    name : str
        The estimator's name, for messages.
    whole_pool_cv : callable, optional
        ``alpha -> (scores (v,), W (M + 1, v)[, spread (v,)])``.

    Returns
    -------
    None (the rule on SCDP's curve stands for every output), or (chosen, W, scores, sizes): a bool
    per output (the whole pool kept), the whole pool's coefficients (M + 1, v), its CV scores (v,)
    and the 1-based SCDP size per output (that of outputs not kept).

    Notes
    -----
    O(v K) beyond the whole pool's CV.
    """
    alpha, nu = float(est.alpha), float(est.nu)
    error_rate = est._scoring == "error_rate"
    W = spread = None
    if whole_pool_cv is not None:
        result = whole_pool_cv(alpha)
        scores, W = np.atleast_1d(result[0]), result[1]
        if len(result) > 2:
            spread = np.atleast_1d(result[2])
    else:
        sse, wrong = rows.direct_cv(system, alpha, nu, f"{name} whole-pool CV", count_wrong=error_rate)
        scores = (wrong if error_rate else sse) / rows.n_samples
    v = mean.shape[0]
    best = np.argmin(mean, axis=1)
    if spread is None:
        spread = std[np.arange(v), best]
    chosen, sizes = complete_curve_sizes(mean, std, scores, spread, est.size_rule)
    if not (scores < mean.min(axis=1)).any():
        return None
    if chosen.any() and W is None:
        W = rows.solve(system, alpha, nu, call=f"{name} on the whole pool")
    return chosen, W, scores, sizes


def complete_curve_sizes(mean, std, whole_scores, whole_spread, size_rule):
    """The size rule on SCDP's curves with the whole pool appended as their last size.

    Parameters
    ----------
    mean, std : ndarray of shape (v, K)
        SCDP's CV curve per output and the spread (standard deviation over folds) of its fold scores.
    whole_scores, whole_spread : ndarray of shape (v,)
        The whole pool's CV score and the spread of its fold scores.
    size_rule : float
        Fraction of a standard deviation (the ``size_rule`` parameter).

    Returns
    -------
    chosen : ndarray of bool, shape (v,)
        The whole pool is the pick.
    sizes : ndarray of int, shape (v,)
        The 1-based SCDP size picked (K where the whole pool is).

    Notes
    -----
    O(v K).
    """
    v, K = mean.shape
    chosen = np.zeros(v, dtype=bool)
    sizes = np.empty(v, dtype=np.intp)
    for j in range(v):
        if whole_scores[j] < mean[j].min():
            within = np.flatnonzero(mean[j] <= whole_scores[j] + size_rule * whole_spread[j])
            chosen[j] = within.size == 0
            sizes[j] = K if chosen[j] else within[0] + 1
        else:
            sizes[j] = select_model_size(mean[j], std[j], size_rule)
    return chosen, sizes


#: Cut-off of the whole-pool sparse factorisation (:func:`lssvm.solvers.factorize_sparse_rls`'s
#: default, the one the sparse criterion of the search factorises with).
WHOLE_POOL_RCOND = 1e-10


def whole_pool_fold_scores(X, Y, K, zidx, folds, kernel, alpha, scoring, fac=None, n_jobs=None, fold_spread=False):
    """CV score and coefficients of the model on the whole pool (one output) on ``folds``.

    The model is the sparse LS-SVM on the prototypes (math.md §6), and its fold scores are that
    model's exact hold-outs with the prototypes kept in the training rows
    (``basis_in_holdout="keep"``, as :class:`lssvm.selection.SparseLSSVMCV` scores them); its
    coefficients come from the same factorisation, so the score describes the fitted model.

    Parameters
    ----------
    X : ndarray of shape (N, d)
    Y : ndarray of shape (N, 1)
        Targets (codes +1/-1 for a classifier).
    K : ndarray of shape (N, M)
        ``k(X, X[zidx])``; not modified.
    zidx : ndarray of shape (M,)
        The prototypes' training rows.
    folds : list of ndarray
        Test indices of each fold.
    kernel : lssvm.kernels.Kernel
    alpha : float
    scoring : {"mse", "error_rate"}
    fac : lssvm.solvers.SparseRLSFactorization, optional
        The factorisation of this model (a search's, kept for its refit); default: factorised here.
    n_jobs : int or None
    fold_spread : bool, default=False
        Also return the spread of the fold scores (for the size rule on the complete curve).

    Returns
    -------
    scores : ndarray of shape (1,)
    W : ndarray of shape (M + 1, 1)
        Weights on the prototypes, then the intercept.
    spread : ndarray of shape (1,)
        With ``fold_spread``: the standard deviation (ddof=1) over folds of the per-fold scores
        (squared error or misclassification rate over the fold's rows), as
        :meth:`lssvm.cv.fixed_size.SizeCurves.curve` gives it for SCDP's sizes.

    Notes
    -----
    O(N M^2) for the factorisation (none with ``fac``), then O(h M^2) per fold of h rows.
    """
    from ..cv import MemorySparseEngine
    from ..solvers import factorize_sparse_rls

    if fac is None:
        fac = factorize_sparse_rls(K, K[zidx], Y, rcond=WHOLE_POOL_RCOND)
    error_rate = scoring == "error_rate"
    classes = np.array([-1.0, 1.0]) if error_rate else None
    engine = MemorySparseEngine(fac, X, X[zidx], zidx, kernel, WHOLE_POOL_RCOND, classes, n_jobs)
    folds = list(folds)
    a, b = fac.coef(float(alpha))
    W = np.vstack([a, np.reshape(b, (1, -1))])
    if not fold_spread:
        sums = engine.cv_sums(folds, np.array([float(alpha)]), "keep")
        score = sums.wrong[0] / sums.count if error_rate else sums.sse[0, 0] / sums.count
        return np.array([score]), W
    F = engine.cv_outputs(folds, np.array([float(alpha)]), "keep")  # (1, N, 1)
    Y = np.asarray(Y, dtype=float)
    if error_rate:  # as cv_sums counts them
        per_fold_errors = np.array([float(misclassified(F[:, test], Y[test])[0]) for test in folds])
    else:
        per_fold_errors = np.array([float(((F[0, test] - Y[test]) ** 2).sum()) for test in folds])
    sizes = np.array([np.size(test) for test in folds], dtype=float)
    per_fold = per_fold_errors / sizes
    spread = per_fold.std(ddof=1) if len(folds) > 1 else 0.0
    return np.array([per_fold_errors.sum() / sizes.sum()]), W, np.array([spread])
