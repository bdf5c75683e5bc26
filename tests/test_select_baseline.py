"""The trivial baseline beside every score of ``lssvm select``: the mean
predictor's MSE on the model's own LOO / k-fold partition (checked against
explicit refits of scikit-learn's DummyRegressor), the majority class's
error rate, the same on the test rows, and a note when the model is not
clearly better."""

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.dummy import DummyRegressor
from sklearn.model_selection import KFold, LeaveOneOut, cross_val_predict

from lssvm.cli._baseline import CLEARLY_BETTER, cv_baseline, heldout_baseline
from lssvm.cli.main import cli

FAST = ["--gammas", "0.05,0.5", "--alphas", "1e-3:10:5", "--basis", "random", "--n-basis", "30"]


@pytest.mark.parametrize("cv", ["loo", 5])
def test_mean_baseline_is_the_dummy_refitted_on_each_fold(cv, rng):
    y = rng.normal(3.0, 2.0, (37, 2))
    splitter = LeaveOneOut() if cv == "loo" else KFold(cv)
    pred = cross_val_predict(DummyRegressor(), np.zeros((37, 1)), y, cv=splitter)
    folds = None if cv == "loo" else [test for _, test in splitter.split(y)]
    base = cv_baseline(y, folds, "mse")
    np.testing.assert_allclose(base.value, np.mean((y - pred) ** 2), rtol=1e-12)


def test_mean_baseline_of_a_classifier_scores_its_codes(rng):
    y = rng.choice(np.array(["a", "b", "c"], dtype=object), 40)
    classes = np.array(["a", "b", "c"], dtype=object)
    Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    pred = cross_val_predict(DummyRegressor(), np.zeros((40, 1)), Y, cv=LeaveOneOut())
    np.testing.assert_allclose(cv_baseline(y, None, "mse", classes).value, np.mean((Y - pred) ** 2), rtol=1e-12)


def test_majority_baseline_and_the_verdict():
    y = np.array([2] * 50 + [0] * 30 + [1] * 20)
    base = cv_baseline(y, None, "error_rate", np.array([0, 1, 2]))
    assert base.value == pytest.approx(0.5) and "'2'" in base.what
    assert base.verdict(0.49) is not None and "not clearly better" in base.verdict(0.49)
    assert base.verdict(CLEARLY_BETTER * 0.5 - 1e-9) is None
    assert cv_baseline(y, None, "evidence", None) is None
    names = [n for n, _ in heldout_baseline(y, np.array([2, 0, 1, 2]), "classification")]
    assert names[:2] == ["error rate", "balanced accuracy"]


def _table(rng, n, signal):
    X = rng.normal(size=(n, 3))
    score = X[:, 0] * 3 if signal else rng.normal(size=n)
    y = np.digitize(score, [-0.3, 0.3])  # three classes
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": np.array(["lo", "mid", "hi"])[y]})


def test_select_flags_a_model_no_better_than_the_majority_class(tmp_path, rng):
    _table(rng, 150, signal=False).to_csv(tmp_path / "noise.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "noise.csv"), *FAST, "--test-size", "0.3",
                                   "-o", str(tmp_path / "m.npz"), "--report", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert "baseline   always the majority class '" in res.stdout
    assert "baseline   on the test rows: error rate" in res.stdout
    assert "note       the model is not clearly better than always the majority class" in res.stdout
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "baseline, always the majority class" in page and "<td>baseline</td>" in page
    assert "not clearly better" in page


def test_select_regression_baseline_and_a_clear_win_without_a_note(tmp_path, rng):
    _table(rng, 150, signal=True).to_csv(tmp_path / "signal.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "signal.csv"), *FAST, "--task", "regression",
                                   "--target", "a", "--drop", "y", "--cv", "5", "-o", str(tmp_path / "m.npz"),
                                   "--no-report"])
    assert res.exit_code == 0, res.output
    assert "baseline   always the mean of the training targets: CV MSE" in res.stdout
    assert "not clearly better" in res.stdout  # "a" is independent of b, c: the mean is as good
    table = _table(rng, 150, signal=True)
    table.to_csv(tmp_path / "s2.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "s2.csv"), *FAST, "-o", str(tmp_path / "m2.npz"),
                                   "--no-report"])
    assert res.exit_code == 0, res.output
    assert "baseline   always the majority class" in res.stdout and "note" not in res.stdout


def test_fit_prints_the_leave_one_out_baseline(tmp_path):
    res = CliRunner().invoke(cli, ["fit", "motorcycle", "--target", "accel", "--basis", "random", "--n-basis", "30",
                                   "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    m = re.search(r"baseline   always the mean of the training targets: loo_mse ([0-9.]+) "
                                r"\(leave-one-out\)", res.output)
    from lssvm.datasets import load_motorcycle

    y = load_motorcycle(as_frame=True).frame["accel"].to_numpy()
    assert m and float(m.group(1)) == pytest.approx(np.var(y) * (len(y) / (len(y) - 1)) ** 2, rel=1e-3)
