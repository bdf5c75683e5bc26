"""``search="gradient"`` for :class:`SparseLSSVRCV` / :class:`SparseLSSVCCV`:
L-BFGS-B on the log widths and log alpha, driven by the exact
CV error and its gradient (:func:`lssvm.selection.cv_error_and_gradient`).

The search
1. scores the isotropic RBF grid (``param_space["gamma"]`` x ``alphas``) on
   a kernel-independent basis drawn once ("random", "kcenter" or row
   indices; ``basis="auto"``, the default, is "random"), exactly as
   ``search="grid"`` does; with ``basis="pchol"`` the grid runs on the
   pivoted-Cholesky rows at the scale width, and the gradient search on
   those at the best grid width, drawn once there and then kept fixed (the
   criterion stays smooth in the widths);
2. starts SciPy's L-BFGS-B from the best grid point (every ARD width equal
   to its gamma), then from ``n_restarts`` points drawn around it with the
   seed (log widths + N(0, 1)); a run stops where a step gains < ``GRADIENT_FTOL``
   or at ``max_evaluations`` evaluations, by default (None)
   :func:`gradient_evaluations`: ``max(60, 3 (d' + 1))`` for d' non-constant
   inputs (Friedman #1, d = 20, converged in 49-63; puma32H, d = 32, needed
   148-222: docs/benchmarks.md);
3. after each L-BFGS-B run, scores the exact CV over the alpha grid at the
   run's best widths (one factorisation); where an alpha there is better by
   more than ``ALPHA_REFINE_RTOL``, it restarts L-BFGS-B from it (at most
   ``ALPHA_REFINEMENTS`` times per start; after the last, it keeps that
   alpha).  L-BFGS-B's first steps from a heavily regularised isotropic
   start can throw alpha far below the model's spectrum, where the CV error
   is flat in ``log alpha`` and L-BFGS-B stops: on puma32H (m = 4000) this
   left alpha at 1e-8 where 3e-4 was better (docs/benchmarks.md);
4. with ``selection_rule="one-se"`` (the default; exact LOO, ``scoring``
   "mse", no ``hyper_penalty``), runs a short L-BFGS-B search of the log
   evidence from the same isotropic start, then keeps, among all the points
   evaluated whose LOO error lies within one standard error (at most 2 %)
   of the lowest, the one of highest log evidence (:mod:`lssvm.estimators.gradient_select`:
   the lowest LOO error over-fits with d + 1 hyper-parameters); with "min"
   (and for the other criteria) it keeps the point of the lowest criterion;
5. refits there at the estimator's ``rcond`` (the search itself evaluates
   down to ``SEARCH_RCOND``).

L-BFGS-B minimises ``log`` of the mean squared CV residual (the same
minimiser; its gradient does not depend on the scale of the targets).  With
``scoring="evidence"`` (regression) it minimises minus the log evidence of
the sparse model per target value instead
(:func:`lssvm.selection.gradient.evidence_and_gradient`), the criterion a
Gaussian process maximises; the grid stage then ranks by the evidence too.

Optionally the criterion is Cawley & Talbot's (JMLR 8, 2007, §4) Bayesian
regularisation of the hyper-parameters, ``log MSE + (p / N) log Omega``
(:func:`lssvm.selection.gradient.search_objective` derives it and says where its
minimum collapses); the search warns (``SearchEdgeWarning``) when every width
ends more than ``1 / COLLAPSE_RATIO`` times below the isotropic start.

The search is an object, :class:`GradientSearch`, built from the estimator's
parameters; :meth:`GradientSearch.run` returns a :class:`GradientSearchResult`,
which the estimator stores as its fitted attributes.  The defaults it resolves
(``basis="auto"``, the evaluation budget) are the module constants below.

Input relevance (``feature_relevance_``) is the derivative-based
sensitivity of the fitted model, not the normalised widths: see
:func:`feature_relevance`.

Does it carry over to Nyström?  Not cheaply: the Nyström LS-SVMs truncate
the eigen-decomposition of ``K_BB`` to a rank, and the derivative of a
truncated eigenbasis needs the eigenvector perturbations (O(n^3) per
parameter direction, not one adjoint pass), so it is not implemented.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from ..basis import default_basis_size, default_n_basis, select_basis
from ..exceptions import (
    NumericalWarning,
    SearchEdgeWarning,
    numerical_warnings_collect,
    numerical_warnings_ignore,
    numerical_warnings_raise,
    warn_numerical,
)
from ..kernels import make_kernel
from ..selection import SparseLSSVMCV, cv_error_and_gradient, grid_search
from ..selection.gradient import evidence_and_gradient, search_objective
from ..selection.relevance import feature_relevance
from .gradient_select import ALPHA_REFINE_RTOL, SELECTION_RULES, one_se_choice, refined_alpha

__all__ = ["ALPHA_BOUNDS", "AUTO_BASIS", "AUTO_BASIS_CAP", "FIXED_AFTER_GRID", "GAMMA_BOUNDS", "ALPHA_REFINE_RTOL",
           "GRADIENT_EVALUATIONS_PER_PARAMETER", "GRADIENT_FTOL", "GRADIENT_MIN_EVALUATIONS", "GradientSearch",
           "GradientSearchResult", "auto_basis", "feature_relevance", "gradient_evaluations", "search_objective"]

#: Range of every width gamma_j searched (inputs on unit scale: 1e-9 switches a feature
#: off, 1e3 is a width far below the data's resolution).  A lower bound of 1e-6 is too
#: high: there a noise input still moves the kernel by ~1e-5 relative, which both the
#: LOO error and the evidence fit (puma32H, m = 4000: log evidence 979 at 1e-6 against 988
#: at 1e-9, the GP's optimum; docs/benchmarks.md).  scikit-learn's
#: anisotropic RBF bounds length-scales by 1e5 (gamma >= 5e-11).
GAMMA_BOUNDS = (1e-9, 1e3)
#: hyper_penalty: every width below this fraction of the isotropic start's is reported as a collapse.
COLLAPSE_RATIO = 1e-3
#: Range of alpha searched.
ALPHA_BOUNDS = (1e-10, 1e6)
_KERNEL_INDEPENDENT = ("random", "kcenter")
#: After each L-BFGS-B run, the alpha path at its best widths may restart it (at most this many times per start,
#: when the path's best alpha lowers the CV MSE by more than ``ALPHA_REFINE_RTOL``).
ALPHA_REFINEMENTS = 2
#: Smallest reciprocal condition estimate of K_BB at which the search still
#: evaluates the criterion.  The refit uses the estimator's ``rcond``: where K_BB
#: at the chosen widths is singular there, the model is solved on K_BB's range and
#: rescored (on puma32H and Friedman #1 its LOO error moved by < 0.1 %, its test
#: error by < 1e-5 relative); a NumericalWarning says so when it scores worse by
#: more than ``REFIT_RTOL``.
SEARCH_RCOND = 1e-14
REFIT_RTOL = 1e-3

#: basis="auto" (the default) means this for search="gradient" (docs/notes.md).
AUTO_BASIS = "random"
#: ... of at most this many rows for n_basis=None: ``lssvm.basis.default_n_basis(m, AUTO_BASIS_CAP)``, 300 from
#: m = 900 (the random basis's own default, 200, lost 11-31 % on pol; docs/notes.md).
AUTO_BASIS_CAP = 300
#: basis="pchol": the pivoted-Cholesky rows of the best isotropic grid point, drawn once after the
#: grid and then kept fixed, so the criterion stays a smooth function of the widths.
FIXED_AFTER_GRID = ("pchol",)
#: max_evaluations=None: L-BFGS-B's cap per start (and of the evidence search) for p widths + log alpha,
#: ``max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (p + 1))`` (docs/notes.md).
GRADIENT_MIN_EVALUATIONS = 60
GRADIENT_EVALUATIONS_PER_PARAMETER = 3
#: L-BFGS-B stops once an iteration lowers the objective by less than this, relative to max(|f|, 1).  SciPy's
#: 2.2e-9 spent the last 35-45 % of each MAGIC start on gains below 1e-4 in log MSE (inside the one-SE band).
GRADIENT_FTOL = 1e-5


def auto_basis(basis, n_basis, m, n_distinct=None):
    """``(basis, n_basis)`` the gradient search draws for the estimator's ``basis`` and ``n_basis`` on m rows:
    "auto" is ``AUTO_BASIS`` ("random") of ``n_basis`` rows, by default ``default_n_basis(m, AUTO_BASIS_CAP)``
    (``min(300, ceil(10 sqrt(m)), m)``: 300 at m = 2000 and 4000), at most the ``n_distinct`` distinct rows
    (a random basis draws distinct rows: the motorcycle data's 133 rows hold 94); anything else as given."""
    if isinstance(basis, str) and basis == "auto":
        if n_basis is not None:
            return AUTO_BASIS, n_basis
        return AUTO_BASIS, min(default_n_basis(m, AUTO_BASIS_CAP), m if n_distinct is None else n_distinct)
    return basis, n_basis


def gradient_evaluations(max_evaluations, n_parameters):
    """L-BFGS-B's evaluation cap per start: ``max_evaluations`` as given, or for None
    ``max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (n_parameters + 1))``
    (``n_parameters``: the widths searched, d for "ard", 1 for "rbf"; + 1 for log alpha)."""
    if max_evaluations is not None:
        return int(max_evaluations)
    return max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (n_parameters + 1))


