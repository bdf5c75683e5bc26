import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.linear_model import orthogonal_mp_gram

from lssvm import SparseLSSVR, scdp
from lssvm.basis import kcenter

from conftest import rel_err


def spd(rng, D, cond=1e3):
    Qm, _ = np.linalg.qr(rng.standard_normal((D, D)))
    return (Qm * np.geomspace(1.0, 1.0 / cond, D)) @ Qm.T


@pytest.mark.parametrize("D", [5, 12, 30])
def test_scdp_path_equals_omp_on_the_normal_equations(rng, D):
    A, b = spd(rng, D), rng.standard_normal(D)
    res = scdp(A, b)
    assert res.order.size == D
    for k in range(1, D + 1):
        omp = orthogonal_mp_gram(A, b, n_nonzero_coefs=k)
        assert rel_err(res.coef(k), omp) < 1e-9, k
        # the k chosen coordinates are OMP's, and w solves A_SS w_S = b_S
        S = res.order[:k]
        np.testing.assert_array_equal(np.sort(S), np.flatnonzero(omp))
        assert rel_err(res.coef(k)[S], np.linalg.solve(A[np.ix_(S, S)], b[S])) < 1e-9
    assert rel_err(res.coef(), np.linalg.solve(A, b)) < 1e-9
    assert res.residual_norms[-1] < 1e-9 * np.linalg.norm(b)


def test_scdp_selection_order_is_southwell(rng):
    A, b = spd(rng, 15), rng.standard_normal(15)
    res = scdp(A, b, max_nonzero=6)
    assert res.order[0] == np.argmax(np.abs(b))
    for k in range(1, 6):
        score = np.abs(A @ res.coef(k) - b)
        score[res.order[:k]] = -1.0  # already selected
        assert res.order[k] == np.argmax(score)


def test_scdpp_with_all_candidates_equals_scdp_and_is_seeded(rng):
    A, b = spd(rng, 20), rng.standard_normal(20)
    full = scdp(A, b, max_nonzero=10)
    all_cand = scdp(A, b, max_nonzero=10, n_candidates=100, random_state=3)
    np.testing.assert_array_equal(full.order, all_cand.order)
    a = scdp(A, b, max_nonzero=10, n_candidates=4, random_state=7)
    c = scdp(A, b, max_nonzero=10, n_candidates=4, random_state=7)
    np.testing.assert_array_equal(a.order, c.order)
    # each step is still the exact least-squares solution on its coordinates
    S = a.order
    assert rel_err(a.coef()[S], np.linalg.solve(A[np.ix_(S, S)], b[S])) < 1e-9


def test_scdp_callback_and_errors(rng):
    A, b = spd(rng, 8), rng.standard_normal(8)
    seen = []
    res = scdp(A, b, callback=lambda k, order, coef, rn: seen.append(k) or k == 3)
    assert seen == [1, 2, 3] and res.order.size == 3
    with pytest.raises(ValueError, match="square"):
        scdp(A[:3], b)
    with pytest.raises(ValueError, match="max_nonzero"):
        scdp(A, b, max_nonzero=0)
    with pytest.raises(ValueError, match="positive definite"):
        scdp(-A, b)


def test_kcenter_is_farthest_point(rng):
    X = rng.standard_normal((200, 3))
    idx = kcenter(X, 10, random_state=0)
    assert len(set(idx.tolist())) == 10
    for k in range(1, 10):
        d = cdist(X, X[idx[:k]]).min(axis=1)
        assert d[idx[k]] == pytest.approx(d.max())
    np.testing.assert_array_equal(idx, kcenter(X, 10, random_state=0))
    with pytest.raises(ValueError, match="distinct rows"):
        kcenter(np.repeat(X[:2], 5, axis=0), 3)


def test_kcenter_basis_in_estimator(rng):
    X = rng.standard_normal((80, 2))
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis="kcenter", n_basis=12, random_state=0).fit(X, X[:, 0])
    np.testing.assert_array_equal(est.basis_indices_, kcenter(X, 12, random_state=0))
