"""Full conformal prediction sets (``predict_interval(method="full")``)
against brute force: the set's membership of a candidate label decided by
an explicit dense refit of the training rows plus the test point with that
label (Lei et al. 2018, Algorithm 1), its ends found by bisection on the
label; and its coverage over random splits.
"""

import numpy as np
import pytest

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.cv.conformal import full_conformal_bounds

from _reference import dense_solve
from conftest import rel_err

TOL = 1e-8


def data(rng, m=40, d=3, v=1, t=4):
    X = rng.standard_normal((m, d))
    F = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])[:, :v]
    Y = F + 0.1 * rng.standard_normal((m, v))
    return X, (Y[:, 0] if v == 1 else Y), rng.standard_normal((t, d))


def membership(K, K_BB, Y, k_x, alpha, k):
    """``inside(y)``: the conformal test of label y at the point with kernel row
    ``k_x``, by a dense refit of the m + 1 rows (one output)."""
    K_aug = np.vstack([K, k_x])

    def inside(y):
        Y_aug = np.append(Y, y)
        a, b = dense_solve(K_aug, K_BB, Y_aug, alpha)
        r = np.abs(Y_aug - (K_aug @ a[:, 0] + b[0]))
        return np.count_nonzero(r[:-1] <= r[-1]) <= k - 1

    return inside


def bisect(inside, y_in, y_out):
    """The boundary between an inside label and an outside one, to rounding."""
    for _ in range(200):
        mid = 0.5 * (y_in + y_out)
        if mid in (y_in, y_out):
            break
        if inside(mid):
            y_in = mid
        else:
            y_out = mid
    return 0.5 * (y_in + y_out)


def brute_hull(inside, centre, width):
    """Outermost ends of the set: scan inwards from far outside to the first
    inside label on a fine grid, then bisect; also checks the grid finds no
    inside label beyond."""
    ends = []
    for sign in (-1.0, 1.0):
        grid = centre + sign * width * np.linspace(8.0, 0.0, 401)
        hits = [inside(y) for y in grid]
        assert not hits[0], "the set reaches past the scanned range"
        j = hits.index(True)
        ends.append(bisect(inside, grid[j], grid[j - 1]))
    return np.array(ends)


@pytest.mark.parametrize("alpha", [1e-3, 0.5])
@pytest.mark.parametrize("v", [1, 2])
@pytest.mark.parametrize("coverage", [0.9, 0.7])
def test_full_conformal_equals_refit_bisection(rng, alpha, v, coverage):
    X, Y, Xt = data(rng, v=v)
    est = SparseLSSVR(gamma=0.3, alpha=alpha, basis="random", n_basis=12, random_state=0).fit(X, Y)
    m = X.shape[0]
    Y2 = Y.reshape(m, -1)
    fast = est.predict_interval(Xt, coverage, "full")
    assert fast.shape == ((Xt.shape[0], 2) if v == 1 else (Xt.shape[0], 2, v))
    fast = fast.reshape(Xt.shape[0], 2, v)
    Z = est.basis_vectors_
    K, K_BB, K_t = est.kernel_(X, Z), est.kernel_(Z, Z), est.kernel_(Xt, Z)
    k = int(np.ceil(coverage * (m + 1) - 1e-9))
    centre = est.predict(Xt).reshape(-1, v)
    for j in range(v):
        for s in range(Xt.shape[0]):
            inside = membership(K, K_BB, Y2[:, j], K_t[s], alpha, k)
            assert inside(centre[s, j])
            width = fast[s, 1, j] - fast[s, 0, j]
            ref = brute_hull(inside, centre[s, j], width)
            assert np.max(np.abs(fast[s, :, j] - ref)) <= TOL * np.max(np.abs(ref)), (s, j, fast[s, :, j], ref)


def test_full_conformal_narrower_than_jackknife_plus_on_average(rng):
    X, Y, Xt = data(rng, m=120, t=200)
    est = SparseLSSVR(gamma=0.3, alpha=0.1, basis="random", n_basis=20, random_state=0).fit(X, Y)
    full = est.predict_interval(Xt, 0.9, "full")
    jk = est.predict_interval(Xt, 0.9, "jackknife+")
    assert np.all(full[:, 0] <= est.predict(Xt)) and np.all(est.predict(Xt) <= full[:, 1])
    assert np.mean(full[:, 1] - full[:, 0]) <= 1.05 * np.mean(jk[:, 1] - jk[:, 0])


@pytest.mark.filterwarnings("ignore::lssvm.exceptions.SearchEdgeWarning")
def test_full_conformal_search_estimator(rng):
    X, Y, Xt = data(rng, m=60)
    search = SparseLSSVRCV(gamma=0.3, alphas=[0.01, 0.1, 1.0], basis="random", n_basis=15, random_state=0).fit(X, Y)
    ref = search.best_estimator_.predict_interval(Xt, 0.8, "full")
    np.testing.assert_array_equal(search.predict_interval(Xt, 0.8, "full"), ref)