class _Stop(Exception):
    """A non-finite criterion or gradient: end this start at its best point."""


class _OutOfBudget(Exception):
    """The evaluation cap or the deadline of :meth:`GradientSearch.run_from`: end every start at the best point."""


@dataclass
class GradientSearchResult:
    """What :meth:`GradientSearch.run` found, stored by the estimator as its fitted attributes: ``grid`` (the
    isotropic grid that started L-BFGS-B: ``cv_results_``), ``trace`` (``gradient_trace_``), ``selection`` (the
    one-SE record, ``gradient_selection_``), ``basis_rows``, ``basis`` (``gradient_basis_``), ``max_evaluations``
    (per start), the chosen ``alpha``, ``gamma`` and ``best_score`` (minus the CV MSE, or the total log
    evidence), ``model`` (fitted there on all rows at the estimator's ``rcond``), ``feature_relevance``."""

    grid: object
    scoring: str
    n_evaluations: int
    cv_folds: object
    trace: dict
    selection: dict | None
    basis_rows: np.ndarray
    basis: dict
    max_evaluations: int
    alpha: float = np.nan
    gamma: object = None
    best_score: float = np.nan
    model: object = None
    feature_relevance: np.ndarray | None = None
    search_time: float = 0.0  # seconds, of the search and of the fit of ``model``
    refit_time: float = 0.0
    stopped: str | None = None  # "evaluations" or "time": what ended a capped search (run_from) before L-BFGS-B did


