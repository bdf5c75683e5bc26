"""``lssvm select --input-transform``: the per-column transform of the inputs chosen by the search's exact CV,
its candidates' scores equal to brute-force fold refits, saved in the model file and applied by ``lssvm
predict`` to raw inputs as in Python; bad values refused clearly."""

import time
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from test_input_transform import _kfold_mse_removed

from lssvm import InputTransformSearch, SparseLSSVRCV
from lssvm.cli._input_transform_choice import input_transform_text, plan_input_transform
from lssvm.cli.main import cli
from lssvm.cv import resolve_folds
from lssvm.estimators.input_transform import InputTransform
from lssvm.io import load_model, save_model
from lssvm.io._archive import ModelFileError

GAMMAS = [0.05, 0.2, 0.8]
OPTIONS = ["--gammas", ",".join(map(str, GAMMAS)), "--alphas", "1e-4:1e2:7", "--n-basis", "40", "--no-report"]


def _skewed_table(path, seed=0, m=120):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.lognormal(sigma=1.2, size=m), rng.lognormal(sigma=0.8, size=m), rng.normal(size=m)])
    y = np.log(X[:, 0]) + 0.5 * np.tanh(np.log(X[:, 1])) + 0.1 * rng.normal(size=m)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    frame.to_csv(path, index=False)
    return frame, X, y


def _select(tmp_path, *extra, table="t.csv"):
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / table), "--target", "y", *OPTIONS, "-o", str(out),
                                   *extra])
    assert res.exit_code == 0, res.output
    return res.output, out


def _line(output, start="inputs     transform "):
    """The text after ``start`` of the line that begins with it."""
    return next(t for t in output.splitlines() if t.startswith(start))[len(start):]


@pytest.mark.parametrize("seed", [0, 1])
def test_candidates_scores_equal_brute_force_fold_refits(tmp_path, seed):
    frame, X, y = _skewed_table(tmp_path / "t.csv", seed)
    output, out = _select(tmp_path, "--cv", "4", "--input-transform", "auto", "--random-state", "0")
    line = _line(output)
    scores = {k: float(v) for k, v in (part.rsplit(" ", 1) for part in line.split("search: ")[1].split(", "))}
    assert set(scores) == {"none", "quantile"}, line
    kept = "quantile" if scores["quantile"] < scores["none"] else "none"
    assert line.startswith({"quantile": "quantile (normal scores)", "none": "none"}[kept]), line
    model = load_model(out)
    Xs = (X - model.x_center) / model.x_scale  # the CLI's scaled inputs
    folds = resolve_folds(4, X.shape[0], y=y)
    every = np.arange(X.shape[0])
    pairs = [(np.setdiff1d(every, f), np.asarray(f)) for f in folds]
    for name, mse in scores.items():
        Z = InputTransform(name).fit(Xs).transform(Xs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            by_hand = SparseLSSVRCV(param_space={"gamma": GAMMAS}, alphas=np.logspace(-4, 2, 7), cv=pairs,
                                    n_basis=40, ard=False, random_state=0).fit(Z, y)
        rows = np.asarray(by_hand.best_estimator_.basis_indices_)
        brute = _kfold_mse_removed(Z, y, rows, by_hand.alpha_, by_hand.gamma_, pairs)
        np.testing.assert_allclose(mse, brute, rtol=1e-3)  # the CLI prints 4 digits
    assert (model.input_transform is not None) == (kept == "quantile")
    assert model.metadata["input_transform"] == line


@pytest.mark.parametrize("method", ["quantile", "yeo-johnson"])
def test_predict_on_raw_inputs_equals_python(tmp_path, method):
    frame, X, y = _skewed_table(tmp_path / "t.csv", seed=2)
    output, out = _select(tmp_path, "--input-transform", method, "--target-transform", "identity")
    assert _line(output).endswith("(as asked)")
    model = load_model(out)
    assert model.input_transform.method == method
    # in Python: the same search on the CLI's scaled inputs inside InputTransformSearch
    Xs = (X - model.x_center) / model.x_scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        python = InputTransformSearch(SparseLSSVRCV(param_space={"gamma": GAMMAS}, alphas=np.logspace(-4, 2, 7),
                                                    n_basis=40, random_state=0), method).fit(Xs, y)
    expected = python.predict(Xs)
    np.testing.assert_allclose(model.predict(frame), expected, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-8, atol=1e-10)
    res = CliRunner().invoke(cli, ["predict", str(out), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["predicted_y"], expected, rtol=1e-8, atol=1e-10)
    # without the stored transform the estimator would see other inputs: the file's transform is what matters
    assert np.max(np.abs(model.estimator.predict(Xs) - expected)) > 1e-3


def test_default_compares_where_an_input_is_skewed(tmp_path):
    _skewed_table(tmp_path / "t.csv")
    output, out = _select(tmp_path)
    assert set(_line(output).split("search: ")[1].replace(",", "").split()[::2]) == {"none", "quantile"}
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 2))
    pd.DataFrame(X, columns=["a", "b"]).assign(y=np.sin(X[:, 0])).to_csv(tmp_path / "n.csv", index=False)
    output, out = _select(tmp_path, table="n.csv")
    assert _line(output) == "none (inputs as encoded): no input skewed beyond 1"
    assert load_model(out).input_transform is None
    output, out = _select(tmp_path, "--input-transform", "none")
    assert "inputs     transform" not in output
    model = load_model(out)
    assert model.input_transform is None and "input_transform" not in model.metadata


