"""Fixed-size and Nyström models on Dask against the in-memory path.

Everything computed block by block (fit, predictions, the fixed-size v-fold
curves by downdates, Nyström exact LOO and k-fold CV, the ``*CV`` searches)
must equal the NumPy path on the same rows, columns / prototypes and
folds.  Tolerance 1e-10 relative: both paths solve the same problems; they
differ in rounding only (sums merged block by block; the Nyström model
solved from the moments of its features instead of their QR; a fold's
fixed-size validation SSE formed from its sums instead of its residuals),
which on these well-conditioned problems (alpha >= 0.01, 20-40 prototypes
or columns) stays below 1e-12; a wrong formula or a different row is off
by 1e-4 or more.
"""

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

from conftest import rel_err

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from lssvm import (  # noqa: E402
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVC,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
)
from lssvm.backends.dask import as_row_data  # noqa: E402
from lssvm.backends.dask.fixed_size import RENYI_POOL_FACTOR, prototype_pool  # noqa: E402
from lssvm.basis import random_basis, renyi_entropy_selection  # noqa: E402
from lssvm.kernels import make_kernel  # noqa: E402
from lssvm.solvers.fixed_size import GramSums, augmented_rows  # noqa: E402

TOL = 1e-10
ALPHAS = np.array([0.01, 0.3, 5.0])


def _problem(rng, m=900, d=3, v=1):
    X = rng.normal(size=(m, d))
    Y = np.column_stack([np.sin(X @ rng.normal(size=d)) for _ in range(v)]) + 0.1 * rng.normal(size=(m, v))
    return X, (Y[:, 0] if v == 1 else Y), rng.integers(0, 7, m)


def _dask(rng, a):
    m = a.shape[0]
    cuts = np.sort(rng.choice(np.arange(50, m - 50), 3, replace=False))  # uneven: folds straddle chunks
    c = tuple(np.diff(np.concatenate([[0], cuts, [m]])).tolist())
    return da.from_array(a, chunks=(c,) if a.ndim == 1 else (c, a.shape[1]))


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


# ------------------------------------------------------------- fixed size
@pytest.mark.parametrize("solver", ["scdp", "direct"])
@pytest.mark.parametrize("v", [1, 2])
def test_fixed_size_regression_equals_numpy(rng, solver, v):
    X, y, groups = _problem(rng, v=v)
    Xd, yd = _dask(rng, X), _dask(rng, y)
    for cv, g in [(4, None), (GroupKFold(3), groups), (None, None)]:
        kw = dict(gamma=1.0, alpha=0.3, basis="random", n_basis=25, solver=solver, cv=cv, random_state=5)
        a = FixedSizeLSSVR(**kw).fit(X, y, groups=g)
        b = FixedSizeLSSVR(**kw).fit(Xd, yd, groups=None if g is None else da.from_array(g, chunks=300))
        assert np.array_equal(a.basis_indices_, b.basis_indices_)
        assert np.array_equal(a.support_, b.support_) and np.all(a.model_size_ == b.model_size_)
        assert rel_err(b.coef_full_, a.coef_full_) < TOL
        if cv is not None:
            assert rel_err(b.cv_score_, a.cv_score_) < TOL
            if solver == "scdp":
                assert rel_err(b.cv_curve_, a.cv_curve_) < TOL and rel_err(b.cv_curve_std_, a.cv_curve_std_) < TOL
        pred = b.predict(Xd)
        assert isinstance(pred, da.Array)  # lazy
        assert rel_err(pred.compute(), a.predict(X)) < TOL
        assert rel_err(b.predict(X), a.predict(X)) < TOL  # a Dask-fitted model predicts NumPy rows too


