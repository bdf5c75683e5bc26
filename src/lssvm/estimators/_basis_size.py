"""``n_basis="auto"``: the basis size chosen by the exact CV error of every
prefix of a growing pivoted Cholesky basis (:mod:`lssvm.cv.basis_size`), for
the sparse LS-SVMs and their searches."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..cv.basis_size import choose_basis_size, grow_basis

__all__ = ["AUTO_BASIS_DOC", "auto_basis_refusal", "auto_basis_rows", "check_auto_basis", "grow_after_search",
           "is_auto", "record_not_applicable"]

#: The searches' documentation of ``n_basis="auto"`` and ``time_budget``.
AUTO_BASIS_DOC = """        "auto" (basis "auto" or "pchol"; grid, nelder-mead or csa): after the search at the default size, the
        pivoted Cholesky basis at the best kernel parameters grows by doublings from that size while the exact
        CV error of every prefix size (the search's ``cv``, k-fold with the basis kept in the hold-outs; at the
        best alpha) drops by more than one standard error per doubling; the refit keeps the size of lowest CV
        error if it beats the search's (with LOO: by more than one standard error of the per-row differences
        of the two models' exact LOO squared errors; with k-fold: scored as the search scored its candidates, its
        ``basis_in_holdout`` on the same folds, which sets ``best_score_`` and ``basis_curve_["cv_error_search_rule"]``;
        regression with LOO: alpha re-chosen on the path at that size;
        :mod:`lssvm.cv.basis_size`).  Sets ``basis_curve_`` (``n_basis``, ``cv_error``, ``cv_error_se``,
        ``alpha`` per size, ``n_chosen``, ``stop_reason``, ``replaced``) and ``basis_pivots_`` (every pivot
        grown, in order: the first n are the n-point basis).
    time_budget : float > 0 or None, default=60.0
        Seconds for the whole fit with ``n_basis="auto"``: no growth if the search used it, else the growth
        stops before a doubling whose predicted time (the last stage's times the squared size ratio) would not
        fit (``stop_reason="time_budget"``).
"""


def is_auto(n_basis):
    """Whether ``n_basis`` asks for the size chosen by CV."""
    return isinstance(n_basis, str) and n_basis == "auto"


def check_auto_basis(basis, X, owner, allowed=("pchol",)):
    """Refuse what ``n_basis="auto"`` cannot grow: another basis method or a sparse matrix."""
    if not (isinstance(basis, str) and basis in allowed):
        raise ValueError(f"{owner}: n_basis='auto' grows a pivoted Cholesky basis; it needs basis="
                         f"{' or '.join(map(repr, allowed))}, got basis={basis!r} (give an int n_basis instead)")
    if X is not None and sp.issparse(X):
        raise ValueError(f"{owner}: n_basis='auto' needs a dense X (the basis factor is dense); "
                         "pass an int n_basis for sparse input")


def auto_basis_rows(est, X, Y, kernel, alphas, folds=None, *, time_budget=None, clock_start=None, start=None):
    """Grow the basis (the first stage ``start`` points), store ``basis_curve_`` and ``basis_pivots_`` on
    ``est``, and return the chosen rows (the first n pivots, n of lowest CV error), the alpha of ``alphas``
    that scored best at that size, and its CV error."""
    curve = grow_basis(X, Y, kernel, alphas, folds, time_budget=time_budget, clock_start=clock_start,
                       start=start, pivot_tol=est.pivot_tol, rcond=est.rcond, random_state=est.random_state)
    n = choose_basis_size(curve.cv_error, curve.cv_error_se)
    est.basis_curve_ = {**curve.as_dict(), "n_chosen": n, "stop_reason": curve.stop_reason,
                        "stages": list(curve.stages)}
    est.basis_pivots_ = curve.pivots
    return curve.pivots[:n].copy(), float(curve.alpha[n - 1]), float(curve.cv_error[n - 1])


def _neighbour_alphas(alphas, best, width=1):
    """``best`` and its ``width`` neighbours on each side in the sorted path."""
    path = np.sort(np.asarray(alphas, dtype=float))
    i = int(np.argmin(np.abs(np.log(path) - np.log(best))))
    return path[max(0, i - width): i + width + 1]


def grow_after_search(search, X, y, groups, clock_start):
    """The search's ``n_basis="auto"`` stage: at the best kernel parameters,
    grow the basis and score every size on the search's folds (LOO or k-fold,
    the basis kept in the hold-outs) at the best alpha, then refit on the
    first n pivots (lowest CV error); for regression with LOO the alpha is
    re-chosen on the whole path at that size.  The first stage has the search's own size (so every size up
    to it is scored, and the search's work is not undercut); the refit
    replaces the search's model only if its CV mean squared error is lower
    and, with LOO, lower by more than one standard error of the per-row
    differences of the two models' exact LOO squared errors
    (``basis_curve_["replaced"]``).  With k-fold the curve's basis-kept
    errors only rank the sizes: the refit is scored under the search's own
    ``basis_in_holdout`` on the same folds (one rule for the comparison and
    the stored score, O(k m n^2)).

    Sets ``basis_curve_``, ``basis_pivots_`` and updates ``best_estimator_``,
    ``alpha_``, ``best_params_["alpha"]`` and, for the MSE criterion,
    ``best_score_`` (``-cv_error`` at the chosen size; k-fold: under the
    search's rule).
    """
    best = search.best_estimator_
    if not np.isfinite(search.best_score_):  # errors overflow float64: no size to compare, the caller says so
        return record_not_applicable(search, "the search's CV error is not finite")
    if search.time_budget is not None:
        # the first stage costs about two of the search's evaluations (a basis and a factorisation at its size)
        per_evaluation = search.search_time_ / max(1, search.n_evaluations_)
        if time.perf_counter() - clock_start + 2 * per_evaluation > search.time_budget:
            search.basis_curve_ = _empty_curve("time_budget")
            search.basis_pivots_ = np.asarray(best.basis_indices_)
            return search
    Y = np.asarray(best._targets_2d())
    path = search._check_search_params(y)[1]
    alphas = _neighbour_alphas(path, search.alpha_, width=0)
    rows, alpha, err = auto_basis_rows(search, X, Y, best.kernel_, alphas, search.cv_folds_,
                                       time_budget=search.time_budget, clock_start=clock_start,
                                       start=best.n_basis_)
    ard = getattr(search, "ard_stage_", None) or {}
    # the model to beat: the ARD stage's where it replaced the search's (not a row of cv_results_)
    searched = float(ard["cv_mse_ard"] if ard.get("kept") else search.cv_results_["mean_test_mse"][search.best_index_])
    kfold = search.cv_folds_ is not None
    if kfold and np.array_equal(rows, best.basis_indices_):
        search.basis_curve_["replaced"] = False
        return search
    search.basis_curve_["replaced"] = bool(err < searched)  # LOO: confirmed by the paired rule below
    if not kfold and not err < searched:
        return search
    t0 = time.perf_counter()
    # from the refitted model, not best_params_: a searched grid stores its values as floats (degree 2.0),
    # which the estimator's constraints refuse
    fitted = best.get_params()
    kernel_params = {k: fitted.get(k, v) for k, v in search.best_params_.items() if k != "alpha"}
    params = {**search._model_params(), "kernel": best.kernel, **kernel_params, "alpha": alpha, "basis": rows}
    est = search._fit_one(params, X, y, groups=groups)
    if search.cv_folds_ is None and search.scoring_ == "mse":
        # LOO on the whole path costs O(m n) per alpha from the refit's factorisation: the alpha re-chosen
        # at the grown size (the curve is scored at the search's alpha only: a third of the growth's time)
        sse = est._loo_sums(path)[0].sum(axis=1)
        i = int(np.argmin(sse))
        if sse[i] < err * Y.size:
            alpha, err = float(path[i]), float(sse[i] / Y.size)
            est.set_params(alpha=alpha)._set_coef(*est.factorization_.coef(alpha))
    if kfold:
        # the curve ranks the sizes with the basis kept in the hold-outs (what the nested factor scores exactly);
        # the grown model is then scored as the search scored its candidates (its basis_in_holdout, the same
        # folds), and that one number is compared with the search's and becomes best_score_
        err = _search_rule_mse(search, est, alpha, X.shape[0])
        search.basis_curve_["cv_error_search_rule"] = err
        search.basis_curve_["replaced"] = bool(err < searched)
    if (not _paired_gain(best, est)) if not kfold else not err < searched:
        search.basis_curve_["replaced"] = False
        search.refit_time_ += time.perf_counter() - t0
        return search
    search.best_estimator_ = est
    search.refit_time_ += time.perf_counter() - t0
    search.alpha_ = alpha
    search.best_params_ = {**search.best_params_, "alpha": alpha}
    if search.scoring_ == "mse":
        search.best_score_ = -err
    return search


def _search_rule_mse(search, est, alpha, m):
    """Mean squared error of ``est`` at ``alpha`` on the search's folds under its ``basis_in_holdout``
    (the value the search stores in ``cv_results_["mean_test_mse"]``); O(k m n^2) for k folds.  Infinite where a
    fold holds every grown basis point and the rule removes them (no model to score: the search's stands)."""
    if search.basis_in_holdout == "remove" and est.basis_indices_ is not None and any(
            np.isin(est.basis_indices_, f).all() for f in search.cv_folds_):
        return np.inf
    every = np.arange(m)
    pairs = [(np.setdiff1d(every, f), np.asarray(f)) for f in search.cv_folds_]
    err = est.cv_error(pairs, alpha=alpha, scoring="mse", basis_in_holdout=search.basis_in_holdout)
    return float(np.mean(err))


def _paired_gain(old, new):
    """Whether ``new``'s exact LOO squared errors are lower than ``old``'s by more than one standard error of
    the per-row differences (O(m n) each, from the fitted factorisations).

    The lowest point of a curve of hundreds of sizes is an optimistic estimate: on Boston (five splits of
    380 rows) the grown model beat the search's by 2.6-4.9 standard errors on four splits, and tested
    better on all four; on the fifth the curve's minimum (58 points against 195) was 0.08 standard errors
    lower and tested 8 % worse.
    """
    r_old = np.asarray(old.loo_residuals(), dtype=float)
    r_new = np.asarray(new.loo_residuals(), dtype=float)
    m = r_old.shape[0]
    diff = (r_new.reshape(m, -1) ** 2 - r_old.reshape(m, -1) ** 2).mean(axis=1)
    if m < 2 or not np.all(np.isfinite(diff)):
        return bool(np.all(np.isfinite(r_new))) and not np.all(np.isfinite(r_old))
    return bool(diff.mean() < -diff.std(ddof=1) / np.sqrt(m))


def auto_basis_refusal(search, X, y, sample_weight=None):
    """Why a search's ``n_basis="auto"`` stage cannot run on this fit, or None when it can.

    ``n_basis="auto"`` is the searches' default, so a fit it cannot serve falls back to the fixed size rule
    (``lssvm.basis.default_basis_size``) rather than failing; the reason is recorded by
    :func:`record_not_applicable`.
    """
    from ..backends import is_dask_collection

    if is_dask_collection(X) or is_dask_collection(y):
        return "Dask input"  # the growth scores every prefix on every row: rows in memory
    if search.search == "gradient":
        return "search='gradient'"  # the gradient search draws its own basis
    if not (isinstance(search.basis, str) and search.basis in ("auto", "pchol")):
        return f"basis={search.basis!r}"  # only pivoted Cholesky is nested
    if sp.issparse(X):
        return "sparse X"  # the basis factor is dense
    if sample_weight is not None:
        return "sample_weight"  # the growth is unweighted
    if getattr(search, "alpha_per_target", False):
        return "alpha_per_target=True"  # one size at one alpha
    if not search.refit:
        return "refit=False"  # the size is chosen for the refitted model
    return None


def record_not_applicable(search, reason):
    """Record on a fitted search that its basis has the fixed size because ``n_basis="auto"`` did not apply
    (``basis_curve_["stop_reason"] = "not applicable: <reason>"``, no size grown)."""
    best = getattr(search, "best_estimator_", None)
    search.basis_curve_ = _empty_curve(f"not applicable: {reason}")
    search.basis_pivots_ = None if getattr(best, "basis_indices_", None) is None else np.asarray(best.basis_indices_)
    return search


def _empty_curve(stop_reason):
    """``basis_curve_`` of a fit where no size was grown."""
    empty = np.zeros(0)
    return {"n_basis": np.zeros(0, dtype=int), "cv_error": empty, "cv_error_se": empty, "alpha": empty,
            "n_chosen": None, "stop_reason": stop_reason, "stages": [], "replaced": False}