def test_ordinal_encoding_gets_its_own_transform(tmp_path):
    rng = np.random.default_rng(3)
    m = 150
    c = rng.choice(["lo", "mid", "hi", "top"], size=m)
    x = rng.lognormal(sigma=1.2, size=m)
    y = np.log(x) + pd.Series(c).map({"lo": 0.0, "mid": 0.5, "hi": 1.0, "top": 1.5}).to_numpy() \
        + 0.1 * rng.normal(size=m)
    frame = pd.DataFrame({"x": x, "c": c, "y": y})
    frame.to_csv(tmp_path / "t.csv", index=False)
    output, out = _select(tmp_path, "--categorical-encoding", "ordinal", "--input-transform", "quantile")
    assert "encoding   categorical: ordinal (as asked)" in output
    model = load_model(out)
    assert model.preprocessing.categorical_encoding == "ordinal"
    tr = model.input_transform
    assert tr.n_features_in_ == len(model.feature_names) == 2 and tr.columns_.all()
    pred = model.predict(frame)
    Z = model.preprocessing.transform(frame)
    np.testing.assert_allclose(pred, model.estimator.predict(tr.transform(Z)), rtol=1e-12)
    res = CliRunner().invoke(cli, ["predict", str(out), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["predicted_y"], pred, rtol=1e-9)


def test_bad_values_are_refused_clearly(tmp_path):
    _skewed_table(tmp_path / "t.csv")
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", *OPTIONS,
                                   "--input-transform", "log"])
    assert res.exit_code == 2 and "'log' is not one of" in res.output and "yeo-johnson" in res.output
    assert "Traceback" not in res.output


def test_streamed_rows_refuse_a_named_transform(tmp_path):
    pytest.importorskip("dask.dataframe")
    _skewed_table(tmp_path / "t.csv")
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", "--gammas", "0.2",
                                   "--n-basis", "20", "--no-report", "--chunk-rows", "50", "--input-transform",
                                   "quantile", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 1 and "--input-transform quantile needs the rows in memory" in res.output, res.output


