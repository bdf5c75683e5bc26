"""The ARD stage of the sparse searches (``ard="auto"``, the default): after
the isotropic search, one width per input tuned by the exact CV gradient,
kept only where its exact CV error is lower.

An isotropic RBF kernel weighs every input alike, so where a few of many
inputs carry the signal it cannot ignore the rest; ARD can.  The stage

1. starts from the isotropic winner: every input's width its ``gamma``, and
   its ``alpha``;
2. draws a pivoted Cholesky basis of at most ``ARD_BASIS_CAP`` rows at that
   width, then kept fixed (the CV error is then a smooth function of the
   widths);
3. runs L-BFGS-B on the log widths and log alpha, driven by the exact CV
   error and its gradient on the search's own folds
   (:meth:`lssvm.estimators.gradient_search.GradientSearch.run_from`, one
   start, the lowest criterion kept), for at most ``ARD_EVALUATIONS``
   evaluations and within the time budget;
4. scores the ARD model by the search's criterion on the same folds (the
   CV MSE, or the error rate ties to the MSE) and keeps it only where it is
   lower than the isotropic model's (``ARD_KEEP_RULE``).

Cost: each evaluation is one factorisation and one adjoint pass,
O(m n^2 + m n d) for n basis rows and d inputs (paper 004's gradient,
``../shared/notes/math.md`` §5).  ``ard="auto"`` runs the stage where the cost
model predicts that ``ARD_MIN_EVALUATIONS`` evaluations fit in what is left of
``time_budget``: the seconds per evaluation of the isotropic search (a basis
draw and a whole alpha path), times ``n / n_search`` for the smaller basis,
times ``ARD_COST_RATIO`` (:func:`ard_evaluation_seconds`).  It skips the stage, with the reason recorded, on
an explicit ``param_space`` (the widths asked for), on one input (ARD is isotropic there), on fewer than
``ARD_MIN_ROWS_PER_PARAMETER`` rows per hyper-parameter (d widths and alpha
tuned on m residuals over-fit the criterion), and where the gradient search
does not apply (Dask input, sparse matrices, weights, per-target alphas,
kernels other than "rbf").
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..basis import select_basis
from ..kernels import make_kernel
from ..selection import SparseLSSVMCV
from .gradient_search import GradientSearch

__all__ = ["ARD_BASIS_CAP", "ARD_COST_RATIO", "ARD_DOC", "ARD_EVALUATIONS", "ARD_KEEP_RULE", "ARD_MIN_EVALUATIONS",
           "ARD_MIN_ROWS_PER_PARAMETER", "ARD_MODES", "DEFAULT_TIME_BUDGET", "ard_after_search", "ard_applies", "ard_evaluation_seconds",
           "ard_summary", "check_ard"]

#: ``ard`` values: "auto" (run where it fits the budget and can help), True (run whenever it applies), False.
ARD_MODES = ("auto", True, False)
#: Seconds for the whole fit of a sparse search, by default: the isotropic search, then the ARD stage and the
#: basis growth in what is left.
DEFAULT_TIME_BUDGET = 60.0
#: Cap on the ARD stage's criterion evaluations (L-BFGS-B and its alpha refinements together).  20 evaluations
#: from the isotropic start took pol from 3.09 to 1.02 and puma32H from 3.47 to 0.81 times gradient boosting's
#: test RMSE (a full search, 150-220 evaluations from three starts: 1.01 and 0.72 at 6-8x the time).
ARD_EVALUATIONS = 20
#: ``ard="auto"`` runs the stage only where at least this many evaluations are predicted to fit the budget.
ARD_MIN_EVALUATIONS = 5
#: Basis rows of the ARD stage at most (pivoted Cholesky at the isotropic width): each evaluation costs
#: O(m n^2); 300 is the gradient search's own default cap, at which the figures above were measured.
ARD_BASIS_CAP = 300
#: ``ard="auto"`` skips the stage below this many rows per hyper-parameter (d widths and alpha).
ARD_MIN_ROWS_PER_PARAMETER = 10
#: An ARD evaluation (exact LOO error and gradient, 300 basis rows) took 0.71-0.88x an isotropic evaluation of the
#: default search (pivoted Cholesky basis of 500 rows and the 21-alpha LOO path) at m = 2000-5000, d = 8-48: about
#: 1.5x per basis-size ratio, hardly dependent on d (its kernel derivatives cost O(m n d) against O(m n^2)).
ARD_COST_RATIO = 1.5
#: "lower": keep the ARD model where its CV error is lower; "paired" (exact LOO, regression): lower by more than
#: one standard error of the per-row differences of the two models' squared LOO residuals.
ARD_KEEP_RULE = "lower"

#: The searches' documentation of ``ard``.
ARD_DOC = """    ard : {"auto", True, False}, default="auto"
        After the isotropic search ("rbf" kernel; grid, nelder-mead or csa), tune one width per input from the
        winner's by the exact CV gradient (at most 20 evaluations on a pivoted Cholesky basis of at most 300
        rows) and keep that model only if its CV error on the same folds is lower
        (:mod:`lssvm.estimators.ard_stage`).  "auto" runs the stage after the default width search
        (``param_space=None``) where the cost model predicts it fits in what is left of ``time_budget`` and
        where it can help (at least two inputs, 10 rows per hyper-parameter); True runs it whenever it applies
        (any ``param_space`` of widths; at least 5 evaluations even past the budget).
        Sets ``ard_stage_``: ``ran``, ``kept``, ``reason``, ``cv_isotropic``, ``cv_ard`` (the search's
        criterion), ``n_evaluations``, ``seconds``, ``predicted_seconds``, ``seconds_left``, ``n_basis``,
        ``gamma``, ``alpha`` and ``summary`` (one line).  Where kept, ``best_params_["gamma"]`` holds the widths,
        ``best_estimator_`` has ``kernel="ard"``, ``feature_relevance_`` the inputs' relevance and
        ``best_index_`` is None (the model is not a row of ``cv_results_``).  The stages share ``time_budget``
        (None: no limit): the isotropic search runs first, then the ARD stage in what is left (it stops at the
        budget, keeping time for its refit), then, with ``n_basis="auto"``, the growth of the basis at the kernel
        kept in what remains.