def test_full_conformal_coverage_over_random_splits():
    """Marginal coverage over 100 random splits (40 training rows, 30 test
    rows each): at least nominal, and at most nominal + 1/(m + 1) for
    continuous scores (Lei et al. 2018, Thm 2.1), within sampling error."""
    rng = np.random.default_rng(7)
    hits = []
    for _ in range(100):
        X = rng.uniform(-2, 2, (70, 2))
        y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_t(4, 70)
        est = SparseLSSVR(gamma=0.5, alpha=0.05, basis="random", n_basis=15, random_state=0).fit(X[:40], y[:40])
        lo, hi = est.predict_interval(X[40:], 0.9, "full").T
        hits.append(np.mean((lo <= y[40:]) & (y[40:] <= hi)))
    assert 0.9 - 0.015 <= np.mean(hits) <= 0.9 + 1 / 41 + 0.015, np.mean(hits)


def test_non_interval_set_returns_hull():
    """A hand-made set with a gap: the bounds are its hull, the gap is reported."""
    # three rows of cross-leverage 3 (each off only while t b lies in (e/4, e/2)) and three of
    # cross-leverage 0 (on while |t b| < 1): with 4 rows needed, the set is (-1, 1/8) u (1/4, 1) in t b
    E = np.array([[1.0], [1.0], [1.0], [0.5], [0.5], [0.5]])
    U = np.array([[0.0, 0.0, 0.0, 3.0, 3.0, 3.0]])
    h = np.array([0.1])
    coverage = 0.4  # k = ceil(0.4 * 7) = 3, so m - k + 1 = 4 rows must beat the test point
    bounds, gaps = full_conformal_bounds(E, U, h, np.full((1, 1), 2.0), coverage, with_gaps=True)
    t = np.linspace(-3, 3, 600001)
    r_x = np.abs(t / 1.1)
    r = np.abs(E[:, :1] - U[0][:, None] * t[None] / 1.1)
    ok = np.count_nonzero(r > r_x, axis=0) >= 4
    assert np.isclose(bounds[0, 0, 0], 2.0 + t[ok].min(), atol=1e-4)
    assert np.isclose(bounds[0, 1, 0], 2.0 + t[ok].max(), atol=1e-4)
    assert np.allclose(bounds[0, :, 0], [2.0 - 1.1, 2.0 + 1.1])
    assert gaps[0, 0] and np.any(~ok[np.argmax(ok): len(ok) - np.argmax(ok[::-1])])


def test_full_method_rejected_where_not_available(rng):
    X, Y, Xt = data(rng, m=30)
    est = SparseLSSVR(gamma=0.3, basis="random", n_basis=8, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="method must be one of"):
        est.predict_interval(Xt, 0.9, "fulll")


def ridge_membership(Z, pen, y, z_x, k):
    """``inside(y)`` for a general ridge model on rows ``Z`` with penalty
    matrix ``pen``, by a dense solve of the m + 1 rows' normal equations."""
    Z_aug = np.vstack([Z, z_x])

    def inside(label):
        y_aug = np.append(y, label)
        theta = np.linalg.solve(Z_aug.T @ Z_aug + pen, Z_aug.T @ y_aug)
        r = np.abs(y_aug - Z_aug @ theta)
        return np.count_nonzero(r[:-1] <= r[-1]) <= k - 1

    return inside


def nystrom_rows(est, X):
    F = est.kernel_(X, est.basis_vectors_) @ est.factorization_.whitener
    pen = np.diag(np.append(np.full(F.shape[1], est.alpha), 0.0))
    return [(np.hstack([F, np.ones((len(X), 1))]), pen)]


def fixed_size_rows(est, X):
    Zb = est.basis_vectors_
    M = Zb.shape[0]
    R = np.hstack([est.kernel_(X, Zb), np.ones((len(X), 1))])
    pen = np.zeros((M + 1, M + 1))
    pen[:M, :M] = est.alpha * est.kernel_(Zb, Zb)
    pen[M, M] = est.nu
    out = []
    for j in range(est.coef_full_.shape[1]):
        sel = np.flatnonzero(est.coef_full_[:, j])
        out.append((R[:, sel], pen[np.ix_(sel, sel)]))
    return out