class GradientSearch:
    """L-BFGS-B over a sparse LS-SVM's log widths and log alpha from an isotropic grid (steps: module docstring).

    Parameters
    ----------
    make_model : callable
        ``make_model(**params)``: an unfitted model of the family (the estimator's model parameters with
        ``params`` on top), for the fit at the chosen point.
    kernel, basis, n_basis, basis_in_holdout, basis_tol, pivot_tol, rcond, normalize_kernel, scoring,
    max_evaluations, n_restarts, hyper_penalty, selection_rule
        As for :class:`lssvm.SparseLSSVRCV` with ``search="gradient"`` (``PARAMETERS``).
    classification : bool
        Labels (coded +1/-1) instead of targets.  :meth:`run` returns a :class:`GradientSearchResult`.
    """

    def __init__(self, make_model, *, kernel, basis="auto", n_basis=None, basis_in_holdout="remove", basis_tol=1e-6,
                 pivot_tol=1e-6, rcond=1e-10, normalize_kernel=False, scoring=None, max_evaluations=None,
                 n_restarts=2, hyper_penalty=False, selection_rule="one-se", classification=False):
        self.make_model, self.kernel, self.basis, self.n_basis = make_model, kernel, basis, n_basis
        self.basis_in_holdout, self.basis_tol, self.pivot_tol, self.rcond = basis_in_holdout, basis_tol, pivot_tol, rcond
        self.normalize_kernel, self.scoring, self.max_evaluations = normalize_kernel, scoring, max_evaluations
        self.n_restarts, self.hyper_penalty, self.selection_rule = n_restarts, hyper_penalty, selection_rule
        self.classification = classification

    #: The estimator parameters the search reads (besides ``make_model`` and ``classification``).
    PARAMETERS = ("kernel", "basis", "n_basis", "basis_in_holdout", "basis_tol", "pivot_tol", "rcond",
                  "normalize_kernel", "scoring", "max_evaluations", "n_restarts", "hyper_penalty", "selection_rule")

    def check(self):
        """Refuse what the gradient search cannot do, with a clear message (before any work)."""
        basis = self.basis
        if isinstance(basis, str) and basis not in _KERNEL_INDEPENDENT + FIXED_AFTER_GRID + ("auto",):
            raise ValueError(
                f"search='gradient' needs a basis that stays fixed while the widths move, so that the CV error is "
                f"a smooth function of them: basis='auto' (the default: 'random'), 'random', 'kcenter', 'pchol' "
                f"(drawn once at the best isotropic grid point) or row indices; got basis={basis!r} (its selection "
                "changes with every width)"
            )
        if not isinstance(self.kernel, str) or self.kernel not in ("ard", "rbf"):
            raise ValueError(f"search='gradient' tunes the widths of kernel='ard' (one per feature) or 'rbf'; "
                             f"got kernel={self.kernel!r}")
        if self.normalize_kernel:
            raise ValueError("search='gradient' does not support normalize_kernel=True (ARD/RBF have k(x, x) = 1)")
        if self.scoring not in (None, "mse", "evidence"):
            raise ValueError(f"search='gradient' minimises the mean squared CV residual (scoring='mse' or None) or "
                             f"minus the log evidence (scoring='evidence'); got {self.scoring!r}")
        if self.scoring == "evidence" and (self.classification or self.hyper_penalty):
            raise ValueError("scoring='evidence' in search='gradient' is for regression (SparseLSSVRCV) without "
                             "hyper_penalty (Cawley-Talbot regularise the CV error, not the evidence)")
        n = self.n_restarts
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"n_restarts must be an integer >= 0; got {n!r}")
        if not isinstance(self.hyper_penalty, (bool, np.bool_)):
            raise ValueError(f"hyper_penalty must be True (Cawley-Talbot regularisation) or False; "
                             f"got {self.hyper_penalty!r}")
        if self.selection_rule not in SELECTION_RULES:
            raise ValueError(f"selection_rule must be one of {list(SELECTION_RULES)}; got {self.selection_rule!r}")
        return self

    def _pchol_rows(self, X, gamma, seed):
        """The pivoted-Cholesky rows of the isotropic RBF kernel at ``gamma`` (the best grid width), at the
        basis size rule (``n_basis=None``: ``lssvm.basis.default_basis_size``) and tolerances (``seed`` breaks
        ties between pivots)."""
        n = default_basis_size("pchol", self.n_basis, X.shape[0], self.classification)
        sel = select_basis(X, make_kernel("rbf", gamma=gamma), "pchol", n, tol=self.basis_tol,
                           pivot_tol=self.pivot_tol, rcond=self.rcond, random_state=seed)
        return np.asarray(sel.indices)

    def run(self, X, y, gammas, alphas, cv, rng, groups=None, callback=None):
        """Search on validated rows; returns a :class:`GradientSearchResult`.

        Parameters
        ----------
        X : ndarray of shape (m, d)
        y : ndarray of shape (m,) or (m, v), or labels (classification)
        gammas : ndarray of float
            The isotropic widths of the starting grid.
        alphas : ndarray of float
            The starting grid's alpha path (also the path that refines alpha after each run).
        cv : "loo", int, splitter or iterable of (train, test)
        rng : numpy.random.RandomState
            Seeds the basis draw, the restarts and the pivoted-Cholesky ties.
        groups : array-like of shape (m,), optional
        callback : callable, optional
            ``callback(params, path)`` after every grid evaluation.

        Notes
        -----
        Each evaluation costs one factorisation and one adjoint pass, O(m n^2 + m n d); the grid costs what
        ``search="grid"`` does on the same basis.
        """
        classification = self.classification
        t0 = time.perf_counter()
        basis, n_basis = auto_basis(self.basis, self.n_basis, X.shape[0], np.unique(X, axis=0).shape[0])
        criterion = SparseLSSVMCV(X, y, kernel="rbf", cv=cv, alphas=alphas, classification=classification,
                                  groups=groups, random_state=rng, basis=basis, n_basis=n_basis,
                                  basis_in_holdout=self.basis_in_holdout, rcond=self.rcond)
        evidence = self.scoring == "evidence"
        scoring = "evidence" if evidence else "mse"
        # the grid only starts L-BFGS-B, whose widths and alpha range over GAMMA_BOUNDS / ALPHA_BOUNDS: no edge warning
        grid = grid_search(criterion, {"gamma": gammas}, scoring, callback=callback, warn_edges=False)
        self._rng = rng
        g0, a0 = float(grid.best_params["gamma"]), float(grid.best_params["alpha"])
        rows = criterion.rows_for(gamma=g0)
        pchol_seed = None
        if isinstance(self.basis, str) and self.basis in FIXED_AFTER_GRID:  # pchol at the best grid width, then fixed
            pchol_seed = int(rng.randint(2**31 - 1))
            rows = self._pchol_rows(X, g0, pchol_seed)
        folds = None if criterion.loo else criterion.folds
        return self._search_from(X, y, g0, a0, rows, criterion.alphas, folds, groups, grid=grid, t0=t0,
                                 n_targets=criterion.Y.size, constant=self._constant_targets(criterion),
                                 basis={"basis": basis if isinstance(basis, str) else "rows", "gamma": g0,
                                        "n_basis": int(np.size(rows)), "random_state": pchol_seed})

    def run_from(self, X, y, gamma, alpha, rows, alphas, folds=None, groups=None, *, max_total_evaluations=None,
                 deadline=None):
        """L-BFGS-B from an isotropic point found elsewhere (a grid, coarse-to-fine or CSA search), on a given basis.

        Parameters
        ----------
        X : ndarray of shape (m, d)
        y : ndarray of shape (m,) or (m, v), or labels (classification)
        gamma, alpha : float
            The start: every width ``gamma`` (for ``kernel="ard"``), and ``alpha``.
        rows : ndarray of int
            The basis rows, kept fixed (the criterion stays smooth in the widths).
        alphas : ndarray of float
            The alpha path that refines alpha after each run (step 3 of the module's docstring).
        folds : list of ndarray or None
            The hold-out rows of each fold (None: exact LOO).
        groups : array-like of shape (m,), optional
        max_total_evaluations : int, optional
            Cap on the criterion evaluations of all L-BFGS-B runs together (the refinements' restarts included).
        deadline : float, optional
            A ``time.perf_counter()`` value: no evaluation starts that would, at the time of the last, end
            after it.

        Returns
        -------
        GradientSearchResult
            ``grid`` None; ``stopped`` says whether the cap or the deadline ended the search.

        Notes
        -----
        Each evaluation costs one factorisation and one adjoint pass, O(m n^2 + m n d), for n basis rows.
        """
        m = X.shape[0]
        cv = "loo" if folds is None else [(np.setdiff1d(np.arange(m), f), f) for f in folds]
        criterion = SparseLSSVMCV(X, y, kernel="rbf", cv=cv, alphas=alphas, classification=self.classification,
                                  groups=groups, random_state=0, basis=np.asarray(rows),
                                  basis_in_holdout=self.basis_in_holdout, rcond=self.rcond)
        folds = None if criterion.loo else criterion.folds
        return self._search_from(X, y, float(gamma), float(alpha), np.asarray(rows), criterion.alphas, folds, groups,
                                 n_targets=criterion.Y.size, constant=self._constant_targets(criterion),
                                 basis={"basis": "rows", "gamma": float(gamma), "n_basis": int(np.size(rows)),
                                        "random_state": None},
                                 max_total_evaluations=max_total_evaluations, deadline=deadline)

    def _constant_targets(self, criterion):
        return not self.classification and bool(np.all(np.ptp(criterion.Y, axis=0) == 0))

    def _search_from(self, X, y, g0, a0, rows, alphas, folds, groups, *, basis, grid=None, t0=None, n_targets=None,
                     constant=False, max_total_evaluations=None, deadline=None):
        """Steps 2-5 of the module's docstring from the isotropic point ``(g0, a0)`` on the basis ``rows``
        (``n_targets`` residuals per fold set; ``constant``: constant targets, nothing to search)."""
        t0 = time.perf_counter() if t0 is None else t0
        classification, m = self.classification, X.shape[0]
        evidence = self.scoring == "evidence"
        scoring = "evidence" if evidence else "mse"
        loo = folds is None
        ard = self.kernel == "ard"
        # None: the cap grows with the widths that can move (a constant column's width has no gradient)
        n_eval = gradient_evaluations(self.max_evaluations, int(np.count_nonzero(np.ptp(X, axis=0) > 0)) if ard else 1)
        self._options = {"maxfun": n_eval, "maxiter": n_eval, "ftol": GRADIENT_FTOL}
        self._eval_cap, self._deadline, self._n_fun, self._fun_seconds = max_total_evaluations, deadline, 0, 0.0
        self._p, self._n_res, self._evidence, self._rows = X.shape[1] if ard else 1, n_targets, evidence, rows
        self._X, self._y, self._groups = X, y, groups
        self._folds = "loo" if loo else [(None, f) for f in folds]
        # Narrow ARD widths on noise features make K_BB ill-conditioned long before the
        # fit is: the search keeps the (exactly differentiated) Cholesky route down to this
        # condition estimate, and stops only below it or where Cholesky fails.
        self._search_rcond = min(self.rcond, SEARCH_RCOND)
        # the one-standard-error rule needs each point's LOO residuals and evidence (gradient_select)
        self._one_se = self.selection_rule == "one-se" and loo and not (evidence or self.hyper_penalty)
        self._trace = {"objective": [], "mse": [], "start": [], "theta": [], "log_evidence": [], "search": []}
        self._loo_sq = []  # per point: its squared LOO residuals (one_se), else None
        self._best = {"obj": np.inf}
        p = self._p
        lo = np.r_[np.full(p, np.log(GAMMA_BOUNDS[0])), np.log(ALPHA_BOUNDS[0])]
        hi = np.r_[np.full(p, np.log(GAMMA_BOUNDS[1])), np.log(ALPHA_BOUNDS[1])]
        theta0 = np.clip(np.r_[np.full(p, np.log(g0)), np.log(a0)], lo, hi)
        starts = [theta0]
        if grid is not None:  # the restarts draw from the search's generator after the grid
            draw = check_random_state(self._rng.randint(2**31 - 1))
            for _ in range(self.n_restarts):
                jitter = np.r_[draw.normal(size=p), 0.0]
                starts.append(np.clip(theta0 + jitter, lo, hi))
        if constant:
            starts = []  # constant targets (ConstantTargetWarning): every CV error is 0, log MSE and its gradient undefined
        # the folds as (train, test) pairs, so that the alpha paths use them
        folds_or_loo = "loo" if loo else [(np.setdiff1d(np.arange(m), f), f) for f in folds]

        def path_criterion(alphas, gamma):  # the exact CV over an alpha path on the search's basis and folds
            return SparseLSSVMCV(X, y, kernel=self.kernel, cv=folds_or_loo, alphas=alphas,
                                 classification=classification, groups=groups, random_state=0, basis=rows,
                                 basis_in_holdout=self.basis_in_holdout, rcond=self._search_rcond,
                                 kernel_params={"gamma": gamma})

        stops, n_paths, ended = self._lbfgsb_starts(starts, path_criterion, alphas, lo, hi)
        if self._one_se and starts and ended is None:  # a short evidence search from the same isotropic start
            try:
                self._minimize(theta0, (len(starts), True), lo, hi)
            except _Stop:  # a singular K_BB on the way: its points so far are candidates all the same
                pass
            except _OutOfBudget:
                pass
        selection = self._select()
        best = self._best
        if stops:  # a note: it concerns the result only where no start evaluated a point (the grid's best is kept)
            warn_numerical(
                "search='gradient' stopped early at the best point so far (" + "; ".join(stops) + "); the widths "
                f"may be at an edge of the range {GAMMA_BOUNDS} or the basis kernel matrix singular"
                + ("; no start evaluated a point, so the isotropic grid's best is kept: a larger n_basis or a "
                   "narrower param_space['gamma'] lets the search move" if "theta" not in best else ""),
                stacklevel=3, affects_result="theta" not in best)
        if "theta" not in best:  # not even the starting point evaluated: fall back on the isotropic start
            start_score = np.nan if grid is None else float(grid.best_score) / (self._n_res if evidence else 1)
            best.update(theta=theta0, mse=start_score, obj=np.nan)
        theta = best["theta"]
        self._warn_collapse(np.exp(theta[:p]), g0)
        n_grid = 0 if grid is None else grid.n_evaluations
        result = GradientSearchResult(
            grid=grid, scoring=scoring, n_evaluations=n_grid + len(self._trace["mse"]) + n_paths,
            cv_folds=folds, trace={k: np.asarray(v) for k, v in self._trace.items()}, selection=selection,
            basis_rows=rows, basis=basis, max_evaluations=n_eval, search_time=time.perf_counter() - t0, stopped=ended)
        t1 = time.perf_counter()
        # evidence: the total log evidence
        self._refit_at(theta, -float(best["mse"]) * (self._n_res if evidence else 1), result)
        result.feature_relevance = feature_relevance(result.model, X) if ard else None
        result.refit_time = time.perf_counter() - t1
        return result

    # ---------------------------------------------------------------- the criterion L-BFGS-B sees
    def _evaluate(self, theta, rcond=None, by_evidence=None):
        """``(value, objective, gradient, details)`` at ``theta`` (log widths, then log alpha)."""
        rcond = self._search_rcond if rcond is None else rcond
        by_evidence = self._evidence if by_evidence is None else by_evidence
        p, X, y = self._p, self._X, self._y
        gamma = np.exp(theta[:p])
        params = {"gamma": gamma if self.kernel == "ard" else float(gamma[0])}
        # singular K_BB: stop instead of approximating (the rescoring at the user's rcond wants the value there)
        with numerical_warnings_raise() if rcond == self._search_rcond else numerical_warnings_ignore():
            if by_evidence:  # minus the log evidence per target value: minimised as it is
                value, grad, *det = evidence_and_gradient(X, y, self._rows, self.kernel, params,
                                                          float(np.exp(theta[-1])), classification=self.classification,
                                                          rcond=rcond, return_details=self._one_se)
                return value, value, grad, (det or [None])[0]
            value, grad, *det = cv_error_and_gradient(X, y, self._rows, self.kernel, params, float(np.exp(theta[-1])),
                                                      cv=self._folds, basis_in_holdout=self.basis_in_holdout,
                                                      classification=self.classification, groups=self._groups,
                                                      rcond=rcond, return_details=self._one_se)
        obj, gobj = search_objective(value, grad, gamma, self._n_res, self.hyper_penalty)
        return value, obj, gobj, (det or [None])[0]

    def _fun(self, theta, start, by_evidence=None):
        evidence = self._evidence
        by_evidence = evidence if by_evidence is None else by_evidence
        self._check_budget()
        t_eval = time.perf_counter()
        try:
            value, obj, gobj, det = self._evaluate(theta, by_evidence=by_evidence)
        except (NumericalWarning, ValueError, np.linalg.LinAlgError) as exc:
            raise _Stop(str(exc)) from None
        finally:
            self._n_fun += 1
            self._fun_seconds = max(self._fun_seconds, time.perf_counter() - t_eval)
        if not (np.isfinite(obj) and np.all(np.isfinite(gobj))):
            raise _Stop("the CV error or its gradient is not finite")
        if by_evidence and not evidence:  # the one-SE rule's evidence search: its points are not LOO iterates
            value = float(np.mean(det["residuals"] ** 2))
        self._record(theta, start, value, obj, det, update_best=by_evidence == evidence)
        # L-BFGS-B sees the objective less its value at the run's first point: its ftol is relative to
        # max(|f|, 1), and log MSE shifts with the targets' scale (the search must not depend on it)
        self._shift = obj if self._shift is None else self._shift
        return obj - self._shift, gobj

    def _check_budget(self):
        """Raise :class:`_OutOfBudget` before an evaluation past the cap, or one that would end after the deadline
        if it took as long as the slowest so far."""
        if self._eval_cap is not None and self._n_fun >= self._eval_cap:
            raise _OutOfBudget("evaluations")
        if self._deadline is not None and time.perf_counter() + self._fun_seconds > self._deadline:
            raise _OutOfBudget("time")

    def _record(self, theta, start, value, obj, det=None, update_best=True):
        for key, item in {"objective": obj, "mse": value, "start": start, "theta": theta.copy(),
                          "log_evidence": np.nan if det is None else det["log_evidence"],
                          "search": "loo" if update_best and not self._evidence else "evidence"}.items():
            self._trace[key].append(item)
        self._loo_sq.append(None if det is None else det["residuals"] ** 2)
        if update_best and obj < self._best["obj"]:
            self._best.update(obj=obj, mse=value, theta=theta.copy())

    def _minimize(self, theta, args, lo, hi):
        self._shift = None  # L-BFGS-B's objective is measured from its first point (``_fun``)
        minimize(self._fun, theta, args=args, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                 options=self._options)

    def _lbfgsb_starts(self, starts, path_criterion, alphas, lo, hi):
        """L-BFGS-B from every start, each followed by the alpha path at its best widths (step 3 of the
        module's docstring); returns the early stops' texts, the number of paths scored, and what ended a
        capped search (``"evaluations"``, ``"time"`` or None).  The cap ends L-BFGS-B, not the alpha path
        (one factorisation) at its best widths; the deadline ends both."""
        p, stops, n_paths, ended = self._p, [], 0, None
        for k, start in enumerate(starts):
            for restarts_left in range(ALPHA_REFINEMENTS, -1, -1):
                try:
                    self._minimize(start, (k,), lo, hi)
                except _Stop as exc:  # its best point so far may still gain from another alpha
                    stops.append(f"start {k}: {exc}")
                except _OutOfBudget as exc:
                    ended = str(exc)
                if ended == "time":
                    break
                refined = refined_alpha(path_criterion, alphas, self._trace, k, p, self.kernel, lo, hi,
                                         self._evidence)
                n_paths += 1
                if refined is None:
                    break
                start, value = refined
                if restarts_left == 0 or ended:  # no restart left: keep the path's best alpha at those widths
                    obj = value if self._evidence else search_objective(value, np.zeros(p + 1), np.exp(start[:p]),
                                                                        self._n_res, self.hyper_penalty)[0]
                    try:  # one_se: evaluated, for its residuals and evidence
                        if not self._one_se or ended:
                            raise _Stop
                        self._fun(start, k)
                    except (_Stop, _OutOfBudget):
                        self._record(start, k, value, obj)
                    break
            if ended:
                break
        return stops, n_paths, ended

    def _select(self):
        """The one-standard-error rule over every point evaluated (moves the best point); its record or None."""
        if not (self._one_se and any(e is not None for e in self._loo_sq)):
            return None
        try:
            chosen, chosen_record = one_se_choice(self._loo_sq, self._trace["log_evidence"])
        except ValueError:  # no point with finite LOO residuals: keep the lowest criterion
            return None
        self._best.update(theta=self._trace["theta"][chosen].copy(), mse=self._trace["mse"][chosen])
        return {"rule": "one-se", **chosen_record}

    def _warn_collapse(self, gamma, g0):
        if self.hyper_penalty and np.all(gamma <= COLLAPSE_RATIO * g0):
            p, n_res = self._p, self._n_res
            warnings.warn(
                f"hyper_penalty=True: every width ended more than {1 / COLLAPSE_RATIO:g}x below the isotropic grid's "
                f"best width {g0:.3g}, so the model is nearly linear.  The Cawley-Talbot criterion log MSE + (p/N) "
                f"log Omega falls without bound as all widths shrink (their prior's scale is integrated out, leaving "
                f"(p/2) log Omega), so its minimum lies at the edge of the search range (or where K_BB turns "
                f"singular) unless the CV error rises faster; with N/p = {n_res / p:.3g} residuals per width it did "
                "not here.  Compare with hyper_penalty=False",
                SearchEdgeWarning, stacklevel=4,
            )

    def _refit_at(self, theta, searched, result):
        """The model at ``theta`` at the estimator's rcond, and its score, into ``result``.  Where K_BB there is
        singular at that rcond (the search went on to SEARCH_RCOND), the model is fitted on K_BB's range as rcond
        asks, so it is rescored (one evaluation: its value is exact; the gradient, which ignores the truncation,
        is not used)."""
        p = self._p
        gamma = np.exp(theta[:p])
        result.gamma = gamma if self.kernel == "ard" else float(gamma[0])
        result.alpha = float(np.exp(theta[-1]))
        with numerical_warnings_collect() as caught:  # K_BB singular at rcond: said below if it matters
            # also without refit: the relevance needs the model
            model = self.make_model(gamma=result.gamma, alpha=result.alpha, basis=self._rows).fit(self._X, self._y)
        search_rcond = self._search_rcond
        truncated = model.factorization_.method != "cholesky" and self.rcond > search_rcond
        scale = self._n_res if self._evidence else 1
        score = -self._evaluate(theta, rcond=self.rcond)[0] * scale if truncated else searched
        if not truncated:
            for w in caught:
                warn_numerical(w, stacklevel=4)
        if truncated and -score > -searched + REFIT_RTOL * abs(searched):
            warn_numerical(f"search='gradient': at the chosen widths K_BB is numerically singular at rcond="
                           f"{self.rcond:g} (the search evaluates down to rcond={search_rcond:g}), so the refitted "
                           f"model is solved on K_BB's range, which scores worse: best_score_ is that model's, "
                           f"{score:.6g}, against {searched:.6g} at the searched point.  Pass rcond={search_rcond:g} "
                           "to fit the searched model itself", stacklevel=4)
        if truncated and result.selection is not None:
            # the record describes the model fitted (on K_BB's range at rcond), not the point searched at
            # SEARCH_RCOND: its exact LOO error (rescored above) and its log evidence; the searched values are kept
            record = result.selection
            evidence_of = getattr(model, "log_evidence", None)  # regression only
            record.update(searched_loo=record["chosen_loo"], searched_log_evidence=record["chosen_log_evidence"],
                          chosen_loo=-float(score),
                          chosen_log_evidence=float(evidence_of()) if evidence_of is not None else np.nan)
        result.model, result.best_score = model, score
