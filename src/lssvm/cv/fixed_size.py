"""Fast v-fold CV of SCDP-grown fixed-size LS-SVMs, per model size
(Karsmakers et al. 2011, §4.4-4.5, Algorithm 4).

All folds share the prototypes, so a fold's training system is the full
system minus the fold's own Gram terms (eqs. 36-37): one O(h M^2) product
per fold instead of O((N - h) M^2).  SCDP is then run on each fold's
system; after every step the model of that size predicts the fold, giving
a validation curve over sizes 1..k_m at the cost of one SCDP run per fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .._threads import parallel_map
from ..solvers.fixed_size import (
    FixedSizeSystem,
    GramSums,
    SCDPState,
    SelectedBlock,
    SelectedColumns,
    augmented_rows,
    normal_solve_error,
    solve_guarded,
    weighted_gram_sums,
)
from ..solvers.sparse_rls import factorize_sparse_rls
from ..solvers.weighted_rls import factorize_weighted_rls
from .engine import MemorySparseEngine, TargetGroupsEngine
from .no_intercept import NoInterceptRidgeEngine
from .weighted import WeightedSparseEngine

__all__ = ["SizeCurves", "fixed_size_cv_curves", "scdp_seed", "stop_rule_met",
           "RowsInMemory", "SummedRows", "scdp_paths", "block_path_errors", "curves_from_path_errors",
           "WeightedRowsInMemory", "InterceptOnlyEngine", "selected_coordinates_held_out", "support_engine",
           "coordinate_groups", "fold_decision_values", "block_fold_values"]

METRICS = ("mse", "error_rate")
#: Bytes of SCDP paths (every fold's coefficients per size) sent with one pass
#: of :meth:`SummedRows.curves`; more alphas take more passes.
PATH_BYTES = 256 * 2**20


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
    paths : dict or None
        Only where asked for (``keep_paths``): for each ``(alpha index, output, fold)`` the run's
        selection order (k,) and its coefficients after each step (a list of k arrays, the i-th of
        length i + 1, on the order's first i + 1 coordinates): every fold model of every size.
    """

    sse: np.ndarray
    n_wrong: np.ndarray
    fold_sizes: np.ndarray
    stopped_at: np.ndarray
    paths: dict | None = field(default=None, compare=False)

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
    fold_sums=None,
    weights=None,
    keep_paths=False,
) -> SizeCurves:
    """Validation curves over model sizes for every fold, alpha and output.

    Parameters
    ----------
    system : FixedSizeSystem
        The full-data system (Gram terms of all N rows).
    K : ndarray of shape (N, M), or None with ``fold_sums``
        Kernel between the rows and the prototypes.
    Y : ndarray of shape (N, v), or None with ``fold_sums``
    folds : list of ndarray, or None with ``fold_sums``
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
    fold_sums : list of lssvm.solvers.fixed_size.GramSums, optional
        Each fold's own sums, when its rows are not in memory (Dask input,
        computed in one pass): the downdate subtracts them and the
        validation SSE is formed from them (``GramSums.sse``); the same
        SCDP runs and stopping rule, "mse" only (a misclassification count
        needs the rows; ``n_wrong`` is then NaN).
    weights : ndarray of shape (N,), optional
        Row weights (rows in memory; ``system`` the weighted one,
        :func:`lssvm.solvers.fixed_size.weighted_gram_sums`): the fold's
        downdate is weighted and its SSE and misclassification count are
        the weighted sums ``sum w e^2`` and ``sum w [wrong]``; the fold sizes
        its weight sums.
    keep_paths : bool, default=False
        Keep every run's coefficients after each step (``SizeCurves.paths``, O(k^2) floats per
        run): the fold models of every size, whose out-of-fold values
        :func:`fold_decision_values` gives at the chosen sizes.

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
    if fold_sums is not None and stop_scoring != "mse":
        raise ValueError("the misclassification rate needs the fold's rows in memory; use stop_scoring='mse'")
    D = system.n_coef
    kmax = D if max_size is None else int(max_size)
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    v = system.rhs.shape[1]
    n_folds = len(folds) if fold_sums is None else len(fold_sums)
    shape = (alphas.size, v, n_folds, kmax)
    sse = np.zeros(shape)
    wrong = np.zeros(shape)
    stopped = np.zeros(shape[:3], dtype=np.intp)
    paths = {} if keep_paths else None

    def work(f):
        if fold_sums is None:
            test = folds[f]
            Kv, Yv = K[test], Y[test]
            wv = None if weights is None else weights[test]
            train_system = system.without_rows(Kv, Yv) if wv is None else system.without(weighted_gram_sums(Kv, Yv, wv))
            Kva = augmented_rows(Kv)
            h = Yv.shape[0] if wv is None else float(wv.sum())
        else:
            train_system = system.without(fold_sums[f])
            h = fold_sums[f].n_samples
        for a, alpha in enumerate(alphas):
            A = train_system.matrix(alpha, nu)
            for j in range(v):
                state = SCDPState(A, train_system.rhs[:, j], n_candidates, seed)
                if fold_sums is None:
                    columns = SelectedColumns(Kva)
                else:
                    block = SelectedBlock(fold_sums[f].gram)
                    rhs_j = fold_sums[f].rhs[:, j]
                    yy_j = float(fold_sums[f].yy[j])
                scores = []
                path = [] if paths is not None else None
                while state.k < kmax and state.step() is not None:
                    k = state.k
                    if path is not None:
                        path.append(state.coef.copy())
                    if fold_sums is None:
                        y = Yv[:, j]
                        pred = columns.at(state.order) @ state.coef
                        e = y - pred
                        if wv is None:
                            sse[a, j, f, k - 1] = e @ e
                            wrong[a, j, f, k - 1] = np.count_nonzero((pred > 0) != (y > 0))
                        else:
                            sse[a, j, f, k - 1] = wv @ (e * e)
                            wrong[a, j, f, k - 1] = wv @ ((pred > 0) != (y > 0))
                    else:
                        # GramSums.sse on the kept block: y^T y - 2 w^T [K 1]^T y + w^T [K 1]^T [K 1] w
                        w, sel = state.coef, state.order
                        sse[a, j, f, k - 1] = max(yy_j - 2.0 * (w @ rhs_j[sel]) + w @ (block.at(sel) @ w), 0.0)
                        wrong[a, j, f, k - 1] = np.nan
                    scores.append((sse if stop_scoring == "mse" else wrong)[a, j, f, k - 1] / h)
                    if stop_rule_met(scores, stop_window, stop_tol):
                        break
                k = state.k
                stopped[a, j, f] = k
                if paths is not None:  # distinct keys per fold: safe across the folds' threads
                    paths[a, j, f] = (state.order[:len(path)].copy(), path)
                if 0 < k < kmax:
                    sse[a, j, f, k:] = sse[a, j, f, k - 1]
                    wrong[a, j, f, k:] = wrong[a, j, f, k - 1]

    parallel_map(work, range(n_folds))
    if fold_sums is not None:
        sizes = np.array([s.n_samples for s in fold_sums], dtype=float)
    else:
        sizes = np.array([len(t) if weights is None else weights[t].sum() for t in folds], dtype=float)
    return SizeCurves(sse, wrong, sizes, stopped, paths)


def fold_decision_values(K, folds, curves, sizes, alpha_index=0):
    """Out-of-fold decision values of the size selection's fold models at the chosen sizes.

    Parameters
    ----------
    K : ndarray of shape (N, M)
        Kernel between the rows and the prototype pool.
    folds : list of ndarray
        Test indices of each fold (those of ``curves``).
    curves : SizeCurves
        With ``paths`` (:func:`fixed_size_cv_curves` with ``keep_paths``).
    sizes : ndarray of int of shape (v,)
        The chosen number of non-zeros per output.
    alpha_index : int, default=0

    Returns
    -------
    ndarray of shape (N, v)
        Row i, output j: the value at row i of the model of the fold f that holds i out (SCDP run on
        the system of the rows outside fold f, grown to ``sizes[j]`` non-zeros, or to where its run
        stopped if that came first; its own prototypes from the shared pool, intercept penalty ``nu``
        included), a model that never saw row i: honest held-out values, those the curves score.
        NaN for a row in no fold.

    Notes
    -----
    O(N k) for k non-zeros (:func:`block_fold_values`).
    """
    fold_of_row = np.full(K.shape[0], -1, dtype=np.intp)
    for f, test in enumerate(folds):
        fold_of_row[test] = f
    return block_fold_values(K, fold_of_row, curves.paths, sizes, alpha_index)


def block_fold_values(K, fold_of_row, paths, sizes, alpha_index=0):
    """:func:`fold_decision_values` of some rows: ``K`` (b, M) their kernel rows, ``fold_of_row`` (b,)
    the fold that holds each out (-1: none, NaN values), ``paths`` as ``SizeCurves.paths``; (b, v),
    one product per fold and output, O(b k)."""
    F = np.full((K.shape[0], len(sizes)), np.nan)
    rows = augmented_rows(K)
    for f in np.unique(fold_of_row[fold_of_row >= 0]):
        sel = fold_of_row == f
        for j, size in enumerate(sizes):
            order, path = paths[alpha_index, j, int(f)]
            k = min(int(size), len(path))
            F[sel, j] = rows[np.ix_(sel, order[:k])] @ path[k - 1] if k else 0.0
    return F


def scdp_seed(rng):
    """The seed of SCDPP's candidate draws, taken from ``rng`` (shared by the
    estimator and the selection criterion so that both draw the same)."""
    return int(rng.randint(np.iinfo(np.int32).max))


# ---------------------------------------------------------------------------
# Fold curves in two stages: SCDP paths first, then one pass of their errors
# ---------------------------------------------------------------------------
# When a fold's rows are not in memory (Dask), its misclassified rows per model
# size need a pass over them.  SCDP's path does not depend on the scores, so
# each fold's run goes to k_m first (scdp_paths), one pass counts the errors of
# every size (block_path_errors), and rule (38) is then applied to those scores
# as fixed_size_cv_curves applies it step by step (curves_from_path_errors):
# the same curves, stops and sizes.


def scdp_paths(system, fold_sums, alphas, *, nu=1e-8, max_size=None, n_candidates=None, seed=0):
    """Every fold's SCDP run to ``max_size`` per alpha and output.

    Returns
    -------
    dict of int -> list of (order, coef_path)
        Per fold, in the order (alpha, output): the chosen coordinates
        (k,) and the lower-triangular (k, k) coefficients after each step.
        O(k^2 M) per run.
    """
    kmax = system.n_coef if max_size is None else int(max_size)
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    v = system.rhs.shape[1]
    paths = {}

    def work(f):
        train = system.without(fold_sums[f])
        runs = []
        for alpha in alphas:
            A = train.matrix(alpha, nu)
            for j in range(v):
                state = SCDPState(A, train.rhs[:, j], n_candidates, seed)
                C = np.zeros((kmax, kmax))
                while state.k < kmax and state.step() is not None:
                    C[state.k - 1, : state.k] = state.coef
                k = state.k
                runs.append((state.order[:k].copy(), C[:k, :k]))
        paths[f] = runs

    parallel_map(work, range(len(fold_sums)))
    return paths


def block_path_errors(K, Y, folds, paths, n_alphas, n_sizes):
    """SSE and misclassified rows (targets coded +1/-1) of one row block per
    alpha, output, fold and model size, each row predicted by its fold's
    path models.

    Parameters
    ----------
    K : ndarray of shape (b, M)
        The rows' kernel values at the prototypes.
    Y : ndarray of shape (b, v)
    folds : ndarray of shape (b,) of int
    paths : dict of int -> list of (order, coef_path)
        As :func:`scdp_paths` gives (coef_path (k, k'): one model per row).
    n_alphas, n_sizes : int

    Returns
    -------
    dict with "sse" and "wrong", ndarrays of shape (n_alphas, v, n_folds, n_sizes)
        Summed by ``+`` over blocks.

    Notes
    -----
    Per row: O(k^2) per alpha and output (all sizes at once).
    """
    Ka = augmented_rows(K)
    v = Y.shape[1]
    shape = (n_alphas, v, len(paths), n_sizes)
    sse, wrong = np.zeros(shape), np.zeros(shape)
    for f in np.unique(folds):
        if int(f) not in paths:  # rows never held out
            continue
        sel = folds == f
        Kf, Yf = Ka[sel], Y[sel]
        for i, (order, C) in enumerate(paths[int(f)]):
            a, j = divmod(i, v)
            P = Kf[:, order] @ C.T  # (h, k): the fold's rows under every size
            E = Yf[:, j : j + 1] - P
            sse[a, j, f, : P.shape[1]] = np.einsum("hk,hk->k", E, E)
            wrong[a, j, f, : P.shape[1]] = ((P > 0) != (Yf[:, j : j + 1] > 0)).sum(axis=0)
    return {"sse": sse, "wrong": wrong}


def curves_from_path_errors(errors, paths, fold_sizes, *, max_size, stop_window=10, stop_tol=None,
                            stop_scoring="mse"):
    """:class:`SizeCurves` from the errors of full SCDP paths, rule (38)
    applied to their scores as :func:`fixed_size_cv_curves` applies it while
    stepping (the same stops, the same padding)."""
    sse, wrong = errors["sse"].copy(), errors["wrong"].copy()
    A, v, n_folds, kmax = sse.shape
    stopped = np.zeros((A, v, n_folds), dtype=np.intp)
    for f in range(n_folds):
        for i, (order, _) in enumerate(paths[f]):
            a, j = divmod(i, v)
            scores = (sse if stop_scoring == "mse" else wrong)[a, j, f, : order.size] / fold_sizes[f]
            k = order.size
            for t in range(1, order.size + 1):
                if stop_rule_met(list(scores[:t]), stop_window, stop_tol):
                    k = t
                    break
            stopped[a, j, f] = k
            if 0 < k < kmax:
                sse[a, j, f, k:] = sse[a, j, f, k - 1]
                wrong[a, j, f, k:] = wrong[a, j, f, k - 1]
    return SizeCurves(sse, wrong, np.asarray(fold_sizes, dtype=float), stopped)


# ---------------------------------------------------------------------------
# The rows of a fixed-size fit, in memory or as sums (Dask input)
# ---------------------------------------------------------------------------
# A fixed-size fit needs from its rows: the system (sums), the folds' CV
# curves, guarded solves and the solution's error estimate.  In memory the
# kernel rows K are at hand; on Dask only the sums of each fold (one pass,
# lssvm.backends.dask.fixed_size) are.  Both classes give the estimator and the
# criterion one code path; the SCDP runs, downdates and rules are shared.


@dataclass(frozen=True)
class RowsInMemory:
    """Kernel rows ``K`` (N, M), targets ``Y`` (N, v), prototype kernel and
    the folds' test indices (or None)."""

    K: np.ndarray
    K_ZZ: np.ndarray
    Y: np.ndarray
    folds: list | None

    def system(self):
        return FixedSizeSystem.from_kernel(self.K, self.K_ZZ, self.Y)

    @property
    def n_samples(self):
        return self.K.shape[0]

    def curves(self, system, alphas, **kw):
        if kw.get("stop_scoring", "mse") == "mse":
            # the validation SSE of every size from each fold's sums, as for rows not in memory: O(k M) per
            # step instead of a pass over the fold's rows
            fold_sums = [GramSums.of_rows(self.K[test], self.Y[test]) for test in self.folds]
            return fixed_size_cv_curves(system, None, None, None, alphas, fold_sums=fold_sums, **kw)
        return fixed_size_cv_curves(system, self.K, self.Y, self.folds, alphas, **kw)

    def solve(self, system, alpha, nu, call):
        """Guarded solve of the system of all rows (QR when ill-conditioned)."""
        return solve_guarded(system.matrix(alpha, nu), system.rhs, self.K, self.K_ZZ, self.Y, alpha, nu, call=call)

    def fold_values(self, curves, sizes):
        """:func:`fold_decision_values` of these rows and folds, (N, v)."""
        return fold_decision_values(self.K, self.folds, curves, sizes)

    def fit_error(self, A_sel, sel, coef):
        return normal_solve_error(A_sel, augmented_rows(self.K)[:, sel], coef)

    def direct_cv(self, system, alpha, nu, call, count_wrong=True):
        """Per output: the SSE and misclassified rows (codes +1/-1) of the
        all-prototype model, one direct solve per fold."""
        v = self.Y.shape[1]
        sse, wrong = np.zeros(v), np.zeros(v)
        for test in self.folds:
            sub = system.without_rows(self.K[test], self.Y[test])
            train = np.ones(self.n_samples, dtype=bool)
            train[test] = False
            W = solve_guarded(sub.matrix(alpha, nu), sub.rhs, self.K[train], self.K_ZZ, self.Y[train], alpha, nu,
                              call=call)
            pred = augmented_rows(self.K[test]) @ W
            sse += ((self.Y[test] - pred) ** 2).sum(axis=0)
            wrong += ((pred > 0) != (self.Y[test] > 0)).sum(axis=0)
        return sse, wrong


@dataclass(frozen=True)
class SummedRows:
    """The rows as sums (Dask input): the :class:`GramSums` of each fold
    (``fold_sums``, None without CV) and of all rows (``total``), the
    prototype kernel, and ``path_errors``: ``(paths, n_alphas, n_sizes) ->``
    the summed :func:`block_path_errors` of all rows (one pass), for the
    misclassification counts.  The MSE comes from the sums, without a pass."""

    total: object
    K_ZZ: np.ndarray
    fold_sums: list | None
    path_errors: object = None

    def system(self):
        return FixedSizeSystem.from_sums(self.total, self.K_ZZ)

    @property
    def n_samples(self):
        return self.total.n_samples

    def _fold_sizes(self):
        return np.array([fs.n_samples for fs in self.fold_sums], dtype=float)

    def curves(self, system, alphas, *, nu=1e-8, max_size=None, n_candidates=None, seed=0, stop_window=10,
               stop_tol=None, stop_scoring="mse", keep_paths=False):
        """The curves (:func:`fixed_size_cv_curves`, or from the full paths' errors by one pass with the
        misclassification rate); ``keep_paths`` keeps the fold models (``SizeCurves.paths``)."""
        if stop_scoring == "mse":
            return fixed_size_cv_curves(system, None, None, None, alphas, fold_sums=self.fold_sums, nu=nu,
                                        max_size=max_size, n_candidates=n_candidates, seed=seed,
                                        stop_window=stop_window, stop_tol=stop_tol, keep_paths=keep_paths)
        kmax = system.n_coef if max_size is None else int(max_size)
        alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
        # the paths travel to every task: a few alphas per pass keep them under PATH_BYTES
        per_alpha = 8 * kmax * kmax * len(self.fold_sums) * system.rhs.shape[1]
        step = max(1, int(PATH_BYTES // per_alpha))
        paths, errors = {f: [] for f in range(len(self.fold_sums))}, []
        for lo in range(0, alphas.size, step):
            part = scdp_paths(system, self.fold_sums, alphas[lo : lo + step], nu=nu, max_size=kmax,
                              n_candidates=n_candidates, seed=seed)
            errors.append(self.path_errors(part, alphas[lo : lo + step].size, kmax))
            for f, runs in part.items():
                paths[f].extend(runs)  # (alpha, output) order is kept
        errors = {key: np.concatenate([e[key] for e in errors]) for key in ("sse", "wrong")}
        curves = curves_from_path_errors(errors, paths, self._fold_sizes(), max_size=kmax, stop_window=stop_window,
                                         stop_tol=stop_tol, stop_scoring=stop_scoring)
        if not keep_paths:
            return curves
        # the runs went on to max_size: each kept to where rule (38) stops it, as the in-memory runs stop
        v = system.rhs.shape[1]
        kept = {}
        for f, runs in paths.items():
            for i, (order, C) in enumerate(runs):
                a, j = divmod(i, v)
                k = int(curves.stopped_at[a, j, f])
                kept[a, j, f] = (order[:k].copy(), [C[t, : t + 1].copy() for t in range(k)])
        return replace(curves, paths=kept)

    def solve(self, system, alpha, nu, call):
        return solve_guarded(system.matrix(alpha, nu), system.rhs, None, self.K_ZZ, None, alpha, nu, call=call,
                             gram=system.gram)

    def fit_error(self, A_sel, sel, coef):
        return normal_solve_error(A_sel, None, coef, gram=self.total.gram[np.ix_(sel, sel)])

    def direct_cv(self, system, alpha, nu, call, count_wrong=False):
        """As :meth:`RowsInMemory.direct_cv`; the SSE from the sums, the
        misclassified rows (``count_wrong``) by one pass, else NaN."""
        v = system.rhs.shape[1]
        sse, wrong = np.zeros(v), np.full(v, np.nan)
        every = np.arange(system.n_coef)
        paths = {}
        for f, fs in enumerate(self.fold_sums):
            sub = system.without(fs)
            W = solve_guarded(sub.matrix(alpha, nu), sub.rhs, None, self.K_ZZ, None, alpha, nu, call=call,
                              gram=sub.gram)
            sse += [fs.sse(W[:, j], every, j) for j in range(v)]
            paths[f] = [(every, W[:, j][None]) for j in range(v)]
        if count_wrong:
            wrong = self.path_errors(paths, 1, 1)["wrong"][0, :, :, 0].sum(axis=1)
        return sse, wrong


class WeightedRowsInMemory:
    """The rows of a weighted fixed-size fit, in memory: the protocol of
    :class:`lssvm.cv.fixed_size.RowsInMemory` (``system``, ``n_samples``,
    ``curves``, ``solve``, ``fit_error``, ``direct_cv``) on the weighted
    sums (:func:`lssvm.solvers.fixed_size.weighted_gram_sums`).

    ``n_samples`` is ``sum w``; the curves' fold sizes are the folds' weight
    sums, so every score is a weighted mean (``sum w e^2 / sum w``).  The
    guarded solves re-solve by QR on the rows scaled by ``sqrt(w)``.

    Parameters
    ----------
    K : ndarray of shape (N, M)
    K_ZZ : ndarray of shape (M, M)
    Y : ndarray of shape (N, v)
    weights : ndarray of shape (N,)
    folds : list of ndarray or None
        Test indices of the size-selection folds.
    """

    def __init__(self, K, K_ZZ, Y, weights, folds):
        self.K, self.K_ZZ, self.Y, self.weights, self.folds = K, K_ZZ, Y, weights, folds
        self.fold_sums = None
        if folds is not None:
            self.fold_sums = [weighted_gram_sums(K[test], Y[test], weights[test]) for test in folds]
            if any(not fs.n_samples > 0 for fs in self.fold_sums):
                raise ValueError("a size-selection fold holds only rows of weight 0, so its weighted error is "
                                 "undefined: use fewer folds (cv) or shuffled folds")

    def system(self):
        return FixedSizeSystem.from_sums(weighted_gram_sums(self.K, self.Y, self.weights), self.K_ZZ)

    @property
    def n_samples(self):
        return float(self.weights.sum())

    def curves(self, system, alphas, **kw):
        """Weighted validation curves: the MSE from the folds' weighted sums, the error rate from the rows."""
        if kw.get("stop_scoring", "mse") == "mse":
            return fixed_size_cv_curves(system, None, None, None, alphas, fold_sums=self.fold_sums, **kw)
        return fixed_size_cv_curves(system, self.K, self.Y, self.folds, alphas, weights=self.weights, **kw)

    def solve(self, system, alpha, nu, call):
        return solve_guarded(system.matrix(alpha, nu), system.rhs, self.K, self.K_ZZ, self.Y, alpha, nu, call=call,
                             weights=self.weights)

    def fit_error(self, A_sel, sel, coef):
        return normal_solve_error(A_sel, np.sqrt(self.weights)[:, None] * augmented_rows(self.K)[:, sel], coef)

    def direct_cv(self, system, alpha, nu, call, count_wrong=False):
        """Per output: the weighted SSE and weight of misclassified rows of the all-prototype model,
        one guarded solve per fold."""
        v = self.Y.shape[1]
        sse, wrong = np.zeros(v), np.zeros(v)
        for test, fs in zip(self.folds, self.fold_sums, strict=True):
            train = np.ones(self.K.shape[0], dtype=bool)
            train[test] = False
            sub = system.without(fs)
            W = solve_guarded(sub.matrix(alpha, nu), sub.rhs, self.K[train], self.K_ZZ, self.Y[train], alpha, nu,
                              call=call, weights=self.weights[train])
            pred = augmented_rows(self.K[test]) @ W
            w = self.weights[test]
            sse += w @ (self.Y[test] - pred) ** 2
            wrong += w @ ((pred > 0) != (self.Y[test] > 0))
        return sse, wrong


class InterceptOnlyEngine:
    """The engine of outputs whose SCDP run kept the intercept alone (no prototype): their model is the
    training rows' mean at every alpha, so a held-out row's value is the mean of the rows trained on
    (no basis point to remove or keep).  Rows in memory; the per-row methods of the protocol
    (:class:`lssvm.cv.SparseEngine`) that :class:`lssvm.cv.TargetGroupsEngine` assembles, O(m v) each.

    Parameters
    ----------
    Y : ndarray of shape (m, v)
        The outputs' training targets (coded for classifiers).
    """

    rows_in_memory = True
    n_basis = 0

    def __init__(self, Y):
        self.Y = Y

    @property
    def n_samples(self):
        return self.Y.shape[0]

    def in_memory(self, what, hint=""):
        return self

    def targets(self):
        return self.Y

    def _per_alpha(self, F, alphas):
        return np.broadcast_to(F, (np.size(alphas),) + F.shape).copy()

    def _trained_without(self, test):
        train = np.ones(self.n_samples, dtype=bool)
        train[test] = False
        return self.Y[train].mean(axis=0)

    def loo_residuals(self, alphas):
        m = self.n_samples
        return self._per_alpha((self.Y - self.Y.mean(axis=0)) * (m / (m - 1.0)), alphas)

    def cv_outputs(self, folds, alphas, basis_in_holdout="remove"):
        F = np.empty(self.Y.shape)
        for test in folds:
            F[test] = self._trained_without(test)
        return self._per_alpha(F, alphas)

    def holdout_outputs(self, test_indices, alphas, basis_in_holdout="remove"):
        test = np.asarray(test_indices)
        test = np.flatnonzero(test) if test.dtype == bool else test
        return self._per_alpha(np.tile(self._trained_without(test), (test.size, 1)), alphas)


def coordinate_groups(coef):
    """The outputs (columns of ``coef``, shape (M + 1, v)) grouped by the coordinates their SCDP runs chose
    (the non-zeros among prototypes and intercept), in order of first appearance: a list of index arrays."""
    groups = {}
    for j in range(coef.shape[1]):
        groups.setdefault((coef[:, j] != 0).tobytes(), []).append(j)
    return [np.array(g) for g in groups.values()]


def support_engine(X, Y, Z, indices, kernel, coef, support, *, classes=None, weights=None, block_size=None,
                   n_jobs=None, name="this model"):
    """The engine (:class:`lssvm.cv.SparseEngine`) of a fixed-size model fitted in memory: the sparse model on
    the prototypes that carry a weight (weighted with ``weights``), O(m s d + m s^2 + s^3) for s of them; the
    in-memory counterpart of :func:`lssvm.backends.dask.fixed_size.support_engine`.

    An output whose SCDP run left the intercept out is the ridge without intercept on its prototypes
    (:class:`lssvm.cv.no_intercept.NoInterceptRidgeEngine`); a classifier's outputs on different coordinates
    get one engine per group (:class:`lssvm.cv.TargetGroupsEngine`), an output on the intercept alone the
    training mean (:class:`InterceptOnlyEngine`).

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        The training targets (coded +1/-1 for a classifier).
    Z : ndarray of shape (M, d)
        The prototype pool.
    indices : ndarray of shape (M,) or None
        Their training-row indices.
    kernel : lssvm.kernels.Kernel
    coef : ndarray of shape (M + 1, v)
        The fitted coefficients (prototypes, then the intercept).
    support : ndarray of shape (s,)
        The prototypes with a weight, in the model's order (one output).
    classes : ndarray or None
        A classifier's labels.

    Raises
    ------
    ValueError
        Where no sparse model is the fitted one: a weighted fit without the intercept, no coordinate, a
        regressor without prototype, or a regressor's outputs on different prototypes (its methods run
        output group by output group).
    """
    M = Z.shape[0]
    chosen = coef[:M] != 0  # (M, v): the prototypes each output's SCDP run gave a weight
    coords = coef != 0  # (M + 1, v): and whether it chose the intercept
    if np.any(coef[M] == 0) and weights is not None:
        raise ValueError(
            "SCDP left the intercept out of this weighted model (its coefficient is 0), while the exact "
            "weighted CV engine's model has an unpenalised intercept; use a larger max_size or solver='direct'")

    def engine(Y, support, group_classes, intercept):
        return _engine_at_support(X, Y, Z, indices, kernel, support, group_classes, classes is not None, weights,
                                  block_size, n_jobs, intercept)

    if np.all(coords == coords[:, :1]) and (classes is None or chosen[:, 0].any()):
        support = np.asarray(support, dtype=np.intp) if coef.shape[1] == 1 else np.flatnonzero(chosen[:, 0])
        return engine(Y, support, classes, bool(coords[M, 0]))
    if classes is None:
        raise ValueError(
            f"the {coef.shape[1]} outputs of {name} use different prototypes (each output's "
            "SCDP run chooses its own), so no one sparse model is the fitted one: its methods run output "
            "group by output group; fit one output at a time, or use solver='direct'")
    # a classifier's one-vs-rest outputs on their own supports (an output's may be the intercept alone):
    # one engine per group, assembled
    cols = coordinate_groups(coef)
    engines = [engine(Y[:, g], np.flatnonzero(chosen[:, g[0]]), None, bool(coords[M, g[0]])) for g in cols]
    return TargetGroupsEngine(engines, cols, Y, classes, weights=weights)


def _engine_at_support(X, Y, Z, indices, kernel, support, classes, classifier, weights, block_size, n_jobs,
                       intercept):
    """The engine of the sparse model on prototypes ``support`` for targets ``Y`` (a classifier's where
    ``classifier``; ``classes`` None for one group of its outputs); without ``intercept``, the ridge without
    intercept on them."""
    rows = None if indices is None else np.asarray(indices)[support]
    if support.size and not intercept:
        return NoInterceptRidgeEngine(X, Y, Z[support], rows, kernel, classes, unavailable=(
            "this fixed-size model has none (its SCDP run left the intercept out): use a larger max_size or "
            "solver='direct'"))
    if not intercept:  # neither a prototype nor the intercept: the model is 0
        raise ValueError("this model uses no coordinate (SCDP chose neither a prototype nor the intercept), so "
                         "it has nothing to cross-validate: use a larger max_size, size_rule=0 or solver='direct'")
    if support.size == 0 and classifier:  # an output that predicts its training mean
        return InterceptOnlyEngine(Y)
    if support.size == 0:
        raise ValueError(
            "this model uses no prototype (SCDP stopped at the intercept alone), so it has no basis to "
            "cross-validate; its out-of-sample outputs are the training mean's: use a larger max_size, "
            "size_rule=0 or solver='direct'")
    Z = Z[support]
    K = kernel(X, Z, block_size=block_size)
    K_SS = K[rows] if rows is not None else kernel(Z, Z)
    if weights is not None:  # the weighted sparse model on the support (a weighted fit)
        fac = factorize_weighted_rls(K, K_SS, Y, weights)
        return WeightedSparseEngine(fac, X, Z, rows, kernel, 1e-10, classes, n_jobs)
    fac = factorize_sparse_rls(K, K_SS, Y, overwrite_k=True)
    return MemorySparseEngine(fac, X, Z, rows, kernel, 1e-10, classes, n_jobs)


def selected_coordinates_held_out(est, X, Y, folds=None, weights=None):
    """Exact held-out decision values of a fitted fixed-size model on the coordinates each output's
    SCDP run chose (prototypes and, where chosen, the intercept), the intercept's penalty ``nu``
    included: the model ``min ||y - A_S c||^2 + c^T P_S c`` with ``A = [k(X, Z) 1]`` and
    ``P = diag(alpha K_ZZ, nu)`` restricted to the chosen coordinates S.

    Parameters
    ----------
    est : FixedSizeLSSVC
        Fitted on ``X``, ``Y``.
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        The coded targets of the fit.
    folds : list of ndarray, optional
        Test rows of each fold (a partition); None: leave-one-out.
    weights : ndarray of shape (m,), optional
        Row weights of a weighted fit: the model minimises ``sum_i w_i (y_i - A_i c)^2 + c^T P c``, and
        each held-out model is that one refitted without the held-out rows.

    Returns
    -------
    ndarray of shape (m, v)
        Leave-one-out: the coordinates kept, ``y_i - (y_i - f_i) / (1 - h_ii)``.  Folds: each fold
        refitted on its training rows without the prototypes its test rows are (``basis_in_holdout``
        "remove", by row index).

    Notes
    -----
    O(m M d) for the kernel, then per output O(m s^2 + s^3) for leave-one-out and O(h s^2 + s^3) per
    fold of h rows, s the chosen coordinates.
    """
    Z, M, W = est.basis_vectors_, est.n_basis_, est.coef_full_
    A = np.column_stack([est.kernel_(X, Z), np.ones(X.shape[0])])
    P = np.zeros((M + 1, M + 1))
    P[:M, :M] = float(est.alpha) * est.kernel_(Z, Z)
    P[M, M] = float(est.nu)
    rows = est.basis_indices_
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    F = np.zeros(Y.shape)
    for j in range(Y.shape[1]):
        sel = np.flatnonzero(W[:, j] != 0)
        if sel.size == 0:
            continue
        if folds is None:  # h_ii = w_i a_i G^-1 a_i^T; a zero-weight row is its own held-out model
            As = A[:, sel]
            G = As.T @ (w[:, None] * As) + P[np.ix_(sel, sel)]
            coef = np.linalg.solve(G, As.T @ (w * Y[:, j]))
            h = w * np.einsum("ij,ij->i", As, np.linalg.solve(G, As.T).T)
            F[:, j] = Y[:, j] - (Y[:, j] - As @ coef) / (1.0 - h)
            continue
        for test in folds:
            keep = sel if rows is None else sel[~np.isin(sel, np.flatnonzero(np.isin(rows, test)))]
            train = np.ones(X.shape[0], dtype=bool)
            train[test] = False
            At, wt = A[np.ix_(train, keep)], w[train]
            coef = np.linalg.solve(At.T @ (wt[:, None] * At) + P[np.ix_(keep, keep)], At.T @ (wt * Y[train, j]))
            F[test, j] = A[np.ix_(test, keep)] @ coef
    return F