def test_model_file_refuses_a_damaged_input_transform(tmp_path):
    _, X, y = _skewed_table(tmp_path / "t.csv")
    _, out = _select(tmp_path, "--input-transform", "quantile")
    model = load_model(out)
    meta, arrays = model.input_transform.to_stored()
    for bad_meta, bad_arrays in [({**meta, "method": "log"}, arrays), ({**meta, "n_features_in": 2}, arrays),
                                 (meta, {**arrays, "input_transform_scale": -arrays["input_transform_scale"]}),
                                 (meta, {**arrays, "input_transform_quantiles": arrays["input_transform_quantiles"][:, :1]})]:
        with pytest.raises(ValueError, match="input transform"):
            InputTransform.from_stored(bad_meta, bad_arrays)
    # a transform of another width than the model's inputs: refused on load
    model.input_transform = InputTransform("quantile").fit(np.column_stack([X, X[:, :1]]))
    save_model(tmp_path / "w.npz", model)
    with pytest.raises(ModelFileError, match="input transform's columns do not match"):
        load_model(tmp_path / "w.npz")


def test_auto_is_planned_within_the_time_budget():
    est = SparseLSSVRCV(time_budget=60.0)
    names = ["none", "quantile"]
    kept, line, extra = plan_input_transform("auto", names, est, 40.0, 60.0)  # two searches of 40 s: 80 s > 60 s
    assert kept == ["none"] and extra == 0.0 and "do not fit the 60 s budget" in line
    kept, line, extra = plan_input_transform("auto", names, est, 20.0, 60.0)  # the stages get what is left
    assert kept == names and extra == 0.0 and "in what is left of the 60 s budget" in line
    kept, line, extra = plan_input_transform("auto", names, est, 20.0, 30.0)  # fixed basis: 30 s + 20 s more
    assert kept == names and extra == pytest.approx(20.0)
    kept, line, extra = plan_input_transform("auto", names, SparseLSSVRCV(time_budget=None), 40.0, 40.0)
    assert kept == names and extra == pytest.approx(40.0)
    assert plan_input_transform("quantile", ["quantile"], est, 40.0, 60.0) == (["quantile"], None, 0.0)
    text = input_transform_text("none", {}, "auto", "mse", "LOO", planned=line)
    assert text == "none (inputs as encoded): the searches of the candidates do not fit the time budget"


def test_the_budget_counts_every_candidates_search(monkeypatch):
    # the winner's stages start their budget's clock when the comparison starts, not when the winner's own
    # search started: the first candidate's search is spent from the same budget
    from lssvm.estimators import input_transform as module

    rng = np.random.default_rng(4)
    X = rng.lognormal(sigma=1.2, size=(600, 3))
    y = np.log(X[:, 0]) + 0.1 * rng.normal(size=600)
    clocks = []
    finish = module._finish_stages

    def spy(search, X, y, groups, restore, t0):
        clocks.append(t0)
        return finish(search, X, y, groups, restore, t0)

    monkeypatch.setattr(module, "_finish_stages", spy)
    before = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        InputTransformSearch(SparseLSSVRCV(param_space={"gamma": GAMMAS}, n_basis="auto", time_budget=1e4,
                                           random_state=0), "auto").fit(X, y)
    wall = time.perf_counter() - before
    assert len(clocks) == 1 and before <= clocks[0] < before + 0.1 * wall


@pytest.mark.parametrize("model_kind", ["fixed-size", "nystrom"])
def test_other_families_store_and_apply_the_transform(tmp_path, model_kind):
    frame, X, y = _skewed_table(tmp_path / "t.csv", seed=6)
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", "--model", model_kind,
                                   "--gammas", "0.05,0.2,0.8", "--alphas", "1e-4:1e2:7", "--no-report",
                                   "--input-transform", "quantile", "-o", str(out)])
    assert res.exit_code == 0, res.output
    model = load_model(out)
    assert model.input_transform.method == "quantile"
    Xs = (X - model.x_center) / model.x_scale
    expected = model.estimator.predict(InputTransform("quantile").fit(Xs).transform(Xs))
    np.testing.assert_allclose(model.predict(frame), expected, rtol=1e-9, atol=1e-12)
    res = CliRunner().invoke(cli, ["predict", str(out), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["predicted_y"], expected, rtol=1e-8, atol=1e-10)
