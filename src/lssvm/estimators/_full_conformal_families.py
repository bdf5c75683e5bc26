"""Full conformal intervals of the Nystrom and fixed-size regressors: each is a
ridge model on fixed rows at its fitted basis, handed to
:func:`lssvm.cv.full_conformal.ridge_full_conformal`.

- Nystrom (low-rank predictor): features ``phi(x) = k(x, X_S) U_k
  L_k^(-1/2)`` and an unpenalised intercept, ``min ||y - Phi w - b||^2 +
  alpha ||w||^2`` (the LS-SVM dual on ``K~ = Phi Phi^T``, Ding & Liao 2012).
- Fixed-size: per output, the coordinates SCDP selected among ``[k(x, Z),
  1]`` (the intercept only if selected), ``min ||y - K w - b0||^2 + alpha
  w^T K_ZZ w + nu b0^2`` restricted to them (Karsmakers et al. 2011, eq. 34).
"""

from __future__ import annotations

import numpy as np

from ..cv.conformal import ridge_full_conformal

__all__ = ["family_full_conformal"]


def _nystrom_system(est):
    if est.predictor != "low-rank":
        raise ValueError(
            "method='full' needs predictor='low-rank' (the default): the exact-kernel predictor is not the "
            "ridge model it was trained as, so no full conformal set of it follows from the fit"
        )
    P = est.factorization_.projection
    k = P.shape[1]

    def rows(X):
        F = est.kernel_(X, est.basis_vectors_) @ P
        return np.hstack([F, np.ones((F.shape[0], 1))])

    pen = np.zeros((k + 1, k + 1))
    pen[np.arange(k), np.arange(k)] = float(est.alpha)
    return [(None, rows, pen)]


def _fixed_size_systems(est, v):
    Zb = est.basis_vectors_
    M = Zb.shape[0]
    full_pen = np.zeros((M + 1, M + 1))
    full_pen[:M, :M] = float(est.alpha) * est.kernel_(Zb, Zb)
    full_pen[M, M] = float(est.nu)
    out = []
    for j in range(v):
        sel = np.flatnonzero(est.coef_full_[:, j] != 0)  # SCDP's selection (a coefficient exactly 0 is unused)

        def rows(X, sel=sel):
            R = np.hstack([est.kernel_(X, Zb), np.ones((X.shape[0], 1))])
            return R[:, sel]

        out.append((j, rows, full_pen[np.ix_(sel, sel)]))
    return out


def family_full_conformal(est, X_fit, Y, X, coverage):
    """``predict_interval(method="full")`` of a fitted Nystrom or fixed-size
    regressor, (t, 2, v): O(m p^2 + p^3) once (p the model's features,
    the fit's own order), then O(m p + m log m) per test point and output
    (:func:`lssvm.cv.full_conformal.ridge_full_conformal`)."""
    E = Y - est._decision_2d(X_fit)
    centre = est._decision_2d(X)
    v = Y.shape[1]
    systems = _fixed_size_systems(est, v) if hasattr(est, "coef_full_") else _nystrom_system(est)
    out = np.empty((X.shape[0], 2, v))
    for j, rows, pen in systems:
        cols = slice(None) if j is None else slice(j, j + 1)
        out[:, :, cols] = ridge_full_conformal(rows(X_fit), pen, rows, X, E[:, cols], centre[:, cols], coverage,
                                               getattr(est, "block_size", None))
    return out
