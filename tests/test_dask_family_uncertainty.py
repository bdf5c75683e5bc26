"""Intervals and probabilities of the fixed-size and Nyström families fitted
on Dask against the in-memory ones.

* ``predict_interval``: the same methods of the model at its fitted basis
  in memory and on Dask (Nyström: its columns and rank; fixed size: the
  sparse model at its support, output group by output group where the
  outputs' supports differ), the order statistics streamed.  Same folds,
  same draws, so the bounds agree to rounding.
* ``predict_proba``: both families' maps fitted on the exact LOO / k-fold
  values of the fitted model from the Dask passes (fixed size with outputs on
  different supports: one engine per group of outputs).

Tolerance 1e-10 relative (measured 1e-15 ... 3e-14): the Dask fits differ
from the in-memory ones by rounding (sums merged by block, the Nyström
moments instead of the QR); a wrong fold, row or rank moves a bound by
1e-3 or more.  The isotonic maps interpolate between knots: 1e-9.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, KFold

from conftest import rel_err

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from lssvm import (  # noqa: E402
    ConstantTargetWarning,
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVC,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVR,
)

TOL = 1e-10


def _reference_interval(ref, Xt, coverage, cv=10, groups=None):
    """The in-memory CV+ bounds a Dask fit's equal (those of the model at its fitted basis)."""
    best = getattr(ref, "best_estimator_", ref)
    return best.predict_interval(Xt, coverage, "cv+", cv=cv, groups=groups)


def _problem(rng, m=360, d=3, v=1):
    X = rng.normal(size=(m, d))
    F = np.column_stack([np.sin(X @ rng.normal(size=d)) for _ in range(v)])
    Y = F + 0.2 * rng.normal(size=(m, v))
    return X, (Y[:, 0] if v == 1 else Y), rng.integers(0, 9, m)


def _dask(rng, a):
    m = a.shape[0]
    cuts = np.sort(rng.choice(np.arange(40, m - 40), 3, replace=False))  # uneven: folds straddle chunks
    c = tuple(np.diff(np.concatenate([[0], cuts, [m]])).tolist())
    return da.from_array(a, chunks=(c,) if a.ndim == 1 else (c, a.shape[1]))


def _fixed(**kw):
    return FixedSizeLSSVR(**{"gamma": 1.0, "alpha": 0.3, "basis": "random", "n_basis": 20, "cv": 3, "random_state": 5,
                             **kw})


def _nystrom(**kw):
    return NystromLSSVR(**{"gamma": 0.5, "alpha": 0.1, "basis": "random", "n_basis": 25, "random_state": 3, **kw})


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


# ---------------------------------------------------------------- CV+
@pytest.mark.parametrize("make", [_fixed, _nystrom], ids=["fixed", "nystrom"])
@pytest.mark.parametrize("v", [1, 2])
def test_cv_plus_equals_in_memory_refits(rng, make, v):
    X, y, _ = _problem(rng, v=v)
    Xt = rng.normal(size=(6, 3))
    ref, est = make().fit(X, y), make().fit(_dask(rng, X), _dask(rng, y))
    for coverage, cv in [(0.9, 4), (0.7, KFold(3))]:
        got = est.predict_interval(Xt, coverage, "cv+", cv=cv)
        want = ref.predict_interval(Xt, coverage, "cv+", cv=cv)
        assert got.shape == want.shape == ((6, 2) if v == 1 else (6, 2, v))
        assert np.all(got[:, 0] < got[:, 1])
        assert rel_err(got, want) < TOL, (coverage, cv)


