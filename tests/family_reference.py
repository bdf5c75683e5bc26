"""Brute-force references for the methods every model family shares.

All three families are one model (the documentation's Mathematics page, §6):
ridge regression with an unpenalised intercept on the features

    phi(x) = S^-1/2 U^T k(Z, x),      K_ZZ = U S U^T,

of a basis Z, with every eigenpair kept (sparse LS-SVM, §1, on the range of
``K_ZZ``; a fixed-size model at its support, §4) or only the top ``rank``
ones (the low-rank Nyström model, §5).  Everything here is computed from
that definition by dense direct solves and explicit refits, never by the
library's solvers:

* a fit solves the §1 normal equations in ``(a, b)`` (full rank) or the
  ridge normal equations on ``phi`` (truncated rank), by LU;
* a hold-out refits on the training rows that remain, at the same basis,
  without the basis points every holder of which is held out ("remove"),
  with all of them ("keep"), or keeping held-out basis rows in training
  ("train");
* the evidence is the dense Gaussian-process likelihood at the noise precision
  that maximises it; the predictive variance is the dense GP posterior
  with a flat prior on the intercept; GCV forms the hat matrix.

Conditioning: every solve reports the condition number of its matrix, so the
tests can scale their tolerance by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = [
    "RidgeBasis",
    "cv_outputs",
    "dense_log_evidence",
    "closed_form_predictive_std",
    "dense_predictive_std",
    "full_conformal_contains",
    "gcv_score",
    "holdout_outputs",
    "interval_jackknife",
    "interval_plus",
    "platt",
    "rbf",
]


def rbf(A, B, gamma):
    """``exp(-gamma ||a - b||^2)``, shape (len(A), len(B))."""
    A, B = np.asarray(A, float), np.asarray(B, float)
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


@dataclass
class Fit:
    """A fitted reference model: ``f(x) = k(x, Z) a + b`` (a: (n, v), b: (v,))."""

    Z: np.ndarray
    a: np.ndarray
    b: np.ndarray
    gamma: float
    cond: float

    def predict(self, X):
        return rbf(X, self.Z, self.gamma) @ self.a + self.b


@dataclass
class RidgeBasis:
    """The model on basis ``Z`` with RBF width ``gamma``; ``rank`` None keeps
    every eigenpair of ``K_ZZ`` (the sparse model), an int the top ones (Nyström)."""

    Z: np.ndarray
    gamma: float
    rank: int | None = None

    def __post_init__(self):
        self._K_ZZ = rbf(self.Z, self.Z, self.gamma)
        self._kernel_rows = (None, None)  # (X, k(X, Z)) of the last training inputs: refits slice it
        self._whiteners = {}

    def kernel(self, X):
        """``k(X, Z)`` (m, n), kept for the last ``X`` seen (the refits of one data set share it)."""
        if self._kernel_rows[0] is not X:
            self._kernel_rows = (X, rbf(X, self.Z, self.gamma))
        return self._kernel_rows[1]

    def whitener(self, keep=None):
        """``U_k S_k^-1/2`` (n_keep, k) of the kept basis points' block (top ``rank`` eigenpairs)."""
        key = None if keep is None else tuple(np.flatnonzero(keep))
        if key not in self._whiteners:
            K_ZZ = self._K_ZZ if keep is None else self._K_ZZ[np.ix_(keep, keep)]
            s, U = np.linalg.eigh(K_ZZ)
            order = np.argsort(s)[::-1]
            s, U = s[order], U[:, order]
            k = s.size if self.rank is None else min(self.rank, s.size)
            self._whiteners[key] = U[:, :k] / np.sqrt(s[:k])
        return self._whiteners[key]

    def fit(self, X, Y, alpha, keep=None, rows=None):
        """Fit on rows ``X[rows]`` (all if None), targets ``Y`` (one per row of ``X[rows]``) at
        ``alpha``, on the basis points ``keep`` (a boolean mask; all if None)."""
        K = self.kernel(X)
        if rows is not None:
            K = K[rows]
        Y = np.asarray(Y, float).reshape(K.shape[0], -1)
        Z = self.Z
        if keep is not None:
            K, Z = K[:, keep], Z[keep]
        m, n = K.shape
        if self.rank is None:
            # §1 normal equations: [K^T K + alpha K_ZZ, K^T 1; 1^T K, m] [a; b] = [K^T Y; 1^T Y]
            K_ZZ = self._K_ZZ if keep is None else self._K_ZZ[np.ix_(keep, keep)]
            A = np.zeros((n + 1, n + 1))
            A[:n, :n] = K.T @ K + alpha * K_ZZ
            A[:n, n] = A[n, :n] = K.sum(0)
            A[n, n] = m
            rhs = np.vstack([K.T @ Y, Y.sum(0, keepdims=True)])
            sol = np.linalg.solve(A, rhs)
            return Fit(Z, sol[:n], sol[n], self.gamma, float(np.linalg.cond(A)))
        W = self.whitener(keep)
        Phi = K @ W
        mean = Phi.mean(0)
        Pc = Phi - mean
        G = Pc.T @ Pc + alpha * np.eye(W.shape[1])
        w = np.linalg.solve(G, Pc.T @ (Y - Y.mean(0)))
        b = Y.mean(0) - mean @ w
        return Fit(Z, W @ w, b, self.gamma, float(np.linalg.cond(G)))

    def features(self, X):
        """phi(X) (t, k)."""
        return rbf(X, self.Z, self.gamma) @ self.whitener()