@pytest.mark.parametrize("family", ["nystrom", "fixed-size", "fixed-size-direct"])
@pytest.mark.parametrize("v", [1, 2])
def test_family_full_conformal_equals_refit_bisection(rng, family, v):
    from lssvm import FixedSizeLSSVR, NystromLSSVR

    X, Y, Xt = data(rng, v=v, t=3)
    m = X.shape[0]
    if family == "nystrom":
        est, rows = NystromLSSVR(gamma=0.3, alpha=0.05, n_basis=10, random_state=0), nystrom_rows
    else:
        # SCDP stopped at 6 of the 11 coordinates: each output's own selection (intercept or not)
        kw = {"solver": "direct"} if family.endswith("direct") else {"solver": "scdp", "max_size": 6}
        est = FixedSizeLSSVR(gamma=0.3, alpha=0.05, n_basis=10, random_state=0, **kw)
        rows = fixed_size_rows
    est.fit(X, Y)
    fast = est.predict_interval(Xt, 0.8, "full").reshape(len(Xt), 2, v)
    Y2, centre = Y.reshape(m, v), est.predict(Xt).reshape(-1, v)
    k = int(np.ceil(0.8 * (m + 1) - 1e-9))
    train, test = rows(est, X), rows(est, Xt)
    for j in range(v):
        Z, pen = train[j if len(train) > 1 else 0]
        Zt = test[j if len(test) > 1 else 0][0]
        # the fitted model is this ridge model: its refit on the training rows reproduces the predictions
        theta = np.linalg.solve(Z.T @ Z + pen, Z.T @ Y2[:, j])
        assert rel_err(Zt @ theta, centre[:, j]) < 1e-8
        for s in range(len(Xt)):
            inside = ridge_membership(Z, pen, Y2[:, j], Zt[s], k)
            ref = brute_hull(inside, centre[s, j], fast[s, 1, j] - fast[s, 0, j])
            assert np.max(np.abs(fast[s, :, j] - ref)) <= TOL * np.max(np.abs(ref)), (s, j, fast[s, :, j], ref)


@pytest.mark.filterwarnings("ignore::lssvm.exceptions.NumericalWarning")
def test_family_full_conformal_refusals(rng):
    from lssvm import NystromLSSVR

    X, Y, Xt = data(rng, m=30)
    est = NystromLSSVR(gamma=0.3, n_basis=8, predictor="exact", random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="predictor='low-rank'"):
        est.predict_interval(Xt, 0.8, "full")
    with pytest.raises(ValueError, match="predictor='exact' predicts with the true kernel"):
        est.predict_interval(Xt, 0.8, "jackknife+")


def test_selection_and_sort_routes_agree(rng):
    """Points with every |u_i| < 1 take two order statistics, the others the
    sort of all breakpoints: on points where both apply they agree, and a
    block mixing both kinds gets each point's own route."""
    from lssvm.cv.conformal.full import _selected_bounds, _sorted_bounds

    m, t = 50, 40
    E = rng.standard_normal((m, 2))
    U = rng.uniform(-0.99, 0.99, (t, m)) * rng.uniform(0, 1, (t, 1))
    h = rng.uniform(0, 2, t)
    centre = rng.standard_normal((t, 2))
    for k in (30, 46, 50):
        a, ga = _selected_bounds(E, U, h, centre, k, True)
        b, gb = _sorted_bounds(E, U, h, centre, k, True)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
        assert not gb.any()
    U[::3, 7] = 1.5  # a third of the points: a row of cross-leverage past 1
    mixed = full_conformal_bounds(E, U, h, centre, 0.9)
    np.testing.assert_array_equal(mixed[::3], _sorted_bounds(E, U[::3], h[::3], centre[::3], 46, False))
    rest = np.setdiff1d(np.arange(t), np.arange(0, t, 3))
    np.testing.assert_array_equal(mixed[rest], _selected_bounds(E, U[rest], h[rest], centre[rest], 46, False))


def test_full_method_needs_rows_in_memory(rng):
    da = pytest.importorskip("dask.array")
    from lssvm import NystromLSSVR

    X, Y, Xt = data(rng, m=60)
    Xd, yd = da.from_array(X, chunks=(20, 3)), da.from_array(Y, chunks=20)
    for est in (SparseLSSVR(gamma=0.3, basis="random", n_basis=8, random_state=0),
                NystromLSSVR(gamma=0.3, n_basis=8, random_state=0)):
        est.fit(Xd, yd)
        with pytest.raises(ValueError, match="needs the training rows in memory"):
            est.predict_interval(Xt, 0.8, "full")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["full", "jackknife+", "cv+"])
def test_coverage_over_200_random_splits(method):
    """Mean coverage over 200 random splits (100 training,
    100 test rows; a basis of 10 points, fixed alpha) within 0.01 of nominal,
    or above it."""
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(200):
        X = rng.uniform(-2, 2, (200, 2))
        y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_t(4, 200)
        est = SparseLSSVR(gamma=0.5, alpha=0.05, basis="random", n_basis=10, random_state=0).fit(X[:100], y[:100])
        lo, hi = est.predict_interval(X[100:], 0.9, method).T
        hits.append(np.mean((lo <= y[100:]) & (y[100:] <= hi)))
    assert np.mean(hits) >= 0.9 - 0.01, np.mean(hits)


@pytest.mark.filterwarnings("ignore::lssvm.exceptions.SearchEdgeWarning")
def test_family_searches_pass_full_to_their_best_model(rng):
    from lssvm import FixedSizeLSSVRCV, NystromLSSVRCV

    X, Y, Xt = data(rng, m=80)
    for search in (NystromLSSVRCV(n_basis=10, random_state=0), FixedSizeLSSVRCV(n_basis=10, random_state=0)):
        search.fit(X, Y)
        np.testing.assert_array_equal(search.predict_interval(Xt, 0.8, "full"),
                                      search.best_estimator_.predict_interval(Xt, 0.8, "full"))
