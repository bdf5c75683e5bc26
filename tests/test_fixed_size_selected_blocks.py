"""The contiguous blocks the fixed-size fold curves keep on SCDP's growing selection equal the gathered
blocks, and the fold curves from them equal the curves from explicit per-size gathers."""

from __future__ import annotations

import numpy as np

from lssvm.cv.fixed_size import RowsInMemory, fixed_size_cv_curves
from lssvm.solvers.fixed_size import GramSums, SelectedBlock, SelectedColumns


def test_blocks_equal_gathers_along_a_growing_selection():
    rng = np.random.default_rng(0)
    D, h = 70, 23
    R = rng.standard_normal((D, D))
    G = R @ R.T
    C = rng.standard_normal((h, D))
    order = rng.permutation(D)[:45]
    block, columns = SelectedBlock(G), SelectedColumns(C)
    for k in (1, 2, 3, 17, 18, 40, 45):  # several coordinates at once, and past the first doublings
        sel = order[:k]
        np.testing.assert_array_equal(block.at(sel), G[np.ix_(sel, sel)])
        np.testing.assert_array_equal(columns.at(sel), C[:, sel])


def _brute_curves(system, fold_sums, alpha, nu, kmax):
    """SSE per fold and size by an explicit SCDP run and the gathered quadratic form at every size."""
    from lssvm.solvers.fixed_size import SCDPState

    out = np.zeros((len(fold_sums), kmax))
    for f, fs in enumerate(fold_sums):
        train = system.without(fs)
        state = SCDPState(train.matrix(alpha, nu), train.rhs[:, 0])
        while state.k < kmax and state.step() is not None:
            out[f, state.k - 1] = fs.sse(state.coef, state.order, 0)
    return out


def test_fold_curves_equal_per_size_gathers():
    rng = np.random.default_rng(1)
    m, M = 240, 40
    X = rng.standard_normal((m, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)
    Z = X[:M]
    K = np.exp(-0.5 * ((X[:, None, :] - Z[None]) ** 2).sum(-1))
    folds = np.array_split(rng.permutation(m), 6)
    rows = RowsInMemory(K, K[:M], y[:, None], folds)
    system = rows.system()
    fold_sums = [GramSums.of_rows(K[t], y[t, None]) for t in folds]
    got = fixed_size_cv_curves(system, None, None, None, [1e-2], fold_sums=fold_sums, max_size=M + 1)
    brute = _brute_curves(system, fold_sums, 1e-2, 1e-8, M + 1)
    steps = got.stopped_at[0, 0]
    assert steps.min() > 10
    for f in range(len(folds)):
        np.testing.assert_allclose(got.sse[0, 0, f, : steps[f]], brute[f, : steps[f]], rtol=1e-12, atol=1e-12)
    # and by the rows themselves (the misclassification path keeps the fold's kernel columns)
    direct = fixed_size_cv_curves(system, K, y[:, None], folds, [1e-2], max_size=M + 1, stop_scoring="error_rate")
    for f in range(len(folds)):
        k = min(steps[f], direct.stopped_at[0, 0, f])
        np.testing.assert_allclose(direct.sse[0, 0, f, :k], brute[f, :k], rtol=1e-8)
