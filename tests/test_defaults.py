"""The defaults: gamma="scale", the bounded pivoted-Cholesky basis, the
search-edge warning, and scikit-learn compatibility of every estimator as
constructed with no arguments."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVC,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SearchEdgeWarning,
    SparseLSSVCCV,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.basis import default_n_basis, pivoted_cholesky, select_basis
from lssvm.kernels import RBF, Laplacian, Polynomial, gamma_scale, resolve_gamma
from lssvm.selection import CVPath, grid_search, nelder_mead_search


# ------------------------------------------------------------ check_estimator
# SparseLSSVR() and SparseLSSVC() are checked in test_estimators.py
# classifiers calibrate by default: predict follows the calibrated probabilities, so near the boundary it
# may differ from the sign of decision_function
# FixedSizeLSSVC() calibrates on its size selection's out-of-fold values: a repeated row's copies fall in
# different folds, a weighted row stays in one
@parametrize_with_checks([FixedSizeLSSVR(), FixedSizeLSSVC(), NystromLSSVR(), NystromLSSVC()],
                         expected_failed_checks=lambda est: ({"check_classifiers_train": "predict follows the "
                                                              "calibrated probabilities"} if hasattr(est, "calibration")
                                                             else {}) |
                         ({"check_sample_weight_equivalence_on_dense_data": "calibrated on v-fold values: a weight "
                           "is not a repetition"} if isinstance(est, FixedSizeLSSVC) else {}))
def test_default_constructed_estimators_pass_check_estimator(estimator, check):
    check(estimator)


# the searches' defaults evaluate 13 widths x 21 alphas per fit: minutes over all checks
@pytest.mark.slow
@parametrize_with_checks([SparseLSSVRCV(), SparseLSSVCCV(), FixedSizeLSSVRCV(), FixedSizeLSSVCCV(), NystromLSSVRCV(),
                          NystromLSSVCCV()],
                         expected_failed_checks=lambda est: {
                             "check_classifiers_train": "predict follows the calibrated probabilities",
                             "check_sample_weight_equivalence_on_dense_data": "held-out calibration: a weight is "
                             "not a repetition"} if hasattr(est, "calibration") else {})
def test_default_constructed_searches_pass_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)  # the checks' tiny data sets sit on edges
        check(estimator)


# ------------------------------------------------------------- gamma="scale"
def test_gamma_scale_is_scikit_learns_rule(rng):
    X = 3.0 * rng.standard_normal((40, 5)) + 1.0
    assert gamma_scale(X) == pytest.approx(1.0 / (5 * X.var()), rel=1e-14)
    # the value SVC(gamma="scale") uses: the same decision function with the explicit number
    y = (X[:, 0] > 1).astype(int)
    a = SVC(gamma="scale").fit(X, y).decision_function(X)
    b = SVC(gamma=gamma_scale(X)).fit(X, y).decision_function(X)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    Xs = sp.random(30, 6, density=0.3, random_state=0, format="csr")
    assert gamma_scale(Xs) == pytest.approx(gamma_scale(Xs.toarray()), rel=1e-12)
    assert gamma_scale(np.ones((5, 3))) == 1.0  # constant inputs: SVC's 1.0, no division by zero
    assert resolve_gamma(0.25, X) == 0.25
    with pytest.raises(ValueError, match="'scale'"):
        resolve_gamma("auto", X)
    with pytest.raises(ValueError, match="gamma"):
        SparseLSSVR(gamma="auto").fit(X, y)


@pytest.mark.parametrize("make", [
    lambda g: SparseLSSVR(gamma=g, alpha=0.1, basis="random", n_basis=15, random_state=0),
    lambda g: SparseLSSVR(gamma=g, alpha=0.1, basis="pchol", n_basis=15, random_state=0),
    lambda g: FixedSizeLSSVR(gamma=g, alpha=0.1, n_basis=15, random_state=0),
    lambda g: NystromLSSVR(gamma=g, alpha=0.1, n_basis=15, random_state=0),
])
def test_gamma_scale_equals_the_explicit_number(rng, make):
    X = 5.0 * rng.standard_normal((80, 3))
    y = np.sin(X[:, 0] / 4) + 0.1 * rng.standard_normal(80)
    a, b = make("scale").fit(X, y), make(gamma_scale(X)).fit(X, y)
    assert a.gamma_ == b.gamma_ == pytest.approx(1.0 / (3 * X.var()))
    assert a.kernel_.gamma == a.gamma_
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_search_grid_is_centred_on_the_scale(rng):
    X = 7.0 * rng.standard_normal((60, 2))
    y = np.sin(X[:, 0] / 7) + 0.05 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        est = SparseLSSVRCV(basis="random", n_basis=20, random_state=0).fit(X, y)
    grid = np.log2(np.unique(est.cv_results_["param_gamma"]) / gamma_scale(X))
    # the default grid scale * 2^-6 ... 2^6, searched coarse-to-fine from the scale itself, wider side first
    np.testing.assert_allclose(grid, np.round(grid), atol=1e-9)
    assert set(np.round(grid)) >= {-3, 0} and set(np.round(grid)) <= set(range(-6, 7))
    assert np.log2(est.cv_results_["param_gamma"][0] / gamma_scale(X)) == pytest.approx(0.0)
    explicit = SparseLSSVRCV(basis="random", n_basis=20, random_state=0, param_space={"gamma": [0.01, 0.1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        assert set(np.unique(explicit.fit(X, y).cv_results_["param_gamma"])) == {0.01, 0.1}


# ------------------------------------------------------------ default basis
def test_default_basis_rule():
    assert [default_n_basis(m) for m in (1, 50, 1000, 2000, 4900, 5000, 10**6)] == [1, 50, 317, 448, 700, 700, 700]
    sizes = [default_n_basis(m) for m in range(1, 30_000, 97)]
    assert np.all(np.diff(sizes) >= 0) and max(sizes) == 700


def test_default_estimator_uses_pivoted_cholesky_of_default_size(rng):
    X = rng.standard_normal((400, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(400)
    est = SparseLSSVR(gamma=0.5, basis_tol=0.0, pivot_tol=1e-12, rcond=1e-14, random_state=3).fit(X, y)
    ref = pivoted_cholesky(X, RBF(0.5), tol=0.0, pivot_tol=1e-12, rcond=1e-14, random_state=3)
    assert est.n_basis_ == default_n_basis(400) == 200 or est.basis_stop_reason_ == "singular"
    np.testing.assert_array_equal(est.basis_indices_, ref.indices)


class CountingRBF(RBF):
    """An RBF kernel that counts the kernel values it computes."""

    def __init__(self, gamma):
        super().__init__(gamma=gamma)
        object.__setattr__(self, "counts", [])

    def _block(self, X, Z):
        self.counts.append(X.shape[0] * Z.shape[0])
        return super()._block(X, Z)


@pytest.mark.parametrize("m", [300, 1200])
def test_pivoted_cholesky_costs_m_kernel_values_per_point(rng, m):
    X = rng.standard_normal((m, 3))
    kern = CountingRBF(2.0)
    res = pivoted_cholesky(X, kern, n_basis=40, pivot_tol=1e-12)
    assert res.indices.size == 40
    # one kernel column per point, plus columns computed in a batch and not used (the batches are capped
    # at two columns per point so far): O(m n) values, never O(m^2)
    assert m * 40 <= sum(kern.counts) <= 2 * m * 40 + m
    # through select_basis (the estimators' route): the same, plus the n^2 of the duplicate check at most
    kern.counts.clear()
    select_basis(X, kern, "pchol", 40)
    assert m * 40 <= sum(kern.counts) <= 2 * m * 40 + m + 40 * 40


def test_pivoted_cholesky_pivots_on_the_largest_residual(rng):
    """Brute force: the residual K - K_S K_SS^-1 K_S computed densely at every step."""
    X = rng.standard_normal((120, 2))
    kern = Polynomial(gamma=0.7, degree=3, coef0=1.0)  # unequal diagonal: the pivots are not ties
    res = pivoted_cholesky(X, kern, n_basis=8)
    K = kern(X, X)
    S = []
    for j in res.indices:
        R = K - (K[:, S] @ np.linalg.solve(K[np.ix_(S, S)], K[S]) if S else 0.0)
        d = np.diag(R)
        rel = d / np.diag(K)
        assert rel[j] >= rel.max() * (1 - 1e-9)  # the largest relative residual (all 1 at the start)
        np.testing.assert_allclose(res.error_curve[len(S)], np.mean(d / np.diag(K)), rtol=1e-8, atol=1e-12)
        S.append(int(j))
    R = K - K[:, S] @ np.linalg.solve(K[np.ix_(S, S)], K[S])
    np.testing.assert_allclose(res.error_curve[-1], np.mean(np.diag(R) / np.diag(K)), rtol=1e-6, atol=1e-12)


def test_pivoted_cholesky_stops_on_low_rank_and_rejects_bad_input(rng):
    X = rng.standard_normal((50, 3))
    res = pivoted_cholesky(X, Polynomial(gamma=1.0, degree=1, coef0=1.0))  # rank 4
    assert res.indices.size == 4 and res.stop_reason == "singular"
    with pytest.raises(ValueError, match="n_basis"):
        pivoted_cholesky(X, RBF(1.0), n_basis=0)
    with pytest.raises(TypeError, match="Kernel"):
        pivoted_cholesky(X, "rbf")
    with pytest.raises(ValueError, match="k\\(x, x\\) > 0"):
        pivoted_cholesky(np.zeros((5, 2)), Polynomial(gamma=1.0, degree=2, coef0=0.0))


# ------------------------------------------------------------- edge warning
def _criterion(best_log2_gamma, best_alpha=1e-2):
    alphas = np.logspace(-4, 2, 7)

    def crit(gamma):
        mse = 1.0 + (np.log2(gamma) - best_log2_gamma) ** 2 + (np.log10(alphas) - np.log10(best_alpha)) ** 2
        return CVPath(alphas, mse)

    return crit


def test_edge_warning_fires_when_the_grid_cuts_off_the_optimum():
    grid = {"gamma": 2.0 ** np.arange(-3, 4)}
    with pytest.warns(SearchEdgeWarning, match=r"gamma=8 lies on the upper edge.*extend the range above"):
        grid_search(_criterion(6.0), grid)
    with pytest.warns(SearchEdgeWarning, match=r"gamma=0.125 lies on the lower edge.*extend the range below"):
        grid_search(_criterion(-6.0), grid)
    with pytest.warns(SearchEdgeWarning, match=r"alpha=100 lies on the upper edge.*alphas="):
        grid_search(_criterion(0.0, best_alpha=1e5), grid)
    with pytest.warns(SearchEdgeWarning, match="gamma=8 lies on the upper edge"):
        nelder_mead_search(_criterion(6.0), {"gamma": (0.125, 8.0)}, max_evaluations=40)


def test_edge_warning_silent_inside():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchEdgeWarning)
        res = grid_search(_criterion(1.0), {"gamma": 2.0 ** np.arange(-3, 4)})
        assert res.best_params["gamma"] == 2.0
        nelder_mead_search(_criterion(1.0), {"gamma": (0.125, 8.0)}, max_evaluations=40)
        grid_search(_criterion(3.0), {"gamma": [8.0]})  # a single value has no edge to extend


def test_estimator_search_warns_at_edge(rng):
    X = rng.standard_normal((60, 1))
    y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(60)
    with pytest.warns(SearchEdgeWarning, match="gamma"):
        SparseLSSVRCV(basis="random", n_basis=30, random_state=0, param_space={"gamma": [1e-3, 2e-3]}).fit(X, y)


def _unblocked_pivots(X, kern, n, first):
    """Reference: greedy pivoted Cholesky one dense column at a time (O(m^2) memory), from pivot ``first``
    (RBF and Laplacian diagonals tie: pivoted_cholesky draws the first pivot)."""
    K = kern(X, X)
    d = np.diag(K).copy()
    G = np.zeros((X.shape[0], 0))
    piv = []
    j = first
    for _ in range(n):
        g = (K[:, j] - G @ G[j]) / np.sqrt(d[j])
        G = np.column_stack([G, g])
        d = np.maximum(d - g**2, 0.0)
        d[piv + [j]] = 0.0
        piv.append(j)
        j = int(np.argmax(d))
    return np.array(piv)


@pytest.mark.parametrize("kern", [RBF(0.8), Laplacian(0.5)], ids=["rbf", "laplacian"])
def test_blocked_pivoted_cholesky_keeps_the_unblocked_pivots(rng, kern):
    """Many blocks (candidate sets) over 150 pivots: every pivot is still the global largest residual."""
    X = rng.standard_normal((500, 3))
    res = pivoted_cholesky(X, kern, n_basis=150, pivot_tol=1e-12, rcond=1e-14)
    np.testing.assert_array_equal(res.indices, _unblocked_pivots(X, kern, res.indices.size, res.indices[0]))
    assert res.indices.size == 150
