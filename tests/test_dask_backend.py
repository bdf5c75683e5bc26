"""The Dask backend against the in-memory path.

Every result computed block by block (training, predictions, exact LOO,
k-fold / grouped / hold-out CV in all three basis treatments, model
selection) must equal the NumPy path on the same rows, basis and folds.
Tolerance 1e-10 relative: both paths solve the same problem exactly; they
differ only in rounding (the moments are merged block by block instead of
one SYRK), which on these well-conditioned problems (cond(K_BB) < 1e6,
alpha >= 1e-2) stays near 1e-13; a wrong formula is off by 1e-3 or more.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut

from conftest import rel_err

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from lssvm import SparseLSSVC, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV  # noqa: E402
from lssvm.backends.dask import as_row_data, basis_context, draw_basis  # noqa: E402
from lssvm.kernels import make_kernel  # noqa: E402
from lssvm.solvers.row_blocks import RowMoments, block_moments  # noqa: E402

TOL = 1e-10
ALPHAS = np.array([0.01, 0.3, 5.0])


def _problem(rng, m=1500, d=3, n=40, v=1):
    X = rng.normal(size=(m, d))
    Y = np.column_stack([np.sin(X @ rng.normal(size=d)) for _ in range(v)]) + 0.1 * rng.normal(size=(m, v))
    basis = np.sort(rng.choice(m, n, replace=False))
    groups = rng.integers(0, 9, m)
    return X, (Y[:, 0] if v == 1 else Y), basis, groups


def _chunks(rng, m):
    # uneven chunks, so that folds straddle chunk boundaries
    cuts = np.sort(rng.choice(np.arange(50, m - 50), 4, replace=False))
    return (tuple(np.diff(np.concatenate([[0], cuts, [m]])).tolist()),)


def _dask(rng, a, m):
    c = _chunks(rng, m)
    return da.from_array(a, chunks=c if a.ndim == 1 else (c[0], a.shape[1]))


@pytest.fixture(params=["threads", "distributed"])
def sched(request):
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield request.param
    else:
        import distributed

        with distributed.Client(request.getfixturevalue("cluster")):  # started only where a test needs it
            yield request.param


#: The threaded scheduler runs the same task graph as the two-process cluster, which adds the pickling of
#: every task and chunk: each test below runs on the cluster for one of its cases (long runs: five to eight
#: times the threaded one), and for the others only with --runslow.
def _on_cluster_slow(*values):
    return pytest.param("distributed", *values, marks=pytest.mark.slow)


# ------------------------------------------------------------ regression
@pytest.mark.parametrize("sched, v", [("threads", 1), ("threads", 2), _on_cluster_slow(1), ("distributed", 2)],
                         indirect=["sched"])
def test_fit_predict_loo_equal_numpy(rng, sched, v):
    X, y, basis, _ = _problem(rng, v=v)
    m = X.shape[0]
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(_dask(rng, X, m), _dask(rng, y, m))
    assert est.n_features_in_ == 3 and est.n_basis_ == basis.size
    assert rel_err(est.dual_coef_, ref.dual_coef_) < TOL
    assert rel_err(est.intercept_, ref.intercept_) < TOL
    pred = est.predict(_dask(rng, X, m))
    assert isinstance(pred, da.Array)
    assert rel_err(pred.compute(), ref.predict(X)) < TOL
    assert rel_err(est.predict(X[:7]), ref.predict(X[:7])) < TOL  # NumPy in, NumPy out
    loo = est.loo_residuals(ALPHAS)
    assert isinstance(loo, da.Array) and loo.shape == ref.loo_residuals(ALPHAS).shape
    assert rel_err(loo.compute(), ref.loo_residuals(ALPHAS)) < TOL
    assert rel_err(est.loo_predict().compute(), ref.loo_predict()) < TOL
    assert rel_err(est.press(ALPHAS), ref.press(ALPHAS)) < TOL


@pytest.mark.parametrize("sched, mode", [("threads", "remove"), ("threads", "keep"), ("threads", "train"),
                                         ("distributed", "remove"), _on_cluster_slow("keep"), _on_cluster_slow("train")],
                         indirect=["sched"])
def test_kfold_and_holdout_equal_numpy(rng, sched, mode):
    X, y, basis, groups = _problem(rng)
    m = X.shape[0]
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(_dask(rng, X, m), _dask(rng, y, m))
    for cv in (7, KFold(4)):
        F = est.cv_predict(cv, ALPHAS, basis_in_holdout=mode)
        assert isinstance(F, da.Array)
        assert rel_err(F.compute(), ref.cv_predict(cv, ALPHAS, basis_in_holdout=mode)) < TOL
    assert rel_err(est.cv_error(5, ALPHAS, basis_in_holdout=mode), ref.cv_error(5, ALPHAS, basis_in_holdout=mode)) < TOL
    test = rng.choice(m, 37, replace=False)
    test[0] = basis[3]  # a basis point in the hold-out set
    got = est.holdout_predict(test, ALPHAS, basis_in_holdout=mode).compute()
    assert rel_err(got, ref.holdout_predict(test, ALPHAS, basis_in_holdout=mode)) < TOL


def test_grouped_and_explicit_folds_equal_numpy(rng, sched):
    X, y, basis, groups = _problem(rng)
    m = X.shape[0]
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(_dask(rng, X, m), _dask(rng, y, m))
    gd = _dask(rng, groups, m)  # chunks differ from X's: the backend realigns them
    for cv in (GroupKFold(4), LeaveOneGroupOut()):
        got = est.cv_predict(cv, ALPHAS, groups=gd).compute()
        assert rel_err(got, ref.cv_predict(cv, ALPHAS, groups=groups)) < TOL
    shuffled = KFold(5, shuffle=True, random_state=3)
    assert rel_err(est.cv_predict(shuffled, ALPHAS).compute(), ref.cv_predict(shuffled, ALPHAS)) < TOL
    pairs = list(KFold(3, shuffle=True, random_state=1).split(X))
    assert rel_err(est.cv_error(pairs, ALPHAS), ref.cv_error(pairs, ALPHAS)) < TOL


# -------------------------------------------------------- classification
@pytest.mark.parametrize("sched, n_classes", [("threads", 2), ("threads", 3), _on_cluster_slow(2), ("distributed", 3)],
                         indirect=["sched"])
def test_classifier_equal_numpy(rng, sched, n_classes):
    X, _, basis, _ = _problem(rng)
    m = X.shape[0]
    labels = np.array(["ant", "bee", "cat"])[: n_classes]
    y = labels[(X[:, 0] > 0).astype(int) + (n_classes == 3) * (X[:, 1] > 0.8)]
    ref = SparseLSSVC(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVC(gamma=0.4, alpha=0.3, basis=basis).fit(_dask(rng, X, m), _dask(rng, y, m))
    assert list(est.classes_) == list(ref.classes_)
    assert np.array_equal(est.predict(_dask(rng, X, m)).compute(), ref.predict(X))
    assert rel_err(est.decision_function(_dask(rng, X, m)).compute(), ref.decision_function(X)) < TOL
    assert np.allclose(est.loo_error_rate(ALPHAS), ref.loo_error_rate(ALPHAS), rtol=0, atol=0)
    assert rel_err(est.loo_decision_function(ALPHAS).compute(), ref.loo_decision_function(ALPHAS)) < TOL
    kf = KFold(5)  # an int stratifies in memory, not on Dask (documented): compare on KFold
    assert rel_err(est.cv_decision_function(kf, ALPHAS).compute(), ref.cv_decision_function(kf, ALPHAS)) < TOL
    assert np.array_equal(est.cv_error(kf, ALPHAS), ref.cv_error(kf, ALPHAS))
    assert rel_err(est.cv_error(kf, ALPHAS, scoring="press"), ref.cv_error(kf, ALPHAS, scoring="press")) < TOL


# ------------------------------------------------------- model selection
@pytest.mark.parametrize("cv", ["loo", 5])
def test_search_equal_numpy(rng, cv):
    X, y, basis, _ = _problem(rng, m=1200)
    m = X.shape[0]
    space = {"gamma": [0.2, 0.5, 1.0]}
    # an int is contiguous KFold on Dask but a shuffled partition in the in-memory
    # search (documented): the reference gets the same folds explicitly
    ref = SparseLSSVRCV(basis=basis, cv=cv if cv == "loo" else KFold(cv), param_space=space).fit(X, y)
    est = SparseLSSVRCV(basis=basis, cv=cv, param_space=space).fit(_dask(rng, X, m), _dask(rng, y, m))
    assert est.best_params_ == ref.best_params_
    assert rel_err(est.cv_results_["mean_test_mse"], ref.cv_results_["mean_test_mse"]) < TOL
    assert np.array_equal(est.best_estimator_.basis_indices_, basis)
    assert rel_err(est.predict(X), ref.predict(X)) < TOL


def test_classifier_search_equal_numpy(rng):
    X, _, basis, _ = _problem(rng, m=1000)
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, 2)
    space = {"gamma": [0.3, 1.0]}
    ref = SparseLSSVCCV(basis=basis, cv="loo", param_space=space).fit(X, y)
    est = SparseLSSVCCV(basis=basis, cv="loo", param_space=space).fit(da.from_array(X, chunks=300),
                                                                      da.from_array(y, chunks=300))
    assert np.array_equal(est.cv_results_["mean_test_error_rate"], ref.cv_results_["mean_test_error_rate"])
    assert est.best_params_ == ref.best_params_
    assert list(est.classes_) == [1, 2]


def test_random_basis_search_is_reproducible(rng):
    X, y, _, _ = _problem(rng, m=800)
    Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    kw = dict(basis="random", n_basis=30, param_space={"gamma": [0.5]}, random_state=4)
    a = SparseLSSVRCV(**kw).fit(Xd, yd)
    b = SparseLSSVRCV(**kw).fit(Xd, yd)
    assert np.array_equal(a.best_estimator_.basis_indices_, b.best_estimator_.basis_indices_)
    assert np.array_equal(a.cv_results_["mean_test_mse"], b.cv_results_["mean_test_mse"])
    ref = SparseLSSVRCV(**{**kw, "basis": a.best_estimator_.basis_indices_}).fit(X, y)
    assert rel_err(a.cv_results_["mean_test_mse"], ref.cv_results_["mean_test_mse"]) < TOL


# ------------------------------------------------------------- inputs
def test_dask_dataframe_input(rng):
    import pandas as pd

    X, y, basis, _ = _problem(rng, m=600)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(t=y)
    ddf = dd.from_pandas(df, npartitions=3)
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(ddf[["a", "b", "c"]], ddf["t"])
    assert rel_err(est.loo_residuals().compute(), ref.loo_residuals()) < TOL
    with pytest.raises(TypeError, match="non-numeric column"):
        SparseLSSVR(basis=basis).fit(ddf.assign(s="x")[["a", "s"]], ddf["t"])


def test_bad_dask_input_is_refused(rng):
    X, y, basis, _ = _problem(rng, m=400)
    Xd, yd = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    with pytest.raises(ValueError, match="needs all rows in memory"):
        SparseLSSVR(basis="fvs").fit(Xd, yd)  # the default "pchol" is drawn among a row sample
    with pytest.raises(ValueError, match="400 rows"):
        SparseLSSVR(basis=basis).fit(Xd, yd[:300])
    Xn = X.copy()
    Xn[250, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity.*row 250"):
        SparseLSSVR(basis=basis[:5]).fit(da.from_array(Xn, chunks=100), yd)
    with pytest.raises(ValueError, match="1 class"):
        SparseLSSVC(basis=basis).fit(Xd, da.zeros(400, chunks=100))
    with pytest.raises(ValueError, match="kcenter.*needs all rows in memory"):  # the default pchol pool runs on Dask
        from lssvm import FixedSizeLSSVRCV

        FixedSizeLSSVRCV(basis="kcenter").fit(Xd, yd)
    est = SparseLSSVR(basis=basis[:4]).fit(Xd, yd)
    with pytest.raises(ValueError, match="holds every basis vector"):
        folds = [(np.setdiff1d(np.arange(400), t), t) for t in (basis[:4], np.setdiff1d(np.arange(400), basis[:4]))]
        est.cv_predict(folds)
    with pytest.raises(ValueError, match="features"):
        est.predict(da.from_array(X[:, :2], chunks=100))


def test_numpy_path_does_not_import_dask(tmp_path):
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from lssvm import SparseLSSVR
        X = np.random.default_rng(0).normal(size=(50, 2))
        SparseLSSVR(basis="random", n_basis=10).fit(X, X[:, 0]).cv_error(5)
        assert "dask" not in sys.modules, "dask was imported"
    """)
    # the child imports lssvm from where this process did (a relative PYTHONPATH=src would not resolve in tmp_path)
    import lssvm

    src = str(pathlib.Path(lssvm.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=env)


# ----------------------------------------------------- moments algebra
@settings(max_examples=30, deadline=None)
@given(st.integers(2, 60), st.lists(st.integers(1, 25), min_size=1, max_size=6), st.integers(1, 3))
def test_moment_merges_equal_one_pass(seed, sizes, v):
    """Block moments merged in any split equal the moments of all rows, and
    the centred Gram matrix equals the in-memory one."""
    rng = np.random.default_rng(seed)
    m = sum(sizes)
    X = rng.normal(size=(m, 2))
    Y = rng.normal(size=(m, v)) * 10 + 100  # far from zero: centring matters
    Z = rng.normal(size=(5, 2))
    ctx = basis_context(Z, make_kernel("rbf", gamma=0.5), 1e-10, None, 2)
    parts = np.split(np.arange(m), np.cumsum(sizes)[:-1])
    merged = None
    for p in parts:
        mom = block_moments(X[p], Y[p], None, int(p[0]), ctx)[0]
        merged = mom if merged is None else merged + mom
    whole = block_moments(X, Y, None, 0, ctx)[0]
    K = ctx.kernel(X, Z)
    Kc = K - K.mean(axis=0)
    psi_c = np.linalg.solve(ctx.whitener, Kc.T).T  # Kc L^-T
    assert merged.count == m
    assert np.allclose(merged.psi_cov, psi_c.T @ psi_c, rtol=1e-10, atol=1e-10 * np.abs(psi_c.T @ psi_c).max())
    assert np.allclose(merged.psi_y, psi_c.T @ (Y - Y.mean(0)), rtol=1e-9, atol=1e-9 * max(1, np.abs(psi_c).max()))
    for name in ("psi_mean", "k_mean", "y_mean", "psi_cov", "psi_y"):
        assert np.allclose(getattr(merged, name), getattr(whole, name), rtol=1e-10, atol=1e-8)
    assert (RowMoments.empty(5, 5, v) + merged).count == m


def test_as_row_data_aligns_chunks(rng):
    X = da.from_array(rng.normal(size=(100, 2)), chunks=(30, 1))
    y = da.from_array(rng.normal(size=100), chunks=45)
    data = as_row_data(X, y)
    assert data.X.chunks[1] == (2,) and data.y.chunks[0] == data.X.chunks[0]
    assert data.offsets.tolist() == [0, 30, 60, 90, 100]


def test_ill_conditioned_basis_against_high_precision(rng):
    """cond(K_BB) ~ 1e8, alpha = 1e-4: the block path (explicit L^-T products,
    merged moments) keeps LOO residuals and predictions within 1e-9 of a
    30-digit reference, as the in-memory path does (test_solver)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    X = np.sort(rng.uniform(0, 1, (40, 1)), axis=0)
    y = np.sin(6 * X[:, 0]) * 50 + 20 * rng.standard_normal(40)
    Z = np.linspace(0, 1, 14)[:, None]
    alpha = 1e-4
    kern = make_kernel("rbf", gamma=13.1)
    K_mn, K_BB = kern(X, Z), kern(Z, Z)
    assert np.linalg.cond(K_BB) > 1e6
    Phi = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] + [1] for row in K_mn])
    A = Phi.T * Phi
    for i in range(Z.shape[0]):
        for j in range(Z.shape[0]):
            A[i, j] += alpha * mpmath.mpf(float(K_BB[i, j]))
    Y = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
    res = Y - Phi * mpmath.lu_solve(A, Phi.T * Y)
    Ainv = mpmath.inverse(A)
    ref_loo = np.array([float(res[i] / (1 - (Phi[i, :] * Ainv * Phi[i, :].T)[0])) for i in range(40)])
    ref_fit = y - np.array([float(v) for v in res])
    est = SparseLSSVR(gamma=13.1, alpha=alpha, basis=Z).fit(da.from_array(X, chunks=13), da.from_array(y, chunks=13))
    assert rel_err(est.loo_residuals().compute(), ref_loo) < 1e-9
    assert rel_err(est.predict(X), ref_fit) < 1e-9


# ---------------------------------------------------------------- edge cases
@pytest.mark.filterwarnings("ignore::lssvm.exceptions.NumericalWarning")
def test_singular_basis_removal_refits_folds_like_numpy(rng):
    """Singular K_BB (rank 9 of 40): folds that remove basis points are
    refitted on their remaining basis, as in memory; hold-out too."""
    X = rng.uniform(-1, 1, (600, 1))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(600)
    basis = np.sort(rng.choice(600, 40, replace=False))
    ref = SparseLSSVR(gamma=0.5, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.5, alpha=0.3, basis=basis).fit(da.from_array(X, chunks=150), da.from_array(y, chunks=150))
    assert est.rank_ < basis.size
    for k in (5, 20):
        assert rel_err(est.cv_predict(k, ALPHAS).compute(), ref.cv_predict(k, ALPHAS)) < TOL
    assert rel_err(est.holdout_predict(basis[:5], ALPHAS).compute(), ref.holdout_predict(basis[:5], ALPHAS)) < TOL
    # the search over the default widths (wide kernels make K_BB singular) runs through
    Xd, yd = da.from_array(X, chunks=150), da.from_array(y, chunks=150)
    search = SparseLSSVRCV(basis="random", n_basis=60, cv=5, random_state=0).fit(Xd, yd)
    drawn = draw_basis(as_row_data(Xd, yd), "random", 60, 0)[1]  # the rows the search drew, before the
    ref = SparseLSSVRCV(basis=drawn, cv=KFold(5)).fit(X, y)  # near-duplicates of each width are dropped
    # The wide kernels keep rank 4 of 59: there the block path removes within the full basis' range and
    # the in-memory engine within each fold's own (docs/notes.md); they agree to ~1e-6.
    assert rel_err(search.cv_results_["mean_test_mse"], ref.cv_results_["mean_test_mse"]) < 1e-5


def test_train_mode_fold_of_basis_rows_only(rng):
    """With basis_in_holdout="train" a fold made only of basis rows is never
    held out: its rows are predicted by the model of all rows, as in memory."""
    X, y, basis, _ = _problem(rng, m=500)
    b = basis[:3]
    folds = [(np.setdiff1d(np.arange(500), t), t) for t in (b, np.setdiff1d(np.arange(500), b))]
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=b).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=b).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    got = est.cv_predict(folds, ALPHAS, basis_in_holdout="train").compute()
    assert np.all(np.isfinite(got))
    assert rel_err(got, ref.cv_predict(folds, ALPHAS, basis_in_holdout="train")) < TOL
    assert rel_err(est.cv_error(folds, ALPHAS, basis_in_holdout="train"),
                   ref.cv_error(folds, ALPHAS, basis_in_holdout="train")) < TOL
    got = est.holdout_predict(b, ALPHAS, basis_in_holdout="train").compute()
    assert rel_err(got, ref.holdout_predict(b, ALPHAS, basis_in_holdout="train")) < TOL


def test_search_with_basis_points_refits(rng):
    X, y, basis, _ = _problem(rng, m=600)
    Z = X[basis] + 0.01  # points that are not training rows (the in-memory search takes rows only)
    space = {"gamma": [0.3, 1.0]}
    alphas = np.array([0.01, 1.0])
    est = SparseLSSVRCV(basis=Z, cv="loo", param_space=space, alphas=alphas).fit(da.from_array(X, chunks=200),
                                                                                  da.from_array(y, chunks=200))
    mse = [SparseLSSVR(gamma=g, basis=Z).fit(X, y).press(alphas) / 600 for g in space["gamma"]]
    assert rel_err(est.cv_results_["mean_test_mse"], np.concatenate(mse)) < TOL
    best = SparseLSSVR(gamma=est.gamma_, alpha=est.alpha_, basis=Z).fit(X, y)
    assert np.array_equal(est.best_estimator_.basis_vectors_, Z)
    assert rel_err(est.predict(X), best.predict(X)) < TOL
    with pytest.raises(ValueError, match="basis_in_holdout"):
        SparseLSSVRCV(basis=Z, basis_in_holdout="bogus", param_space=space).fit(da.from_array(X, chunks=200),
                                                                                da.from_array(y, chunks=200))


def test_string_and_categorical_labels_and_groups(rng):
    import pandas as pd

    X, _, basis, groups = _problem(rng, m=600)
    labels = np.where(X[:, 0] > 0, "up", "down")
    sites = np.array([f"site {g}" for g in groups])
    ref = SparseLSSVC(gamma=0.4, alpha=0.3, basis=basis).fit(X, labels)
    want = ref.cv_error(LeaveOneGroupOut(), ALPHAS, groups=sites)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": labels, "site": sites})
    ddf = dd.from_pandas(frame, npartitions=3)
    for lab, grp in ((ddf["label"], ddf["site"]), (ddf["label"].astype("category"), frame["site"]),
                     (frame["label"].to_numpy(dtype=object), sites)):
        est = SparseLSSVC(gamma=0.4, alpha=0.3, basis=basis).fit(ddf[["a", "b", "c"]], lab)
        assert list(est.classes_) == ["down", "up"]
        assert np.array_equal(est.cv_error(LeaveOneGroupOut(), ALPHAS, groups=grp), want)
    unnamed = dd.from_pandas(pd.Series(X[:, 0] * 2), npartitions=2)
    est = SparseLSSVR(gamma=0.4, basis=basis).fit(dd.from_pandas(frame[["a", "b", "c"]], npartitions=2), unnamed)
    assert rel_err(est.press(), SparseLSSVR(gamma=0.4, basis=basis).fit(X, X[:, 0] * 2).press()) < TOL


def test_empty_chunks_and_tiny_inputs(rng):
    X, y, basis, _ = _problem(rng, m=300)
    Xd = da.from_array(X, chunks=((100, 0, 200), 3))
    yd = da.from_array(y, chunks=((100, 0, 200),))
    ref = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(X, y)
    est = SparseLSSVR(gamma=0.4, alpha=0.3, basis=basis).fit(Xd, yd)
    assert rel_err(est.press(ALPHAS), ref.press(ALPHAS)) < TOL
    assert rel_err(est.cv_error(3, ALPHAS), ref.cv_error(3, ALPHAS)) < TOL
    assert rel_err(est.predict(Xd).compute(), ref.predict(X)) < TOL
    assert rel_err(est.predict(da.from_array(X[:1])).compute(), ref.predict(X[:1])) < TOL
    small = SparseLSSVR(basis="random").fit(da.from_array(X[:150], chunks=50), da.from_array(y[:150], chunks=50))
    assert small.n_basis_ == 150  # default min(200, rows), as in memory
