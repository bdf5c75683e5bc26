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
   estimator's seed (log widths + N(0, 1)); each run stops at
   ``max_evaluations`` evaluations, by default (None)
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
regularisation of the hyper-parameters: ``zeta Q + xi Omega`` with ``Q`` the
PRESS, a Gaussian prior on the kernel parameters, ``Omega = sum_j gamma_j^2
/ 2``, and both scale parameters ``zeta``, ``xi`` integrated out under
uninformative (Jeffreys) priors, which leaves ``(N / 2) log Q + (p / 2) log
Omega`` (N residuals, p kernel parameters; alpha is not penalised) and no
strength to tune.  It is minimised divided by ``N / 2``: ``log MSE + (p / N)
log Omega``.  The paper's body is not in the reference corpora available
here (only its abstract), so its equation numbers are not cited; instead a
test computes minus the log of the double integral over ``zeta`` and ``xi``
by quadrature and checks that it changes exactly as ``(N / 2)`` times this
objective.  A common rescaling of the inputs multiplies every width by one
factor, which shifts ``log Omega`` by a constant: the penalised optimum
follows the units of the inputs.  The integrated prior is improper: ``(p /
2) log Omega`` falls without bound as every width shrinks, while the CV
error levels off at that of a nearly linear model, so with few residuals
per width the criterion's minimum is at the lower width bound.  On puma32H
at 200 rows 26 to 31 of the 32 widths ended at the bound (test MSE 0.107
without, 0.741 with); the search warns (``SearchEdgeWarning``) when every
width ends more than ``1 / COLLAPSE_RATIO`` times below the isotropic
start.  It helped where many inputs matter a little
(docs/benchmarks.md).

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

import numpy as np
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from ..exceptions import (
    NumericalWarning,
    SearchEdgeWarning,
    numerical_warnings_collect,
    numerical_warnings_ignore,
    numerical_warnings_raise,
    warn_numerical,
)
from ..selection import SparseLSSVMCV, cv_error_and_gradient, grid_search
from ..selection.gradient import evidence_and_gradient
from .gradient_defaults import FIXED_AFTER_GRID, auto_basis, gradient_evaluations, pchol_rows
from .gradient_select import SELECTION_RULES, one_se_choice

__all__ = ["fit_gradient_search", "feature_relevance", "search_objective", "GAMMA_BOUNDS", "ALPHA_BOUNDS"]

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
#: After each L-BFGS-B run, the alpha path at its best widths may restart it (at most this many times per start).
ALPHA_REFINEMENTS = 2
#: ... when the path's best alpha lowers the CV MSE by more than this fraction.
ALPHA_REFINE_RTOL = 1e-3
#: Smallest reciprocal condition estimate of K_BB at which the search still
#: evaluates the criterion.  The refit uses the estimator's ``rcond``: where K_BB
#: at the chosen widths is singular there, the model is solved on K_BB's range and
#: rescored (on puma32H and Friedman #1 its LOO error moved by < 0.1 %, its test
#: error by < 1e-5 relative); a NumericalWarning says so when it scores worse by
#: more than ``REFIT_RTOL``.
SEARCH_RCOND = 1e-14
REFIT_RTOL = 1e-3


class _Stop(Exception):
    """A non-finite criterion or gradient: end this start at its best point."""


