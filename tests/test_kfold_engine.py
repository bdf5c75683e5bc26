"""One k-fold engine and its cheap guard.

The shared fold solver (``lssvm.cv.fold_solver``) against dense solves and
its error estimate against the exact ``||(C + alpha I)^-1||``; the named
hold-out paths against explicit refits; the row-block (Dask) route against
the in-memory engine and its new warning.
"""

import warnings

import numpy as np
import pytest
from scipy import linalg

from lssvm import NumericalWarning, SparseLSSVR
from lssvm.cv import explicit_holdout_predict
from lssvm.cv.fold_solver import EPS, GUARD_RTOL, free_error_bound, solve_fold_path
from lssvm.cv.holdout import PATHS, BandPath, FoldProblem, HSidePath, cheapest_path

from conftest import rel_err


def _psd(rng, r, log_cond):
    Q, _ = np.linalg.qr(rng.normal(size=(r, r)))
    lam = np.logspace(0, -log_cond, r)
    return (Q * lam) @ Q.T, lam


@pytest.mark.parametrize("r", [1, 7, 90])
def test_fold_solver_equals_dense_solves(rng, r):
    C, _ = _psd(rng, r, 3)
    b = rng.normal(size=(r, 2))
    alphas = np.array([1e-3, 0.1, 10.0])
    X, est = solve_fold_path(C, b, alphas, scale=1.0)
    for i, a in enumerate(alphas):
        ref = linalg.solve(C + a * np.eye(r), b, assume_a="pos")
        assert rel_err(X[:, 2 * i : 2 * i + 2], ref) < 1e-12
    # well conditioned: every alpha is decided by the free bound alone
    np.testing.assert_array_equal(est, free_error_bound(1.0, alphas))
    assert (est < GUARD_RTOL).all()


def test_fold_solver_estimates_only_where_the_free_bound_trips(rng):
    # C = scale * (well-conditioned): lambda_min(C) >> alpha, so the free
    # bound eps (scale + alpha) / alpha trips while the true error is small
    r, scale = 60, 1e12
    C, lam = _psd(rng, r, 1)
    C *= scale
    alphas = np.array([1e-2, 1.0, 1e3, 1e9])
    free = free_error_bound(scale, alphas)
    assert (free[:3] > GUARD_RTOL).all() and free[3] < GUARD_RTOL
    X, est = solve_fold_path(C, rng.normal(size=(r, 1)), alphas, scale=scale)
    true = EPS * (scale + alphas) / (lam.min() * scale + alphas)
    assert (est <= free * (1 + 1e-12)).all()
    # inverse iteration: a lower bound of the true norm, within a small factor
    assert (est[:3] <= true[:3] * (1 + 1e-8)).all() and (est[:3] > true[:3] / 10).all()
    assert (est[:3] < GUARD_RTOL).all()  # the guard does not fire where the solve is fine
    assert est[3] == free[3]


def test_fold_solver_flags_an_indefinite_system(rng):
    C, _ = _psd(rng, 20, 2)
    C[0, 0] -= 10.0  # not a scatter matrix any more: C + alpha I indefinite at small alpha
    X, est = solve_fold_path(C, rng.normal(size=(20, 1)), np.array([1e-3, 100.0]), scale=1.0)
    assert np.isinf(est[0]) and est[1] < GUARD_RTOL
    _, est = solve_fold_path(np.array([[-1.0]]), np.ones((1, 1)), np.array([1e-3, 100.0]), scale=1.0)  # 1 x 1
    assert np.isinf(est[0]) and est[1] < GUARD_RTOL


def test_named_paths_agree_with_refits(rng):
    X = rng.normal(size=(80, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=80)
    basis = np.sort(rng.choice(80, 20, replace=False))
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=basis).fit(X, y)
    eng = est._holdout_engine()
    H = np.concatenate([basis[:4], np.setdiff1d(np.arange(80), basis)[:20]])
    E = eng.removed_points(H)
    assert E.size == 4
    alphas = np.array([1e-3, 0.1, 3.0])
    prob = FoldProblem(est.factorization_, eng.Y, H, np.arange(H.size), E)
    ref = explicit_holdout_predict(est, X, H, alphas, "remove")
    for cls in (HSidePath, BandPath):
        out, err = cls.of(prob).predict(alphas)
        assert rel_err(out, ref) < 1e-9, cls.__name__
        assert (err < GUARD_RTOL).all()
    assert set(PATHS) == {"h", "refactor"}
    with pytest.raises(ValueError, match="_side must be one of"):
        eng.predict(H, alphas, "remove", _side="r")


def test_cheapest_path_picks_h_for_small_holdouts_and_band_for_large():
    assert cheapest_path(5, 5, 800, 0, 20) == "h"
    assert cheapest_path(300, 300, 800, 30, 20) == "refactor"
    assert cheapest_path(300, 300, 50, 5, 20) == "refactor"


