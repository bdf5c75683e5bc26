"""One fold rule for an integer ``cv``: scikit-learn's ``check_cv``,
unshuffled ``KFold(k)`` for regressors and ``StratifiedKFold(k)`` for
classifiers, through every entry point, in memory and on Dask."""

import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.model_selection import StratifiedKFold, check_cv

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVR,
    NystromLSSVC,
    NystromLSSVR,
    SparseLSSVC,
    SparseLSSVCCV,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.cli.main import cli
from lssvm.cv import FoldSpec, resolve_folds
from lssvm.io import load_model
from lssvm.selection import DenseLSSVMCV
from lssvm.selection.fixed_size import FixedSizeCV
from lssvm.selection.nystrom import NystromCV

KS = (3, 7, 10)


def _data(rng, m=90):
    X = rng.normal(size=(m, 2))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=m)
    # three unbalanced classes, sorted in blocks so that unstratified folds would differ
    labels = np.array(["lo", "mid", "hi"])[np.digitize(y, np.quantile(y, [0.5, 0.8]))]
    return X, y, labels


def _reference(k, y, classifier):
    m = len(y)
    return [test for _, test in check_cv(k, y, classifier=classifier).split(np.zeros((m, 1)), y)]


def _fold_labels(tests, m):
    out = np.full(m, -1)
    for f, t in enumerate(tests):
        out[t] = f
    return out


def _same(tests, ref):
    assert len(tests) == len(ref)
    for t, r in zip(tests, ref, strict=True):
        np.testing.assert_array_equal(np.sort(t), r)


def test_stratified_spec_reproduces_scikit_learn(rng):
    letters = np.array(["q", "b", "z", "a", "c"])
    checked = 0
    for _ in range(200):
        m, c, k = int(rng.integers(8, 150)), int(rng.integers(2, 6)), int(rng.integers(2, 9))
        y = rng.choice(letters[:c], size=m, p=rng.dirichlet(np.ones(c)))
        keys, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
        if keys.size < 2 or counts.max() < k:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # sklearn: a class has fewer than k rows
            ref = _fold_labels([t for _, t in StratifiedKFold(k).split(np.zeros((m, 1)), y)], m)
        starts = np.concatenate([[0], np.sort(rng.choice(np.arange(1, m), int(rng.integers(0, 5)), replace=False))])
        ends = np.append(starts[1:], m)
        counts_b = np.array([np.bincount(inv[a:b], minlength=keys.size) for a, b in zip(starts, ends, strict=True)])
        first = np.array([np.flatnonzero(inv == j)[0] for j in range(keys.size)])
        spec = FoldSpec.stratified_kfold(keys, first, counts_b, starts, k)
        got = np.concatenate([spec.block_folds(a, b - a, y[a:b]) for a, b in zip(starts, ends, strict=True)])
        np.testing.assert_array_equal(got, ref)
        rows = rng.choice(m, min(m, 9), replace=False)
        np.testing.assert_array_equal(spec.folds_of(rows, labels_between=lambda lo, hi: y[lo:hi]), ref[rows])
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("k", KS)
def test_in_memory_entry_points_use_check_cv(rng, k):
    X, y, labels = _data(rng)
    m = X.shape[0]
    basis = np.sort(rng.choice(m, 15, replace=False))
    for target, clf in ((y, False), (labels, True)):
        ref = _reference(k, target, clf)
        pairs = [(np.setdiff1d(np.arange(m), t), t) for t in ref]
        codes = np.unique(target, return_inverse=True)[1] if clf else None
        _same(resolve_folds(k, m, y=codes if clf else target, classifier=clf), ref)
        # the criteria
        kw = dict(cv=k, classification=clf)
        _same(DenseLSSVMCV(X, target, **kw).folds, ref)
        _same(NystromCV(X, target, n_basis=20, **kw).folds, ref)
        _same(FixedSizeCV(X, target, basis="all", **kw).folds, ref)
        # the estimators' CV methods
        if clf:
            est = SparseLSSVC(gamma=1.0, alpha=0.1, basis=basis).fit(X, target)
            np.testing.assert_array_equal(est.cv_decision_function(k), est.cv_decision_function(pairs))
            assert est.cv_error(k) == est.cv_error(pairs)
            nys = NystromLSSVC(gamma=1.0, alpha=0.1, n_basis=20, random_state=0).fit(X, target)
            fs = [FixedSizeLSSVC(gamma=1.0, alpha=0.1, basis="all", max_size=12, cv=c).fit(X, target)
                  for c in (k, pairs)]
        else:
            est = SparseLSSVR(gamma=1.0, alpha=0.1, basis=basis).fit(X, target)
            np.testing.assert_array_equal(est.cv_predict(k), est.cv_predict(pairs))
            nys = NystromLSSVR(gamma=1.0, alpha=0.1, n_basis=20, random_state=0).fit(X, target)
            fs = [FixedSizeLSSVR(gamma=1.0, alpha=0.1, basis="all", max_size=12, cv=c).fit(X, target)
                  for c in (k, pairs)]
        _same(est._engine.resolve_cv(k, classifier=clf), ref)
        np.testing.assert_array_equal(nys.cv_predict(k), nys.cv_predict(pairs))
        np.testing.assert_array_equal(fs[0].cv_curve_, fs[1].cv_curve_)
        # the searches
        search = (SparseLSSVCCV if clf else SparseLSSVRCV)(cv=k, basis=basis, param_space={"gamma": [0.5, 2.0]},
                                                           alphas=[0.01, 1.0], refit=False)
        _same(search.fit(X, target).cv_folds_, ref)


