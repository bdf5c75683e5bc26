"""Conformal prediction sets (``predict_set``) against brute force: every
held-out decision value from an explicit dense refit without the row (LOO)
or its fold (k-fold), mapped by the fitted calibration, scored by sorting
(LAC, APS) and thresholded at an order statistic with exact ranks, with and
without Mondrian (per-class) thresholds.
"""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.model_selection import KFold

from lssvm import NystromLSSVC, SparseLSSVC, SparseLSSVCCV
from lssvm.solvers import factorize_sparse_rls


def data(rng, m=60, classes=3, t=25):
    X = rng.standard_normal((m + t, 2))
    score = X[:, 0] + 0.6 * rng.standard_normal(m + t)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X[:m], y[:m], X[m:]


def brute_scores(P, labels, method, U=None):
    """By sorting each row's probabilities (stable: ties by class index): the
    test values of every class (labels None), else the calibration score of
    each row's label (APS: the inclusive mass less U times its probability)."""
    if method == "lac":
        S = 1.0 - P
        return S if labels is None else S[np.arange(len(labels)), labels]
    S = np.empty_like(P)
    for s, p in enumerate(P):
        order = np.argsort(-p, kind="stable")
        cum = np.cumsum(p[order])
        cum[-1] = 1.0  # the whole mass
        S[s, order] = cum if labels is not None else np.append(0.0, cum[:-1])
    if labels is None:
        return S
    rows = np.arange(len(labels))
    return S[rows, labels] - U * P[rows, labels]


