"""k-fold error sums of many targets without the out-of-fold predictions
(``HoldoutEngine.sums``, ``BandPath.sums``) against explicit refits per fold."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold

from lssvm import SparseLSSVR
from lssvm.cv import holdout as holdout_paths
from lssvm.exceptions import NumericalWarning


def _data(rng, m, v, d=3):
    X = rng.normal(size=(m, d))
    noise = np.geomspace(0.01, 3.0, v)
    Y = np.sin(X @ rng.normal(size=(d, v))) + 2.0 + noise * rng.normal(size=(m, v))
    return X, Y


def _refit_sse(X, Y, basis_rows, gamma, alphas, test, mode):
    """Explicit refit of one fold; sums over the test rows of the squared residuals (A, v)."""
    m = X.shape[0]
    held = np.isin(np.arange(m), test)
    if mode == "train":  # held-out basis rows stay in training
        held &= ~np.isin(np.arange(m), basis_rows)
    keep = basis_rows if mode != "remove" else basis_rows[~np.isin(basis_rows, test)]
    est = SparseLSSVR(gamma=gamma, basis=X[keep]).fit(X[~held], Y[~held])
    a, b = est.factorization_.coef(alphas)
    F = np.einsum("hn,anv->ahv", est.kernel_(X[test], est.basis_vectors_), a) + b[:, None, :]
    return ((F - Y[test]) ** 2).sum(axis=1)


def _lstsq_sse(X, Y, basis_rows, gamma, alphas, test, mode):
    """The same fold by a second route: each alpha's penalised least squares stacked as one SVD least-squares
    problem (``[K_tB 1; sqrt(alpha) S^1/2 U^T 0]``, ``K_BB = U S U^T``), the most stable solve available."""
    m = X.shape[0]
    held = np.isin(np.arange(m), test)
    if mode == "train":
        held &= ~np.isin(np.arange(m), basis_rows)
    keep = basis_rows if mode != "remove" else basis_rows[~np.isin(basis_rows, test)]
    B = X[keep]

    def kern(A):
        return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))

    F = np.column_stack([kern(X[~held]), np.ones((~held).sum())])
    s, U = np.linalg.eigh(kern(B))
    root = np.sqrt(np.clip(s, 0.0, None))[:, None] * U.T
    T = np.column_stack([kern(X[test]), np.ones(len(test))])
    out = np.empty((len(alphas), Y.shape[1]))
    for a, alpha in enumerate(alphas):
        A = np.vstack([F, np.column_stack([np.sqrt(alpha) * root, np.zeros(len(keep))])])
        rhs = np.vstack([Y[~held], np.zeros((len(keep), Y.shape[1]))])
        coef = np.linalg.lstsq(A, rhs, rcond=None)[0]
        out[a] = ((T @ coef - Y[test]) ** 2).sum(axis=0)
    return out


@pytest.fixture
def count_fused(monkeypatch):
    calls = []
    original = holdout_paths.BandPath._sums_by_eigen

    def counted(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(holdout_paths.BandPath, "_sums_by_eigen", counted)
    return calls


# fewer basis directions than held-out rows (the QR route), and more
@pytest.mark.parametrize(("n_basis", "n_test"), [(36, 90), (120, 50)])
@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_fold_sums_equal_explicit_refits(mode, n_basis, n_test, count_fused):
    rng_seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(rng_seed)
    X, Y = _data(rng, m=400, v=70)
    basis_rows = rng.choice(400, n_basis, replace=False)
    gamma, alphas = 0.3, np.geomspace(1e-4, 1e3, 15)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumericalWarning)
        est = SparseLSSVR(gamma=gamma, basis=basis_rows).fit(X, Y)
        engine = est._fitted_engine().holdout_engine()
        test = np.sort(rng.choice(400, n_test, replace=False))
        sse = engine.sums(test, alphas, mode)
    ref = _refit_sse(X, Y, basis_rows, gamma, alphas, test, mode)
    # the tolerance scales with the fold's conditioning: the two references' own disagreement (an explicit
    # refit and an SVD least-squares solve) and eps cond(K_BB), the fused route's rounding (2e-8 to 5e-8 seen
    # at cond 3e8 on some draws of 120 random rows at this width); 1e-8 on well-conditioned draws
    second = _lstsq_sse(X, Y, basis_rows, gamma, alphas, test, mode)
    B = X[basis_rows]
    cond = np.linalg.cond(np.exp(-gamma * ((B[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)))
    rtol = max(1e-8, 10 * float(np.max(np.abs(ref - second) / np.abs(second))), 4 * np.finfo(float).eps * cond)
    np.testing.assert_allclose(sse, ref, rtol=rtol, err_msg=f"seed {rng_seed}")
    # a basis the fit or the fold finds numerically singular (some draws of 120 random rows at this width)
    # takes the guarded refit route and says so by a NumericalWarning: the fused route is the one taken
    # without a warning
    if not any(issubclass(w.category, NumericalWarning) for w in caught):
        assert count_fused, f"the fold did not take the fused many-target route (seed {rng_seed})"
    F = engine.predict(test, alphas, mode)  # the same numbers as the predictions' own residuals
    np.testing.assert_allclose(sse, ((F - Y[test]) ** 2).sum(axis=1), rtol=rtol / 10)


def test_grouped_cv_error_of_many_targets_equals_explicit_refits(count_fused):
    rng = np.random.default_rng()
    X, Y = _data(rng, m=360, v=50)
    basis_rows = rng.choice(360, 30, replace=False)
    groups = rng.integers(0, 4, 360)
    gamma, alphas = 0.5, np.geomspace(1e-3, 1e2, 12)
    est = SparseLSSVR(gamma=gamma, basis=basis_rows).fit(X, Y)
    err = est.cv_error(GroupKFold(4), alphas, groups=groups)
    ref = sum(_refit_sse(X, Y, basis_rows, gamma, alphas, test, "remove")
              for _, test in GroupKFold(4).split(X, Y, groups))
    np.testing.assert_allclose(err, ref / 360, rtol=1e-8)
    assert len(count_fused) == 4


def test_fold_sums_use_the_stable_refit_where_the_estimate_trips(monkeypatch):
    # a fold whose estimate passes the guard is recomputed by the stable route, as its predictions are
    rng = np.random.default_rng()
    X, Y = _data(rng, m=300, v=60)
    basis_rows = rng.choice(300, 30, replace=False)
    alphas = np.geomspace(1e-4, 1e2, 10)
    est = SparseLSSVR(gamma=0.3, basis=basis_rows).fit(X, Y)
    engine = est._fitted_engine().holdout_engine()
    test = np.arange(0, 300, 4)
    exact = _refit_sse(X, Y, basis_rows, 0.3, alphas, test, "remove")
    original = holdout_paths.BandPath._sums_by_eigen

    def tripped(self, alphas, Y_H):
        sse, est = original(self, alphas, Y_H)
        sse[::2] = -1.0  # wrong on purpose: must be replaced
        est[::2] = np.inf
        return sse, est

    monkeypatch.setattr(holdout_paths.BandPath, "_sums_by_eigen", tripped)
    np.testing.assert_allclose(engine.sums(test, alphas), exact, rtol=1e-8)
