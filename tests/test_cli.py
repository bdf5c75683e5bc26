import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli
from lssvm.io import load_model


@pytest.fixture
def runner():
    return CliRunner()


def test_fit_bundled_dataset_then_predict(runner, tmp_path):
    out = tmp_path / "moto.npz"
    res = runner.invoke(cli, ["fit", "motorcycle", "--target", "accel", "--gamma", "13.1", "--alpha", "1e-3", "--scale", "minmax", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "loo_mse" in res.output and "best alpha by LOO" in res.output and "model saved" in res.output
    assert out.exists()
    model = load_model(out)
    assert model.target_name == "accel" and model.feature_names == ["times"]
    pred_file = tmp_path / "pred.csv"
    res = runner.invoke(cli, ["predict", str(out), "motorcycle", "-o", str(pred_file)])
    assert res.exit_code == 0, res.output
    pred = pd.read_csv(pred_file)
    assert pred.shape == (133, 1) and list(pred.columns) == ["predicted_accel"]
    res = runner.invoke(cli, ["predict", str(out), "motorcycle"])
    assert res.exit_code == 0 and res.stdout.startswith("predicted_accel")


def test_fit_csv_and_parquet_classification(runner, tmp_path, rng):
    X = rng.standard_normal((60, 2))
    frame = pd.DataFrame({"u": X[:, 0], "w": X[:, 1], "label": np.where(X[:, 0] > 0, "pos", "neg")})
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    for name in ("d.csv", "d.parquet"):
        out = tmp_path / f"{name}.npz"
        res = runner.invoke(cli, ["fit", str(tmp_path / name), "--target", "label", "-o", str(out)])
        assert res.exit_code == 0, res.output
        assert "task       classification" in res.output and "SparseLSSVC" in res.output and "loo_error_rate" in res.output
        res = runner.invoke(cli, ["predict", str(out), str(tmp_path / name)])
        assert res.exit_code == 0
        out = pd.read_csv(__import__("io").StringIO(res.stdout))
        assert list(out.columns) == ["predicted_label", "decision_pos"]
        assert set(out["predicted_label"]) <= {"pos", "neg"}
        assert ((out["decision_pos"] > 0) == (out["predicted_label"] == "pos")).all()


@pytest.mark.parametrize(
    "args, message",
    [
        (["fit", "no-such-file.csv"], "no such file"),
        (["fit", "boston", "--target", "price"], "target column 'price' not found"),
        (["fit", "boston", "--alpha", "0"], "alpha must be finite and > 0"),
        (["fit", "boston", "--gamma", "-1"], "gamma must be a finite number > 0"),
        (["fit", "boston", "--alphas", "a:b"], "START:STOP:NUM"),
        (["fit", "boston", "--bogus"], "No such option"),
        (["fit", "boston", "--n-basis", "100000"], "n_basis=100000 is larger"),
        (["fit", "boston", "--task", "regression", "--target", "chas", "--drop", "zzz"], "--drop column"),
    ],
)
def test_errors_are_clean(runner, tmp_path, args, message):
    out = tmp_path / "never.npz"
    res = runner.invoke(cli, args + ["-o", str(out)] if args[-1] != "--bogus" else args)
    assert res.exit_code != 0
    assert message in res.output
    assert "Traceback" not in res.output
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no partial files


def test_non_numeric_inputs_and_targets(runner, tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "c": ["x", "y", "x", "y"], "t": ["p", "q", "p", "r"]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    res = runner.invoke(cli, ["fit", str(tmp_path / "d.csv"), "--target", "t", "--categorical", "none",
                              "-o", str(tmp_path / "m.npz")])
    assert res.exit_code != 0 and "non-numeric input column(s): c" in res.output
    res = runner.invoke(cli, ["fit", str(tmp_path / "d.csv"), "--target", "t", "--drop", "c", "--task", "regression", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code != 0 and "not numeric" in res.output
    assert not (tmp_path / "m.npz").exists()


def test_predict_errors(runner, tmp_path):
    res = runner.invoke(cli, ["predict", str(tmp_path / "none.npz"), "boston"])
    assert res.exit_code != 0 and "does not exist" in res.output
    bogus = tmp_path / "bogus.npz"
    np.savez(bogus, a=np.ones(2))
    res = runner.invoke(cli, ["predict", str(bogus), "boston"])
    assert res.exit_code != 0 and "not an lssvm model file" in res.output
    out = tmp_path / "m.npz"
    assert runner.invoke(cli, ["fit", "motorcycle", "-o", str(out)]).exit_code == 0
    res = runner.invoke(cli, ["predict", str(out), "boston"])
    assert res.exit_code != 0 and "times" in res.output


# ------------------------------------------------------------------ select
def test_select_end_to_end_on_bundled_data(runner, tmp_path):
    from lssvm import SparseLSSVRCV
    from lssvm.datasets import load_motorcycle

    out, rep = tmp_path / "m.npz", tmp_path / "rep"
    res = runner.invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "0.25:16:7", "--basis", "fvs",
                              "-o", str(out), "--report", str(rep)])
    assert res.exit_code == 0, res.output
    assert "best       gamma=" in res.output and "model saved" in res.output
    assert sorted(p.name for p in rep.iterdir()) == ["basis.png", "curve.png", "cv_alpha.png", "cv_width.png",
                                                    "index.html", "interval_methods.csv", "intervals.png",
                                                    "out_of_fold.png", "uncertainty.csv"]
    assert "Best candidates" in (rep / "index.html").read_text()
    # the same search from Python: same best parameters, same predictions from the saved model
    X, y = load_motorcycle(return_X_y=True)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    ref = SparseLSSVRCV(param_space={"gamma": np.geomspace(0.25, 16, 7)}, alphas=np.geomspace(1e-6, 1e4, 21),
                        basis="fvs", random_state=0).fit(Xs, y)
    assert f"gamma={ref.gamma_:.6g}, alpha={ref.alpha_:.6g}" in res.output
    model = load_model(out)
    assert model.fitted_as == "SparseLSSVRCV"
    np.testing.assert_allclose(model.predict(X), ref.predict(Xs), rtol=1e-10, atol=1e-10)
    # a second run replaces the report folder
    res = runner.invoke(cli, ["select", "motorcycle", "--gammas", "1,4", "-o", str(out), "--report", str(rep)])
    assert res.exit_code == 0, res.output
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("args", [
    ["ripley", "--model", "fixed-size", "--cv", "4", "--gammas", "1,4", "--alphas", "0.1,1", "--n-basis", "40"],
    ["ripley", "--model", "nystrom", "--search", "csa", "--max-evaluations", "6", "--n-basis", "0.2"],
    ["boston", "--target", "medv", "--cv", "group:rad", "--basis", "random", "--n-basis", "60", "--search",
     "nelder-mead", "--max-evaluations", "5"],
    ["boston", "--target", "medv", "--kernel", "linear", "--cv", "5"],
])
def test_select_models_searches_and_folds(runner, tmp_path, args):
    out, rep = tmp_path / "m.npz", tmp_path / "rep"
    res = runner.invoke(cli, ["select", *args, "-o", str(out), "--report", str(rep)])
    assert res.exit_code == 0, res.output
    assert out.exists() and (rep / "index.html").exists() and (rep / "cv_alpha.png").exists()
    model = load_model(out)
    assert model.predict(np.zeros((2, len(model.feature_names)))).shape == (2,)


@pytest.mark.parametrize("args, message", [
    (["select", "no-such-file.csv"], "no such file"),
    (["select", "boston", "--target", "price"], "target column 'price' not found"),
    (["select", "NAMES", "--target", "name"], "does not look like class labels"),
    (["select", "NAMES", "--target", "name", "--task", "regression"], "not numeric"),
    (["select", "boston", "--bogus"], "No such option"),
    (["select", "boston", "--search", "annealing"], "Invalid value for '--search'"),
    (["select", "boston", "--cv", "three"], "give loo, a number of folds"),
    (["select", "boston", "--model", "fixed-size", "--cv", "loo"], "fixed-size models need folds"),
    (["select", "boston", "--cv", "group:zone"], "group column 'zone'"),
    (["select", "boston", "--gammas", "0"], "values must be finite and > 0"),
    (["select", "boston", "--search", "nelder-mead", "--gammas", "2"], "0 < low < high"),
])
def test_select_fails_cleanly_without_partial_files(runner, tmp_path, args, message):
    names = pd.DataFrame({"x": np.arange(40.0), "name": [f"person {i}" for i in range(40)]})
    names.to_csv(tmp_path / "names.csv", index=False)
    args = [str(tmp_path / "names.csv") if a == "NAMES" else a for a in args]
    before = sorted(p.name for p in tmp_path.iterdir())
    extra = [] if "--bogus" in args else ["-o", str(tmp_path / "m.npz"), "--report", str(tmp_path / "rep")]
    res = runner.invoke(cli, args + extra)
    assert res.exit_code != 0
    assert message in res.output, res.output
    assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no model, no report, no temporary folder


# -------------------------------------------------------- select, streamed
def _write_parts(tmp_path, frame, n_parts, kind):
    parts = np.array_split(np.arange(len(frame)), n_parts)
    for i, rows in enumerate(parts):
        part = frame.iloc[rows]
        if kind == "parquet":
            part.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
        else:
            part.to_csv(tmp_path / f"part-{i}.csv", index=False)


def test_select_streams_parquet_files_like_the_python_api(runner, tmp_path, rng):
    pytest.importorskip("dask.dataframe")
    import dask.array as da

    from lssvm import SparseLSSVRCV

    X = rng.uniform(-2, 2, (900, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(900)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "t": y})
    _write_parts(tmp_path, frame, 3, "parquet")
    out = tmp_path / "m.npz"
    files = sorted(str(p) for p in tmp_path.glob("part-*.parquet"))
    res = runner.invoke(cli, ["select", *files, "--target", "t", "--chunk-rows", "200", "--basis", "random",
                              "--n-basis", "40", "--gammas", "0.1,0.5,2", "--alphas", "1e-3:10:5", "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "900 rows, 3 inputs" in res.output and "pass       training pass" in res.output
    assert res.output.count("evaluated  gamma=") == 3
    # the same search on Dask arrays from Python
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    ref = SparseLSSVRCV(basis="random", n_basis=40, random_state=0, param_space={"gamma": [0.1, 0.5, 2]},
                        alphas=np.geomspace(1e-3, 10, 5)).fit(da.from_array(Xs, chunks=200), da.from_array(y, chunks=200))
    assert f"gamma={ref.gamma_:.6g}, alpha={ref.alpha_:.6g}" in res.output
    model = load_model(out)
    np.testing.assert_allclose(model.predict(X), ref.predict(Xs), rtol=1e-9, atol=1e-9)
    # a quoted glob pattern, k-fold CV and a report (no out-of-fold figure for streamed rows)
    rep = tmp_path / "rep"
    res = runner.invoke(cli, ["select", str(tmp_path / "part-*.parquet"), "--chunk-rows", "250", "--n-basis", "30",
                              "--cv", "4", "--gammas", "0.5,2", "-o", str(out), "--report", str(rep)])
    assert res.exit_code == 0, res.output
    assert "cross-validation pass 2/2" in res.output
    assert (rep / "index.html").exists() and not (rep / "out_of_fold.png").exists()


def test_select_streams_csv_with_groups_and_labels(runner, tmp_path, rng):
    pytest.importorskip("dask.dataframe")
    X = rng.standard_normal((400, 2))
    frame = pd.DataFrame({"u": X[:, 0], "w": X[:, 1], "site": rng.integers(0, 5, 400),
                          "label": np.where(X[:, 0] * X[:, 1] > 0, "same", "diff")})
    _write_parts(tmp_path, frame, 2, "csv")
    out = tmp_path / "m.npz"
    res = runner.invoke(cli, ["select", str(tmp_path / "part-*.csv"), "--target", "label", "--cv", "group:site",
                              "--chunk-rows", "150", "--n-basis", "30", "--gammas", "0.5,2", "-o", str(out),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    assert "task       classification" in res.output and "SparseLSSVCCV" in res.output
    model = load_model(out)
    assert model.feature_names == ["u", "w"]
    assert set(model.predict(X[:20])) <= {"same", "diff"}


@pytest.mark.parametrize("args, message", [
    (["--model", "fixed-size", "--cv", "loo"], "fixed-size models need folds"),
    (["--basis", "fvs"], "needs all rows in memory"),
    (["--chunk-rows", "1"], "at least 2"),
    (["--target", "zz"], "target column 'zz' not found"),
])
def test_select_streaming_fails_cleanly(runner, tmp_path, rng, args, message):
    pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame({"x": rng.standard_normal(50), "y": rng.standard_normal(50)})
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    before = sorted(p.name for p in tmp_path.iterdir())
    base = ["select", str(tmp_path / "d.parquet"), "--chunk-rows", "20", "-o", str(tmp_path / "m.npz")]
    res = runner.invoke(cli, base + args)
    assert res.exit_code != 0 and message in res.output, res.output
    assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    res = runner.invoke(cli, ["select", str(tmp_path / "nothing-*.parquet"), "--chunk-rows", "20"])
    assert res.exit_code != 0 and "no such file" in res.output


@pytest.mark.parametrize("content, message", [
    ("", "cannot read the table (No columns to parse from file)"),
    ("a,b,y\n", "the table is empty"),
    ("a,b,y\n1,2,3\n3,4,\n5,6,5\n7,8,6\n", "target column 'y' has missing values (first at row 1)"),
])
def test_select_streaming_malformed_csv(runner, tmp_path, content, message):
    pytest.importorskip("dask.dataframe")
    (tmp_path / "d.csv").write_text(content)
    before = sorted(p.name for p in tmp_path.iterdir())
    res = runner.invoke(cli, ["select", str(tmp_path / "d.csv"), "--target", "y", "--chunk-rows", "2",
                              "-o", str(tmp_path / "m.npz"), "--no-report"])
    assert res.exit_code == 1 and message in res.output, res.output
    assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_streamed_nan_target_in_a_later_block_names_the_row(rng):
    da = pytest.importorskip("dask.array")
    from lssvm import SparseLSSVR

    X = rng.standard_normal((60, 2))
    y = X[:, 0].copy()
    y[47] = np.nan
    with pytest.raises(ValueError, match=r"y contains NaN or infinity \(first at row 47\)"):
        SparseLSSVR(basis="random", n_basis=10).fit(da.from_array(X, chunks=20), da.from_array(y, chunks=20))


# ------------------------------------------------- malformed input
def _malformed_files(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("a,b,y\n")
    (tmp_path / "text.csv").write_text("a,b,y\n1,2,x\n3,4,y\n5,6,x\n")
    (tmp_path / "nan.csv").write_text("a,b,y\n1,2,3\n3,,4\n5,6,5\n7,8,6\n")
    (tmp_path / "nan_y.csv").write_text("a,b,y\n1,2,3\n3,4,\n5,6,5\n7,8,6\n")
    res = CliRunner().invoke(cli, ["fit", "motorcycle", "-o", str(tmp_path / "good.npz")])
    assert res.exit_code == 0, res.output
    blob = (tmp_path / "good.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(blob[: len(blob) // 2])
    (tmp_path / "noise.npz").write_bytes(np.random.default_rng(0).bytes(2000))
    (tmp_path / "folder.npz").mkdir()
    arrays = dict(np.load(tmp_path / "good.npz"))
    arrays["dual_coef"] = arrays["dual_coef"] + 1.0  # edited after saving: stale checksum
    np.savez(tmp_path / "edited.npz", **arrays)


@pytest.mark.parametrize("args, code, message", [
    (["fit", "missing.csv"], 2, "missing.csv', and not a bundled data set"),
    (["select", "missing.csv"], 2, "missing.csv', and not a bundled data set"),
    (["fit", "empty.csv"], 1, "empty.csv: cannot read the table"),
    (["select", "empty.csv"], 1, "empty.csv: cannot read the table"),
    (["fit", "header.csv", "--target", "y"], 1, "header.csv: the table is empty"),
    (["select", "header.csv", "--target", "y"], 1, "header.csv: the table is empty"),
    (["fit", "nan.csv", "--target", "y", "--no-impute"], 1, "missing values in input column(s) b (1)"),
    (["fit", "nan_y.csv", "--target", "y"], 1, "missing"),
    (["fit", "motorcycle", "--target", "speed"], 1, "target column 'speed' not found; columns are: times, accel"),
    (["select", "motorcycle", "--target", "speed"], 1, "target column 'speed' not found"),
    (["fit", "text.csv", "--target", "y", "--task", "regression"], 1, "target 'y' is not numeric"),
    (["select", "text.csv", "--target", "y", "--task", "regression"], 1, "target 'y' is not numeric"),
    (["predict", "missing.npz", "motorcycle"], 2, "does not exist"),
    (["predict", "folder.npz", "motorcycle"], 2, "is a directory"),
    (["predict", "truncated.npz", "motorcycle"], 1, "truncated.npz: not a readable lssvm model file; it is truncated"),
    (["predict", "noise.npz", "motorcycle"], 1, "noise.npz: not an lssvm model file (not an .npz archive)"),
    (["predict", "edited.npz", "motorcycle"], 1, "checksum mismatch"),
    (["predict", "good.npz", "empty.csv"], 1, "empty.csv: cannot read the table"),
    (["predict", "good.npz", "header.csv"], 1, "header.csv: the table is empty"),
    (["predict", "good.npz", "text.csv"], 1, "input column(s) not found: times"),
])
def test_malformed_input_fails_cleanly(tmp_path, args, code, message):
    """Message, exit status (1: bad data, 2: bad usage) and nothing written."""
    _malformed_files(tmp_path)
    args = [str(tmp_path / a) if (tmp_path / a).exists() or a.startswith("missing") else a for a in args]
    out = ["-o", str(tmp_path / "out.csv" if args[0] == "predict" else tmp_path / "out.npz")]
    if args[0] == "select":
        out += ["--report", str(tmp_path / "report")]
    before = sorted(p.name for p in tmp_path.iterdir())
    res = CliRunner().invoke(cli, args + out)
    assert res.exit_code == code, res.output
    assert message in res.output, res.output
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no model, predictions, report or temp file


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root reads files without read permission")
def test_unreadable_model_file(tmp_path):
    _malformed_files(tmp_path)
    locked = tmp_path / "good.npz"
    locked.chmod(0)
    res = CliRunner().invoke(cli, ["predict", str(locked), "motorcycle"])
    assert res.exit_code in (1, 2) and "Traceback" not in res.output
    assert "not readable" in res.output or "permission denied" in res.output


def test_unreadable_model_file_without_chmod(tmp_path, monkeypatch):
    """click checks readability with os.access: patched, as root reads anything."""
    import os

    _malformed_files(tmp_path)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if str(p).endswith("good.npz") else real(p, mode))
    res = CliRunner().invoke(cli, ["predict", str(tmp_path / "good.npz"), "motorcycle"])
    assert res.exit_code == 2 and "is not readable" in res.output and "Traceback" not in res.output