def holders(X, Z):
    """For every basis point, the training rows equal to it value for value (list of arrays)."""
    X, Z = np.asarray(X, float), np.asarray(Z, float)
    return [np.flatnonzero(np.all(X == z, axis=1)) for z in Z]


def holdout_outputs(model, X, Y, H, alpha, mode, held=None):
    """Outputs (h, v) for rows ``H`` of the model refitted without them, at the same basis.

    ``mode``: "remove" drops the basis points all of whose holder rows are in
    ``H``; "keep" keeps every basis point; "train" keeps held-out rows that
    hold a basis point in training.  Returns (outputs, condition number)."""
    H = np.asarray(H)
    m = len(X)
    held = holders(X, model.Z) if held is None else held
    in_H = np.zeros(m, bool)
    in_H[H] = True
    basis_rows = np.zeros(m, bool)
    for rows in held:
        basis_rows[rows] = True
    keep = None
    if mode == "remove":
        keep = np.array([not (rows.size and in_H[rows].all()) for rows in held])
        if keep.all():
            keep = None
    elif mode not in ("keep", "train"):
        raise ValueError(mode)
    out_of_training = in_H & ~basis_rows if mode == "train" else in_H
    fit = model.fit(X, np.asarray(Y).reshape(m, -1)[~out_of_training], alpha, keep, rows=~out_of_training)
    return fit.predict(X[H]), fit.cond


def cv_outputs(model, X, Y, folds, alpha, mode):
    """Out-of-fold outputs (m, v) over test folds ``folds``, and the largest condition number."""
    Y = np.asarray(Y, float).reshape(len(X), -1)
    out = np.empty_like(Y)
    cond = 1.0
    held = holders(X, model.Z)
    for H in folds:
        out[H], c = holdout_outputs(model, X, Y, H, alpha, mode, held)
        cond = max(cond, c)
    return out, cond


def fold_models(model, X, Y, folds, alpha, mode):
    """The fitted model of every fold (without its rows), and the fold of every row."""
    Y = np.asarray(Y, float).reshape(len(X), -1)
    held = holders(X, model.Z)
    fits, fold_of = [], np.empty(len(X), int)
    m = len(X)
    basis_rows = np.zeros(m, bool)
    for rows in held:
        basis_rows[rows] = True
    for j, H in enumerate(folds):
        fold_of[H] = j
        in_H = np.zeros(m, bool)
        in_H[H] = True
        keep = None
        if mode == "remove":
            keep = np.array([not (rows.size and in_H[rows].all()) for rows in held])
        out = in_H & ~basis_rows if mode == "train" else in_H
        fits.append(model.fit(X, Y[~out], alpha, keep, rows=~out))
    return fits, fold_of