def test_cv_plus_grouped_folds_reach_the_refits(rng):
    # group folds on Dask rows: the groups reach the fold rule
    X, y, g = _problem(rng)
    Xt = rng.normal(size=(5, 3))
    make = lambda: _fixed(solver="scdp").set_params(cv=GroupKFold(3))  # noqa: E731
    ref = make().fit(X, y, groups=g)
    est = make().fit(_dask(rng, X), _dask(rng, y), groups=da.from_array(g, chunks=100))
    got = est.predict_interval(Xt, 0.8, "cv+", cv=GroupKFold(4), groups=da.from_array(g, chunks=70))
    want = _reference_interval(ref, Xt, 0.8, GroupKFold(4), g)
    assert rel_err(got, want) < TOL
    ny_ref, ny = _nystrom().fit(X, y), _nystrom().fit(_dask(rng, X), _dask(rng, y))
    assert rel_err(ny.predict_interval(Xt, 0.8, "cv+", cv=GroupKFold(4), groups=g),
                   ny_ref.predict_interval(Xt, 0.8, "cv+", cv=GroupKFold(4), groups=g)) < TOL


@pytest.mark.parametrize("search", [FixedSizeLSSVRCV, NystromLSSVRCV])
def test_search_refit_on_dask_gives_the_in_memory_intervals(rng, search):
    X, y, _ = _problem(rng, m=300)
    Xt = rng.normal(size=(4, 3))
    kw = dict(gamma=0.7, alphas=[0.03, 1.0], basis="random", n_basis=20, random_state=2, cv=3)
    ref, est = search(**kw).fit(X, y), search(**kw).fit(_dask(rng, X), _dask(rng, y))
    assert est.best_params_ == pytest.approx(ref.best_params_, rel=1e-12)
    # the refit names its basis by row index: "remove" takes each fold's basis rows out of its model
    got = est.predict_interval(Xt, 0.9, "cv+", cv=3)
    same = clone(est.best_estimator_).fit(X, y)  # its parameters, in memory
    assert rel_err(got, _reference_interval(same, Xt, 0.9, 3)) < TOL
    assert rel_err(got, _reference_interval(ref, Xt, 0.9, 3)) < TOL  # the in-memory search


@pytest.mark.parametrize("v", [1, 2])
def test_fixed_size_basis_row_indices_on_dask_equal_in_memory(rng, v):
    # basis rows given by index: "remove" (the default) takes each fold's basis rows out of its model;
    # two outputs: each on its own support (one engine per group)
    X, y, _ = _problem(rng, m=240, v=v)
    Xt = rng.normal(size=(4, 3))
    idx = np.sort(rng.choice(240, 25, replace=False))
    ref, est = _fixed(basis=idx).fit(X, y), _fixed(basis=idx).fit(_dask(rng, X), _dask(rng, y))
    for method in ("jackknife+", "jackknife", "cv+"):
        assert rel_err(est.predict_interval(Xt, 0.8, method, cv=3), ref.predict_interval(Xt, 0.8, method, cv=3)) < TOL
    assert rel_err(np.asarray(est.cv_predict(3, [0.1, 1.0])), ref.cv_predict(3, [0.1, 1.0])) < TOL


def test_cv_plus_bad_input_is_refused_clearly(rng):
    X, y, g = _problem(rng, m=120)
    Xd, yd = _dask(rng, X), _dask(rng, y)
    for est in (_fixed().fit(Xd, yd), _nystrom().fit(Xd, yd)):
        with pytest.raises(ValueError, match="method='full' needs the training rows in memory"):
            est.predict_interval(X[:2], method="full")
        with pytest.raises(ValueError, match="m >= 211"):
            est.predict_interval(X[:2], 0.995)
        with pytest.raises(ValueError, match="coverage"):
            est.predict_interval(X[:2], 1.5)
        with pytest.raises(ValueError, match="GroupKFold needs groups"):
            est.predict_interval(X[:2], method="cv+", cv=GroupKFold(3))
        with pytest.raises(ValueError, match="must cover every row"):
            est.predict_interval(X[:2], method="cv+", cv=[(np.arange(60), np.arange(60, 120))])
        with pytest.raises(ValueError, match="features"):
            est.predict_interval(X[:2, :2])


