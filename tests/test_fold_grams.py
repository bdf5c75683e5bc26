"""CV+ fold models from the fit's block Grams.

Brute force: explicit refits of each fold (``test_intervals.brute_cv_plus``,
a Householder QR per fold that shares no code with lssvm) and order
statistics by a full sort.
"""

import numpy as np
import pytest
from scipy.linalg import lapack
from sklearn.model_selection import GroupKFold, KFold
from test_intervals import brute_cv_plus

import lssvm.cv.conformal.cv_plus as conformal_module
import lssvm.cv.fold_models as fold_models
from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cv.conformal import conformal_ranks
from lssvm.cv.folds import contiguous_folds
from lssvm.solvers import factorize_sparse_rls
from lssvm.solvers.block_gram import DEFAULT_BLOCKS, block_offsets, gram_by_blocks, times_in_place

from _reference import lstsq_solve


def data(rng, m, v=1, d=3):
    X = rng.standard_normal((m, d))
    F = np.column_stack([np.sin(X[:, 0]) + X[:, 1] * X[:, 2], np.cos(X[:, 1])])[:, :v]
    return X, F + 0.1 * rng.standard_normal((m, v)), rng.standard_normal((9, d))


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.fixture
def routes(monkeypatch):
    """Which route each CV+ call's fold models took: 'blocks' (fit's Grams) or 'other'."""
    seen = []
    real = conformal_module.block_folds_fit

    def spy(*a):
        out = real(*a)
        seen.append("blocks" if out is not None else "other")
        return out

    monkeypatch.setattr(conformal_module, "block_folds_fit", spy)  # the general route's
    monkeypatch.setattr(fold_models, "block_folds_fit", spy)  # the "keep" shortcut's (block_cv_plus)
    return seen


# ------------------------------------------------------------------ the fit's side
@pytest.mark.parametrize("m", [60, 61, 69, 2003])
def test_block_grams_are_the_kfold_blocks_shares(rng, m):
    r, k = 5, 10
    Phi, Yc = rng.standard_normal((m, r)), rng.standard_normal((m, 2))
    G, blocks = gram_by_blocks(Phi, Yc, k)
    offsets = block_offsets(m, k)
    blocks_rows = [list(range(a, b)) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    assert [test.tolist() for _, test in KFold(k).split(np.zeros(m))] == blocks_rows  # scikit-learn's folds
    np.testing.assert_array_equal(blocks.offsets, offsets)
    np.testing.assert_allclose(np.tril(G), np.tril(Phi.T @ Phi), rtol=1e-13, atol=1e-12)
    for j in range(k):
        P = Phi[offsets[j]:offsets[j + 1]]
        np.testing.assert_allclose(np.tril(blocks.grams[:, :, j]), np.tril(P.T @ P), rtol=1e-13, atol=1e-13)
        assert not np.triu(blocks.grams[:, :, j], 1).any()
        np.testing.assert_allclose(blocks.sums[j], P.sum(axis=0), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(blocks.cross[j], P.T @ Yc[offsets[j]:offsets[j + 1]], rtol=1e-13, atol=1e-13)


def test_blocks_are_kept_only_within_the_memory_bound(rng):
    Phi, Yc = rng.standard_normal((99, 10)), rng.standard_normal((99, 1))
    for k in (0, 1, 10):  # 10 blocks x 10 columns > 99 rows: more than M's own size
        G, blocks = gram_by_blocks(Phi, Yc, k)
        assert blocks is None
        np.testing.assert_allclose(G, Phi.T @ Phi, rtol=1e-13)
    assert gram_by_blocks(Phi, Yc, 9)[1] is not None


def test_times_in_place_writes_over_c_order_rows_only(rng):
    V = np.linalg.qr(rng.standard_normal((7, 7)))[0]
    A = rng.standard_normal((600, 7))
    ref = A @ V
    out = times_in_place(A, V)
    assert out is A
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-14)
    F = np.asfortranarray(ref)
    out = times_in_place(F, V)
    assert out is not F
    np.testing.assert_allclose(out, ref @ V, rtol=1e-13, atol=1e-14)


def test_regressors_keep_the_blocks_classifiers_and_plain_calls_do_not(rng):
    X, Y, _ = data(rng, 200)
    est = SparseLSSVR(gamma=0.3, alpha=0.1, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0])
    assert est.factorization_.block_grams.offsets.size == DEFAULT_BLOCKS + 1
    clf = SparseLSSVC(gamma=0.3, alpha=0.1, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0] > 0)
    assert clf.factorization_.block_grams is None
    K = est.kernel_(X, est.basis_vectors_)
    assert factorize_sparse_rls(K, K[est.basis_indices_], Y).block_grams is None