def _ranks(coverage, n):
    a = 1.0 - coverage
    return math.floor(a * (n + 1) + 1e-9), math.ceil((1.0 - a) * (n + 1) - 1e-9)


def interval_plus(fits, fold_of, residuals, Xnew, coverage):
    """Jackknife+ / CV+ bounds (t, 2, v) of Barber et al. 2021 from each row's own fold model."""
    values = np.stack([fits[j].predict(Xnew) for j in fold_of], axis=1)  # (t, m, v)
    scores = np.abs(residuals)[None]
    k_lo, k_hi = _ranks(coverage, len(fold_of))
    lo = np.sort(values - scores, axis=1)[:, k_lo - 1]
    hi = np.sort(values + scores, axis=1)[:, k_hi - 1]
    return np.stack([lo, hi], axis=1)


def interval_jackknife(full_values, residuals, coverage):
    """``f(x) -+ q``, q the ceil(coverage (m + 1))-th smallest |LOO residual| (t, 2, v)."""
    _, k_hi = _ranks(coverage, residuals.shape[0])
    q = np.sort(np.abs(residuals), axis=0)[k_hi - 1]
    return np.stack([full_values - q, full_values + q], axis=1)


def full_conformal_contains(model, X, y, x, label, alpha, coverage):
    """Whether ``label`` is in the full conformal set at ``x`` (Lei et al. 2018, Algorithm 1):
    refit with (x, label) appended; in the set when at most k - 1 training rows have
    ``|r_i| <= |r_x|``, k = ceil(coverage (m + 1))."""
    Xa = np.vstack([X, x[None]])
    ya = np.append(y, label)
    fit = model.fit(Xa, ya, alpha)
    r = np.abs(ya - fit.predict(Xa)[:, 0])
    _, k = _ranks(coverage, len(y))
    return int(np.sum(r[:-1] <= r[-1])) <= k - 1


def gcv_score(model, X, y, alpha):
    """``(||e||^2 / m) / (1 - tr H / m)^2`` with the dense hat matrix H of the ridge with intercept."""
    Phi = model.features(X)
    m = len(X)
    Pc = Phi - Phi.mean(0)
    Hm = np.full((m, m), 1.0 / m) + Pc @ np.linalg.solve(Pc.T @ Pc + alpha * np.eye(Pc.shape[1]), Pc.T)
    e = y - Hm @ y
    return (e @ e / m) / (1.0 - np.trace(Hm) / m) ** 2


def _gp_parts(model, X, alpha, zeta):
    """The GP reading: prior covariance ``Phi Phi^T / mu + I / zeta`` (mu = alpha zeta)."""
    Phi = model.features(X)
    mu = alpha * zeta
    return Phi, Phi @ Phi.T / mu + np.eye(len(X)) / zeta, mu


def gp_log_likelihood(model, X, y, alpha, zeta):
    """Restricted log likelihood (flat prior on the intercept integrated out), dense:
    ``-1/2 [(m-1) log 2 pi + log det C + log 1^T C^-1 1 + y^T P y]``,
    ``P = C^-1 - C^-1 1 1^T C^-1 / 1^T C^-1 1``."""
    _, C, _ = _gp_parts(model, X, alpha, zeta)
    m = len(y)
    Ci = np.linalg.inv(C)
    one = np.ones(m)
    s = one @ Ci @ one
    Ciy = Ci @ y
    quad = y @ Ciy - (one @ Ciy) ** 2 / s
    return -0.5 * ((m - 1) * np.log(2 * np.pi) + np.linalg.slogdet(C)[1] + np.log(s) + quad)


def best_zeta(model, X, y, alpha):
    """The noise precision maximising :func:`gp_log_likelihood` at fixed alpha.

    With ``mu = alpha zeta`` the covariance is ``C = B / zeta``, ``B = Phi Phi^T / alpha + I``, so
    the log likelihood is ``-1/2 [... - (m - 1) log zeta + zeta y^T P_B y]`` (P_B: P of B), whose
    maximiser is ``(m - 1) / y^T P_B y``, formed densely here."""
    Phi = model.features(X)
    m = len(y)
    Bi = np.linalg.inv(Phi @ Phi.T / alpha + np.eye(m))
    one = np.ones(m)
    Biy = Bi @ y
    quad = y @ Biy - (one @ Biy) ** 2 / (one @ Bi @ one)
    return (m - 1.0) / quad


