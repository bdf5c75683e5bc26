"""Where the fixed-size and Nyström classifiers find the out-of-sample
decision values their probability maps are fitted on
(:mod:`lssvm.estimators._calibration` fits and applies the maps).

* **Nyström** (Ding & Liao 2012): the exact LOO residuals of the
  approximate model at the fitted alpha, ``f_{-i}(x_i) = y_i - R_i``
  (O(n k) after the fit), or its exact k-fold ones with ``calibration_cv``
  (the fitted rank-k map kept): the numbers of ``loo_decision_function`` and
  ``cv_decision_function``.  Those are the low-rank model's; with
  ``predictor="exact"`` the maps are applied to the exact-kernel
  predictor's decision values all the same.
* **Fixed size** (Karsmakers et al. 2011): no LOO formula holds for a model
  grown by SCDP, so the values are v-fold.  Each fold's training system is
  the full system minus the fold's Gram terms (the downdate of eqs. 36-37,
  O(h M^2)); SCDP grows it from the same pool to the fitted model's size
  (``model_size_``, per output), or ``solver="direct"`` solves it with all
  prototypes, and the fold model predicts its held-out rows.  That is one
  SCDP run per fold, no longer than the size selection's (whose runs go on
  to the stopping rule), plus the kernel and Gram terms again (the fit does
  not keep them): about twice the fit's work; 3-5x the time of sub-second
  fits, where fixed costs dominate (``benchmarks/proba_families.py``).  The folds are ``calibration_cv``, else the
  estimator's own ``cv`` (the folds that chose the size), else
  ``StratifiedKFold(10)``.  SCDPP (``solver="scdpp"``) draws its fold
  candidates from a seed of its own (the fit's draw is not kept), so its
  fold models need not draw the fit's candidates.
* **On Dask** the same numbers from passes: Nyström's from the
  Dask LOO / k-fold pass of the fit; fixed size's from per-fold Gram sums
  (the fit's when the folds are its ``cv`` folds, else one pass; the
  downdate is a subtraction of sums) and one pass of out-of-fold decision
  values, the fold models solved on the client by the
  same rule (:func:`fixed_size_dask_decisions`).  The m decision values and
  class indices then come to the client, O(m v) floats (8 MB per output at
  m = 10^6): Platt's fit iterates over all of them and the isotonic fit
  sorts them (a binned fit would change the numbers).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from sklearn.utils import check_random_state

from .._threads import parallel_map
from ..cv import resolve_folds
from ..cv.fixed_size import scdp_seed
from ..solvers.fixed_size import FixedSizeSystem, augmented_rows, solve_guarded
from ..solvers.scdp import DEFAULT_N_CANDIDATES, SCDPState
from ..solvers.weighted_rls import weighted_gram_sums
from ._calibration import ProbaMixin, with_calibration

__all__ = ["FixedSizeProbaMixin", "NystromProbaMixin", "fixed_size_dask_decisions", "fixed_size_fold_decisions",
           "with_calibration"]

#: Folds of the fixed-size calibration when neither ``calibration_cv`` nor ``cv`` gives any.
DEFAULT_CALIBRATION_FOLDS = 10


def fixed_size_fold_decisions(est, X, Y, folds, weights=None):
    """Out-of-fold decision values of a fitted fixed-size model.

    Parameters
    ----------
    est : FixedSizeLSSVC or FixedSizeLSSVR
        Fitted on ``X``, ``Y``: its pool ``basis_vectors_``, ``kernel_``,
        ``alpha``, ``nu``, ``solver`` and ``model_size_`` define the fold models.
    X : ndarray of shape (N, d)
    Y : ndarray of shape (N, v)
        The coded targets the model was fitted on.
    folds : list of ndarray
        Test indices of each fold (a partition of the rows).
    weights : ndarray of shape (N,), optional
        Row weights of a weighted fit: the fold systems are the weighted
        ones (:func:`lssvm.solvers.weighted_rls.weighted_gram_sums`), solved
        with the Gram guard.

    Returns
    -------
    ndarray of shape (N, v)
        Row i: the decision values of the fold model trained without i's
        fold: the same as refitting ``FixedSizeLSSVC(basis=basis_vectors_,
        cv=None, max_size=size)`` on the fold's training rows
        (``solver="scdp"`` or "direct").

    Notes
    -----
    O(N M d) for the kernel, O(N M^2) for the Gram terms, then per fold
    O(h M^2) for the downdate and one SCDP run to the model's size k,
    O(k^2 M) (or an O(M^3) solve for "direct").  Folds run in parallel.
    """
    Z, kernel = est.basis_vectors_, est.kernel_
    K = kernel(X, Z)
    zidx = est.basis_indices_
    K_ZZ = K[zidx] if zidx is not None else kernel(Z, Z)
    system = FixedSizeSystem.from_kernel(K, K_ZZ, Y) if weights is None else \
        FixedSizeSystem.from_sums(weighted_gram_sums(K, Y, weights), K_ZZ)
    solve = _fold_solver(est, Y.shape[1])
    F = np.full(Y.shape, np.nan)

    def work(test):
        if weights is not None:
            F[test] = augmented_rows(K[test]) @ solve(system.without(weighted_gram_sums(K[test], Y[test],
                                                                                         weights[test])), None)
            return
        train = np.ones(K.shape[0], dtype=bool)
        train[test] = False
        W = solve(system.without_rows(K[test], Y[test]), (K[train], K_ZZ, Y[train]))
        F[test] = augmented_rows(K[test]) @ W

    parallel_map(work, list(folds))
    return F


def _fold_solver(est, v):
    """``solve(sub, rows) -> W (M + 1, v)``: the fold model of a fitted
    fixed-size estimator on the downdated system ``sub`` (SCDP grown to
    ``model_size_`` per output from the fit's pool, or the direct solve,
    guarded by QR when ``rows = (K_train, K_ZZ, Y_train)`` are in memory,
    by the Gram alone when ``rows`` is None (Dask)).  One rule for both."""
    alpha, nu = float(est.alpha), float(est.nu)
    sizes = np.broadcast_to(np.atleast_1d(est.model_size_), (v,))
    rho = None if est.solver != "scdpp" else (
        DEFAULT_N_CANDIDATES if est.n_candidates is None else est.n_candidates)
    seed = scdp_seed(check_random_state(est.random_state)) if rho is not None else 0
    call = f"{type(est).__name__}(solver='direct') calibration folds"

    def solve(sub, rows):
        A = sub.matrix(alpha, nu)
        if est.solver == "direct":
            if rows is None:
                return solve_guarded(A, sub.rhs, None, sub.prototype_kernel, None, alpha, nu, call=call,
                                     gram=sub.gram)
            K_train, K_ZZ, Y_train = rows
            return solve_guarded(A, sub.rhs, K_train, K_ZZ, Y_train, alpha, nu, call=call)
        W = np.zeros((sub.n_coef, v))
        for j in range(v):
            state = SCDPState(A, sub.rhs[:, j], rho, seed)
            while state.k < sizes[j] and state.step() is not None:
                pass
            if state.k:
                W[state.order, j] = state.coef
        return W

    return solve


def fixed_size_dask_decisions(est, data, folds, rows=None):
    """:func:`fixed_size_fold_decisions` of a model fitted on Dask rows ``data``
    (:class:`lssvm.backends.dask.RowData`), on the Dask folds ``folds``:
    one pass of per-fold Gram sums (unless ``rows``, the fit's
    :class:`lssvm.cv.fixed_size.SummedRows` on these folds, holds them),
    the fold models from the downdated sums (the same rule), one pass of
    out-of-fold decision values.

    Returns
    -------
    F : ndarray of shape (N, v)
    codes : ndarray of shape (N,)
        Class index of every row.  Both on the client: O(N v) floats
        (Platt's fit iterates over all of them, the isotonic fit sorts them).
    """
    from ..backends.dask import families as fam

    Z, kernel, classes = est.basis_vectors_, est.kernel_, est.classes_
    if rows is None:
        rows = fam.summed_rows(data, Z, kernel, classes, folds, label="calibration pass 1/2")
    system = rows.system()
    solve = _fold_solver(est, system.rhs.shape[1])
    coefs = [solve(system.without(fs), None) for fs in rows.fold_sums]
    return fam.fold_decisions_pass(folds, Z, kernel, classes, coefs, label="calibration pass 2/2")


@contextmanager
def _group_folds_message():
    """The Dask fold rule's "needs groups" as the in-memory "splits by group"
    error, which :meth:`ProbaMixin._fit_calibration` turns into its advice."""
    try:
        yield
    except ValueError as exc:
        if "needs groups" not in str(exc):
            raise
        raise ValueError(f"{exc}: the splitter splits by group") from None


class FixedSizeProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.FixedSizeLSSVC`, calibrated on v-fold
    decision values (module docstring)."""

    def _calibration_decisions(self, X, Y=None, groups=None):
        cv = self.calibration_cv
        if cv is None:
            cv = DEFAULT_CALIBRATION_FOLDS if self.cv is None else self.cv
        if Y is None:  # X: the RowData of a Dask fit (with its groups)
            from ..backends.dask import resolve_dask_cv

            kept, self._dask_sums = getattr(self, "_dask_sums", None), None
            if kept is not None and self.calibration_cv is None:  # the fit's folds: its sums serve
                return fixed_size_dask_decisions(self, X, *kept)
            with _group_folds_message():
                folds = resolve_dask_cv(cv, X, classifier=True)
            return fixed_size_dask_decisions(self, X, folds)
        folds = resolve_folds(cv, X.shape[0], y=self._codes, groups=groups, classifier=True)
        return fixed_size_fold_decisions(self, X, Y, folds, getattr(self, "_fit_weights", None))


class NystromProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.NystromLSSVC`, calibrated on the
    approximate model's exact LOO or k-fold decision values (module docstring)."""

    def _calibration_decisions(self, groups=None):
        if getattr(self, "_dask_fit", None) is not None:  # the same values from the Dask CV passes
            from ..backends.dask.families import held_out_decisions

            cv = "loo" if self.calibration_cv is None else self.calibration_cv
            with _group_folds_message():
                R = self._dask_cv(cv, np.array([float(self.alpha)]), groups, reduce=False)[0]
            return held_out_decisions(self._dask_fit.targets(), R)
        # the low-rank model's values, also for predictor="exact" (whose own are not known in closed form)
        engine = self._low_rank_engine()
        alphas = np.array([float(self.alpha)])
        if self.calibration_cv is None:
            return engine.targets() - engine.loo_residuals(alphas)[0]
        folds = engine.resolve_cv(self.calibration_cv, groups, classifier=True)
        return engine.cv_outputs(folds, alphas, "keep")[0]