# ------------------------------------------------------------------ CV+ on the blocks
@pytest.mark.parametrize("m", [240, 247])  # equal folds, and the first m % 10 folds one row longer
@pytest.mark.parametrize("v", [1, 2])
@pytest.mark.parametrize("cv", ["int", "kfold"])
def test_block_route_equals_brute_force_refits(rng, m, v, cv, routes):
    X, Y, Xt = data(rng, m, v)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y if v > 1 else Y[:, 0])
    folds = contiguous_folds(10, m)
    for alpha in (0.05, 3.0):
        fast = est.predict_interval(Xt, 0.8, "cv+", alpha=alpha, cv=10 if cv == "int" else KFold(10),
                                    basis_in_holdout="keep")
        ref = brute_cv_plus(est, X, Y, Xt, folds, "keep", alpha, 0.8)
        assert rel(fast, ref[:, :, 0] if v == 1 else ref) < 1e-8
    assert routes == ["blocks", "blocks"]


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_every_mode_equals_brute_force_and_takes_the_blocks_only_when_no_row_stays(rng, mode, routes):
    X, Y, Xt = data(rng, 230)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0])
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout=mode)
    ref = brute_cv_plus(est, X, Y, Xt, contiguous_folds(10, 230), mode, 0.05, 0.8)[:, :, 0]
    assert rel(fast, ref) < 1e-8
    # "remove" drops the folds' basis points and "train" trains on them: not the blocks' training rows
    assert routes == (["blocks"] if mode == "keep" else [])


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_basis_points_off_the_rows_take_the_blocks_in_every_mode(rng, mode, routes):
    # basis points given as points (no training row holds one): every mode leaves out all fold rows
    X, Y, Xt = data(rng, 250)
    Z = rng.standard_normal((11, 3))
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis=Z).fit(X, Y[:, 0])
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout=mode)
    cent, scores = np.empty((Xt.shape[0], 250)), np.empty(250)
    for H in contiguous_folds(10, 250):
        train = np.setdiff1d(np.arange(250), H)
        a, b = lstsq_solve(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y[train], 0.05)
        cent[:, H] = (est.kernel_(Xt, Z) @ a + b)[:, :1]
        scores[H] = np.abs(Y[H, 0] - (est.kernel_(X[H], Z) @ a + b)[:, 0])
    k_lo, k_hi = conformal_ranks(0.8, 250)
    ref = np.column_stack([np.sort(cent - scores, axis=1)[:, k_lo - 1], np.sort(cent + scores, axis=1)[:, k_hi - 1]])
    assert rel(fast, ref) < 1e-8
    assert routes == ["blocks"]


@pytest.mark.parametrize("cv", [KFold(5), KFold(10, shuffle=True, random_state=0), "explicit", "groups"])
def test_other_folds_take_the_old_route_with_the_same_answer(rng, cv, routes, monkeypatch):
    X, Y, Xt = data(rng, 240)
    groups = np.arange(240) // 24  # ten groups of the blocks' size, but not in the blocks' order
    if cv == "explicit":  # the blocks' folds, in another order
        cv = [(np.setdiff1d(np.arange(240), H), H) for H in contiguous_folds(10, 240)[::-1]]
    kw = {"groups": groups} if cv == "groups" else {}
    cv = GroupKFold(10) if cv == "groups" else cv
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0])
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep", **kw)
    assert set(routes) == {"other"}
    monkeypatch.setattr(conformal_module, "block_folds_fit", lambda *a: None)  # as before the blocks
    monkeypatch.setattr(fold_models, "block_folds_fit", lambda *a: None)
    old = est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep", **kw)
    np.testing.assert_array_equal(fast, old)