# ------------------------------------------------------- probabilities
def _fixed_clf(**kw):
    return FixedSizeLSSVC(gamma=1.0, alpha=0.3, basis="random", n_basis=20, random_state=5, **kw)


def _nystrom_clf(**kw):
    return NystromLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=25, random_state=3, **kw)


def _labels(rng, m=360, n_classes=2):
    X = rng.normal(size=(m, 3))
    f = np.sin(X @ rng.normal(size=3)) + 0.3 * rng.normal(size=m)
    y = np.digitize(f, np.quantile(f, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, np.array(["c", "a", "b"])[y]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_probabilities_equal_in_memory(rng, n_classes, calibration):
    X, y = _labels(rng, n_classes=n_classes)
    Xt = rng.normal(size=(30, 3))
    Xd, yd = _dask(rng, X), _dask(rng, y.astype(object))
    tol = TOL if calibration == "sigmoid" else 1e-9
    cases = [_fixed_clf(cv=4), _fixed_clf(cv=None, solver="direct", calibration_cv=3),
             _nystrom_clf(), _nystrom_clf(calibration_cv=4)]
    for make in cases:
        params = {**make.get_params(), "calibration": calibration}
        ref = type(make)(**params).fit(X, y)
        est = type(make)(**params).fit(Xd, yd)
        P = est.predict_proba(Xt)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        assert list(est.classes_) == list(ref.classes_)
        assert rel_err(P, ref.predict_proba(Xt)) < tol, (type(make).__name__, params["calibration_cv"])


def test_fixed_size_probabilities_on_group_folds(rng):
    X, y = _labels(rng)
    g = rng.integers(0, 8, X.shape[0])
    Xt = rng.normal(size=(20, 3))
    make = lambda: _fixed_clf(cv=GroupKFold(3), calibration="sigmoid")  # noqa: E731
    ref = make().fit(X, y, groups=g)
    est = make().fit(_dask(rng, X), _dask(rng, y.astype(object)), groups=da.from_array(g, chunks=90))
    assert rel_err(est.predict_proba(Xt), ref.predict_proba(Xt)) < TOL


@pytest.mark.parametrize("search", [FixedSizeLSSVCCV, NystromLSSVCCV])
def test_search_refit_on_dask_is_calibrated_as_in_memory(rng, search):
    X, y = _labels(rng, m=300)
    Xt = rng.normal(size=(20, 3))
    kw = dict(gamma=0.7, alphas=[0.03, 1.0], basis="random", n_basis=20, random_state=2, cv=3,
              calibration="sigmoid")
    ref, est = search(**kw).fit(X, y), search(**kw).fit(_dask(rng, X), _dask(rng, y.astype(object)))
    assert rel_err(est.predict_proba(Xt), ref.predict_proba(Xt)) < TOL


def test_group_calibration_folds_without_groups_say_what_to_do(rng):
    X, y = _labels(rng, m=120)
    Xd, yd = _dask(rng, X), _dask(rng, y.astype(object))
    for est in (_fixed_clf(calibration="sigmoid", calibration_cv=GroupKFold(3)),
                _nystrom_clf(calibration="sigmoid", calibration_cv=GroupKFold(3))):
        with pytest.raises(ValueError, match=r"splits by group.*calibration_cv=list\(splitter.split"):
            est.fit(Xd, yd)


def test_empty_chunks_and_folds_inside_one_chunk(rng):
    # an empty chunk, and KFold(3) folds that empty whole chunks of the training collections
    X, y, _ = _problem(rng)
    labels = np.where(y > 0, "up", "down")
    chunks = (120, 0, 60, 180)
    Xd = da.from_array(X, chunks=(chunks, 3))
    Xt = rng.normal(size=(5, 3))
    for make in (_fixed, _nystrom):
        ref, est = make().fit(X, y), make().fit(Xd, da.from_array(y, chunks=(chunks,)))
        assert rel_err(est.predict_interval(Xt, 0.8, "cv+", cv=3), _reference_interval(ref, Xt, 0.8, 3)) < TOL
    for make in (_fixed_clf, _nystrom_clf):
        ref = make(calibration="sigmoid", calibration_cv=KFold(3)).fit(X, labels)
        est = make(calibration="sigmoid", calibration_cv=KFold(3)).fit(Xd, da.from_array(labels, chunks=(chunks,)))
        assert rel_err(est.predict_proba(Xt), ref.predict_proba(Xt)) < TOL


# ------------------------------------------------- constant targets on Dask
@pytest.mark.parametrize("make", [lambda: SparseLSSVR(gamma=1.0, alpha=0.3, basis="random", n_basis=15, random_state=0),
                                  _fixed, _nystrom], ids=["sparse", "fixed", "nystrom"])
def test_a_constant_target_warns_as_in_memory(rng, make):
    X, y, _ = _problem(rng, m=150, v=2)
    y[:, 1] = 2.5
    with pytest.warns(ConstantTargetWarning, match=r"output column\(s\) 1 of y are constant.*2\.5") as rec:
        make().fit(_dask(rng, X), _dask(rng, y))
    assert rec[0].filename == __file__  # points at the caller's fit
    with pytest.warns(ConstantTargetWarning, match=r"output column\(s\) 1 of y are constant"):
        make().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstantTargetWarning)
        make().fit(_dask(rng, X), _dask(rng, y[:, 0]))


@pytest.mark.slow
def test_local_cluster_equals_in_memory(rng, cluster):
    # the fold filters, refit expansions and fold models travel to worker processes
    distributed = pytest.importorskip("distributed")
    X, y, _ = _problem(rng, m=240)
    labels = np.where(y > 0, "up", "down")
    Xt = rng.normal(size=(4, 3))
    with distributed.Client(cluster):
        Xd = _dask(rng, X)
        for make in (_fixed, _nystrom):
            got = make().fit(Xd, _dask(rng, y)).predict_interval(Xt, 0.8, "cv+", cv=3)
            assert rel_err(got, _reference_interval(make().fit(X, y), Xt, 0.8, 3)) < TOL
        for make in (_fixed_clf, _nystrom_clf):
            est = make(cv=3, calibration="sigmoid") if make is _fixed_clf else make(calibration="sigmoid")
            got = est.fit(Xd, da.from_array(labels, chunks=80)).predict_proba(Xt)
            assert rel_err(got, clone(est).fit(X, labels).predict_proba(Xt)) < TOL


@pytest.mark.parametrize("model", [pytest.param("fixed-size", marks=pytest.mark.slow), "nystrom"])  # 0.5 s a pass bar
def test_streamed_select_saves_calibrated_models(tmp_path, rng, model):
    # `lssvm select --chunk-rows N --calibration sigmoid` (refused before: no held-out values on Dask)
    pd = pytest.importorskip("pandas")
    pytest.importorskip("dask.dataframe")
    from click.testing import CliRunner

    from lssvm.cli.main import cli
    from lssvm.io import load_model

    X = rng.standard_normal((300, 2))
    frame = pd.DataFrame({"u": X[:, 0], "w": X[:, 1], "label": np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")})
    frame.iloc[:150].to_csv(tmp_path / "part-0.csv", index=False)
    frame.iloc[150:].to_csv(tmp_path / "part-1.csv", index=False)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "part-*.csv"), "--target", "label", "--model", model,
                                   "--cv", "3", "--chunk-rows", "100", "--n-basis", "20", "--gammas", "1", "--alphas", "0.1:1:2",
                                   "--calibration", "sigmoid", "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "calibration pass" in res.output
    saved = load_model(out)
    P = saved.estimator.predict_proba((frame[["u", "w"]].to_numpy() - saved.x_center) / saved.x_scale)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean((P[:, 1] > 0.5) == (frame["label"] == "same")) > 0.8