@pytest.mark.parametrize("n_classes", [2, 3])
def test_fixed_size_classifier_integer_cv_is_stratified(rng, n_classes):
    X, y, _ = _problem(rng)
    labels = np.array(["a", "b", "c"])[np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    kw = dict(gamma=1.0, alpha=0.3, basis="random", n_basis=25, random_state=2)
    # an int cv is unshuffled StratifiedKFold in memory and on Dask (one fold rule)
    a = FixedSizeLSSVC(**kw, cv=4).fit(X, labels)
    assert rel_err(FixedSizeLSSVC(**kw, cv=StratifiedKFold(4)).fit(X, labels).coef_full_, a.coef_full_) == 0
    b = FixedSizeLSSVC(**kw, cv=4).fit(_dask(rng, X), da.from_array(labels.astype(object), chunks=250))
    assert np.array_equal(a.classes_, b.classes_) and np.array_equal(a.support_, b.support_)
    assert rel_err(b.coef_full_, a.coef_full_) < TOL and rel_err(b.cv_score_, a.cv_score_) < TOL
    assert np.array_equal(b.predict(_dask(rng, X)).compute(), a.predict(X))
    assert rel_err(b.decision_function(X), a.decision_function(X)) < TOL


def test_gram_sums_give_the_validation_error_and_the_downdate(rng):
    K, Y = rng.normal(size=(60, 7)), rng.normal(size=(60, 2))
    test = rng.choice(60, 15, replace=False)
    rest = np.setdiff1d(np.arange(60), test)
    total, fold = GramSums.of_rows(K, Y), GramSums.of_rows(K[test], Y[test])
    # merged in pieces == at once; total minus a fold == the other rows
    pieces = GramSums.of_rows(K[:20], Y[:20]) + GramSums.of_rows(K[20:], Y[20:])
    assert rel_err(pieces.gram, total.gram) < 1e-13 and rel_err(pieces.rhs, total.rhs) < 1e-13
    other = GramSums.of_rows(K[rest], Y[rest])
    assert rel_err((total - fold).gram, other.gram) < 1e-12 and (total - fold).n_samples == rest.size
    sel = np.array([3, 0, 7, 5])  # 7: the intercept
    w = rng.normal(size=sel.size)
    direct = np.sum((Y[test, 1] - augmented_rows(K[test])[:, sel] @ w) ** 2)
    assert abs(fold.sse(w, sel, 1) - direct) < 1e-11 * direct


def test_renyi_pool_on_dask_is_drawn_by_the_random_rule(rng):
    X, y, _ = _problem(rng, m=700)
    kern = make_kernel("rbf", gamma=1.0)
    Z, idx = prototype_pool(as_row_data(_dask(rng, X), _dask(rng, y)), kern, "renyi", 12, np.random.RandomState(4))
    r = np.random.RandomState(4)
    pool = random_basis(X, min(700, RENYI_POOL_FACTOR * 12), r)
    expect = pool[renyi_entropy_selection(X[pool], 12, kern, random_state=r).indices]
    assert np.array_equal(np.sort(idx), np.sort(expect)) and np.array_equal(Z, X[idx])


# ---------------------------------------------------------------- Nyström
@pytest.mark.parametrize("v", [1, 2])
def test_nystrom_regression_equals_numpy(rng, v):
    X, y, groups = _problem(rng, v=v)
    Xd, yd = _dask(rng, X), _dask(rng, y)
    kw = dict(gamma=0.5, alpha=0.1, n_basis=40, rank=30, random_state=3)
    a, b = NystromLSSVR(**kw).fit(X, y), NystromLSSVR(**kw).fit(Xd, yd)
    assert np.array_equal(a.basis_indices_, b.basis_indices_) and a.rank_ == b.rank_
    assert rel_err(b.predict(Xd).compute(), a.predict(X)) < TOL
    assert rel_err(b.dual_coef_.compute(), a.dual_coef_) < TOL and rel_err(b.intercept_, a.intercept_) < TOL
    assert rel_err(b.loo_residuals(ALPHAS).compute(), a.loo_residuals(ALPHAS)) < TOL
    # leave-one-out on Dask: the closed form, the basis kept
    assert rel_err(b.cv_error("loo", ALPHAS, basis_in_holdout="keep"),
                   a.cv_error("loo", ALPHAS, basis_in_holdout="keep")) < TOL
    # an int cv is unshuffled KFold: contiguous row ranges on Dask
    assert rel_err(b.cv_predict(5, ALPHAS).compute(), a.cv_predict(5, ALPHAS)) < TOL
    assert rel_err(b.cv_error(5, ALPHAS), a.cv_error(5, ALPHAS)) < TOL
    g = GroupKFold(3)
    assert rel_err(b.cv_error(g, ALPHAS, groups=groups), a.cv_error(g, ALPHAS, groups=groups)) < TOL


def test_nystrom_classifier_and_dataframe_input(rng):
    X, y, _ = _problem(rng)
    labels = np.where(y > 0, "up", "down")
    frame = dd.from_pandas(__import__("pandas").DataFrame(X, columns=list("abc")), npartitions=3)
    kw = dict(gamma=0.5, alpha=0.1, n_basis=40, random_state=8)
    a = NystromLSSVC(**kw).fit(X, labels)
    b = NystromLSSVC(**kw).fit(frame, da.from_array(labels.astype(object), chunks=300))
    assert np.array_equal(b.predict(frame).compute(), a.predict(X))
    assert rel_err(b.decision_function(X), a.decision_function(X)) < TOL
    for cv in ("loo", 4):  # 4: StratifiedKFold(4) in memory and on Dask
        mode = "keep" if cv == "loo" else "remove"  # leave-one-out on Dask: the closed form, the basis kept
        assert np.array_equal(b.cv_error(cv, ALPHAS, basis_in_holdout=mode),
                              a.cv_error(cv, ALPHAS, basis_in_holdout=mode))  # the error rate, the default
        assert rel_err(b.cv_error(cv, ALPHAS, "mse", basis_in_holdout=mode),
                       a.cv_error(cv, ALPHAS, "mse", basis_in_holdout=mode)) < TOL


# --------------------------------------------------------------- searches
@pytest.mark.parametrize("cls, kw, task", [
    (NystromLSSVRCV, dict(cv="loo", n_basis=40), "reg"),
    (NystromLSSVCCV, dict(cv=StratifiedKFold(4), n_basis=40), "clf"),
    (FixedSizeLSSVRCV, dict(cv=4, basis="random", n_basis=25), "reg"),
    (FixedSizeLSSVCCV, dict(cv=3, basis="random", n_basis=25, scoring="mse"), "clf"),
])
def test_searches_equal_numpy(rng, cls, kw, task):
    X, y, _ = _problem(rng, m=700)
    if task == "clf":
        y = (y > 0).astype(int)
    space = {"gamma": [0.3, 1.0, 3.0]}
    a = cls(alphas=ALPHAS, param_space=space, random_state=1, **kw).fit(X, y)
    b = cls(alphas=ALPHAS, param_space=space, random_state=1, **kw).fit(_dask(rng, X), _dask(rng, y))
    assert a.best_params_ == b.best_params_
    assert rel_err(b.cv_results_["mean_test_score"], a.cv_results_["mean_test_score"]) < TOL
    pa, pb = a.predict(X), b.predict(_dask(rng, X)).compute()
    assert np.array_equal(pa, pb) if task == "clf" else rel_err(pb, pa) < TOL


@pytest.mark.parametrize("solver", ["scdp", "direct"])
def test_fixed_size_error_rate_on_dask_counts_in_a_pass(rng, solver):
    # every fold's SCDP path first, then one pass of misclassified rows per size: the same curves, stops
    # (rule (38) on the error rate) and sizes as stepping in memory
    X, y, _ = _problem(rng, m=600)
    yc = (y + 0.3 * rng.standard_normal(600) > 0).astype(int)
    kw = dict(gamma=1.0, alpha=0.3, basis="random", n_basis=25, cv=4, random_state=2, solver=solver,
              scoring="error_rate", stop_window=3, stop_tol=0.05)
    a = FixedSizeLSSVC(**kw).fit(X, yc)
    b = FixedSizeLSSVC(**kw).fit(_dask(rng, X), _dask(rng, yc))
    assert b.cv_score_ == a.cv_score_ and np.all(b.model_size_ == a.model_size_)
    if solver == "scdp":
        assert np.array_equal(b.cv_curve_, a.cv_curve_) and a.cv_curve_.size < 26  # the stop rule fired
    assert rel_err(b.coef_full_, a.coef_full_) < TOL
    search = dict(alphas=[0.1, 1.0], param_space={"gamma": [0.5, 2.0]}, cv=3, basis="random",
                  n_basis=20, random_state=1, solver=solver)
    a = FixedSizeLSSVCCV(**search).fit(X, yc)
    b = FixedSizeLSSVCCV(**search).fit(_dask(rng, X), _dask(rng, yc))
    assert a.scoring_ == b.scoring_ == "error_rate"  # the same default as in memory
    assert a.best_params_ == b.best_params_
    assert np.array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


# ----------------------------------------------------------------- errors
def test_what_needs_all_rows_is_refused_clearly(rng):
    X, y, _ = _problem(rng, m=400)
    Xd, yd = _dask(rng, X), _dask(rng, y)
    with pytest.raises(ValueError, match="kcenter.*needs all rows in memory"):
        FixedSizeLSSVR(gamma=1.0, basis="kcenter").fit(Xd, yd)
    with pytest.raises(ValueError, match="fvs.*needs all rows in memory"):
        NystromLSSVR(gamma=1.0, basis="fvs").fit(Xd, yd)
    with pytest.raises(ValueError, match="predictor='low-rank'"):
        NystromLSSVR(gamma=1.0, predictor="exact").fit(Xd, yd)
    with pytest.raises(ValueError, match="two classes"):
        FixedSizeLSSVCCV(scoring="error_rate", basis="random", n_basis=10).fit(
            Xd, _dask(rng, np.digitize(y, [-0.5, 0.5])))
    with pytest.raises(ValueError, match="row indices must be in"):
        FixedSizeLSSVR(gamma=1.0, basis=np.array([1, 400])).fit(Xd, yd)
    est = NystromLSSVR(gamma=1.0, n_basis=10, random_state=0).fit(Xd, yd)
    with pytest.raises(ValueError, match="fitted on Dask input"):
        est.kernel_error()
    # removing held-out sampled columns re-truncates the rank-k map per fold, on Dask as in memory
    mem = NystromLSSVR(gamma=1.0, n_basis=10, random_state=0).fit(X, y)
    assert est.cv_error(3, basis_in_holdout="remove") == pytest.approx(
        mem.cv_error(3, basis_in_holdout="remove"), rel=1e-9)


# ---------------------------------------------------- distributed cluster
@pytest.mark.slow
def test_local_cluster_equals_numpy(rng, cluster):
    distributed = pytest.importorskip("distributed")
    X, y, _ = _problem(rng, m=600)
    fs = dict(gamma=1.0, alpha=0.3, basis="random", n_basis=20, cv=KFold(3), random_state=1)
    ny = dict(gamma=0.5, alpha=0.1, n_basis=30, random_state=3)
    a_fs, a_ny = FixedSizeLSSVR(**fs).fit(X, y), NystromLSSVR(**ny).fit(X, y)
    with distributed.Client(cluster):
        Xd, yd = _dask(rng, X), _dask(rng, y)
        b_fs, b_ny = FixedSizeLSSVR(**fs).fit(Xd, yd), NystromLSSVR(**ny).fit(Xd, yd)
        assert rel_err(b_fs.predict(Xd).compute(), a_fs.predict(X)) < TOL
        assert rel_err(b_fs.cv_curve_, a_fs.cv_curve_) < TOL
        assert rel_err(b_ny.cv_error("loo", ALPHAS, basis_in_holdout="keep"),
                       a_ny.cv_error("loo", ALPHAS, basis_in_holdout="keep")) < TOL
        assert rel_err(b_ny.cv_error(4, ALPHAS), a_ny.cv_error(4, ALPHAS)) < TOL
        search = NystromLSSVRCV(alphas=ALPHAS, param_space={"gamma": [0.5, 2.0]}, n_basis=30, random_state=1)
        ref = NystromLSSVRCV(alphas=ALPHAS, param_space={"gamma": [0.5, 2.0]}, n_basis=30, random_state=1)
        assert search.fit(Xd, yd).best_params_ == ref.fit(X, y).best_params_


# ---------------------------------------------------------- command line
@pytest.mark.parametrize("model, extra", [("nystrom", ["--n-basis", "30"]),
                                          ("fixed-size", ["--basis", "random", "--n-basis", "20", "--cv", "4"])])
def test_cli_select_chunk_rows_equals_in_memory_search(rng, tmp_path, model, extra):
    import pandas as pd
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    X = rng.uniform(-2, 2, (600, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(600)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": y}).to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--target", "t", "--model", model,
                                   "--chunk-rows", "150", "--gammas", "2,5,10", "--alphas", "0.1:10:3", *extra,
                                   "-o", str(out), "--report", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "index.html").exists() and not (tmp_path / "rep" / "out_of_fold.png").exists()
    assert "pass       training pass" in res.output
    # the same search in memory on the standardised inputs (random prototypes; --cv 4 is KFold(4) in both)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    common = dict(random_state=0, param_space={"gamma": [2.0, 5.0, 10.0]}, alphas=np.geomspace(0.1, 10, 3))
    if model == "nystrom":
        ref = NystromLSSVRCV(n_basis=30, **common).fit(Xs, y)
    else:
        ref = FixedSizeLSSVRCV(basis="random", n_basis=20, cv=4, **common).fit(Xs, y)
    assert f"gamma={ref.gamma_:.4g}, alpha={ref.alpha_:.4g}" in res.output
    np.testing.assert_allclose(load_model(out).predict(X), ref.predict(Xs), rtol=1e-9, atol=1e-9)


def test_cli_select_streams_a_fixed_size_classifier(rng, tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    X = rng.standard_normal((500, 2))
    labels = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.standard_normal(500) > 0, "same", "diff")
    pd.DataFrame({"u": X[:, 0], "w": X[:, 1], "label": labels}).to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "d.csv"), "--target", "label", "--model", "fixed-size",
                                   "--chunk-rows", "120", "--basis", "random", "--n-basis", "20", "--cv", "3",
                                   "--gammas", "1,4",
                                   "--alphas", "0.1:10:3", "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "FixedSizeLSSVCCV" in res.output and "CV error rate" in res.output
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    ref = FixedSizeLSSVCCV(basis="random", n_basis=20, cv=3, random_state=0, param_space={"gamma": [1.0, 4.0]},
                           alphas=np.geomspace(0.1, 10, 3)).fit(Xs, labels)
    assert f"gamma={ref.gamma_:.4g}, alpha={ref.alpha_:.4g}" in res.output
    assert np.array_equal(load_model(out).predict(X), ref.predict(Xs))
