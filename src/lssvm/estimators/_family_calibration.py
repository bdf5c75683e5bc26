"""Where the fixed-size and Nyström classifiers find the out-of-sample
decision values their probability maps are fitted on
(:mod:`lssvm.estimators._calibration` fits and applies the maps).

* **Nyström** (Ding & Liao 2012): the exact LOO residuals of the
  approximate model at the fitted alpha, ``f_{-i}(x_i) = y_i - R_i``
  (O(n k) after the fit), or its exact k-fold ones with ``calibration_cv``:
  the same numbers as ``cv_residuals``.  Those are the low-rank model's; with
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
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .._parallel import parallel_map
from ..cv import resolve_folds
from ..cv.fixed_size import scdp_seed
from ..solvers.fixed_size import FixedSizeSystem, augmented_rows, solve_guarded
from ..solvers.scdp import DEFAULT_N_CANDIDATES, SCDPState
from ._calibration import ProbaMixin, with_calibration

__all__ = ["FixedSizeProbaMixin", "NystromProbaMixin", "fixed_size_fold_decisions", "with_calibration"]

#: Folds of the fixed-size calibration when neither ``calibration_cv`` nor ``cv`` gives any.
DEFAULT_CALIBRATION_FOLDS = 10


def fixed_size_fold_decisions(est, X, Y, folds):
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
    system = FixedSizeSystem.from_kernel(K, K_ZZ, Y)
    alpha, nu = float(est.alpha), float(est.nu)
    sizes = np.broadcast_to(np.atleast_1d(est.model_size_), (Y.shape[1],))
    rho = None if est.solver != "scdpp" else (
        DEFAULT_N_CANDIDATES if est.n_candidates is None else est.n_candidates)
    seed = scdp_seed(check_random_state(est.random_state)) if rho is not None else 0
    F = np.full(Y.shape, np.nan)

    def work(test):
        sub = system.without_rows(K[test], Y[test])
        A = sub.matrix(alpha, nu)
        Ka = augmented_rows(K[test])
        if est.solver == "direct":
            train = np.ones(K.shape[0], dtype=bool)
            train[test] = False
            W = solve_guarded(A, sub.rhs, K[train], K_ZZ, Y[train], alpha, nu,
                              call=f"{type(est).__name__}(solver='direct') calibration folds")
            F[test] = Ka @ W
            return
        for j in range(Y.shape[1]):
            state = SCDPState(A, sub.rhs[:, j], rho, seed)
            while state.k < sizes[j] and state.step() is not None:
                pass
            F[test, j] = Ka[:, state.order] @ state.coef if state.k else 0.0

    parallel_map(work, list(folds))
    return F


class FixedSizeProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.FixedSizeLSSVC`, calibrated on v-fold
    decision values (module docstring)."""

    def _calibration_decisions(self, X, Y, groups=None):
        cv = self.calibration_cv
        if cv is None:
            cv = DEFAULT_CALIBRATION_FOLDS if self.cv is None else self.cv
        folds = resolve_folds(cv, X.shape[0], y=self._codes, groups=groups, classifier=True)
        return fixed_size_fold_decisions(self, X, Y, folds)


class NystromProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.NystromLSSVC`, calibrated on the
    approximate model's exact LOO or k-fold decision values (module docstring)."""

    def _calibration_decisions(self, groups=None):
        fac = getattr(self, "factorization_", None)
        if fac is None or getattr(fac, "Y", None) is None:  # not fitted in memory
            return None
        cv = "loo" if self.calibration_cv is None else self.calibration_cv
        R, _ = self._residuals_3d(cv, None, groups)
        return fac.Y - R[0]