@pytest.mark.parametrize("k", KS)
def test_dask_folds_equal_check_cv(rng, k):
    da = pytest.importorskip("dask.array")
    X, y, labels = _data(rng)
    m = X.shape[0]
    basis = np.sort(rng.choice(m, 15, replace=False))
    chunks = (17, 30, 11, 32)
    Xd = da.from_array(X, chunks=(chunks, 2))
    for target, est_type in ((y, SparseLSSVR), (labels, SparseLSSVC)):
        clf = est_type is SparseLSSVC
        ref = _fold_labels(_reference(k, target, clf), m)
        mem = est_type(gamma=1.0, alpha=0.1, basis=basis).fit(X, target)
        dsk = est_type(gamma=1.0, alpha=0.1, basis=basis).fit(Xd, da.from_array(target, chunks=(chunks,)))
        folds = dsk._engine.resolve_cv(k, classifier=clf)
        blocks = [(r0, g) for _, _, g, r0 in folds.data.blocks()]
        got = np.concatenate([folds.spec.block_folds(r0, len(g), g) for r0, g in
                              ((r0, np.asarray(g.compute()) if g is not None else np.zeros(c)) for (r0, g), c
                               in zip(blocks, chunks, strict=True))])
        np.testing.assert_array_equal(got, ref)
        out_mem = mem.cv_decision_function(k) if clf else mem.cv_predict(k)
        out_dsk = (dsk.cv_decision_function(k) if clf else dsk.cv_predict(k)).compute()
        np.testing.assert_allclose(out_dsk, out_mem, rtol=1e-9, atol=1e-10)
        assert np.allclose(dsk.cv_error(k), mem.cv_error(k), rtol=1e-10, atol=0)
    # the search on Dask scores the same partition as in memory
    kw = dict(cv=k, basis=basis, param_space={"gamma": [0.5, 2.0]}, alphas=[0.01, 1.0], refit=False)
    a = SparseLSSVCCV(**kw).fit(X, labels)
    b = SparseLSSVCCV(**kw).fit(Xd, da.from_array(labels, chunks=(chunks,)))
    np.testing.assert_allclose(b.cv_results_["mean_test_score"], a.cv_results_["mean_test_score"], rtol=1e-10)


def test_tiny_classes_fall_back_to_kfold_with_a_warning():
    y = np.array([0, 1, 2, 0, 1, 2])
    with pytest.warns(UserWarning, match="cannot stratify"):
        tests = resolve_folds(4, 6, y=y, classifier=True)
    _same(tests, _reference(4, y, False))


def test_cli_cv_10_same_in_memory_and_streamed(tmp_path, rng):
    pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, _, labels = _data(rng, m=240)
    path = tmp_path / "d.csv"
    pd.DataFrame({"u": X[:, 0], "w": X[:, 1], "label": labels}).to_csv(path, index=False)
    runner = CliRunner()
    common = ["select", str(path), "--target", "label", "--cv", "10", "--basis", "random", "--n-basis", "25",
              "--gammas", "0.5,2", "--alphas", "0.01,1", "--no-report", "--random-state", "0"]
    chosen = []
    for extra, name in (([], "m.npz"), (["--chunk-rows", "70"], "d.npz")):
        res = runner.invoke(cli, [*common, *extra, "-o", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        lines = res.output.splitlines()
        table = lines[next(i for i, line in enumerate(lines) if "n_basis" in line):]
        chosen.append([line for line in table if line.strip() and not line.startswith(("model", "warning", "wall time"))])
    assert chosen[0] == chosen[1] and chosen[0]
    a, b = load_model(tmp_path / "m.npz"), load_model(tmp_path / "d.npz")
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
