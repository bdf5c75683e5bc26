import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lssvm.basis import feature_vector_selection, random_basis
from lssvm.kernels import RBF, Linear, Polynomial


def brute_force_J(K, S):
    """J(S) = mean_i K_Si^T K_SS^-1 K_Si / k_ii, by a direct solve."""
    if len(S) == 0:
        return 0.0
    KS = K[np.ix_(S, range(K.shape[0]))]
    q = np.einsum("si,si->i", KS, np.linalg.solve(K[np.ix_(S, S)], KS))
    return float(np.mean(q / np.diag(K)))


def test_greedy_choice_and_error_curve_match_brute_force(rng):
    X = rng.standard_normal((40, 2))
    kern = RBF(0.5)
    K = kern(X, X)
    res = feature_vector_selection(X, kern, n_basis=10)
    S = list(res.indices)
    for k in range(1, len(S) + 1):
        # error curve = 1 - J(S_k), recomputed from scratch
        assert abs(res.error_curve[k] - (1 - brute_force_J(K, S[:k]))) < 1e-10
        # the k-th choice maximises J(S_{k-1} + {j}) over all remaining j
        gains = [brute_force_J(K, S[: k - 1] + [j]) if j not in S[: k - 1] else -1 for j in range(40)]
        assert np.max(gains) - gains[S[k - 1]] < 1e-10
    assert res.stop_reason == "n_basis"


def test_selected_points_are_independent_and_curve_never_increases(rng):
    X = rng.standard_normal((120, 3))
    res = feature_vector_selection(X, RBF(0.3), pivot_tol=1e-8)
    Z = X[res.indices]
    K_SS = RBF(0.3)(Z, Z)
    np.linalg.cholesky(K_SS)  # positive definite: linearly independent in feature space
    assert np.linalg.matrix_rank(K_SS) == len(res.indices)
    assert len(set(res.indices)) == len(res.indices)
    assert np.all(np.diff(res.error_curve) <= 1e-15)
    assert res.error_curve[0] == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(3, 40),
    d=st.integers(1, 4),
    log_gamma=st.floats(-3, 2),
    seed=st.integers(0, 2**31),
)
def test_error_curve_monotone_property(m, d, log_gamma, seed):
    X = np.random.default_rng(seed).standard_normal((m, d))
    res = feature_vector_selection(X, RBF(10.0**log_gamma))
    assert np.all(np.diff(res.error_curve) <= 1e-12)
    assert np.all(res.error_curve >= -1e-12)
    assert 1 <= len(res.indices) <= m


def test_linear_kernel_stops_at_the_dimension(rng):
    # in a d-dimensional feature space no more than d points are independent
    X = rng.standard_normal((50, 3))
    res = feature_vector_selection(X, Linear())
    assert len(res.indices) == 3
    assert res.stop_reason in ("singular", "tol")
    assert res.error_curve[-1] < 1e-10


def test_duplicates_never_selected_twice(rng):
    X = np.repeat(rng.standard_normal((10, 2)), 3, axis=0)
    res = feature_vector_selection(X, RBF(1.0), pivot_tol=1e-10)
    assert len(np.unique(X[res.indices], axis=0)) == len(res.indices)
    assert len(res.indices) <= 10


def test_tol_stops_early(rng):
    X = rng.standard_normal((80, 2))
    full = feature_vector_selection(X, RBF(0.5))
    res = feature_vector_selection(X, RBF(0.5), tol=1e-3)
    assert res.stop_reason == "tol"
    assert res.error_curve[-1] <= 1e-3 < res.error_curve[-2]
    np.testing.assert_array_equal(res.indices, full.indices[: len(res.indices)])


def test_uncached_kernel_gives_same_selection(rng):
    X = rng.standard_normal((60, 3))
    kern = Polynomial(gamma=0.5, degree=2, coef0=1.0)
    a = feature_vector_selection(X, kern, n_basis=8)
    b = feature_vector_selection(X, kern, n_basis=8, cache_bytes=0, block_size=7)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.error_curve, b.error_curve, rtol=1e-10, atol=1e-14)


def test_candidate_mode_reproducible_and_exact_with_all_candidates(rng):
    X = rng.standard_normal((70, 2))
    kern = RBF(0.8)
    a = feature_vector_selection(X, kern, n_basis=12, n_candidates=5, random_state=3)
    b = feature_vector_selection(X, kern, n_basis=12, n_candidates=5, random_state=3)
    np.testing.assert_array_equal(a.indices, b.indices)
    exact = feature_vector_selection(X, kern, n_basis=12)
    full = feature_vector_selection(X, kern, n_basis=12, n_candidates=1000, random_state=0)
    np.testing.assert_array_equal(exact.indices, full.indices)
    assert np.all(np.diff(a.error_curve) <= 1e-15)
    assert exact.error_curve[-1] <= a.error_curve[-1] + 1e-12


def test_random_basis_distinct_and_seeded(rng):
    X = np.repeat(rng.standard_normal((15, 2)), 2, axis=0)
    idx = random_basis(X, 15, random_state=1)
    assert len(np.unique(X[idx], axis=0)) == 15
    np.testing.assert_array_equal(idx, random_basis(X, 15, random_state=1))
    with pytest.raises(ValueError, match="distinct rows"):
        random_basis(X, 16)


def test_candidate_mode_needs_no_m_by_m_memory(rng):
    # 60000^2 doubles would be 27 GiB; the factor must grow with the basis
    X = rng.standard_normal((60000, 2))
    res = feature_vector_selection(X, RBF(0.5), n_candidates=10, tol=5e-2, random_state=0)
    assert res.stop_reason == "tol" and 1 < len(res.indices) < 200


def test_fvs_input_validation(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match="n_basis must be a positive integer"):
        feature_vector_selection(X, RBF(1.0), n_basis=0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        feature_vector_selection(np.vstack([X, [[np.nan, 0.0]]]), RBF(1.0))
