"""Mixed tabular data on the command line: mixed tables, test evaluation, predict
--keep and metrics, alpha selection in fit, log-friendly output, umask."""

import io
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import load_model

# beside the checkout (../shared/data), or beside a worktree folder (../../shared/data)
SHARED_DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents[2:4]
                    if (p / "shared" / "data").is_dir()), Path("/nonexistent"))
FAST = ["--gammas", "0.05,0.5", "--alphas", "1e-3:10:5", "--basis", "random", "--n-basis", "40"]


def _mixed(rng, n=240):
    f = pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 80, n).astype(float),
        "job": rng.choice(["clerk", "manager", "nurse"], n),
        "city": rng.choice(["a", "b", "c", "d"], n),
        "hours": rng.normal(40, 8, n),
    })
    score = (f["job"] == "manager") * 2.0 + (f["age"] - 50) / 15 + rng.normal(0, 0.5, n)
    f["rich"] = np.where(score > 0.5, "yes", "no")
    f.loc[rng.random(n) < 0.1, "age"] = np.nan
    f.loc[rng.random(n) < 0.1, "job"] = np.nan
    return f


@pytest.fixture
def runner():
    return CliRunner()


def test_mixed_table_with_missing_values_and_an_unseen_level(runner, tmp_path, rng):
    train, test = _mixed(rng), _mixed(rng, 60)
    test.loc[test.index[:4], "job"] = "astronaut"  # never seen in training
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    res = runner.invoke(cli, ["select", str(tmp_path / "train.csv"), "--target", "rich", "--drop", "id", *FAST,
                              "--test", str(tmp_path / "test.csv"), "-o", str(tmp_path / "m.npz"), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "encoded    2 categorical column(s) -> 7 one-hot columns" in res.output
    assert "missing value(s) in 2 column(s) imputed" in res.output
    assert re.search(r"test       error rate [0-9.]+, balanced accuracy [0-9.]+, (log-loss [0-9.]+, )?AUC", res.output)
    assert "unseen     test levels absent from training: job (4 rows)" in res.output
    model = load_model(tmp_path / "m.npz")
    assert model.preprocessing is not None and model.preprocessing.categorical == ["job", "city"]
    res = runner.invoke(cli, ["predict", str(tmp_path / "m.npz"), str(tmp_path / "test.csv"), "--keep", "id"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.stdout))
    assert list(out.columns) == ["id", "predicted_rich", "decision_yes"]
    assert (out["id"] == test["id"]).all() and set(out["predicted_rich"]) <= {"yes", "no"}
    assert "job (4 rows)" in res.stderr and "metrics    on 60 rows with the target: error rate" in res.stderr
    # the unseen rows are predicted from the other inputs: as if their job were no level at all
    enc = model.preprocessing
    X = enc.transform(test)
    assert np.all(X[:4, [i for i, n in enumerate(enc.feature_names) if n.startswith("cat__job_")]] == 0)


def test_predict_keep_and_metrics_for_regression(runner, tmp_path):
    res = runner.invoke(cli, ["fit", "boston", "--gamma", "0.1", "--basis", "random", "--n-basis", "60",
                              "-o", str(tmp_path / "b.npz")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["predict", str(tmp_path / "b.npz"), "boston", "--keep", "crim", "--keep", "chas"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.stdout))
    assert list(out.columns) == ["crim", "chas", "predicted_medv"] and len(out) == 506
    m = re.search(r"R2 ([0-9.]+), RMSE ([0-9.]+), MAE ([0-9.]+)", res.stderr)
    pred = out["predicted_medv"].to_numpy()
    from lssvm.datasets import load_boston

    y = load_boston(return_X_y=True)[1]
    assert float(m.group(2)) == pytest.approx(np.sqrt(np.mean((pred - y) ** 2)), rel=1e-3)
    res = runner.invoke(cli, ["predict", str(tmp_path / "b.npz"), "boston", "--keep", "nope"])
    assert res.exit_code == 2 and "column(s) nope not in DATA" in res.output


def test_fit_saves_the_alpha_it_printed(runner, tmp_path):
    res = runner.invoke(cli, ["fit", "boston", "--gamma", "0.1", "--basis", "random", "--n-basis", "80",
                              "-o", str(tmp_path / "b.npz")])
    assert res.exit_code == 0, res.output
    best = float(re.search(r"best alpha by LOO: (\S+) \(loo_mse = (\S+)\)", res.output).group(1))
    assert f"saved      alpha={best:.4g}, the best by LOO" in res.output
    model = load_model(tmp_path / "b.npz")
    assert model.estimator.alpha == pytest.approx(best, rel=1e-3)
    # brute force: refit at that alpha on the saved basis; same predictions
    from lssvm.datasets import load_boston

    X, y = load_boston(return_X_y=True)
    Xs = model.transform(X)
    ref = SparseLSSVR(gamma=0.1, alpha=model.estimator.alpha, basis=model.estimator.basis_vectors_).fit(Xs, y)
    np.testing.assert_allclose(model.predict(X), ref.predict(Xs), rtol=1e-8, atol=1e-8)
    res = runner.invoke(cli, ["fit", "boston", "--gamma", "0.1", "--alpha", "1", "--basis", "random",
                              "--n-basis", "80", "-o", str(tmp_path / "c.npz")])
    assert "saved      alpha=1 as given by --alpha" in res.output and "--alpha best saves the best" in res.output
    assert load_model(tmp_path / "c.npz").estimator.alpha == 1.0
    res = runner.invoke(cli, ["fit", "boston", "--alpha", "worst", "-o", str(tmp_path / "d.npz")])
    assert res.exit_code == 2 and "give a number > 0 or best" in res.output


def test_non_tty_progress_and_small_numbers(runner, tmp_path, rng):
    x = np.sort(rng.uniform(0, 3, 120))
    pd.DataFrame({"x": x, "y": 1e-5 * np.sin(x) + 1e-6 * rng.normal(size=120)}).to_csv(tmp_path / "s.csv",
                                                                                      index=False)
    res = runner.invoke(cli, ["select", str(tmp_path / "s.csv"), "--gammas", "0.1,1,10", "--alphas", "1e-4:1:5",
                              "-o", str(tmp_path / "m.npz"), "--report", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == 3 and all(re.match(r"\[\d/3 [0-9.]+ s(, ETA [0-9]+ s)?\] gamma=", ln) for ln in lines)
    assert "0.000000" not in res.stdout and re.search(r"\de-\d\d", res.stdout)  # %.4g, not %f
    assert (tmp_path / "rep" / "curve.png").exists()
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "lssvm version" in page and "command" in page and "what to look for" not in page
    assert "Look for a clear minimum" in page


def test_warnings_are_summarised_once(runner, tmp_path, rng):
    X = np.repeat(rng.uniform(0, 1, (15, 2)), 8, axis=0)  # duplicated rows: a singular basis kernel
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X.sum(axis=1)}).to_csv(tmp_path / "d.csv", index=False)
    args = ["fit", str(tmp_path / "d.csv"), "--gamma", "1e-3", "--basis", "random", "--n-basis", "12",
            "-o", str(tmp_path / "m.npz")]
    res = runner.invoke(cli, args)
    assert res.exit_code == 0, res.output
    summary = [ln for ln in res.stderr.splitlines() if ln.startswith("warnings   ")]
    assert len(summary) == 1 and "NumericalWarning" in summary[0] and "--verbose shows them" in summary[0]
    assert "site-packages" not in res.output and ".py:" not in res.output
    res = runner.invoke(cli, args + ["--verbose"])
    assert "  NumericalWarning (x" in res.stderr and "numerically singular" in res.stderr


def test_files_get_the_users_umask(runner, tmp_path):
    old = os.umask(0o027)
    try:
        res = runner.invoke(cli, ["select", "motorcycle", "--gammas", "1,4", "-o", str(tmp_path / "m.npz"),
                                  "--report", str(tmp_path / "rep")])
        assert res.exit_code == 0, res.output
        assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o640
        assert (tmp_path / "rep").stat().st_mode & 0o777 == 0o750
    finally:
        os.umask(old)


def test_test_size_holds_out_rows(runner, tmp_path):
    res = runner.invoke(cli, ["select", "boston", "--test-size", "0.25", *FAST, "-o", str(tmp_path / "m.npz"),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    assert "data       boston: 379 rows" in res.output and "test       127 rows held out" in res.output
    assert re.search(r"test       R2 [-0-9.]+, RMSE [0-9.]+, MAE [0-9.]+ on 127 rows \(CV MSE", res.output)
    res = runner.invoke(cli, ["select", "boston", "--test-size", "0.25", "--test", "boston"])
    assert res.exit_code == 2 and "not both" in res.output


@pytest.mark.skipif(not (SHARED_DATA / "adult_train.csv.gz").exists(), reason="shared/data not beside the checkout")
def test_adult_raw_file_with_test_file_fast(runner, tmp_path):
    """The raw adult file (text columns, '?'-free missing values) goes through
    unchanged; a 3000-row sample and few widths keep it fast."""
    pd.read_csv(SHARED_DATA / "adult_train.csv.gz").sample(3000, random_state=0).to_csv(tmp_path / "a.csv",
                                                                                         index=False)
    res = runner.invoke(cli, ["select", str(tmp_path / "a.csv"), "--target", "income", *FAST,
                              "--test", str(SHARED_DATA / "adult_test.csv.gz"), "-o", str(tmp_path / "m.npz"),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    err = float(re.search(r"test       error rate ([0-9.]+)", res.output).group(1))
    assert err < 0.2


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED_DATA / "adult_train.csv.gz").exists(), reason="shared/data not beside the checkout")
def test_adult_with_defaults(runner, tmp_path):
    res = runner.invoke(cli, ["select", str(SHARED_DATA / "adult_train.csv.gz"), "--target", "income",
                              "--test", str(SHARED_DATA / "adult_test.csv.gz"), "-o", str(tmp_path / "m.npz"),
                              "--no-report"])
    assert res.exit_code == 0, res.output
    assert re.search(r"test       error rate [0-9.]+", res.output)
