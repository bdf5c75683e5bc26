"""Jackknife+ and full conformal intervals of training rows, each built
from the other m - 1 rows, from the one factorisation: an honest check of
either method on the training data (every row is scored as a new point
would be), as the ``lssvm select`` report shows them.

**The hat matrix.**  The sparse model (and the low-rank Nyström model, a
ridge model on its features) with its unpenalised intercept has hat matrix
``H = 1/m + M D M^T`` with ``M`` the centred training rows in the
eigenbasis and ``D = (Lambda + alpha)^-1`` (:mod:`.jackknife`).  Row i's
column costs O(m r).

**Jackknife+ without row i.**  Leaving out rows ``S = {i, j}`` gives the
residuals ``r_S = (I - H_SS)^-1 e_S`` at those two rows, with ``e`` the
full fit's residuals (the two-row version of the LOO formula): so the fit
without both rows predicts ``f_{-ij}(x_i) = y_i - r_i`` at row i, and row
j's leave-one-out residual among the m - 1 rows is ``r_j``.  Jackknife+ on
the m - 1 rows at ``x_i`` takes order statistics of ``f_{-ij}(x_i) -+
|r_j|`` over ``j != i`` (Barber et al. 2021).

**Full conformal without row i.**  The m - 1 rows plus ``(x_i, y)`` are the
training data with ``y_i`` replaced by ``y``.  In the notation of
:mod:`.full` (whose sets this reuses) the fit on the m - 1 rows has
residuals ``e_j + H_ji e_i / (1 - H_ii)``, predicts ``y_i - e_i / (1 -
H_ii)`` at ``x_i``, and ``x_i`` has cross-leverages ``u_j = H_ji / (1 -
H_ii)`` and self-leverage ``h = H_ii / (1 - H_ii)`` (Sherman-Morrison).

Cost: O(m r) per row for its hat column, then O(m) per row and level for
the order statistics (O(m log m) where a full conformal set is not an
interval).
"""

from __future__ import annotations

import numpy as np

from .full import full_conformal_bounds
from .jackknife import whitened_rows
from .ranks import check_coverage, interval_from_values, min_rows_for

__all__ = ["training_row_intervals"]


def training_row_intervals(fac, alpha, rows, levels):
    """Jackknife+ and full conformal intervals of training rows, each from
    the other m - 1 rows (module docstring).

    Parameters
    ----------
    fac : SparseRLSFactorization
        The fitted model's factorisation (rows in memory: ``fac.M``).
    alpha : float
    rows : array-like of int, shape (s,)
        The training rows to score.
    levels : sequence of float in (0, 1)
        Nominal coverages.

    Returns
    -------
    intervals : dict
        ``"jackknife+"`` and ``"full"``: ndarray of shape (L, s, 2, v), the
        lower and upper ends per level, row and output (the full
        conformal set's convex hull; NaN for a row of leverage ~ 1, whose
        leave-one-out fit is undefined, and for a level that needs more
        than m - 1 rows).
    targets : ndarray of shape (s, v)
        The rows' targets ``y_i``.

    Notes
    -----
    O(s m r) for the hat columns plus O(s L m) for the order statistics
    (paper: Barber et al. 2021 for jackknife+; Lei et al. 2018, Algorithm 1
    and :mod:`.full` for full conformal).
    """
    rows = np.asarray(rows, dtype=np.intp).ravel()
    levels = [check_coverage(float(c)) for c in levels]
    m = fac.n_samples
    alpha = float(alpha)
    E = fac.residuals(alpha)  # (m, v)
    v = E.shape[1]
    Y = fac.y_centered + fac.y_mean
    d, _ = whitened_rows(fac, alpha)
    hat_diag = fac.hat_diag(alpha)
    out = {name: np.full((len(levels), rows.size, 2, v), np.nan) for name in ("jackknife+", "full")}
    usable = [min_rows_for(c) <= m - 1 for c in levels]
    others = np.ones(m, dtype=bool)
    for s, i in enumerate(rows):
        H_i = 1.0 / m + fac.M @ (d * fac.M[i])  # column i of the hat matrix, (m,)
        gap_i = 1.0 - H_i[i]
        if not gap_i > 1e-8:  # leverage ~ 1: the fit without row i is undefined
            continue
        others[i] = False
        H_oi, H_oo = H_i[others], hat_diag[others]
        e_i, e_o = E[i], E[others]  # (v,), (m - 1, v)
        det = (gap_i * (1.0 - H_oo) - H_oi * H_oi)[:, None]  # (m - 1, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r_i = ((1.0 - H_oo)[:, None] * e_i[None] + H_oi[:, None] * e_o) / det  # y_i - f_{-ij}(x_i)
            r_j = (H_oi[:, None] * e_i[None] + gap_i * e_o) / det  # row j's LOO residual without row i
        values = (Y[i][None] - r_i)[None]  # (1, m - 1, v)
        E_without = e_o + H_oi[:, None] * (e_i / gap_i)[None]
        U = (H_oi / gap_i)[None]
        h = np.array([H_i[i] / gap_i])
        centre = (Y[i] - e_i / gap_i)[None]
        for level_index, (coverage, ok) in enumerate(zip(levels, usable, strict=True)):
            if not ok:
                continue
            out["jackknife+"][level_index, s] = interval_from_values(values, np.abs(r_j), coverage)[0]
            out["full"][level_index, s] = full_conformal_bounds(E_without, U, h, centre, coverage)[0]
        others[i] = True
    return out, Y[rows]