def test_the_guard_sends_ill_conditioned_folds_the_old_way(rng, routes):
    # lambda_max / alpha past the free bound: the blocks decline, the guarded route answers
    X, Y, Xt = data(rng, 200)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0])
    lam = est.factorization_.eigenvalues.max()
    assert fold_models.block_folds_fit(est.factorization_, contiguous_folds(10, 200), lam * 1e-12) is None
    assert fold_models.block_folds_fit(est.factorization_, contiguous_folds(10, 200), 0.05) is not None


def test_a_failed_cholesky_is_refitted_fold_by_fold(rng, monkeypatch, routes):
    X, Y, Xt = data(rng, 220, v=2)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    ref = brute_cv_plus(est, X, Y, Xt, contiguous_folds(10, 220), "keep", 0.05, 0.8)
    calls = []

    class FailThird:  # LAPACK, but the third fold's Cholesky reports failure (ten folds a pass)
        def __getattr__(self, name):
            return getattr(lapack, name)

        def dposv(self, *a, **kw):
            calls.append(1)
            L, x, info = lapack.dposv(*a, **kw)
            return L, x, (1 if len(calls) % 10 == 3 else info)  # the third fold of each pass

    monkeypatch.setattr(fold_models, "lapack", FailThird())
    refits = []
    real = conformal_module._fold_fit
    monkeypatch.setattr(conformal_module, "_fold_fit", lambda *a: refits.append(a[1]) or real(*a))
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep")
    # the "keep" shortcut declines (a fold failed); the general route takes the blocks and refits that fold
    assert routes == ["blocks", "blocks"] and len(refits) == 1 and refits[0][0] == block_offsets(220, 10)[2]
    assert rel(fast, ref) < 1e-8


def test_a_singular_basis_kernel_keeps_the_block_route_on_its_range(rng, routes):
    # a very wide kernel makes K_BB numerically singular: the fit whitens on its range (r < n columns of
    # Phi), the blocks are r x r, and each fold equals a refit on the same range
    import warnings

    from lssvm import NumericalWarning

    X, Y, Xt = data(rng, 300)
    with pytest.warns(NumericalWarning):
        est = SparseLSSVR(gamma=1e-4, alpha=1e-2, basis="random", n_basis=20, random_state=0).fit(X, Y[:, 0])
    fac = est.factorization_
    assert fac.method == "eigh" and fac.rank < 20 and fac.block_grams.grams.shape[0] == fac.rank
    fast = est.predict_interval(Xt, 0.8, "cv+", cv=10, basis_in_holdout="keep")
    assert routes == ["blocks"]
    Z = est.basis_vectors_
    cent, scores = np.empty((Xt.shape[0], 300)), np.empty(300)
    for H in contiguous_folds(10, 300):
        train = np.setdiff1d(np.arange(300), H)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            refit = factorize_sparse_rls(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y[train], rcond=est.rcond)
        a, b = refit.coef(1e-2)
        cent[:, H] = (est.kernel_(Xt, Z) @ a + b)[:, :1]
        scores[H] = np.abs(Y[H, 0] - (est.kernel_(X[H], Z) @ a + b)[:, 0])
    k_lo, k_hi = conformal_ranks(0.8, 300)
    ref = np.column_stack([np.sort(cent - scores, axis=1)[:, k_lo - 1], np.sort(cent + scores, axis=1)[:, k_hi - 1]])
    assert rel(fast, ref) < 1e-8


def test_block_shaped_bad_folds_still_get_the_partition_error(rng):
    # the blocks' sizes and ends, but a row twice and one missing: not the blocks, and refused as before
    X, Y, Xt = data(rng, 240)
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y[:, 0])
    folds = [H.copy() for H in contiguous_folds(10, 240)]
    folds[3][5] = folds[3][4]
    assert fold_models.matches_blocks(est.factorization_, folds) is None
    cv = [(np.setdiff1d(np.arange(240), H), H) for H in folds]
    with pytest.raises(ValueError):
        est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep")
