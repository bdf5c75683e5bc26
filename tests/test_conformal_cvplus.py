"""CV+ from per-fold moments and sorted per-fold scores.

Brute force here: each fold refitted from scratch by a Householder QR of
the augmented least-squares problem (``_reference.lstsq_solve``, shares no
code with lssvm), and order statistics by a full sort of the t x m values.
"""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold, KFold

import lssvm.cv.conformal.cv_plus as conformal_module
import lssvm.cv.conformal.shifted_blocks as select_module
from lssvm import NumericalWarning, SparseLSSVR
from lssvm.cv.conformal import SortedFoldScores, conformal_ranks, cv_plus_folds, eigen_rows, kth_smallest
from lssvm.cv.fold_models import fold_fit

from _reference import lstsq_solve

MODES = ["remove", "keep", "train"]


def data(rng, m, d=3, v=1):
    X = rng.standard_normal((m, d))
    F = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])[:, :v]
    return X, F + 0.1 * rng.standard_normal((m, v)), rng.standard_normal((7, d))


def brute_folds(est, X, Y, Xt, folds, mode, alpha, removed=None):
    """Out-of-fold predictions (m, v) and fold models at ``Xt`` (t, K, v)
    from explicit refits, with the basis rule of ``basis_in_holdout``
    (``removed(k)``: the basis points fold k removes, if not those whose row
    it holds)."""
    m = X.shape[0]
    rows = est.basis_indices_
    oof = np.empty_like(Y)
    at = np.empty((Xt.shape[0], len(folds), Y.shape[1]))
    for k, H in enumerate(folds):
        held = np.isin(rows, H)
        keep = ~held if mode == "remove" else np.ones(rows.size, dtype=bool)
        if removed is not None:
            keep = ~np.isin(np.arange(rows.size), removed(k))
        train = np.ones(m, dtype=bool)
        train[H] = False
        if mode == "train":
            train[rows[held]] = True
        Z = est.basis_vectors_[keep]
        a, b = lstsq_solve(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y[train], alpha)
        oof[H] = est.kernel_(X[H], Z) @ a + b
        at[:, k] = est.kernel_(Xt, Z) @ a + b
    return oof, at


def fast_folds(est, Xt, folds, mode, alpha):
    engine = est._holdout_engine()
    oof, models = cv_plus_folds(engine, folds, alpha, mode)
    K_x = est.kernel_(Xt, est.basis_vectors_)
    return oof, models(K_x)


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.fixture
def moments_calls(monkeypatch):
    """How many folds took the per-fold moments."""
    calls = []
    real = conformal_module.fold_fit
    monkeypatch.setattr(conformal_module, "fold_fit", lambda *a: calls.append(1) or real(*a))
    real_equal = conformal_module.equal_folds_fit

    def equal(fac, folds, *a):  # equal folds take the same moments, their small steps over all folds at once
        out = real_equal(fac, folds, *a)
        if out is not None:
            calls.extend([1] * (len(folds) - len(out[3])))
        return out

    monkeypatch.setattr(conformal_module, "equal_folds_fit", equal)
    return calls


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "poly"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("v", [1, 2])
def test_moment_folds_equal_brute_force_refits(rng, kernel, mode, v, moments_calls):
    # large folds on a small basis: every fold takes the moments
    X, Y, Xt = data(rng, 90, v=v)
    est = SparseLSSVR(kernel=kernel, gamma=0.3, degree=3, alpha=0.1, basis="random", n_basis=12,
                      random_state=0).fit(X, Y if v > 1 else Y[:, 0])
    folds = [test for _, test in KFold(3, shuffle=True, random_state=2).split(X)]
    for alpha in (1e-3, 0.1, 10.0):
        moments_calls.clear()
        oof, at = fast_folds(est, Xt, folds, mode, alpha)
        ref_oof, ref_at = brute_folds(est, X, Y, Xt, folds, mode, alpha)
        assert moments_calls == [1, 1, 1]
        assert rel(oof, ref_oof) < 1e-8 and rel(at, ref_at) < 1e-8, (alpha, rel(oof, ref_oof), rel(at, ref_at))