"""


def ard_evaluation_seconds(seconds_per_search_evaluation, n_ard, n_search):
    """Predicted seconds of one ARD evaluation on ``n_ard`` basis rows, from the isotropic search's seconds per
    evaluation on ``n_search`` rows (the cost is near linear in the basis size at these sizes: the kernel columns
    and the alpha path are O(m n) each, the factorisation O(m n^2) with a small constant)."""
    return seconds_per_search_evaluation * ARD_COST_RATIO * n_ard / n_search


def ard_stage_seconds(seconds_per_search_evaluation, n_search):
    """Predicted seconds of the whole stage after a search whose evaluations took
    ``seconds_per_search_evaluation`` each on a basis of ``n_search`` rows: :data:`ARD_EVALUATIONS`
    evaluations on at most :data:`ARD_BASIS_CAP` rows, and the basis draw, the refit and its scoring (about
    one evaluation each).  Returns ``(stage seconds, seconds per ARD evaluation)``."""
    n_search = max(1, int(n_search))
    per_eval = ard_evaluation_seconds(seconds_per_search_evaluation, min(ARD_BASIS_CAP, n_search), n_search)
    return (ARD_EVALUATIONS + 3.0) * per_eval, per_eval


def ard_stage_planned(search, X, y=None, sample_weight=None):
    """Whether ``ard="auto"`` (or True) would run the stage after this search's default width search on
    ``X`` (m, d), budget permitting: the checks of :func:`ard_after_search` that need no search result."""
    if search.ard is False or _refusal(search, X, y, sample_weight) is not None:
        return False
    if search.ard == "auto" and search.param_space is not None:
        return False
    m = X.shape[0]
    n_inputs = int(np.count_nonzero(np.ptp(np.asarray(X), axis=0) > 0))
    return n_inputs >= 2 and (search.ard is True or m >= ARD_MIN_ROWS_PER_PARAMETER * (n_inputs + 1))


def _refusal(search, X, y, sample_weight):
    """Why the stage cannot run on this search and data (a text), or None."""
    from ..backends import is_dask_collection

    if search.search == "gradient":
        return "search='gradient' tunes the widths itself"
    if not (isinstance(search.kernel, str) and search.kernel == "rbf"):
        return f"the stage tunes the widths of kernel='rbf'; got kernel={search.kernel!r}"
    if search.normalize_kernel:
        return "normalize_kernel=True (the gradient search needs k(x, x) = 1)"
    if is_dask_collection(X) or is_dask_collection(y):
        return "the gradient needs the rows in memory (Dask input)"
    if sp.issparse(X):
        return "the gradient needs a dense X"
    if sample_weight is not None:
        return "the stage's exact CV gradient takes no sample_weight"
    if getattr(search, "alpha_per_target", False):
        return "alpha_per_target=True"
    if not search.refit:
        return "refit=False"
    if search.param_space is not None and set(search.param_space) != {"gamma"}:
        return "param_space searches more than the width"
    return None


def ard_applies(search, X, y, sample_weight=None):
    """Whether the stage can run on this search and data (in memory, dense, "rbf", ...)."""
    return _refusal(search, X, y, sample_weight) is None


def check_ard(search, X, y, sample_weight=None):
    """Refuse ``ard=True`` where the stage cannot run, with a clear message, before the search."""
    if not (search.ard is True or search.ard is False or isinstance(search.ard, str) and search.ard == "auto"):
        raise ValueError(f"ard must be 'auto', True or False; got {search.ard!r}")
    if search.ard is True:
        why = _refusal(search, X, y, sample_weight)
        if why is not None:
            raise ValueError(f"{type(search).__name__}: ard=True cannot run here: {why}; use ard='auto' or False")


def ard_summary(stage):
    """One line: ``"ARD: kept (CV 0.0123 -> 0.0101, 14 evaluations, 21 s)"`` or ``"ARD: skipped: ..."``."""
    if stage is None:
        return "ARD: off"
    if not stage["ran"]:
        return f"ARD: skipped: {stage['reason']}"
    verdict = "kept" if stage["kept"] else "declined"
    return (f"ARD: {verdict} (CV {stage['cv_isotropic']:.4g} -> {stage['cv_ard']:.4g}, {stage['n_evaluations']} "
            f"evaluations, {stage['seconds']:.3g} s)" + ("" if stage["kept"] else f": {stage['reason']}"))


def _criterion_value(mse, error_rate, scoring):
    """The search's ranking key: ``(error rate, MSE)`` for "error_rate", ``(MSE,)`` for "mse"."""
    return (float(error_rate), float(mse)) if scoring == "error_rate" else (float(mse),)


