"""Which point the ARD gradient search settles on: the alpha path at the
widths where an L-BFGS-B run ended (:func:`refined_alpha`), and, among every
point evaluated, the one-standard-error rule on the exact LOO error, the
evidence breaking the tie (:func:`one_se_choice`).

With one width per input the search tunes d + 1 hyper-parameters on m LOO
residuals, and the lowest LOO error over-fits the selection criterion
(Cawley & Talbot, JMLR 8, 2007): on puma32H and Friedman #1 the search
found lower LOO errors than the Gaussian process's optimum on 9 splits of
10, yet the GP's point predicted better on 8 of them; along one search the
test error turned up while the LOO error still fell by 0.5 % per iteration
(docs/benchmarks.md).  The LOO error of a point is a
mean of m squared residuals, so it is known only to within its standard
error; differences below that are noise that the search fits.

The classic remedy is the one-standard-error rule (Breiman, Friedman,
Olshen & Stone 1984, section 3.4.3; Hastie, Tibshirani & Friedman, *The
Elements of Statistical Learning*, 2nd ed., section 7.10): among the
candidates whose CV error lies within one standard error of the lowest,
take the simplest.  Here

* the candidates are every point the search evaluated: the LOO search's
  iterates (all starts) and those of a short search of the log evidence
  from the same isotropic start, each with its per-row squared LOO
  residuals ``e_i^2`` (the gradient pass computes them anyway);
* the standard error is that of the lowest LOO error as a mean,
  ``sd(e_best^2) / sqrt(m v)`` over its m v squared residuals (ESL's;
  the paired standard error of a difference between two nearby points is
  far smaller, and with it the rule changed nothing measurable: same
  section of docs/benchmarks.md), but the band is at most ``ONE_SE_RTOL``
  (2 %) of the lowest LOO error.  At m = 2000 and 4000 one standard error
  was above 2 % on every benchmark split (3.2-7.2 % on Friedman #1, pol,
  elevators, ailerons), so as measured the rule is "within 2 %"; with Gaussian residuals one standard error is ``sqrt(2 / m)`` of
  the LOO error and takes over from the cap at m of about 5000;
* "simplest" is the highest log evidence (the Bayesian Occam factor,
  :mod:`lssvm.selection.evidence`): on Friedman #1 the evidence ranks
  the GP's point above our LOO optimum on all 10 splits.

So the LOO error still decides which points are admissible; the evidence
only chooses among points the LOO error cannot tell apart.  Measured
(docs/benchmarks.md): Friedman #1 against the GP per
split +1.5 % -> +0.03 % (3 wins of 5), puma32H +0.5 % -> +0.4 %, pol /
elevators / ailerons -2.0 % on average (worst split +0.7 %), at 1.25-1.35x
the CPU of the search (the evidence search).

Hand-written: scikit-learn's ``GridSearchCV`` exposes the one-SE rule only
as a user-supplied ``refit`` callable over ``cv_results_`` (fold means),
not over per-row LOO residuals.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import NumericalWarning, numerical_warnings_raise

__all__ = ["one_se_choice", "refined_alpha", "ALPHA_REFINE_RTOL", "SELECTION_RULES", "ONE_SE_Z", "ONE_SE_RTOL"]

#: The alpha path at a run's best widths restarts L-BFGS-B when its best alpha lowers the CV MSE by more than
#: this fraction.
ALPHA_REFINE_RTOL = 1e-3

#: ``selection_rule`` values: "one-se" (the rule above) and "min" (the lowest criterion).
SELECTION_RULES = ("one-se", "min")
#: Standard errors of slack (1: the one-standard-error rule).
ONE_SE_Z = 1.0
#: ... but at most this fraction of the lowest LOO error.  A few rows of leverage near 1 give huge LOO residuals
#: and so a huge standard error: on elevators and ailerons the uncapped band reached points 3-5 % above the
#: lowest LOO error, which tested up to 4 % worse.  With Gaussian residuals one standard error is
#: sqrt(2 / m) of the LOO error, 3.2 % at m = 2000 and 2.2 % at m = 4000, so the cap bites mainly on heavy
#: tails (docs/benchmarks.md: caps of 0.5, 1 and 2 % compared).
ONE_SE_RTOL = 0.02


def one_se_choice(loo_sq, log_evidence, z=ONE_SE_Z, rtol=ONE_SE_RTOL):
    """The point the one-standard-error rule keeps.

    Parameters
    ----------
    loo_sq : sequence of ndarray of shape (m,) or None
        Per point, its squared exact LOO residuals (summed over outputs, or
        of shape (m, v)); None (or non-finite values) for a point whose
        residuals are unknown or unreliable, which is never chosen.
    log_evidence : sequence of float
        Per point, its log evidence (NaN: never chosen unless it is the
        lowest-LOO point and nothing else is admissible).
    z : float, default=ONE_SE_Z
        Slack in standard errors of the lowest LOO error.
    rtol : float or None, default=ONE_SE_RTOL
        Cap on the slack, as a fraction of the lowest LOO error (None: no cap).

    Returns
    -------
    chosen : int
        Index of the kept point: among the points with ``mean(e^2) <=
        mean(e_best^2) + min(z sd(e_best^2) / sqrt(N), rtol mean(e_best^2))``
        (N residuals), the one of highest log evidence (the lowest-LOO point
        where none has a finite evidence).
    record : dict
        ``best_index``, ``best_loo`` (its mean squared LOO residual),
        ``se`` (its standard error), ``threshold``, ``n_admissible``,
        ``chosen_index``, ``chosen_loo``, ``chosen_log_evidence``.

    Raises
    ------
    ValueError
        When no point has finite LOO residuals.

    Notes
    -----
    O(P N) for P points of N residuals each.
    """
    means = np.full(len(loo_sq), np.inf)
    for i, e2 in enumerate(loo_sq):
        if e2 is not None and np.all(np.isfinite(e2)):
            means[i] = float(np.mean(e2))
    if not np.isfinite(means).any():
        raise ValueError("one_se_choice: no point has finite LOO residuals")
    best = int(np.argmin(means))
    e2b = np.ravel(loo_sq[best])
    # sd of e^2 relative to its mean: sd(e^2) itself squares e^2 again, which under- or overflows for |y| beyond
    # about 1e-77 or 1e77 (no band, or a RuntimeWarning), and the rule would depend on the targets' scale
    se = float(np.std(e2b / means[best], ddof=1) / np.sqrt(e2b.size)) * means[best] \
        if e2b.size > 1 and means[best] > 0 else 0.0
    band = z * se if rtol is None else min(z * se, rtol * means[best])
    threshold = means[best] + band
    ev = np.asarray(log_evidence, dtype=float)
    admissible = np.flatnonzero((means <= threshold) & np.isfinite(ev))
    chosen = int(admissible[np.argmax(ev[admissible])]) if admissible.size else best
    record = {"best_index": best, "best_loo": float(means[best]), "se": se, "threshold": float(threshold),
              "n_admissible": int(np.count_nonzero(means <= threshold)), "chosen_index": chosen,
              "chosen_loo": float(means[chosen]), "chosen_log_evidence": float(ev[chosen])}
    return chosen, record


def refined_alpha(path_criterion, alphas, trace, start, p, kernel, lo, hi, evidence=False):
    """The exact CV path over the grid's ``alphas`` at the widths where start ``start`` ended best.

    Parameters
    ----------
    path_criterion : callable
        ``path_criterion(alphas, gamma)``: a :class:`lssvm.selection.SparseLSSVMCV` on the search's basis and
        folds at those widths.
    alphas : ndarray of shape (A,)
    trace : dict of lists
        The search's points so far (``start``, ``mse``, ``theta``: log widths then log alpha).
    start : int
    p : int
        Widths in ``theta``.
    kernel : {"ard", "rbf"}
    lo, hi : ndarray of shape (p + 1,)
        Bounds of ``theta``.
    evidence : bool
        Rank by minus the log evidence per target value instead of the CV MSE.

    Returns
    -------
    (theta, value) or None
        Those widths with the path's best alpha, and its criterion, where that alpha lowers the criterion
        below the path's value at the start's own alpha by more than ``ALPHA_REFINE_RTOL``; else None.

    Notes
    -----
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
