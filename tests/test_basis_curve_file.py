"""The basis curve of ``n_basis="auto"`` in model files and in the report:
saved and loaded unchanged, refused when inconsistent, drawn when present."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV
from lssvm.cli.main import cli
from lssvm.cli.report import write_report
from lssvm.io import ModelFileError, SavedModel, load_model, save_model
from lssvm.io.basis_curve import CURVE_ARRAYS
from lssvm.io.model_io import _checksum

SEARCH = {"param_space": {"gamma": [0.3, 1.0]}, "alphas": np.geomspace(1e-4, 1, 5), "random_state": 0}


def _data(rng, m=120, d=3):
    X = rng.uniform(-2, 2, (m, d))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.standard_normal(m)


def _save(tmp_path, est, d):
    return save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(d), np.ones(d), [f"x{j}" for j in range(d)], "y"))


def _assert_same_curve(loaded, curve, cv):
    for key in CURVE_ARRAYS:
        np.testing.assert_array_equal(loaded[key], curve[key])  # bit for bit
        assert loaded[key].dtype == np.asarray(curve[key]).dtype
    assert loaded["n_chosen"] == curve["n_chosen"] and loaded["stop_reason"] == curve["stop_reason"]
    assert loaded["replaced"] == curve.get("replaced") and loaded["cv"] == cv


@pytest.mark.parametrize("cv, label", [("loo", "LOO"), (3, "3-fold")])
def test_search_curve_survives_the_round_trip(tmp_path, rng, cv, label):
    X, y = _data(rng)
    search = SparseLSSVRCV(n_basis="auto", cv=cv, **SEARCH).fit(X, y)
    assert search.basis_curve_["n_basis"].size > 0
    loaded = load_model(_save(tmp_path, search, X.shape[1]))
    _assert_same_curve(loaded.basis_curve, search.basis_curve_, label)
    np.testing.assert_allclose(loaded.predict(X), search.predict(X), rtol=1e-12, atol=1e-12)
    again = load_model(save_model(tmp_path / "again.npz", loaded))  # a loaded model saved again keeps its curve
    _assert_same_curve(again.basis_curve, search.basis_curve_, label)


def test_base_estimator_and_classifier_curves_survive_the_round_trip(tmp_path, rng):
    X, y = _data(rng)
    est = SparseLSSVR(n_basis="auto", gamma=0.5, alpha=1e-2, random_state=0).fit(X, y)
    loaded = load_model(_save(tmp_path, est, X.shape[1]))
    _assert_same_curve(loaded.basis_curve, est.basis_curve_, None)
    clf = SparseLSSVCCV(n_basis="auto", **SEARCH).fit(X, np.where(y > np.median(y), "high", "low"))
    loaded = load_model(_save(tmp_path, clf, X.shape[1]))
    _assert_same_curve(loaded.basis_curve, clf.basis_curve_, "LOO")


def test_a_model_without_a_grown_basis_stores_no_curve(tmp_path, rng):
    X, y = _data(rng)
    path = _save(tmp_path, SparseLSSVRCV(n_basis=30, **SEARCH).fit(X, y), X.shape[1])
    with np.load(path, allow_pickle=False) as data:
        assert not any(k.startswith("basis_curve") for k in data.files)
        assert "basis_curve" not in json.loads(str(data["metadata"]))
    assert load_model(path).basis_curve is None


def test_a_size_where_every_alpha_failed_is_saved_as_infinite(tmp_path, rng):
    X, y = _data(rng)
    search = SparseLSSVRCV(n_basis="auto", **SEARCH).fit(X, y)
    search.basis_curve_["cv_error"][-1] = np.inf
    loaded = load_model(_save(tmp_path, search, X.shape[1]))
    assert loaded.basis_curve["cv_error"][-1] == np.inf
    np.testing.assert_array_equal(loaded.basis_curve["cv_error"][:-1], search.basis_curve_["cv_error"][:-1])


def _rewrite(path, edit):
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["metadata"]))
    edit(arrays, meta)
    meta["arrays"] = {k: [np.asarray(a).dtype.str, list(np.shape(a))] for k, a in arrays.items()
                      if k not in ("metadata", "checksum")}
    arrays["metadata"] = np.array(json.dumps(meta))
    arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(path, **arrays)


@pytest.mark.parametrize("edit, message", [
    (lambda a, m: a.update(basis_curve_n_basis=a["basis_curve_n_basis"][::-1].copy()), "positive and increasing"),
    (lambda a, m: a.update(basis_curve_n_basis=a["basis_curve_n_basis"].astype(float)), "integer array"),
    (lambda a, m: a["basis_curve_cv_error"].__setitem__(0, np.nan), "basis_curve_cv_error holds NaN"),
    (lambda a, m: a.update(basis_curve_alpha=a["basis_curve_alpha"][:-1]), "one per size"),
    (lambda a, m: a.pop("basis_curve_cv_error_se"), "needs its metadata object"),
    (lambda a, m: m.pop("basis_curve"), "needs its metadata object"),
    (lambda a, m: m["basis_curve"].update(n_chosen=10**6), "not one of the sizes grown"),
    (lambda a, m: m["basis_curve"].update(stop_reason=3), "stop_reason must be a string"),
])
def test_inconsistent_curves_are_refused(tmp_path, rng, edit, message):
    X, y = _data(rng)
    path = _save(tmp_path, SparseLSSVRCV(n_basis="auto", **SEARCH).fit(X, y), X.shape[1])
    _rewrite(path, edit)
    with pytest.raises(ModelFileError, match=f"invalid lssvm model file: .*{message}"):
        load_model(path)


@pytest.mark.slow
def test_report_draws_the_curve_only_for_a_grown_basis(tmp_path, rng):
    X, y = _data(rng)
    for name, n_basis in (("auto", "auto"), ("fixed", 30)):
        folder = tmp_path / name
        folder.mkdir()
        write_report(folder, SparseLSSVRCV(n_basis=n_basis, **SEARCH).fit(X, y), [("data", "test")],
                     pd.DataFrame({"rank": [1]}))
        page = (folder / "index.html").read_text()
        assert ((folder / "basis_size.png").exists(), 'src="basis_size.png"' in page) == ((name == "auto",) * 2)


@pytest.mark.slow
def test_select_with_auto_basis_saves_and_draws_its_curve(tmp_path, rng):
    X, y = _data(rng, m=100, d=2)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": y}).to_csv(tmp_path / "train.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "train.csv"), "--target", "t", "--n-basis", "auto",
                                   "--gammas", "0.3,1", "-o", str(tmp_path / "m.npz"),
                                   "--report", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    curve = load_model(tmp_path / "m.npz").basis_curve
    assert curve is not None and curve["cv"] == "LOO" and curve["n_chosen"] in curve["n_basis"]
    assert (tmp_path / "rep" / "basis_size.png").stat().st_size > 0
    assert 'src="basis_size.png"' in (tmp_path / "rep" / "index.html").read_text()