def check_gradient_search(est):
    """Refuse what the gradient search cannot do, with a clear message."""
    basis = est.basis
    if isinstance(basis, str) and basis not in _KERNEL_INDEPENDENT + FIXED_AFTER_GRID + ("auto",):
        raise ValueError(
            f"search='gradient' needs a basis that stays fixed while the widths move, so that the CV error is a "
            f"smooth function of them: basis='auto' (the default: 'random'), 'random', 'kcenter', 'pchol' (drawn "
            f"once at the best isotropic grid point) or row indices; got basis={basis!r} (its selection changes "
            "with every width)"
        )
    if not isinstance(est.kernel, str) or est.kernel not in ("ard", "rbf"):
        raise ValueError(f"search='gradient' tunes the widths of kernel='ard' (one per feature) or 'rbf'; "
                         f"got kernel={est.kernel!r}")
    if est.normalize_kernel:
        raise ValueError("search='gradient' does not support normalize_kernel=True (ARD/RBF have k(x, x) = 1)")
    if est.scoring not in (None, "mse", "evidence"):
        raise ValueError(f"search='gradient' minimises the mean squared CV residual (scoring='mse' or None) or minus "
                         f"the log evidence (scoring='evidence'); got {est.scoring!r}")
    if est.scoring == "evidence" and (est._classification or est.hyper_penalty):
        raise ValueError("scoring='evidence' in search='gradient' is for regression (SparseLSSVRCV) without "
                         "hyper_penalty (Cawley-Talbot regularise the CV error, not the evidence)")
    n = est.n_restarts
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n_restarts must be an integer >= 0; got {n!r}")
    if not isinstance(est.hyper_penalty, (bool, np.bool_)):
        raise ValueError(f"hyper_penalty must be True (Cawley-Talbot regularisation) or False; "
                         f"got {est.hyper_penalty!r}")
    if est.selection_rule not in SELECTION_RULES:
        raise ValueError(f"selection_rule must be one of {list(SELECTION_RULES)}; got {est.selection_rule!r}")


def feature_relevance(model, X, block_size=2048):
    r"""Relevance of each input to a fitted Gaussian (ARD or RBF) kernel model:
    its root-mean-square partial derivative on ``X``, in units of each
    input's standard deviation, normalised to sum to 1.

    ``r_j = sd(X_j) sqrt(mean_i sum_v (df_v / dx_j (x_i))^2)``, then
    ``r / sum(r)``.  For ``f_v(x) = sum_l a_lv k(x, z_l) + b_v`` with ``k =
    exp(-sum_j gamma_j (x_j - z_j)^2)``, ``df_v / dx_j = -2 gamma_j (x_j
    (K a_v) - K (a_v o Z_j))`` (``K = k(x, Z)``), so all d derivatives cost
    one ``K @ (a o Z)`` product: O(m n d v).

    Why not the normalised widths (the ARD convention, relevance = inverse
    length-scale)?  A width measures how *non-linear* f is along an input,
    not how much f depends on it (Paananen, Piironen, Andersen & Vehtari,
    AISTATS 2019).  An input that enters linearly is fitted best by a wide
    kernel, so a small ``gamma_j``, with large coefficients making up the
    slope; a noise input also ends at a small ``gamma_j``, where the CV
    error no longer changes.  The widths cannot tell the two apart (on
    Friedman #1 the linear inputs 3 and 4 ranked below noise inputs); the
    derivatives can, because only the linear input moves the fitted values.

    Parameters
    ----------
    model : fitted :class:`lssvm.SparseLSSVR` or :class:`lssvm.SparseLSSVC`
        With an "ard" or "rbf" kernel.
    X : ndarray of shape (m, d)
        Rows at which the derivatives are averaged (the training rows).
    block_size : int, default=2048
        Rows per kernel block (memory O(block_size (n + v d))).

    Returns
    -------
    ndarray of shape (d,)
        Non-negative, summing to 1 (all zeros for a constant model).
    """
    X = np.asarray(X, dtype=float)
    Z = np.asarray(model.basis_vectors_, dtype=float)
    n, d = Z.shape
    A = np.asarray(model.dual_coef_, dtype=float).reshape(n, -1)  # (n, v)
    gamma = np.broadcast_to(np.asarray(model.kernel_.gamma, dtype=float), (d,))
    AZ = (A[:, :, None] * Z[:, None, :]).reshape(n, -1)  # (n, v d)
    sq = np.zeros(d)
    for start in range(0, X.shape[0], block_size):
        Xb = X[start:start + block_size]
        K = model.kernel_(Xb, Z)
        D = Xb[:, None, :] * (K @ A)[:, :, None] - (K @ AZ).reshape(Xb.shape[0], -1, d)  # / (-2 gamma)
        sq += np.einsum("ivj,ivj->j", D, D)
    r = 2.0 * gamma * np.sqrt(sq / X.shape[0]) * X.std(axis=0)
    total = r.sum()
    return r / total if total > 0 else np.zeros(d)


