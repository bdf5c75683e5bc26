"""The fixed-size ``solver="direct"`` on singular and near-singular prototype sets.

A prototype with ``k(z, z) = 0`` (the zero row under the linear kernel, or
the polynomial kernel with ``coef0 = 0``) has a zero kernel column: the
least-squares matrix is exactly rank-deficient, and a plain triangular solve
fails on the zero pivot ("singular matrix").  The pivoted QR gives it
weight 0 with a ``NumericalWarning``, and the model equals the exact
(100-digit) solve without that prototype.  On near-singular sets (wide
kernels, prototypes close together, tiny alpha) every fit either equals the
exact solve or warns.
"""

import warnings

import mpmath
import numpy as np
import pytest

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR
from lssvm.exceptions import NumericalWarning

NU = 1e-8


def exact_predictions(kernel, X, Y, Z, alpha, T, nu=NU):
    """The minimiser of ``||Y - K w - b||^2 + alpha w^T K_ZZ w + nu b^2`` at ``T``, solved in 100 digits."""
    K, K_ZZ, K_T = kernel(X, Z), kernel(Z, Z), kernel(T, Z)
    Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
    with mpmath.workdps(100):
        Ka = mpmath.matrix(np.hstack([K, np.ones((len(X), 1))]).tolist())
        A = Ka.T * Ka
        M = Z.shape[0]
        for i in range(M):
            for j in range(M):
                A[i, j] += mpmath.mpf(alpha) * mpmath.mpf(float(K_ZZ[i, j]))
        A[M, M] += mpmath.mpf(nu)
        W = mpmath.lu_solve(A, Ka.T * mpmath.matrix(Y.tolist()))
        P = mpmath.matrix(np.hstack([K_T, np.ones((len(T), 1))]).tolist()) * W
        return np.array([[float(P[i, j]) for j in range(P.cols)] for i in range(P.rows)])


def rel_err(a, b):
    return float(np.max(np.abs(np.reshape(a, b.shape) - b)) / np.max(np.abs(b)))


def _with_zero_row(seed, d=3, m=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    X[5] = 0.0
    y = X @ rng.standard_normal(d) + 0.3 * X[:, 0] ** 2 + 0.1 * rng.standard_normal(m)
    return X, y, rng.standard_normal((25, d)) * 2


KERNELS = {
    "linear": dict(kernel="linear"),
    "poly": dict(kernel="poly", degree=2, gamma=0.5, coef0=0.0),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", KERNELS)
def test_a_zero_kernel_column_gets_weight_zero_with_a_warning(seed, name):
    X, y, T = _with_zero_row(seed)
    basis = np.array([0, 5, 9]) if name == "linear" else np.array([0, 5, 9, 14, 20])
    Z = X[basis]
    with pytest.warns(NumericalWarning, match="numerically dependent"):
        est = FixedSizeLSSVR(alpha=1e-3, basis=basis, solver="direct", cv=None, **KERNELS[name]).fit(X, y)
    assert est.coef_full_[1, 0] == 0.0  # the zero prototype
    keep = np.delete(np.arange(len(basis)), 1)
    want = exact_predictions(est.kernel_, X, y, Z[keep], 1e-3, T)
    assert rel_err(est.predict(T), want) < 1e-8


@pytest.mark.parametrize("name", KERNELS)
def test_zero_kernel_column_in_the_cv_folds_and_the_classifier(name):
    X, y, T = _with_zero_row(3)
    basis = np.array([0, 5, 9]) if name == "linear" else np.array([0, 5, 9, 14, 20])
    with pytest.warns(NumericalWarning, match="numerically dependent"):
        reg = FixedSizeLSSVR(alpha=1e-3, basis=basis, solver="direct", cv=4, **KERNELS[name]).fit(X, y)
    assert np.isfinite(reg.cv_score_)
    labels = np.where(y > np.median(y), "hi", "lo")
    with pytest.warns(NumericalWarning, match="numerically dependent"):
        clf = FixedSizeLSSVC(alpha=1e-3, basis=basis, solver="direct", cv=4, calibration="sigmoid",
                             **KERNELS[name]).fit(X, labels)
    P = clf.predict_proba(T)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)


def test_only_zero_prototypes_leave_the_intercept():
    X, y, T = _with_zero_row(4)
    with pytest.warns(NumericalWarning, match="numerically dependent"):
        est = FixedSizeLSSVR(kernel="linear", alpha=1e-3, basis=np.array([5]), solver="direct", cv=None).fit(X, y)
    # the model is the intercept, the (nu-shrunk) mean
    np.testing.assert_allclose(est.predict(T), np.full(len(T), y.sum() / (len(y) + NU)), rtol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_near_singular_sets_equal_the_exact_solve_or_warn(seed):
    rng = np.random.default_rng(seed)
    m, d = 40, 2
    X = rng.standard_normal((m, d))
    y = np.sin(2 * X.sum(axis=1)) + 0.2 * rng.standard_normal(m)
    Z = X[rng.choice(m, 12, replace=False)]
    if seed % 3 == 0:  # a cluster of prototypes just apart enough to pass the near-duplicate filter
        Z[1:6] = Z[0] + 10.0 ** rng.uniform(-4, -3) * rng.standard_normal((5, d))
    gamma, alpha = 10.0 ** rng.uniform(-4, 0), 10.0 ** rng.uniform(-20, -6)
    T = rng.standard_normal((20, d)) * 2
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = FixedSizeLSSVR(gamma=gamma, alpha=alpha, basis=Z, solver="direct", cv=None).fit(X, y)
        pred = est.predict(T)
    warned = any(issubclass(w.category, NumericalWarning) for w in record)
    err = rel_err(pred, exact_predictions(est.kernel_, X, y, est.basis_vectors_, alpha, T))
    assert warned or err < 1e-6, f"silent relative error {err:.2g} (gamma={gamma:.3g}, alpha={alpha:.3g})"