def ard_after_search(search, X, y, groups, clock_start, sample_weight=None):
    """The stage after a finished isotropic search on rows ``X`` (m, d; validated where the stage applies); sets ``search.ard_stage_``
    and, where the ARD model is kept, ``best_estimator_``, ``best_params_``, ``alpha_``, ``gamma_``,
    ``best_score_``, ``best_index_`` (None) and ``feature_relevance_``.  Returns ``search``."""
    mode = search.ard
    stage = {"ran": False, "kept": False, "reason": "", "cv_isotropic": np.nan, "cv_ard": np.nan,
             "n_evaluations": 0, "seconds": 0.0, "predicted_seconds": np.nan, "seconds_left": np.nan,
             "n_basis": 0, "gamma": None, "alpha": np.nan}
    search.ard_stage_ = stage
    if mode is False:
        stage["reason"] = "ard=False"
        stage["summary"] = ard_summary(stage)
        return search
    why = _refusal(search, X, y, sample_weight)
    m = 0 if why is not None else X.shape[0]
    n_inputs = 0 if why is not None else int(np.count_nonzero(np.ptp(X, axis=0) > 0))
    if why is None and mode == "auto" and search.param_space is not None:
        why = "param_space given: the widths are the ones asked for (ard=True runs the stage)"
    if why is None and n_inputs < 2:
        why = "one input varies: ARD is the isotropic kernel"
    if why is None and mode == "auto" and m < ARD_MIN_ROWS_PER_PARAMETER * (n_inputs + 1):
        why = (f"{m} rows for {n_inputs + 1} hyper-parameters (fewer than {ARD_MIN_ROWS_PER_PARAMETER} per "
               "hyper-parameter: the widths would fit the criterion's noise)")
    best = getattr(search, "best_estimator_", None)
    if why is None and best is None:
        why = "no refitted isotropic model"
    scoring = search.scoring_
    if why is None and scoring not in ("mse", "error_rate"):
        why = f"scoring={scoring!r}"
    if why is not None:
        stage["reason"] = why
        stage["summary"] = ard_summary(stage)
        return search
    # the cost model: the isotropic search's seconds per evaluation, on the stage's smaller basis, d directions
    n_search = max(1, int(best.n_basis_))
    n_ard = min(ARD_BASIS_CAP, n_search)
    per_iso = search.search_time_ / max(1, search.n_evaluations_)
    predicted, per_eval = ard_stage_seconds(per_iso, n_search)
    # the basis draw, the refit and its scoring: about one evaluation each
    overhead = 3.0 * per_eval
    now = time.perf_counter()
    left = np.inf if search.time_budget is None else search.time_budget - (now - clock_start)
    stage.update(predicted_seconds=float(predicted), seconds_left=float(left))
    n_fit = int(np.floor((left - overhead) / per_eval)) if np.isfinite(left) else ARD_EVALUATIONS
    if mode == "auto" and n_fit < ARD_MIN_EVALUATIONS:
        stage["reason"] = f"predicted {predicted:.3g} s, {max(left, 0.0):.3g} s left"
        stage["summary"] = ard_summary(stage)
        return search
    cap = max(ARD_MIN_EVALUATIONS, min(ARD_EVALUATIONS, n_fit))
    # the refit at the chosen point and its scoring come after the deadline
    deadline = None if not np.isfinite(left) else now + max(left - 2.0 * per_eval,
                                                             cap * per_eval if mode is True else 0.0)
    _run(search, X, y, groups, best, stage, n_ard, cap, deadline, scoring, n_inputs)
    stage["seconds"] = time.perf_counter() - now
    stage["summary"] = ard_summary(stage)
    return search