def search_objective(value, grad, gamma, n_residuals, hyper_penalty=False):
    """The function L-BFGS-B minimises, and its gradient, from the CV MSE
    ``value`` and its gradient ``grad`` (log widths, then log alpha, as
    :func:`lssvm.selection.cv_error_and_gradient` returns them).

    ``log MSE``: the same minimiser as the MSE, with gradients independent
    of the targets' scale (L-BFGS-B's projected-gradient tolerance is
    absolute).  With ``hyper_penalty``, Cawley & Talbot's ``(N/2) log PRESS
    + (p/2) log Omega``, ``Omega = sum(gamma^2) / 2`` over the p widths,
    divided by ``N / 2`` (N = ``n_residuals``): ``log MSE + (p/N) log Omega``
    plus a constant, so that the stopping tolerances act as without it.
    """
    obj, gobj = np.log(value), grad / value
    if hyper_penalty:
        gamma = np.atleast_1d(gamma)
        p = gamma.size
        omega = 0.5 * np.sum(gamma**2)
        obj = obj + (p / n_residuals) * np.log(omega)
        gobj = gobj.copy()
        gobj[:p] += (p / n_residuals) * gamma**2 / omega
    return obj, gobj


def _pairs(folds, X):
    """(train, test) index pairs of hold-out folds (the grid's, so that the alpha path uses the same folds)."""
    every = np.arange(X.shape[0])
    return [(np.setdiff1d(every, f), f) for f in folds]


def _refined_alpha(path_criterion, alphas, trace, start, p, kernel, lo, hi, evidence=False):
    """The exact CV path over the grid's ``alphas`` at the widths where start ``start`` ended best:
    ``(theta, CV MSE)`` of those widths with the path's best alpha where that alpha lowers the CV MSE below
    the path's value at the start's own alpha by more than ``ALPHA_REFINE_RTOL``, else None.

    Why: where alpha is far below the model's smallest eigenvalues, the CV error hardly changes with
    ``log alpha`` (its partial derivative is O(alpha)), so L-BFGS-B, having overshot alpha into that plateau
    in one step, sees a zero gradient there and stops, although a larger alpha is better.  The path costs
    one factorisation and O(m n) per alpha for LOO.
    """
    mine = np.flatnonzero(np.asarray(trace["start"]) == start)
    if mine.size == 0:
        return None
    best = mine[np.argmin(np.asarray(trace["mse"])[mine])]  # the criterion: CV MSE or -log evidence per value
    theta = trace["theta"][best]
    gamma = np.exp(theta[:p])
    try:
        with numerical_warnings_raise():
            # the last alpha: the start's own
            criterion = path_criterion(np.r_[alphas, np.exp(theta[-1])], gamma if kernel == "ard" else float(gamma[0]))
            path = criterion()
            m, v = criterion.Y.shape
            mse = path.mse if evidence is False else -path.info["evidence"] / (m * v)
    except (NumericalWarning, ValueError, np.linalg.LinAlgError):
        return None
    j = int(np.nanargmin(mse[:-1]))
    if not mse[j] < mse[-1] - ALPHA_REFINE_RTOL * abs(mse[-1]):
        return None
    return np.clip(np.r_[theta[:p], np.log(alphas[j])], lo, hi), float(mse[j])


def _rescore(evaluate, theta, rcond):
    """The criterion at ``theta`` evaluated at ``rcond`` (the model on K_BB's range where it is singular there):
    its value is exact; the gradient, which ignores the truncation, is not used (``evaluate`` drops its warning
    at any rcond but the search's)."""
    return evaluate(theta, rcond=rcond)[0]