@pytest.mark.parametrize("mode", ["remove", "keep"])
def test_grouped_uneven_folds_mix_both_routes_and_equal_brute_force(rng, mode, moments_calls):
    # one big group and many one- and two-row groups: the big fold takes the
    # moments, the small ones the h x h route (and the same answer)
    X, Y, Xt = data(rng, 60)
    groups = np.r_[np.zeros(36, int), np.arange(1, 13).repeat(2)]  # one fold of 36 rows, twelve of 2
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=10, random_state=0).fit(X, Y[:, 0])
    folds = [test for _, test in GroupKFold(13).split(X, Y, groups)]
    oof, at = fast_folds(est, Xt, folds, mode, 0.05)
    ref_oof, ref_at = brute_folds(est, X, Y, Xt, folds, mode, 0.05)
    assert 0 < len(moments_calls) < len(folds)
    assert rel(oof, ref_oof) < 1e-8 and rel(at, ref_at) < 1e-8
    # and through predict_interval, against the brute-force CV+ bounds
    fold_of = np.empty(X.shape[0], dtype=np.intp)
    for k, H in enumerate(folds):
        fold_of[H] = k
    scores = np.abs(Y - ref_oof)
    k_lo, k_hi = conformal_ranks(0.8, X.shape[0])
    lo = np.sort(ref_at[:, fold_of, 0] - scores[:, 0], axis=1)[:, k_lo - 1]
    hi = np.sort(ref_at[:, fold_of, 0] + scores[:, 0], axis=1)[:, k_hi - 1]
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=GroupKFold(13), groups=groups, basis_in_holdout=mode)
    assert rel(fast, np.column_stack([lo, hi])) < 1e-8


def test_small_folds_keep_the_h_side_route(rng, moments_calls):
    X, Y, Xt = data(rng, 40)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=20, random_state=0).fit(X, Y[:, 0])
    folds = [test for _, test in KFold(20).split(X)]
    oof, at = fast_folds(est, Xt, folds, "remove", 0.05)
    ref_oof, ref_at = brute_folds(est, X, Y, Xt, folds, "remove", 0.05)
    assert moments_calls == []
    assert rel(oof, ref_oof) < 1e-8 and rel(at, ref_at) < 1e-8


@pytest.mark.parametrize("route", ["moments", "h"])
def test_a_basis_point_held_by_two_rows_leaves_only_with_both(rng, route, monkeypatch):
    # rows 0 and 30 are the same point, basis point 0: fold 0 holds row 0 only, so point 0 stays
    X, Y, Xt = data(rng, 60)
    X[30] = X[0]
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis=np.arange(8)).fit(X, Y[:, 0])
    folds = [np.arange(0, 20), np.arange(20, 40), np.arange(40, 60)]
    if route == "h":
        monkeypatch.setattr(conformal_module, "moments_cost", lambda *a: np.inf)
    oof, at = fast_folds(est, Xt, folds, "remove", 0.05)
    ref_oof, ref_at = brute_folds(est, X, Y, Xt, folds, "remove", 0.05,
                                  removed=lambda k: np.arange(1, 8) if k == 0 else [])
    assert rel(oof, ref_oof) < 1e-8 and rel(at, ref_at) < 1e-8


@pytest.mark.parametrize("route", ["moments", "h"])
def test_ill_conditioned_folds_take_the_stable_route_or_warn(monkeypatch, route):
    # the conditioning guards' poly problem: lambda_max / alpha up to 1e17, the downdate loses every digit
    if route == "h":
        monkeypatch.setattr(conformal_module, "moments_cost", lambda *a: np.inf)
    calls = []
    real = conformal_module.stable_fold_fit
    monkeypatch.setattr(conformal_module, "stable_fold_fit", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    Xt = rng.normal(size=(4, 2)) * 3
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-2, basis=np.arange(5)).fit(X, y)
    folds = [np.array([0, 1, 5, 6, 7, 8]), np.array([2, 3, 4, 9])]
    for mode in MODES:
        calls.clear()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            oof, at = fast_folds(est, Xt, folds, mode, 1e-2)
        warned = any(issubclass(w.category, NumericalWarning) for w in rec)
        ref_oof, ref_at = brute_folds(est, X, y[:, None], Xt, folds, mode, 1e-2)
        if mode != "remove":  # (removing the fold's basis points leaves a well-conditioned downdate here)
            assert calls, mode  # the guard sent a fold to the stable route
        scale = max(np.abs(ref_oof).max(), y.std())
        assert warned or np.abs(oof - ref_oof).max() / scale < 1e-6, (mode, np.abs(oof - ref_oof).max() / scale)


