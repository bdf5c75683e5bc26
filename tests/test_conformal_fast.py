"""The CV+ call without its fixed costs: contiguous
folds without the splitter, the new points without scikit-learn's checks,
no basis holders for "keep", and the order statistics' count table.

Each fast path is compared with the route it skips (``resolve_folds``,
``validate_data``, the hold-out engine with holders, binary searches, a full
sort) on fresh random data.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GroupKFold, KFold, ShuffleSplit

import lssvm.cv.conformal.shifted_blocks as select_module
from lssvm import SparseLSSVR
from lssvm.cv import resolve_folds
from lssvm.cv.conformal import CountGrid, ShiftedBlocks, SortedFoldScores, conformal_ranks, kth_smallest
from lssvm.cv.folds import contiguous_folds


def fitted(rng, m=60, d=3, n_basis=8, **kw):
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m)
    est = SparseLSSVR(gamma=0.3, alpha=0.1, basis="random", n_basis=n_basis, random_state=0, **kw).fit(X, y)
    return est, X, y


# ------------------------------------------------------------------ folds
@pytest.mark.parametrize("m", [2, 7, 10, 101])
def test_contiguous_folds_are_the_splitters_folds(m):
    for k in range(2, min(m, 12) + 1):
        for cv in (k, KFold(k)):
            got = contiguous_folds(cv, m)
            ref = resolve_folds(cv, m)
            assert len(got) == len(ref)
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == np.intp


def test_contiguous_folds_leave_everything_else_to_resolve_folds():
    class MyKFold(KFold):
        pass

    groups = np.arange(10) % 3
    for cv in (KFold(3, shuffle=True, random_state=0), MyKFold(3), GroupKFold(3), ShuffleSplit(2), "loo",
               [(np.arange(5), np.arange(5, 10))], True, 1, 11, 2.0):
        assert contiguous_folds(cv, 10) is None, cv
    assert contiguous_folds(3, 10, groups) is None  # resolve_folds warns that an int ignores groups
    assert contiguous_folds(KFold(3), 10, groups) is not None  # KFold ignores groups silently, as its split does


def test_cv_plus_with_int_and_kfold_equals_explicit_folds(rng):
    est, X, _ = fitted(rng)
    Xt = rng.standard_normal((9, 3))
    explicit = [(np.setdiff1d(np.arange(60), H), H) for H in np.array_split(np.arange(60), 4)]
    ref = est.predict_interval(Xt, 0.8, "cv+", cv=explicit, basis_in_holdout="keep")
    for cv in (4, KFold(4)):
        np.testing.assert_array_equal(est.predict_interval(Xt, 0.8, "cv+", cv=cv, basis_in_holdout="keep"), ref)


def test_cv_plus_bad_int_cv_still_gets_resolve_folds_errors(rng):
    est, X, _ = fitted(rng)
    with pytest.raises(ValueError, match="folds needs 2 <= cv"):
        est.predict_interval(X[:3], 0.8, "cv+", cv=61)
    with pytest.warns(UserWarning, match="groups is ignored"):
        est.predict_interval(X[:3], 0.8, "cv+", cv=3, groups=np.arange(60) % 3)


# ------------------------------------------------------------- new points
def test_new_points_fast_path_matches_the_checked_route(rng):
    est, X, _ = fitted(rng)
    Xt = rng.standard_normal((6, 3))
    ref = est.predict_interval(Xt, 0.8, "cv+", cv=3)
    for variant in (Xt.tolist(), np.asfortranarray(Xt), Xt.copy()[::-1][::-1], Xt[:, [0, 1, 2]]):
        np.testing.assert_allclose(est.predict_interval(variant, 0.8, "cv+", cv=3), ref, rtol=1e-12)


@pytest.mark.parametrize("bad, match", [
    ("nan", "NaN"), ("inf", "infinity"), ("width", "features"), ("1d", "2D"), ("empty", "0 sample"),
])
def test_new_points_errors_are_scikit_learns(rng, bad, match):
    est, X, _ = fitted(rng)
    Xt = rng.standard_normal((4, 3))
    Xt = {"nan": np.where(np.eye(4, 3) > 0, np.nan, Xt), "inf": np.where(np.eye(4, 3) > 0, np.inf, Xt),
          "width": Xt[:, :2], "1d": Xt[0], "empty": Xt[:0]}[bad]
    for method in ("cv+", "jackknife+"):
        with pytest.raises(ValueError, match=match):
            est.predict_interval(Xt, 0.8, method)


def test_new_points_keep_the_feature_name_checks(rng):
    X = pd.DataFrame(rng.standard_normal((40, 2)), columns=["a", "b"])
    y = X["a"].to_numpy() + 0.1 * rng.standard_normal(40)
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=6, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="feature names"):
        est.predict_interval(X.to_numpy()[:3], 0.8, "cv+", cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict_interval(X.iloc[:3], 0.8, "cv+", cv=3)


# -------------------------------------------------------- basis holders
def test_keep_needs_no_basis_holders_and_other_modes_still_find_them(rng, monkeypatch):
    import lssvm.cv.engine as engine_module

    calls = []
    real = engine_module.basis_holders
    monkeypatch.setattr(engine_module, "basis_holders", lambda *a: calls.append(1) or real(*a))
    est, X, _ = fitted(rng)
    est.predict_interval(X[:3], 0.8, "cv+", cv=3, basis_in_holdout="keep")
    assert calls == []
    est.predict_interval(X[:3], 0.8, "cv+", cv=3, basis_in_holdout="remove")
    assert calls == [1]


# ------------------------------------------------------------ count table
def test_count_table_windows_contain_the_binary_search_windows(rng):
    # conservative cuts: never more values cut than the exact searches cut, at most a cell's worth fewer
    for _ in range(30):
        K = int(rng.integers(2, 9))
        sizes = rng.integers(1, 40, K)
        scores = np.abs(rng.standard_normal(sizes.sum()))
        if rng.random() < 0.5:
            scores = np.round(scores, 1)  # ties on and off the grid points
        offsets = np.r_[0, np.cumsum(sizes)]
        S = np.concatenate([np.sort(scores[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)])
        blocks = ShiftedBlocks(S, offsets)
        cell = float(rng.choice([0.01, 0.1, 0.5]))
        lo = float(rng.uniform(-1, 1))
        grid = CountGrid(blocks, lo, cell, int(rng.integers(1, 60)))
        t = 25
        mu = rng.standard_normal((t, K))
        L = rng.uniform(-1, 2, t)
        U = L + rng.uniform(0, 1, t)
        a, b = blocks.windows(mu, L, U)
        ga, gb = grid.windows(mu, L, U)
        assert (ga <= a).all() and (gb >= b).all()
        x = rng.uniform(grid.b[0], grid.b[-1], (t, K))
        about = grid.count_about(x)
        assert (blocks.count_below(x - cell) <= about).all() and (about <= blocks.count_below(x + cell)).all()


def test_windows_at_guessed_positions_do_the_work(rng, monkeypatch):
    # CV+-like values: the first try (windows around each block's guessed position, from the count table)
    # certifies almost every row; no full sort
    tries, full = [], []
    real_at, real_full = ShiftedBlocks.select_at, ShiftedBlocks.full_kth

    def select_at(self, mu, k, near):
        q, ok = real_at(self, mu, k, near)
        tries.append((mu.shape[0], ok.sum()))
        return q, ok

    monkeypatch.setattr(ShiftedBlocks, "select_at", select_at)
    monkeypatch.setattr(ShiftedBlocks, "full_kth", lambda self, mu, k: full.append(1) or real_full(self, mu, k))
    m, K, t = 2000, 10, 60
    scores = np.abs(0.3 * rng.standard_normal((m, 1)))
    folds = np.array_split(rng.permutation(m), K)
    values = rng.standard_normal((t, 1, 1)) + 0.02 * rng.standard_normal((t, K, 1))
    ranks = conformal_ranks(0.9, m)
    got = SortedFoldScores(scores, folds).bounds(values, ranks)
    rows, certified = tries[0]
    assert rows == 2 * t and certified >= 0.95 * rows and full == []
    fold_of = np.empty(m, dtype=np.intp)
    for k, H in enumerate(folds):
        fold_of[H] = k
    centres = values[:, fold_of]
    ref = np.stack([kth_smallest(centres - scores[None], ranks[0]), kth_smallest(centres + scores[None], ranks[1])], 1)
    np.testing.assert_array_equal(got, ref)


def test_select_at_is_exact_wherever_it_certifies(rng):
    # any guess, however poor: a certified row is the exact k-th smallest (ties, pads past the block ends)
    for _ in range(300):
        K = int(rng.integers(2, 6))
        sizes = rng.integers(1, 12, K)
        offsets = np.r_[0, np.cumsum(sizes)]
        S = np.concatenate([np.sort(np.round(rng.random(n) * 3, 1)) for n in sizes])
        blocks = ShiftedBlocks(S, offsets)
        mu = np.round(rng.standard_normal((4, K)), 1)
        allv = np.sort(np.concatenate([mu[:, [j]] + S[offsets[j]:offsets[j + 1]] for j in range(K)], axis=1), axis=1)
        for k in range(1, S.size + 1):
            near = rng.integers(-3, sizes.max() + 3, (4, K))
            q, ok = blocks.select_at(mu, k, near)
            np.testing.assert_array_equal(q[ok], allv[ok, k - 1])


def test_padded_windows_past_hi_cannot_fool_the_certificate(rng, monkeypatch):
    # windows read past hi (into larger values and the +inf padding); with tiny blocks and every rank the
    # result must stay the exact k-th smallest
    monkeypatch.setattr(select_module, "_MIN_FOLD_ROWS", 1)
    monkeypatch.setattr(select_module, "_MAX_WINDOW_SHARE", 1.0)
    for _ in range(200):
        K = int(rng.integers(2, 5))
        sizes = rng.integers(1, 6, K)
        S = np.concatenate([np.sort(np.round(rng.random(n) * 4, 1)) for n in sizes])
        blocks = ShiftedBlocks(S, np.r_[0, np.cumsum(sizes)])
        mu = np.round(rng.standard_normal((3, K)), 1)
        allv = np.sort(np.concatenate([mu[:, [j]] + S[a:b] for j, (a, b) in enumerate(
            zip(np.r_[0, np.cumsum(sizes)][:-1], np.cumsum(sizes), strict=True))], axis=1), axis=1)
        for k in range(1, S.size + 1):
            np.testing.assert_array_equal(select_module.kth_of_shifted_blocks(mu, blocks, k), allv[:, k - 1])


# ---------------------------------------------------------------- threads
def test_fold_threads_rule(monkeypatch):
    import lssvm.cv.fold_models as threads_module
    from lssvm._threads import ThreadPlan

    monkeypatch.setattr(threads_module, "current_plan", lambda n_jobs: ThreadPlan(1 if n_jobs == 1 else 4, 4))
    assert threads_module.fold_threads(None) == 1  # the default: serial
    assert threads_module.fold_threads(1) == 1
    assert threads_module.fold_threads(-1) == 2
    assert threads_module.fold_threads(3) == 2
    monkeypatch.setattr(threads_module, "in_parallel_region", lambda: True)
    assert threads_module.fold_threads(-1) == 1


def test_n_jobs_gives_the_fold_loop_two_threads(rng, monkeypatch):
    import lssvm.cv.conformal.cv_plus as conformal_module

    seen = []
    real = conformal_module.run_split
    monkeypatch.setattr(conformal_module, "run_split", lambda f, n, threads: seen.append(threads) or real(f, n, threads))
    X = rng.standard_normal((120, 3))
    y = np.sin(X[:, 0])
    Xt = rng.standard_normal((5, 3))
    out = {}
    for n_jobs in (None, 2):
        est = SparseLSSVR(gamma=0.3, alpha=0.1, basis="random", n_basis=8, random_state=0, n_jobs=n_jobs).fit(X, y)
        seen.clear()
        out[n_jobs] = est.predict_interval(Xt, 0.8, "cv+", cv=KFold(5, shuffle=True, random_state=0))
        assert seen and set(seen) == {1 if n_jobs is None else 2}  # n_jobs=2: two threads, as asked
    np.testing.assert_array_equal(out[None], out[2])


def test_run_split_runs_every_item_once_and_raises_after_both_halves():
    import threading

    from lssvm.cv.fold_models import run_split

    for n, threads in [(0, 2), (1, 2), (5, 1), (7, 2), (10, 2)]:
        seen = []
        run_split(lambda k: seen.append((k, threading.get_ident())), n, threads)
        assert sorted(k for k, _ in seen) == list(range(n))
        assert len({tid for _, tid in seen}) == (2 if threads == 2 and n >= 2 else min(n, 1))
    done = []

    def fails(k):
        done.append(k)
        if k in (0, 6):
            raise ValueError(f"fold {k}")

    with pytest.raises(ValueError, match="fold 0"):
        run_split(fails, 8, 2)
    assert sorted(done) == [0, 4, 5, 6]  # each half stops at its own failure; both have stopped


@pytest.mark.parametrize("mode", ["keep", "train", "remove"])
def test_two_threads_give_the_serial_intervals(rng, monkeypatch, mode):
    import lssvm.estimators._intervals as intervals_module

    est, X, _ = fitted(rng, m=120, n_basis=10)
    Xt = rng.standard_normal((7, 3))
    out = {}
    for threads in (1, 2):
        monkeypatch.setattr(intervals_module, "fold_threads", lambda n_jobs, threads=threads: threads)
        out[threads] = est.predict_interval(Xt, 0.8, "cv+", cv=KFold(6, shuffle=True, random_state=1),
                                            basis_in_holdout=mode)
    np.testing.assert_array_equal(out[1], out[2])


def test_rows_of_is_a_view_only_for_ascending_runs(rng):
    from lssvm.cv.fold_models import rows_of

    A = rng.standard_normal((12, 3))
    for rows in ([3, 4, 5], [7], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [5, 4, 3], [2, 4, 3], [1, 3], [4, 2, 3, 5]):
        rows = np.array(rows, dtype=np.intp)
        got = rows_of(A, rows)
        np.testing.assert_array_equal(got, A[rows])
        assert np.shares_memory(got, A) == (rows.size == 1 or bool((np.diff(rows) == 1).all()))


def test_contiguous_folds_as_views_equal_the_same_folds_shuffled_within(rng):
    # the same partition: ascending ranges (views of M) and each fold's rows reversed (copies)
    est, X, _ = fitted(rng, m=90, n_basis=9)
    Xt = rng.standard_normal((8, 3))
    folds = np.array_split(np.arange(90), 3)
    as_views = [(np.setdiff1d(np.arange(90), H), H) for H in folds]
    as_copies = [(np.setdiff1d(np.arange(90), H), H[::-1].copy()) for H in folds]
    for mode in ("keep", "train", "remove"):
        a = est.predict_interval(Xt, 0.8, "cv+", cv=as_views, basis_in_holdout=mode)
        b = est.predict_interval(Xt, 0.8, "cv+", cv=as_copies, basis_in_holdout=mode)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_cv_plus_with_int_cv_equals_brute_force(rng, mode):
    # the whole fast call (contiguous folds, row views, no holders for keep, the count table) against refits
    from test_intervals import brute_cv_plus

    m = 96
    X = rng.standard_normal((m, 3))
    Y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    Xt = rng.standard_normal((11, 3))
    est = SparseLSSVR(gamma=0.3, alpha=0.05, basis="random", n_basis=12, random_state=0).fit(X, Y)
    folds = np.array_split(np.arange(m), 5)
    for alpha in (0.05, 2.0):
        fast = est.predict_interval(Xt, 0.8, "cv+", alpha=alpha, cv=5, basis_in_holdout=mode)
        ref = brute_cv_plus(est, X, Y, Xt, folds, mode, alpha, 0.8)[:, :, 0]
        assert np.abs(fast - ref).max() / np.abs(ref).max() < 1e-8


def test_rows_off_the_count_table_are_searched_and_stay_exact(rng, monkeypatch):
    # a narrow table margin puts some rows' thresholds off the table: those rows take binary searches in the
    # same try, the others the table; every bound stays the exact order statistic
    monkeypatch.setattr(select_module, "_GRID_MARGIN", 1.0)
    # no row certified by the neighbours' first try: every row goes on to the thresholds' windows
    monkeypatch.setattr(ShiftedBlocks, "select_at", lambda self, mu, k, near: (
        np.full(mu.shape[0], np.nan), np.zeros(mu.shape[0], dtype=bool)))
    calls = []
    real = ShiftedBlocks.select

    def select(self, mu, k, L, U, cuts=None):
        calls.append((cuts is not None, mu.shape[0]))
        return real(self, mu, k, L, U, cuts)

    monkeypatch.setattr(ShiftedBlocks, "select", select)
    m, K, t = 600, 6, 80
    scores = np.abs(rng.standard_normal((m, 1)))
    folds = np.array_split(rng.permutation(m), K)
    values = rng.standard_normal((t, 1, 1)) + 0.05 * rng.standard_normal((t, K, 1))
    values[:5] += 0.5 * rng.standard_normal((5, K, 1))  # a few rows whose folds disagree
    ranks = conformal_ranks(0.9, m)
    got = SortedFoldScores(scores, folds).bounds(values, ranks)
    first = calls[:2]
    assert first[0][0] and not first[1][0] and first[0][1] + first[1][1] == 2 * t  # split between both routes
    fold_of = np.empty(m, dtype=np.intp)
    for k, H in enumerate(folds):
        fold_of[H] = k
    centres = values[:, fold_of]
    ref = np.stack([kth_smallest(centres - scores[None], ranks[0]), kth_smallest(centres + scores[None], ranks[1])], 1)
    np.testing.assert_array_equal(got, ref)


# ----------------------------------------------------------- equal folds
def _brute(est, X, Y, Xt, folds, alpha):
    from _reference import lstsq_solve

    Z = est.basis_vectors_
    oof = np.empty(X.shape[0])
    at = np.empty((Xt.shape[0], len(folds)))
    for k, H in enumerate(folds):
        train = np.setdiff1d(np.arange(X.shape[0]), H)
        a, b = lstsq_solve(est.kernel_(X[train], Z), est.kernel_(Z, Z), Y[train, None], alpha)
        oof[H] = (est.kernel_(X[H], Z) @ a + b)[:, 0]
        at[:, k] = (est.kernel_(Xt, Z) @ a + b)[:, 0]
    return oof, at


@pytest.mark.parametrize("shuffle", [False, True])
def test_equal_folds_in_one_pass_equal_brute_force_refits(rng, monkeypatch, shuffle):
    import lssvm.cv.conformal.cv_plus as conformal_module

    used = []
    real = conformal_module.equal_folds_fit
    monkeypatch.setattr(conformal_module, "equal_folds_fit", lambda *a: used.append(1) or real(*a))
    est, X, y = fitted(rng, m=100, n_basis=11)
    Xt = rng.standard_normal((9, 3))
    cv = KFold(5, shuffle=True, random_state=3) if shuffle else KFold(5)
    folds = [H for _, H in cv.split(X)]
    for alpha in (1e-3, 0.1, 10.0):
        oof, models = conformal_module.cv_plus_folds(est._holdout_engine(), folds, alpha, "keep")
        ref_oof, ref_at = _brute(est, X, y, Xt, folds, alpha)
        at = models(est.kernel_(Xt, est.basis_vectors_))[:, :, 0]
        assert np.abs(oof[:, 0] - ref_oof).max() / np.abs(ref_oof).max() < 1e-8
        assert np.abs(at - ref_at).max() / np.abs(ref_at).max() < 1e-8
    assert len(used) == 3


def test_equal_folds_a_failed_cholesky_is_refitted_fold_by_fold(rng, monkeypatch):
    import lssvm.cv.conformal.cv_plus as conformal_module
    import lssvm.cv.fold_models as batch_module

    est, X, y = fitted(rng, m=100, n_basis=11)
    Xt = rng.standard_normal((9, 3))
    folds = np.array_split(np.arange(100), 4)
    lapack, calls = batch_module.lapack, []

    class FailSecond:  # LAPACK, but the batch's second Cholesky reports failure
        def __getattr__(self, name):
            return getattr(lapack, name)

        def dpotrf(self, *a, **k):
            calls.append(1)
            L, info = lapack.dpotrf(*a, **k)
            return L, (1 if len(calls) == 2 else info)

    monkeypatch.setattr(batch_module, "lapack", FailSecond())
    per_fold = []
    real_fit = conformal_module.fold_fit
    monkeypatch.setattr(conformal_module, "fold_fit", lambda *a: per_fold.append(1) or real_fit(*a))
    oof, models = conformal_module.cv_plus_folds(est._holdout_engine(), folds, 0.1, "keep")
    # four Choleskys of the batch, then the failed fold once more by the guarded route
    assert len(calls) == 5 and len(per_fold) == 1
    ref_oof, ref_at = _brute(est, X, y, Xt, folds, 0.1)
    at = models(est.kernel_(Xt, est.basis_vectors_))[:, :, 0]
    assert np.abs(oof[:, 0] - ref_oof).max() / np.abs(ref_oof).max() < 1e-8
    assert np.abs(at - ref_at).max() / np.abs(ref_at).max() < 1e-8


def test_equal_folds_leave_ill_conditioned_problems_to_the_guarded_route():
    from lssvm.cv.fold_models import equal_folds_fit

    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-2, basis=np.arange(5)).fit(
        X, rng.normal(size=10))
    assert equal_folds_fit(est.factorization_, [np.arange(5), np.arange(5, 10)], 1e-2) is None


def test_single_threaded_blas_sets_and_restores_the_limits():
    from threadpoolctl import threadpool_info, threadpool_limits

    from lssvm._threads import single_threaded_blas

    def blas_threads():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        with single_threaded_blas():
            assert set(blas_threads()) == {1}
            with single_threaded_blas():
                assert set(blas_threads()) == {1}
            assert set(blas_threads()) == {1}  # the outer scope still holds the limit
        assert blas_threads() == before
        with pytest.raises(RuntimeError), single_threaded_blas():
            raise RuntimeError("inside")
        assert blas_threads() == before


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_run_split_in_a_forked_child_starts_its_own_worker():
    import os

    from lssvm.cv.fold_models import run_split

    run_split(lambda k: None, 4, 2)  # the parent's worker exists now
    pid = os.fork()
    if pid == 0:  # child: must not wait forever on the parent's (absent) worker thread
        try:
            seen = []
            run_split(seen.append, 6, 2)
            os._exit(0 if sorted(seen) == list(range(6)) else 1)
        except BaseException:
            os._exit(2)
    deadline = __import__("time").monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if __import__("time").monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the parent's worker thread")
        __import__("time").sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0


def test_equal_folds_gather_a_shuffled_partition_only_while_small(rng, monkeypatch):
    import lssvm.cv.fold_models as batch_module

    est, X, y = fitted(rng, m=100, n_basis=11)
    fac = est.factorization_
    shuffled = np.array_split(rng.permutation(100), 4)
    assert batch_module.equal_folds_fit(fac, shuffled, 0.1) is not None
    monkeypatch.setattr(batch_module, "_MAX_GATHER", fac.M.size - 1)
    assert batch_module.equal_folds_fit(fac, shuffled, 0.1) is None
    assert batch_module.equal_folds_fit(fac, np.array_split(np.arange(100), 4), 0.1) is not None  # views


def test_bounds_of_no_points_are_empty(rng):
    m = 200
    sfs = SortedFoldScores(np.abs(rng.standard_normal((m, 2))), np.array_split(rng.permutation(m), 5))
    for ranks in [conformal_ranks(0.9, m), (0, m + 1), (3, 150)]:
        assert sfs.bounds(np.zeros((0, 5, 2)), ranks).shape == (0, 2, 2)


def test_a_warning_from_the_worker_thread_reaches_the_caller():
    from lssvm import NumericalWarning
    from lssvm.cv.conformal import cv_plus_folds

    rng = np.random.default_rng(37)
    X = rng.normal(size=(10, 2)) * 3
    est = SparseLSSVR(kernel="poly", gamma=100.0, degree=4, coef0=1.0, alpha=1e-6, basis=np.arange(5)).fit(
        X, rng.normal(size=10))
    folds = [np.array([2, 3, 4, 9]), np.array([0, 1, 5, 6, 7, 8])]  # the unresolvable fold runs on the worker
    with pytest.warns(NumericalWarning, match="estimated relative error"):
        cv_plus_folds(est._holdout_engine(), folds, 1e-5, "keep", threads=2)