def brute_sets(est, F_held, X_test, method, mondrian, coverage, random_state=0):
    codes = np.searchsorted(est.classes_, est._y_fit_labels)
    U = np.random.default_rng(random_state).uniform(size=len(codes))
    cal = brute_scores(np.round(est._proba_from_decisions(F_held), 12), codes, method, U)
    test = brute_scores(np.round(est.predict_proba(X_test), 12), None, method)
    inside = np.less_equal if method == "lac" else np.less

    def q(scores):
        n = scores.size
        k = int(-(-(Fraction(str(coverage)) * (n + 1)) // 1))
        return np.inf if k > n else np.sort(scores)[k - 1]

    if not mondrian:
        return inside(test, q(cal))
    return inside(test, np.array([q(cal[codes == c]) for c in range(est.classes_.size)])[None])


def refit_decisions(est, X, Y2, train, keep_basis, rows):
    Z = est.basis_vectors_[keep_basis]
    fac = factorize_sparse_rls(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y2[train], rcond=est.rcond)
    a, b = fac.coef(est.alpha)
    return est.kernel_(X[rows], Z) @ a + b


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("folds", [None, 4])
def test_sparse_sets_equal_brute_force(rng, classes, calibration, folds):
    X, y, Xt = data(rng, classes=classes)
    m = len(y)
    cv = None if folds is None else KFold(folds, shuffle=True, random_state=0)
    est = SparseLSSVC(gamma=0.5, alpha=0.3, basis="random", n_basis=15, random_state=0, calibration=calibration,
                      calibration_cv=cv).fit(X, y)
    est._y_fit_labels = y
    Y2 = est._targets_2d()
    F = np.empty_like(Y2)
    if cv is None:
        for i in range(m):
            train = np.setdiff1d(np.arange(m), [i])
            F[i] = refit_decisions(est, X, Y2, train, np.arange(est.n_basis_), [i])[0]
    else:
        for train, H in cv.split(X):
            keep = ~np.isin(est.basis_indices_, H)  # basis_in_holdout="remove": the fold's basis points leave
            F[H] = refit_decisions(est, X, Y2, train, keep, H)
    for method in ("lac", "aps"):
        for mondrian in (False, True):
            for coverage in (0.9, 0.7):
                fast = est.predict_set(Xt, coverage, method, mondrian)
                ref = brute_sets(est, F, Xt, method, mondrian, coverage)
                assert fast.dtype == bool and fast.shape == (len(Xt), classes)
                np.testing.assert_array_equal(fast, ref, err_msg=f"{method} mondrian={mondrian} {coverage}")


@pytest.mark.parametrize("mondrian", [False, True])
def test_nystrom_sets_equal_brute_force(rng, mondrian):
    """The Nystrom family's exact LOO of its approximate model: a ridge on the
    fixed Nystrom features, refitted without each row."""
    X, y, Xt = data(rng, classes=3)
    m = len(y)
    est = NystromLSSVC(gamma=0.5, alpha=0.3, n_basis=15, random_state=0, calibration="sigmoid").fit(X, y)
    est._y_fit_labels = y
    Phi = est.kernel_(X, est.basis_vectors_) @ est.factorization_.whitener
    Z = np.hstack([Phi, np.ones((m, 1))])
    pen = np.diag(np.append(np.full(Phi.shape[1], est.alpha), 0.0))
    Y2 = est.factorization_.y_centered + est.factorization_.y_mean  # the coded targets
    F = np.empty_like(Y2)
    for i in range(m):
        keep = np.arange(m) != i
        theta = np.linalg.solve(Z[keep].T @ Z[keep] + pen, Z[keep].T @ Y2[keep])
        F[i] = Z[i] @ theta
    for method in ("lac", "aps"):
        fast = est.predict_set(Xt, 0.8, method, mondrian)
        np.testing.assert_array_equal(fast, brute_sets(est, F, Xt, method, mondrian, 0.8))


def test_aps_values_ties_follow_class_order():
    from lssvm.cv.conformal import calibration_scores, class_scores

    P = np.array([[0.4, 0.2, 0.4], [0.25, 0.25, 0.5]])
    # mass ranked strictly above each class: ties ranked by class index
    np.testing.assert_allclose(class_scores(P, "aps"), [[0.0, 0.8, 0.4], [0.5, 0.75, 0.0]])
    np.testing.assert_allclose(class_scores(P, "aps"), brute_scores(P, None, "aps"))
    U = np.random.default_rng(4).uniform(size=2)
    np.testing.assert_allclose(calibration_scores(P, np.array([2, 1]), "aps", 4), [0.8 - 0.4 * U[0], 1.0 - 0.25 * U[1]])


def test_binary_aps_sets_are_not_all_full(rng):
    """Two classes and more errors than the miscoverage: a deterministic APS
    score would put every row whose class is not the more probable at 1, and
    every set would hold both classes; the randomised one does not."""
    X, y, Xt = data(rng, m=400, classes=2, t=400)
    est = SparseLSSVC(gamma=0.5, basis="random", n_basis=15, random_state=0, calibration="sigmoid").fit(X, y)
    assert np.mean(est.predict(X) != y) > 0.12  # more errors than the 10 % miscoverage
    assert est.predict_set(Xt, 0.9, "aps").sum(1).mean() < 1.9


def test_sets_cover_on_fresh_data():
    """Coverage near nominal, averaged over 10 random splits (400 training, 1000
    test rows each): marginal (LAC, APS), and per class with Mondrian."""
    rng = np.random.default_rng(3)
    marginal, per_class = {"lac": [], "aps": []}, []
    for _ in range(10):
        X, y, _ = data(rng, m=1400, classes=3, t=0)
        est = SparseLSSVC(gamma=0.5, alpha=0.3, basis="random", n_basis=20, random_state=0,
                          calibration="sigmoid").fit(X[:400], y[:400])
        rows, yt = np.arange(1000), y[400:]
        for method in marginal:
            marginal[method].append(est.predict_set(X[400:], 0.9, method)[rows, yt].mean())
        hit = est.predict_set(X[400:], 0.9, "lac", mondrian=True)[rows, yt]
        per_class.append([hit[yt == c].mean() for c in range(3)])
    # LAC: near nominal; APS adds the class that crosses the threshold (MAPIE's rule): conservative
    assert abs(np.mean(marginal["lac"]) - 0.9) < 0.015, np.mean(marginal["lac"])
    assert np.mean(marginal["aps"]) > 0.9 - 0.015, np.mean(marginal["aps"])
    assert np.all(np.mean(per_class, axis=0) > 0.9 - 0.02), np.mean(per_class, axis=0)


def test_search_and_refusals(rng):
    X, y, Xt = data(rng)
    search = SparseLSSVCCV(gamma=0.5, alphas=[0.1, 1.0], basis="random", n_basis=10, random_state=0,
                           calibration="sigmoid").fit(X, y)
    np.testing.assert_array_equal(search.predict_set(Xt, 0.8), search.best_estimator_.predict_set(Xt, 0.8))
    est = SparseLSSVC(gamma=0.5, basis="random", n_basis=10, random_state=0, calibration=None).fit(X, y)
    with pytest.raises(ValueError, match="calibration=None"):
        est.predict_set(Xt)
    est = SparseLSSVC(gamma=0.5, basis="random", n_basis=10, random_state=0, calibration="sigmoid").fit(X, y)
    with pytest.raises(ValueError, match="method must be one of"):
        est.predict_set(Xt, method="raps")
    with pytest.raises(ValueError, match="too few"):
        est.predict_set(Xt, 0.999)
    with pytest.raises(ValueError, match="coverage"):
        est.predict_set(Xt, 1.5)


def test_fixed_size_sets_from_its_fold_values(rng):
    """The fixed-size family's sets come from the v-fold values its calibration
    was fitted on: sets built from those values by sorting agree."""
    from lssvm import FixedSizeLSSVC

    X, y, Xt = data(rng, classes=3)
    est = FixedSizeLSSVC(gamma=0.5, alpha=0.3, n_basis=15, random_state=0, calibration="sigmoid").fit(X, y)
    est._y_fit_labels = y
    for method in ("lac", "aps"):
        np.testing.assert_array_equal(est.predict_set(Xt, 0.8, method),
                                      brute_sets(est, est._held_out[0], Xt, method, False, 0.8))


def test_dask_fit_gives_the_same_sets(rng):
    """Fitted on Dask collections, the held-out values come from the calibration
    passes: the same sets as the in-memory fit."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")

    X, y, Xt = data(rng, m=240, classes=3, t=60)
    with dask.config.set(scheduler="threads"):
        for make in (lambda: SparseLSSVC(gamma=0.5, basis="random", n_basis=15, random_state=0, calibration="sigmoid"),
                     lambda: NystromLSSVC(gamma=0.5, n_basis=15, random_state=0, calibration="sigmoid")):
            mem = make().fit(X, y)
            dsk = make().fit(da.from_array(X, chunks=(80, 2)), da.from_array(y, chunks=80))
            for method in ("lac", "aps"):
                np.testing.assert_array_equal(dsk.predict_set(Xt, 0.9, method, True),
                                              mem.predict_set(Xt, 0.9, method, True))


def test_model_loaded_from_a_file_refuses_clearly(rng, tmp_path):
    from lssvm.io import SavedModel, load_model, save_model

    X, y, Xt = data(rng, m=60)
    est = SparseLSSVC(gamma=0.5, basis="random", n_basis=10, random_state=0, calibration="sigmoid").fit(X, y)
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "y"))
    loaded = load_model(path).estimator
    np.testing.assert_allclose(loaded.predict_proba(Xt), est.predict_proba(Xt))
    with pytest.raises(ValueError, match="loaded from a file"):
        loaded.predict_set(Xt)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lac", "aps"])
@pytest.mark.parametrize("mondrian", [False, True])
def test_set_coverage_over_200_random_splits(method, mondrian):
    """Mean coverage over 200 random splits (200 training, 200 test rows,
    three classes) within 0.01 of nominal or above it; per class with Mondrian."""
    rng = np.random.default_rng(5)
    hits = []
    for _ in range(200):
        X, y, _ = data(rng, m=400, classes=3, t=0)
        est = SparseLSSVC(gamma=0.5, alpha=0.3, basis="random", n_basis=10, random_state=0,
                          calibration="sigmoid").fit(X[:200], y[:200])
        hit = est.predict_set(X[200:], 0.9, method, mondrian)[np.arange(200), y[200:]]
        hits.append([hit[y[200:] == c].mean() for c in range(3)] if mondrian else [hit.mean()])
    assert np.all(np.mean(hits, axis=0) >= 0.9 - 0.01), np.mean(hits, axis=0)