def test_fold_fit_reports_an_unresolvable_downdate():
    # a fold carrying all but one row of a tiny-alpha poly problem: the
    # moments' error estimate passes the guard threshold (or the Cholesky fails)
    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-6, basis=np.arange(5)).fit(
        X, rng.normal(size=10))
    _, _, est_err = fold_fit(est.factorization_, np.arange(1, 10), np.empty(0, dtype=np.intp), 1e-6)
    assert not est_err <= 1e-8


def test_unresolvable_cv_plus_warns():
    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    y = rng.normal(size=10)
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-6, basis=np.arange(5)).fit(X, y)
    with pytest.warns(NumericalWarning, match="estimated relative error"):
        cv_plus_folds(est._holdout_engine(), [np.array([0, 1, 5, 6, 7, 8]), np.array([2, 3, 4, 9])], 1e-5, "keep")


def test_bad_folds_are_refused(rng):
    X, Y, _ = data(rng, 30)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=6, random_state=0).fit(X, Y[:, 0])
    engine = est._holdout_engine()
    with pytest.raises(ValueError, match="partition"):
        cv_plus_folds(engine, [np.arange(0, 20), np.arange(15, 30)], 0.05)
    with pytest.raises(ValueError, match="outside"):
        cv_plus_folds(engine, [np.arange(0, 20), np.arange(20, 31)], 0.05)
    with pytest.raises(ValueError, match="basis_in_holdout"):
        cv_plus_folds(engine, [np.arange(0, 20), np.arange(20, 30)], 0.05, "drop")
    with pytest.raises(ValueError, match="every basis vector"):
        b = est.basis_indices_
        rest = np.setdiff1d(np.arange(30), b)
        cv_plus_folds(engine, [np.r_[b, rest[:5]], rest[5:]], 0.05, "remove")


# ------------------------------------------------------------- order statistics
def brute_bounds(values, scores, folds, k_lo, k_hi):
    m = scores.shape[0]
    fold_of = np.empty(m, dtype=np.intp)
    for k, H in enumerate(folds):
        fold_of[H] = k
    centres = values[:, fold_of]  # (t, m, v)
    return np.stack([kth_smallest(centres - scores[None], k_lo), kth_smallest(centres + scores[None], k_hi)], axis=1)


def random_case(rng, kind):
    K = int(rng.integers(2, 12))
    sizes = rng.integers(1, 50, K)
    if kind == "big":
        sizes = rng.integers(30, 80, K)
    m = int(sizes.sum())
    t, v = int(rng.integers(1, 25)), int(rng.integers(1, 3))
    folds = np.split(rng.permutation(m), np.cumsum(sizes)[:-1])
    scores = np.abs(rng.standard_normal((m, v)))
    spread = float(rng.choice([0.0, 1e-9, 1e-3, 0.1, 3.0]))
    values = rng.standard_normal((t, 1, v)) + spread * rng.standard_normal((t, K, v))
    if kind == "ties":
        scores = np.round(scores, 1)
        values = np.round(values, 1)
    elif kind == "huge":
        values, scores = 1e6 + 1e-9 * values, 1.0 + 1e-12 * scores
    elif kind == "tiny":
        values, scores = 1e-310 * np.round(values * 10), 1e-310 * np.round(scores * 10)
    elif kind == "nonfinite":
        scores[rng.integers(m)] = np.inf
        values[0, 0, 0] = np.nan
    return values, scores, folds, m


