"""cv_error_and_gradient: value against the CV engines, gradient
against central finite differences."""

import numpy as np
import pytest

from lssvm.cv import HoldoutEngine, cross_val_predictions, resolve_folds
from lssvm.kernels import ARD
from lssvm.selection import cv_error_and_gradient
from lssvm.solvers import factorize_sparse_rls


def _problem(seed=0, m=50, d=3, n=10, outputs=1, classes=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    if classes:
        y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=m), np.linspace(-1, 1, classes - 1))
    else:
        y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.1 * rng.normal(size=m)
        if outputs > 1:
            y = np.c_[y, np.cos(X[:, 2])]
    basis = rng.choice(m, n, replace=False)
    return X, y, basis


def _fd(X, y, basis, kernel, gamma, alpha, h=1e-5, **kw):
    theta = np.append(np.log(np.atleast_1d(gamma)), np.log(alpha))

    def f(t):
        g = np.exp(t[:-1]) if kernel == "ard" else float(np.exp(t[0]))
        return cv_error_and_gradient(X, y, basis, kernel, {"gamma": g}, float(np.exp(t[-1])), **kw)[0]

    out = np.empty(theta.size)
    for k in range(theta.size):
        step = np.zeros(theta.size)
        step[k] = h
        out[k] = (f(theta + step) - f(theta - step)) / (2 * h)
    return out


ARD_G = np.array([0.3, 0.2, 0.5])
CASES = [(cv, bih, kernel, gamma, target)
         for cv, bih in [("loo", "remove"), (4, "remove"), (4, "keep"), (4, "train")]
         for kernel, gamma, target in [("ard", ARD_G, "one"), ("ard", ARD_G, "two"), ("ard", ARD_G, "binary"),
                                       ("ard", ARD_G, "three-class"), ("rbf", 0.3, "one")]]


@pytest.mark.parametrize("cv, basis_in_holdout, kernel, gamma, target", CASES)
def test_gradient_matches_central_differences(cv, basis_in_holdout, kernel, gamma, target):
    X, y, basis = _problem(outputs=2 if target == "two" else 1,
                           classes={"binary": 2, "three-class": 3}.get(target, 0))
    kw = dict(cv=cv, basis_in_holdout=basis_in_holdout, classification=target in ("binary", "three-class"))
    _, grad = cv_error_and_gradient(X, y, basis, kernel, {"gamma": gamma}, 0.05, **kw)
    fd = _fd(X, y, basis, kernel, gamma, 0.05, **kw)
    assert grad.shape == (4 if kernel == "ard" else 2,)
    assert np.max(np.abs(grad - fd)) <= 1e-5 * np.max(np.abs(fd))


def test_loo_value_equals_loo_residuals():
    X, y, basis = _problem(outputs=2)
    g = np.array([0.3, 0.2, 0.5])
    K = ARD(g)(X, X[basis])
    R = factorize_sparse_rls(K, K[basis], y).loo_residuals(0.05)
    value, _ = cv_error_and_gradient(X, y, basis, "ard", {"gamma": g}, 0.05)
    assert value == pytest.approx(np.mean(R**2), rel=1e-12)


@pytest.mark.parametrize("basis_in_holdout", ["remove", "keep", "train"])
def test_kfold_value_equals_cross_val_predictions(basis_in_holdout):
    X, y, basis = _problem(outputs=2)
    g = np.array([0.3, 0.2, 0.5])
    kern = ARD(g)
    K = kern(X, X[basis])
    fac = factorize_sparse_rls(K, K[basis], y)
    engine = HoldoutEngine.from_kernel(fac, X, X[basis], kern, basis)
    F = cross_val_predictions(engine, resolve_folds(5, X.shape[0]), 0.05, basis_in_holdout)
    value, _ = cv_error_and_gradient(X, y, basis, "ard", {"gamma": g}, 0.05, cv=5, basis_in_holdout=basis_in_holdout)
    assert value == pytest.approx(np.mean((y - F) ** 2), rel=1e-9)


def test_scalar_ard_width_is_broadcast_and_sums_to_rbf():
    X, y, basis = _problem()
    v_ard, g_ard = cv_error_and_gradient(X, y, basis, "ard", {"gamma": 0.3}, 0.05)
    v_rbf, g_rbf = cv_error_and_gradient(X, y, basis, "rbf", {"gamma": 0.3}, 0.05)
    assert v_ard == pytest.approx(v_rbf, rel=1e-12)
    assert g_ard[:-1].sum() == pytest.approx(g_rbf[0], rel=1e-9)
    assert g_ard[-1] == pytest.approx(g_rbf[-1], rel=1e-9)


@pytest.mark.parametrize("kw, match", [
    (dict(kernel="laplacian"), "the gradient covers the kernels"),
    (dict(params={"gamma": [1.0, 2.0]}), "has 2 widths but the data have 3"),
    (dict(params={"degree": 2}), "may only hold 'gamma'"),
    (dict(alpha=[0.1, 1.0]), "single number"),
    (dict(basis=np.array([0.5, 1.5])), "row indices"),
    (dict(basis=np.array([0, 0])), "distinct row indices"),
    (dict(basis_in_holdout="drop"), "basis_in_holdout"),
])
def test_bad_input_is_refused(kw, match):
    X, y, basis = _problem()
    args = {**dict(basis=basis, kernel="ard", params={"gamma": 0.3}, alpha=0.1), **kw}
    with pytest.raises(ValueError, match=match):
        cv_error_and_gradient(X, y, args.pop("basis"), args.pop("kernel"), args.pop("params"), args.pop("alpha"),
                              **args)