# ------------------------------------------------------------- row blocks (Dask)
def _dask_fit(X, y, **kw):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="threads"):
        return SparseLSSVR(**kw).fit(da.from_array(X, chunks=(X.shape[0] // 3 + 1, X.shape[1])),
                                     da.from_array(y, chunks=X.shape[0] // 3 + 1))


@pytest.mark.parametrize("mode", ["remove", "keep"])
def test_dask_kfold_uses_the_shared_solver_and_equals_memory(rng, mode):
    dask = pytest.importorskip("dask")
    X = rng.normal(size=(600, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=600)
    basis = np.sort(rng.choice(600, 40, replace=False))
    kw = dict(gamma=0.4, alpha=0.3, basis=basis)
    ref = SparseLSSVR(**kw).fit(X, y)
    est = _dask_fit(X, y, **kw)
    alphas = np.array([0.01, 0.3, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)  # well conditioned: no warning
        with dask.config.set(scheduler="threads"):
            got = est.cv_predict(6, alphas, basis_in_holdout=mode).compute()
    assert rel_err(got, ref.cv_predict(6, alphas, basis_in_holdout=mode)) < 1e-10


def test_dask_kfold_is_right_or_warns():
    # the conditioning guard on row blocks: wide RBF kernels (ill-conditioned
    # whitened Gram matrices) and small alphas; each out-of-fold prediction must equal a QR
    # refit of its fold (tests/_reference.py, no normal equations) to 1e-6 of
    # the targets' scale, or the call carries a NumericalWarning
    dask = pytest.importorskip("dask")
    from sklearn.model_selection import KFold

    from lssvm.kernels import make_kernel

    from _reference import lstsq_solve

    warned_cases = silent_cases = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(40, 2)) * 3
        y = rng.normal(size=40)
        basis = np.arange(5 + 4 * seed)
        kernel = dict(kernel="rbf", gamma=0.05 * (1 + seed))
        alphas = np.array([1e-9, 1e-5, 1e-2, 10.0])
        with warnings.catch_warnings():
            # a numerically singular K_BB changes the model (fitted on its range), not its accuracy
            warnings.simplefilter("error", NumericalWarning)
            est = _dask_fit(X, y, alpha=1.0, basis=basis, **kernel)
        with dask.config.set(scheduler="threads"), warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            F = est.cv_predict(5, alphas, basis_in_holdout="keep").compute()
        warned = any("k-fold CV on row blocks" in str(w.message) for w in rec)
        kern = make_kernel(kernel["kernel"], **{k: v for k, v in kernel.items() if k != "kernel"})
        Z = X[basis]
        ref = np.empty_like(F)
        for train, test in KFold(5).split(X):
            for i, a in enumerate(alphas):
                w, b = lstsq_solve(kern(X[train], Z), kern(Z, Z), y[train], a)
                ref[i, test] = (kern(X[test], Z) @ w).ravel() + b[0]
        err = np.abs(F - ref).max() / max(np.abs(ref).max(), y.std())
        assert warned or err < 1e-6, (seed, err)
        warned_cases += warned
        silent_cases += not warned
    assert warned_cases and silent_cases  # both outcomes occur


def test_free_bound_refits_the_same_folds_as_a_per_alpha_estimate(monkeypatch):
    # the free bound only skips work: on problems from well to badly
    # conditioned, the alphas sent to the stable route are the same as when
    # every alpha is estimated by inverse iteration
    from lssvm.cv import holdout
    from lssvm.solvers.shifted_band import ShiftedBandSolver

    def per_alpha(C, rhs, alphas, scale, bandwidth=64):
        X, inv = ShiftedBandSolver(C, bandwidth).solve(alphas, rhs, inverse_norms=True)
        return X, EPS * (scale + alphas) * inv

    seen = []
    guard = holdout.HoldoutEngine._guard

    def spy(self, out, est, *args):
        seen.append(est <= GUARD_RTOL)
        return guard(self, out, est, *args)

    monkeypatch.setattr(holdout.HoldoutEngine, "_guard", spy)
    alphas = np.logspace(-14, 2, 17)
    poly = dict(kernel="poly", gamma=100.0, degree=4, coef0=1.0)
    n_refits = 0
    for seed, (kernel, n, m) in enumerate([(poly, 8, 20), (poly, 5, 50), (poly, 8, 50),
                                           (dict(kernel="rbf", gamma=0.05), 17, 50)]):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(m, 2)) * 3
        y = rng.normal(size=m)
        est = SparseLSSVR(alpha=1.0, basis=np.arange(n), **kernel).fit(X, y)
        engine = est._holdout_engine()
        H = np.arange(m // 2, m)
        masks = []
        for solver in (solve_fold_path, per_alpha):
            monkeypatch.setattr(holdout, "solve_fold_path", solver)
            seen.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumericalWarning)
                engine.predict(H, alphas, "keep", _side="refactor")
            masks.append(seen[0])
        np.testing.assert_array_equal(masks[0], masks[1])
        n_refits += int((~masks[0]).sum())
    assert 0 < n_refits < 4 * alphas.size  # some alphas go to the stable route, not all
