"""CV+ order statistics for many test rows: the count guess that finds the
answer's position, selections taken in passes of bounded size, and test
rows taken in blocks that do not shrink with m.

Each is checked against the full sort of every candidate value on fresh
random data (the result is the same floating-point number).
"""

import numpy as np
import pytest

import lssvm.cv.conformal.shifted_blocks as select_module
import lssvm.estimators._intervals as intervals_module
from lssvm import SparseLSSVR
from lssvm.cv.conformal import ShiftedBlocks, SortedFoldScores, conformal_ranks, kth_smallest


def brute_bounds(scores, folds, values, ranks):
    fold_of = np.empty(scores.shape[0], dtype=np.intp)
    for k, H in enumerate(folds):
        fold_of[H] = k
    centres = values[:, fold_of]
    return np.stack([kth_smallest(centres - scores[None], ranks[0]),
                     kth_smallest(centres + scores[None], ranks[1])], 1)


def test_first_windows_certify_most_rows_where_the_folds_disagree(rng, monkeypatch):
    # folds whose models differ by a third of the scores' spread: one step of the pooled spacing left most rows'
    # guesses outside their first windows (17-45 % certified); the secant step finds them
    tries = []
    real_at = ShiftedBlocks.select_at

    def select_at(self, mu, k, near):
        q, ok = real_at(self, mu, k, near)
        tries.append(ok.mean())
        return q, ok

    monkeypatch.setattr(ShiftedBlocks, "select_at", select_at)
    m, K, t = 20_000, 10, 200
    scores = np.abs(0.3 * rng.standard_normal((m, 1)))
    folds = np.array_split(rng.permutation(m), K)
    values = rng.standard_normal((t, 1, 1)) + 0.1 * rng.standard_normal((t, K, 1))
    ranks = conformal_ranks(0.9, m)
    got = SortedFoldScores(scores, folds).bounds(values, ranks)
    assert tries[0] >= 0.85
    np.testing.assert_array_equal(got, brute_bounds(scores, folds, values, ranks))


@pytest.mark.parametrize("route", ["windows", "full"])
def test_selections_in_passes_equal_the_full_sort(rng, monkeypatch, route):
    # a budget of a few values per pass: every window selection (or every full selection) runs row by row
    monkeypatch.setattr(select_module, "_SELECT_FLOATS", 5)
    monkeypatch.setattr(ShiftedBlocks, "select_at", lambda self, mu, k, near: (
        np.full(mu.shape[0], np.nan), np.zeros(mu.shape[0], dtype=bool)))
    if route == "full":
        monkeypatch.setattr(select_module, "_MAX_WINDOW_SHARE", 0.0)
    passes = []
    real = select_module._full_selection
    if route == "full":
        def full_selection(mu, S, sizes, k):
            passes.append(mu.shape[0])
            return real(mu, S, sizes, k)

        monkeypatch.setattr(select_module, "_full_selection", full_selection)
    m, K, t = 900, 6, 40
    scores = np.abs(rng.standard_normal((m, 1)))
    folds = np.array_split(rng.permutation(m), K)
    values = rng.standard_normal((t, 1, 1)) + 0.3 * rng.standard_normal((t, K, 1))
    for coverage in (0.9, 0.6):
        ranks = conformal_ranks(coverage, m)
        got = SortedFoldScores(scores, folds).bounds(values, ranks)
        np.testing.assert_array_equal(got, brute_bounds(scores, folds, values, ranks))
    if route == "full":
        assert passes and sum(passes) >= 2 * t


def test_full_selection_in_passes_holds_a_bounded_number_of_values(rng, monkeypatch):
    import tracemalloc

    m, t = 20_000, 200  # in one pass: 200 x 20,000 values, 32 MB
    S = rng.standard_normal(m)
    sizes = np.array([8_000, 12_000])
    mu = rng.standard_normal((t, 2))
    monkeypatch.setattr(select_module, "_SELECT_FLOATS", 1 << 16)
    tracemalloc.start()
    got = select_module._full_selection(mu, S, sizes, 13_001)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 << 20
    ref = np.sort(np.concatenate([mu[:, [0]] + S[:8_000], mu[:, [1]] + S[8_000:]], axis=1), axis=1)[:, 13_000]
    np.testing.assert_array_equal(got, ref)


def test_cv_plus_test_rows_come_in_blocks_that_do_not_shrink_with_m(rng, monkeypatch):
    # at m = 20,000 the blocks were 209 test rows (4M / m); each block rebuilds the count table
    m, t = 20_000, 1_500
    X = rng.standard_normal((m, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)
    est = SparseLSSVR(gamma=0.3, alpha=0.1, basis="random", n_basis=20, random_state=0).fit(X, y)
    Xt = rng.standard_normal((t, 3))
    blocks = []
    real = intervals_module.iter_row_blocks

    def iter_row_blocks(n_rows, step):
        blocks.append(step)
        return real(n_rows, step)

    monkeypatch.setattr(intervals_module, "iter_row_blocks", iter_row_blocks)
    got = est.predict_interval(Xt, 0.9, method="cv+", basis_in_holdout="keep")
    assert blocks == [min(est.block_size, (1 << 22) // (20 + 10 * (1 + 16)))]
    monkeypatch.setattr(intervals_module, "iter_row_blocks", real)
    monkeypatch.setattr(est, "block_size", 100)  # many blocks: the same bounds
    np.testing.assert_allclose(est.predict_interval(Xt, 0.9, method="cv+", basis_in_holdout="keep"), got,
                               rtol=1e-13, atol=1e-13)