@pytest.mark.parametrize("kind", ["plain", "big", "ties", "huge", "tiny", "nonfinite"])
def test_sorted_fold_scores_equal_the_full_selection_exactly(rng, kind):
    for _ in range(40):
        values, scores, folds, m = random_case(rng, kind)
        sfs = SortedFoldScores(scores, folds)
        asymmetric = [(1, 1), (m, m), (2, max(1, m // 2)), (0, 1), (m, m + 1)]  # not CV+'s: the unmirrored route
        for k_lo, k_hi in [conformal_ranks(c, m) for c in (0.9, 0.5, 0.2, 0.99)] + [(0, m + 1), (1, m), (m, 1)] + asymmetric:
            got = sfs.bounds(values, (k_lo, k_hi))
            ref = brute_bounds(values, scores, folds, k_lo, k_hi)
            np.testing.assert_array_equal(got, ref)


def test_windows_do_the_work_on_cv_plus_like_values(rng, monkeypatch):
    # folds whose models agree closely: certified in the windows, no full selection
    full = []
    real = select_module.ShiftedBlocks.full_kth
    monkeypatch.setattr(select_module.ShiftedBlocks, "full_kth", lambda self, mu, k: full.append(1) or real(self, mu, k))
    m, K, t = 2000, 10, 50
    scores = np.abs(0.3 * rng.standard_normal((m, 1)))
    folds = np.array_split(rng.permutation(m), K)
    values = rng.standard_normal((t, 1, 1)) + 0.02 * rng.standard_normal((t, K, 1))
    ranks = conformal_ranks(0.9, m)
    got = SortedFoldScores(scores, folds).bounds(values, ranks)
    assert full == []
    np.testing.assert_array_equal(got, brute_bounds(values, scores, folds, *ranks))


def test_the_certificate_rejects_a_window_it_cannot_vouch_for(monkeypatch):
    # Two blocks shifted by 0 and 1000: the second block's window reaches
    # further below L (its rounding slack grows with |mu|), so it holds
    # 1 - 1e-12 while 1 - 1e-13 of the first block was cut "below".  The
    # window's first value is then not the 3rd smallest; the certificate
    # (L <= q <= U) must refuse it, and the public routine still be exact.
    monkeypatch.setattr(select_module, "_MAX_WINDOW_SHARE", 1.0)  # windows on a 6-value problem
    monkeypatch.setattr(select_module, "_MIN_FOLD_ROWS", 1)
    blocks = select_module.ShiftedBlocks(np.array([0.0, 1 - 1e-13, 5.0, -999 - 1e-12, -999.0, -993.0]),
                                         np.array([0, 3, 6]))
    mu = np.array([[0.0, 1000.0]])
    values = np.sort((mu.T + blocks.S.reshape(2, 3)).ravel())
    got, ok = blocks.select(mu, 3, np.array([1.0]), np.array([1.0]))
    assert not ok[0] or got[0] == values[2]
    for k in range(7):
        assert select_module.kth_of_shifted_blocks(mu, blocks, k)[0] == (
            -np.inf if k < 1 else np.inf if k > 6 else values[k - 1])


@pytest.mark.parametrize("mode", ["keep", "train"])
def test_singular_basis_kernel_keeps_the_moments_on_its_range(rng, mode, moments_calls):
    # a very wide kernel makes K_BB numerically singular (the model lives on its range); with no basis
    # point removed the folds keep that range and take the moments: equal to refits on the same range
    from lssvm.solvers import factorize_sparse_rls

    X, Y, Xt = data(rng, 80)
    with pytest.warns(NumericalWarning):
        est = SparseLSSVR(gamma=1e-4, alpha=1e-2, basis="random", n_basis=20, random_state=0).fit(X, Y[:, 0])
    assert est.factorization_.method == "eigh"
    folds = [test for _, test in KFold(2, shuffle=True, random_state=0).split(X)]
    oof, at = fast_folds(est, Xt, folds, mode, 1e-2)
    assert len(moments_calls) == 2
    Z = est.basis_vectors_
    rows = est.basis_indices_
    for k, H in enumerate(folds):
        train = np.ones(X.shape[0], dtype=bool)
        train[H] = False
        if mode == "train":
            train[rows[np.isin(rows, H)]] = True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            fac = factorize_sparse_rls(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y[train], rcond=est.rcond)
        a, b = fac.coef(1e-2)
        assert rel(oof[H], est.kernel_(X[H], Z) @ a + b) < 1e-8
        assert rel(at[:, k], est.kernel_(Xt, Z) @ a + b) < 1e-8


def test_fold_models_are_the_cv_plus_fold_models(rng):
    # the public per-fold callables and the one-pass fold values give the same models
    from lssvm.cv.conformal import fold_models

    X, Y, Xt = data(rng, 60)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=10, random_state=0).fit(X, Y[:, 0])
    folds = [test for _, test in KFold(3, shuffle=True, random_state=0).split(X)]
    engine = est._holdout_engine()
    K_x = est.kernel_(Xt, est.basis_vectors_)
    Mx = eigen_rows(est.factorization_, K_x)
    for mode in MODES:
        _, values = cv_plus_folds(engine, folds, 0.05, mode)
        each = np.stack([model(Mx, K_x) for model in fold_models(engine, folds, 0.05, mode)], axis=1)
        assert rel(each, values(K_x)) < 1e-10