def dense_log_evidence(model, X, y, alpha):
    """The log evidence at the noise precision that maximises it."""
    return gp_log_likelihood(model, X, y, alpha, best_zeta(model, X, y, alpha))


def dense_predictive_std(model, X, y, alpha, Xnew, noise=True, basis_residual=True):
    """The GP posterior predictive standard deviation at ``Xnew`` with a flat prior on the
    intercept (Rasmussen & Williams 2006, §2.7), noise precision from the evidence: the
    prior covariance of f is ``phi(x)^T phi(x') / mu`` between distinct points and, with
    ``basis_residual``, ``k(x, x) / mu`` at the point itself (DTC)."""
    zeta = best_zeta(model, X, y, alpha)
    Phi, C, mu = _gp_parts(model, X, alpha, zeta)
    Pn = model.features(Xnew)
    Ks = Phi @ Pn.T / mu  # (m, t)
    prior = (np.ones(len(Xnew)) if basis_residual else (Pn * Pn).sum(1)) / mu
    Ci = np.linalg.inv(C)
    one = np.ones(len(X))
    s = one @ Ci @ one
    R = 1.0 - one @ Ci @ Ks
    var = prior - np.einsum("mt,mt->t", Ks, Ci @ Ks) + R**2 / s
    if noise:
        var = var + 1.0 / zeta
    return np.sqrt(var)


def closed_form_predictive_std(model, X, y, alpha, Xnew, noise=True, basis_residual=True):
    """The predictive variance of the Mathematics page (§6, "Predictive variance"):
    ``[1/m + phi_c(x)^T (Phi_c^T Phi_c + alpha I)^-1 phi_c(x)] / zeta + (k(x, x) - |phi(x)|^2) / mu``,
    plus ``1 / zeta`` for a new target; zeta the evidence's noise precision.  A second route to
    :func:`dense_predictive_std`, by the weight-space form instead of the function-space one."""
    zeta = best_zeta(model, X, y, alpha)
    Phi, Pn = model.features(X), model.features(Xnew)
    mean = Phi.mean(0)
    Pc, Pnc = Phi - mean, Pn - mean
    G = Pc.T @ Pc + alpha * np.eye(Phi.shape[1])
    var = (1.0 / len(X) + np.einsum("tk,tk->t", Pnc, np.linalg.solve(G, Pnc.T).T)) / zeta
    if basis_residual:
        var = var + (1.0 - (Pn * Pn).sum(1)) / (alpha * zeta)  # k(x, x) = 1 for the RBF kernel
    if noise:
        var = var + 1.0 / zeta
    return np.sqrt(var)


def platt(f, positive):
    """Platt's sigmoid ``(A, B)``, P = 1 / (1 + exp(A f + B)), by maximum likelihood with the
    smoothed targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2) (Lin, Lin and Weng 2007), Newton to rounding."""
    f = np.asarray(f, float)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    c, s = f.mean(), np.abs(f - f.mean()).max()
    g = (f - c) / s
    theta = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])

    def loss(th):
        z = th[0] * g + th[1]
        return float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))

    for _ in range(100):
        z = theta[0] * g + theta[1]
        p = expit(-z)
        r, w = t - p, p * (1.0 - p)
        grad = np.array([r @ g, r.sum()])
        hess = np.array([[w @ (g * g), w @ g], [w @ g, w.sum()]])
        step = -np.linalg.solve(hess, grad)
        step_len = 1.0
        while loss(theta + step_len * step) > loss(theta) + 1e-4 * step_len * (grad @ step) and step_len > 1e-10:
            step_len /= 2
        theta = theta + step_len * step
        if np.abs(step_len * step).max() < 1e-14:
            break
    return theta[0] / s, theta[1] - theta[0] * c / s