def _run(search, X, y, groups, best, stage, n_ard, cap, deadline, scoring, n_inputs):
    """Steps 2-4 of the module's docstring; fills ``stage``."""
    gamma0 = float(search.gamma_ if search.gamma_ is not None else search._scale)
    alpha0 = float(search.alpha_)
    rng_seed = 0 if search.random_state is None or not isinstance(search.random_state, (int, np.integer)) \
        else int(search.random_state)
    if n_ard < best.n_basis_:
        rows = np.asarray(select_basis(X, make_kernel("rbf", gamma=gamma0), "pchol", n_ard, tol=search.basis_tol,
                                       pivot_tol=search.pivot_tol, rcond=search.rcond,
                                       random_state=rng_seed).indices)
    else:
        rows = np.asarray(best.basis_indices_)
    classification = search._classification
    searcher = GradientSearch(lambda **params: search._estimator_class(**{**search._model_params(), "kernel": "ard",
                                                                         **params}),
                              kernel="ard", basis=rows, basis_in_holdout=search.basis_in_holdout,
                              basis_tol=search.basis_tol, pivot_tol=search.pivot_tol, rcond=search.rcond,
                              max_evaluations=cap, n_restarts=0, selection_rule="min",
                              classification=classification).check()
    path_alphas = search._check_search_params(y)[1]
    folds = search.cv_folds_
    result = searcher.run_from(X, y, gamma0, alpha0, rows, path_alphas, folds, groups, max_total_evaluations=cap,
                               deadline=deadline)
    gamma, alpha, model = np.asarray(result.gamma, dtype=float), float(result.alpha), result.model
    m = X.shape[0]
    cv = "loo" if folds is None else [(np.setdiff1d(np.arange(m), f), f) for f in folds]
    # the ARD model scored as the isotropic search scored its candidates: same folds, basis kept, its rcond
    path = SparseLSSVMCV(X, y, kernel="ard", cv=cv, alphas=np.array([alpha]), classification=classification,
                         groups=groups, random_state=0, basis=rows, basis_in_holdout=search.basis_in_holdout,
                         rcond=search.rcond, kernel_params={"gamma": gamma})()
    iso_mse = float(search.cv_results_["mean_test_mse"][search.best_index_])
    iso_err = search.cv_results_.get("mean_test_error_rate")
    iso_err = np.nan if iso_err is None else float(iso_err[search.best_index_])
    ard_mse = float(path.mse[0])
    ard_err = np.nan if path.error_rate is None else float(path.error_rate[0])
    iso_key = _criterion_value(iso_mse, iso_err, scoring)
    ard_key = _criterion_value(ard_mse, ard_err, scoring)
    stage.update(ran=True, cv_isotropic=iso_key[0], cv_ard=ard_key[0], cv_mse_isotropic=iso_mse, cv_mse_ard=ard_mse,
                 n_evaluations=int(result.n_evaluations), n_basis=int(rows.size), gamma=gamma, alpha=alpha,
                 stopped=result.stopped, evaluation_cap=int(cap))
    lower = bool(np.all(np.isfinite(ard_key)) and _clearly_lower(ard_key, iso_key))
    paired_z = np.nan
    if folds is None and not classification:
        paired_z = _paired_z(best, model)
    stage["paired_z"] = paired_z
    keep = lower and (ARD_KEEP_RULE == "lower" or not np.isfinite(paired_z) or paired_z > 1.0)
    if not lower:
        stage["reason"] = "its CV error is not lower"
    elif not keep:
        stage["reason"] = f"lower by {paired_z:.2g} paired standard errors (at most 1)"
    else:
        stage["reason"] = "lower CV error"
    if not keep:
        return
    stage["kept"] = True
    search.best_estimator_ = model
    search.alpha_, search.gamma_ = alpha, gamma
    search.best_params_ = {"gamma": gamma, "alpha": alpha}
    search.best_score_ = -ard_mse if scoring == "mse" else 1.0 - ard_err
    search.best_index_ = None
    search.feature_relevance_ = result.feature_relevance
    search.refit_time_ += result.refit_time


#: Relative difference below which two CV errors count as equal: one model's CV error computed on the search's
#: path and on the ARD kernel's differed by 1e-14 to 1e-10 relative where the gradient did not leave its start.
CV_ROUNDING = 1e-8


def _clearly_lower(new, old):
    """Whether ranking key ``new`` is lower than ``old``, values within :data:`CV_ROUNDING` counting as equal."""
    for a, b in zip(new, old, strict=True):
        if abs(a - b) > CV_ROUNDING * max(abs(a), abs(b)):
            return a < b
    return False


def _paired_z(old, new):
    """How many standard errors of the per-row differences the new model's mean squared LOO residual lies below
    the old one's (positive: lower); NaN where undefined."""
    r_old = np.asarray(old.loo_residuals(), dtype=float)
    r_new = np.asarray(new.loo_residuals(), dtype=float)
    m = r_old.shape[0]
    diff = (r_new.reshape(m, -1) ** 2 - r_old.reshape(m, -1) ** 2).mean(axis=1)
    if m < 2 or not np.all(np.isfinite(diff)):
        return np.nan
    sd = diff.std(ddof=1)
    return float(-diff.mean() / (sd / np.sqrt(m))) if sd > 0 else np.nan