def fit_gradient_search(est, X, y, groups, alphas, cv, rng, callback=None):
    """Run the gradient search for ``est`` (a sparse search estimator) on
    validated ``X``, ``y``; sets the fitted attributes and returns ``est``."""
    check_gradient_search(est)
    classification = est._classification
    t0 = time.perf_counter()
    space = est._space()
    gammas = space.get("gamma", None)
    if gammas is None or set(space) != {"gamma"}:
        raise ValueError("search='gradient' starts from a grid of widths: param_space must be {'gamma': values}")
    basis, n_basis = auto_basis(est.basis, est.n_basis, X.shape[0], np.unique(X, axis=0).shape[0])
    criterion = SparseLSSVMCV(X, y, kernel="rbf", cv=cv, alphas=alphas, classification=classification,
                              groups=groups, random_state=rng, basis=basis, n_basis=n_basis,
                              basis_in_holdout=est.basis_in_holdout, rcond=est.rcond)
    evidence = est.scoring == "evidence"
    scoring = "evidence" if evidence else "mse"
    # the grid only starts L-BFGS-B, whose widths and alpha range over GAMMA_BOUNDS / ALPHA_BOUNDS: no edge warning
    grid = grid_search(criterion, {"gamma": gammas}, scoring, callback=callback, warn_edges=False)
    g0, a0 = float(grid.best_params["gamma"]), float(grid.best_params["alpha"])
    rows = criterion.rows_for(gamma=g0)
    pchol_seed = None
    if isinstance(est.basis, str) and est.basis in FIXED_AFTER_GRID:  # pchol at the best grid width, then fixed
        pchol_seed = int(rng.randint(2**31 - 1))
        rows = pchol_rows(est, X, g0, classification, pchol_seed)
    # None: the cap grows with the widths that can move (a constant column's width has no gradient)
    n_eval = gradient_evaluations(est.max_evaluations,
                                  int(np.count_nonzero(np.ptp(X, axis=0) > 0)) if est.kernel == "ard" else 1)
    folds = "loo" if criterion.loo else [(None, f) for f in criterion.folds]
    p = X.shape[1] if est.kernel == "ard" else 1
    n_res = X.shape[0] * (criterion.Y.shape[1])
    # Narrow ARD widths on noise features make K_BB ill-conditioned long before the
    # fit is: the search keeps the (exactly differentiated) Cholesky route down to this
    # condition estimate, and stops only below it or where Cholesky fails.
    search_rcond = min(est.rcond, SEARCH_RCOND)

    # the one-standard-error rule needs each point's LOO residuals and evidence (gradient_select)
    one_se = est.selection_rule == "one-se" and criterion.loo and not (evidence or est.hyper_penalty)
    loo_sq = []  # per point: its squared LOO residuals (one_se), else None

    def evaluate(theta, rcond=search_rcond, by_evidence=evidence):
        gamma = np.exp(theta[:p])
        params = {"gamma": gamma if est.kernel == "ard" else float(gamma[0])}
        # singular K_BB: stop instead of approximating (the rescoring at the user's rcond wants the value there)
        with numerical_warnings_raise() if rcond == search_rcond else numerical_warnings_ignore():
            if by_evidence:  # minus the log evidence per target value: minimised as it is
                value, grad, *det = evidence_and_gradient(X, y, rows, est.kernel, params, float(np.exp(theta[-1])),
                                                          classification=classification, rcond=rcond,
                                                          return_details=one_se)
                return value, value, grad, (det or [None])[0]
            value, grad, *det = cv_error_and_gradient(X, y, rows, est.kernel, params, float(np.exp(theta[-1])),
                                                      cv=folds, basis_in_holdout=est.basis_in_holdout,
                                                      classification=classification, groups=groups, rcond=rcond,
                                                      return_details=one_se)
        obj, gobj = search_objective(value, grad, gamma, n_res, est.hyper_penalty)
        return value, obj, gobj, (det or [None])[0]

    trace = {"objective": [], "mse": [], "start": [], "theta": [], "log_evidence": [], "search": []}
    best = {"obj": np.inf}

    def fun(theta, start, by_evidence=evidence):
        try:
            value, obj, gobj, det = evaluate(theta, by_evidence=by_evidence)
        except (NumericalWarning, ValueError, np.linalg.LinAlgError) as exc:
            raise _Stop(str(exc)) from None
        if not (np.isfinite(obj) and np.all(np.isfinite(gobj))):
            raise _Stop("the CV error or its gradient is not finite")
        if by_evidence and not evidence:  # the one-SE rule's evidence search: its points are not LOO iterates
            value = float(np.mean(det["residuals"] ** 2))
        record(theta, start, value, obj, det, update_best=by_evidence == evidence)
        return obj, gobj

    def record(theta, start, value, obj, det=None, update_best=True):
        trace["objective"].append(obj)
        trace["mse"].append(value)
        trace["start"].append(start)
        trace["theta"].append(theta.copy())
        trace["log_evidence"].append(np.nan if det is None else det["log_evidence"])
        trace["search"].append("loo" if update_best and not evidence else "evidence")
        loo_sq.append(None if det is None else det["residuals"] ** 2)
        if update_best and obj < best["obj"]:
            best.update(obj=obj, mse=value, theta=theta.copy())

    lo = np.r_[np.full(p, np.log(GAMMA_BOUNDS[0])), np.log(ALPHA_BOUNDS[0])]
    hi = np.r_[np.full(p, np.log(GAMMA_BOUNDS[1])), np.log(ALPHA_BOUNDS[1])]
    theta0 = np.clip(np.r_[np.full(p, np.log(g0)), np.log(a0)], lo, hi)
    starts = [theta0]
    draw = check_random_state(rng.randint(2**31 - 1))
    for _ in range(est.n_restarts):
        jitter = np.r_[draw.normal(size=p), 0.0]
        starts.append(np.clip(theta0 + jitter, lo, hi))
    if not classification and np.all(np.ptp(criterion.Y, axis=0) == 0):
        starts = []  # constant targets (ConstantTargetWarning): every CV error is 0, log MSE and its gradient undefined
    stops = []
    folds_or_loo = "loo" if criterion.loo else _pairs(criterion.folds, X)

    def path_criterion(alphas, gamma):  # the exact CV over an alpha path on the search's basis and folds
        return SparseLSSVMCV(X, y, kernel=est.kernel, cv=folds_or_loo, alphas=alphas, classification=classification,
                             groups=groups, random_state=0, basis=rows, basis_in_holdout=est.basis_in_holdout,
                             rcond=search_rcond, kernel_params={"gamma": gamma})

    n_paths = 0
    for k, start in enumerate(starts):
        for restarts_left in range(ALPHA_REFINEMENTS, -1, -1):
            try:
                minimize(fun, start, args=(k,), jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                         options={"maxfun": n_eval, "maxiter": n_eval})
            except _Stop as exc:  # its best point so far may still gain from another alpha
                stops.append(f"start {k}: {exc}")
            refined = _refined_alpha(path_criterion, criterion.alphas, trace, k, p, est.kernel, lo, hi, evidence)
            n_paths += 1
            if refined is None:
                break
            start, value = refined
            if restarts_left == 0:  # no restart left: keep the path's best alpha at those widths
                obj = value if evidence else search_objective(value, np.zeros(p + 1), np.exp(start[:p]), n_res,
                                                              est.hyper_penalty)[0]
                try:  # one_se: evaluated, for its residuals and evidence
                    if not one_se:
                        raise _Stop
                    fun(start, k)
                except _Stop:
                    record(start, k, value, obj)
    if one_se and starts:  # a short evidence search from the same isotropic start adds candidates
        try:
            minimize(fun, theta0, args=(len(starts), True), jac=True, method="L-BFGS-B",
                     bounds=list(zip(lo, hi, strict=True)),
                     options={"maxfun": n_eval, "maxiter": n_eval})
        except _Stop:  # a singular K_BB on the way: its points so far are candidates all the same
            pass
    est.gradient_selection_ = None
    if one_se and any(e is not None for e in loo_sq):
        try:
            chosen, chosen_record = one_se_choice(loo_sq, trace["log_evidence"])
        except ValueError:  # no point with finite LOO residuals: keep the lowest criterion
            chosen = None
        if chosen is not None:
            best.update(theta=trace["theta"][chosen].copy(), mse=trace["mse"][chosen])
            est.gradient_selection_ = {"rule": "one-se", **chosen_record}
    if stops:  # a note: it concerns the result only where no start evaluated a point (the grid's best is kept)
        warn_numerical(
            "search='gradient' stopped early at the best point so far (" + "; ".join(stops) + "); the widths may "
            f"be at an edge of the range {GAMMA_BOUNDS} or the basis kernel matrix singular"
            + ("; no start evaluated a point, so the isotropic grid's best is kept: a larger n_basis or a narrower "
               "param_space['gamma'] lets the search move" if "theta" not in best else ""),
            stacklevel=3, affects_result="theta" not in best)
    if "theta" not in best:  # not even the starting point evaluated: fall back on the isotropic grid's best
        best.update(theta=theta0, mse=float(grid.best_score) / (n_res if evidence else 1), obj=np.nan)
    theta = best["theta"]
    gamma = np.exp(theta[:p])
    if est.hyper_penalty and np.all(gamma <= COLLAPSE_RATIO * g0):
        warnings.warn(
            f"hyper_penalty=True: every width ended more than {1 / COLLAPSE_RATIO:g}x below the isotropic grid's best "
            f"width {g0:.3g}, so the model is nearly linear.  The Cawley-Talbot criterion log MSE + (p/N) log Omega "
            f"falls without bound as all widths shrink (their prior's scale is integrated out, leaving (p/2) log "
            f"Omega), so its minimum lies at the edge of the search range (or where K_BB turns singular) unless the "
            f"CV error rises faster; with N/p = {n_res / p:.3g} residuals per width it did not here.  Compare with "
            "hyper_penalty=False",
            SearchEdgeWarning, stacklevel=3,
        )
    est.search_time_ = time.perf_counter() - t0
    est.scoring_ = scoring
    est.n_evaluations_ = grid.n_evaluations + len(trace["mse"]) + n_paths
    est.cv_folds_ = None if criterion.loo else criterion.folds
    est.cv_results_ = est._results_table(grid, scoring)
    est.grid_best_params_ = dict(grid.best_params)
    est.gradient_trace_ = {k: np.asarray(v) for k, v in trace.items()}
    est.best_index_ = None
    est.basis_rows_ = rows
    est.gradient_basis_ = {"basis": basis if isinstance(basis, str) else "rows", "gamma": g0,
                           "n_basis": int(np.size(rows)), "random_state": pchol_seed}
    est.max_evaluations_ = n_eval
    est.refit_time_ = 0.0
    t1 = time.perf_counter()

    def refit_at(theta, searched):
        """The model at ``theta`` at the user's rcond, and its score.  Where K_BB there is singular at that rcond
        (the search went on to SEARCH_RCOND), the model is fitted on K_BB's range as rcond asks, so it is
        rescored (one evaluation)."""
        gamma = np.exp(theta[:p])
        params = {**est._model_params(), "gamma": gamma if est.kernel == "ard" else float(gamma[0]),
                  "alpha": float(np.exp(theta[-1])), "basis": rows}
        with numerical_warnings_collect() as caught:  # K_BB singular at rcond: said below if it matters
            model = est._estimator_class(**params).fit(X, y)  # also without refit: the relevance needs the model
        truncated = model.factorization_.method != "cholesky" and est.rcond > search_rcond
        score = -_rescore(evaluate, theta, est.rcond) * (n_res if evidence else 1) if truncated else searched
        if not truncated:
            for w in caught:
                warn_numerical(w, stacklevel=4)
        if truncated and -score > -searched + REFIT_RTOL * abs(searched):
            warn_numerical(f"search='gradient': at the chosen widths K_BB is numerically singular at rcond={est.rcond:g} (the "
                f"search evaluates down to rcond={search_rcond:g}), so the refitted model is solved on K_BB's range, "
                f"which scores worse: best_score_ is that model's, {score:.6g}, against {searched:.6g} at the "
                f"searched point.  Pass rcond={search_rcond:g} to fit the searched model itself", stacklevel=4)
        return model, score, truncated

    # evidence: the total log evidence
    model, est.best_score_, truncated = refit_at(theta, -float(best["mse"]) * (n_res if evidence else 1))
    if truncated and est.gradient_selection_ is not None:
        # the record describes the model fitted (on K_BB's range at rcond), not the point searched at SEARCH_RCOND:
        # its exact LOO error (rescored above) and its log evidence; the searched values are kept beside them
        record = est.gradient_selection_
        evidence_of = getattr(model, "log_evidence", None)  # regression only
        record.update(searched_loo=record["chosen_loo"], searched_log_evidence=record["chosen_log_evidence"],
                      chosen_loo=-float(est.best_score_),
                      chosen_log_evidence=float(evidence_of()) if evidence_of is not None else np.nan)
    est.alpha_ = float(np.exp(theta[-1]))
    est.gamma_ = gamma if est.kernel == "ard" else float(gamma[0])
    est.best_params_ = {"gamma": est.gamma_, "alpha": est.alpha_}
    est.feature_relevance_ = feature_relevance(model, X) if est.kernel == "ard" else None
    if est.refit:
        est.best_estimator_ = model
        est.refit_time_ = time.perf_counter() - t1
        if classification:
            est.classes_ = est.best_estimator_.classes_
    elif classification:
        est.classes_ = np.unique(y)
    return est
