"""Where the fixed-size and Nyström classifiers find the out-of-sample
decision values their probability maps are fitted on
(:mod:`lssvm.estimators._calibration` fits and applies the maps).

Every family calibrates as the sparse one does, on the exact held-out
decision values of its fitted model (:meth:`ProbaMixin._calibration_decisions`:
leave-one-out with ``calibration_cv=None``, else the out-of-fold values of
``calibration_cv`` at the default ``basis_in_holdout``), in memory and on
Dask, with no refit:

* **Fixed size** (Karsmakers et al. 2011): the model at its support is the
  sparse model on the prototypes that carry a weight (the documentation's
  Mathematics page, §4, §6), whose engine gives the values: those of
  ``loo_decision_function`` and ``cv_decision_function``.  The prototypes
  stay the fitted ones (a fold does not regrow its own by SCDP).  An output
  whose SCDP run left the intercept out is not that model (its intercept
  is unpenalised): fitted in memory, its values are those of its own
  coordinates, intercept penalty ``nu`` included
  (:func:`selected_coordinates_held_out`); fitted on Dask, such a model has
  no calibration and fit says so.
* **Nyström** (Ding & Liao 2012): the exact values of the (low-rank) model
  on its sampled columns with the rank-k map (a fold that removes a column
  re-truncates the map of the kept ones).  With ``predictor="exact"`` the
  maps are fitted on the low-rank model's values and applied to the
  exact-kernel predictor's decision values all the same (its own held-out
  values have no closed form).
"""

from __future__ import annotations

import numpy as np

from ..cv import resolve_folds
from ._calibration import ProbaMixin, with_calibration

__all__ = ["FixedSizeProbaMixin", "selected_coordinates_held_out", "with_calibration"]


class FixedSizeProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.FixedSizeLSSVC`: calibrated on the
    exact held-out decision values of the model at its support."""

    def _calibration_decisions(self, groups=None):
        W, M = self.coef_full_, self.n_basis_
        if getattr(self, "_X_fit", None) is None or not np.any(W[M] == 0):
            return super()._calibration_decisions(groups)
        # an output whose SCDP run left the intercept out is not the sparse model (whose intercept is
        # unpenalised): its held-out values from its own coordinates (module notes)
        folds = None
        if self.calibration_cv is not None:
            folds = resolve_folds(self.calibration_cv, self._X_fit.shape[0], y=self._codes, groups=groups,
                                  classifier=True)
        return selected_coordinates_held_out(self, self._X_fit, self._Y_fit, folds, getattr(self, "_fit_weights", None))


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
