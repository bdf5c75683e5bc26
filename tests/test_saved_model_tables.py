"""A saved tabular model predicts from raw tables in Python exactly as
``lssvm predict`` does: the stored encoding (one-hot levels, imputation,
scaling) is applied by ``SavedModel.predict`` & co., missing values filled
in and unseen levels are said once (``InputWarning``, a stderr line)."""

import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli
from lssvm.exceptions import InputWarning
from lssvm.io import load_model

FAST = ["--gammas", "0.05,0.5", "--alphas", "1e-3:10:5", "--basis", "random", "--n-basis", "40"]


def _table(rng, n, task):
    f = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "job": rng.choice(["clerk", "manager", "nurse"], n),
        "city": rng.choice(["a", "b", "c", "d"], n),
        "hours": rng.normal(40, 8, n),
    })
    score = (f["job"] == "manager") * 2.0 + (f["age"] - 50) / 15 + rng.normal(0, 0.5, n)
    f["y"] = np.where(score > 0.5, "yes", "no") if task == "classification" else score
    f.loc[rng.random(n) < 0.1, "age"] = np.nan
    f.loc[rng.random(n) < 0.1, "job"] = np.nan
    return f


def _new_rows(rng, task):
    """Rows to predict: raw text, missing values in a numeric and a text
    column, and a level never seen in training."""
    test = _table(rng, 50, task).drop(columns="y")
    test["age"], test["job"] = test["age"].fillna(40.0), test["job"].fillna("clerk")
    test.loc[test.index[:3], "age"] = np.nan
    test.loc[test.index[3:5], "hours"] = np.nan
    test.loc[test.index[5:9], "job"] = "astronaut"
    test.loc[test.index[9:10], "job"] = np.nan
    return test


def _cli(args):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture
def classifier_file(tmp_path, rng):
    _table(rng, 220, "classification").to_csv(tmp_path / "train.csv", index=False)
    _cli(["select", str(tmp_path / "train.csv"), *FAST, "--calibration", "sigmoid", "-o", str(tmp_path / "c.npz"),
          "--no-report"])
    return tmp_path / "c.npz"


def test_loaded_classifier_predicts_raw_table_as_the_command(classifier_file, tmp_path, rng):
    test = _new_rows(rng, "classification")
    test.to_csv(tmp_path / "test.csv", index=False)
    res = _cli(["predict", str(classifier_file), str(tmp_path / "test.csv"), "--proba"])
    out = pd.read_csv(io.StringIO(res.stdout))
    m = load_model(classifier_file)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pred = m.predict(test)
    # the text labels, the encoding's numbers: as the command wrote them, and as the documented workaround
    assert list(pred) == list(out["predicted_y"])
    np.testing.assert_array_equal(pred, m.estimator.predict(m.encode(test)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        np.testing.assert_allclose(m.decision_function(test), out["decision_yes"], rtol=1e-12, atol=1e-12)
        P = m.predict_proba(test)
    np.testing.assert_allclose(P, out[["proba_no", "proba_yes"]], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(P, m.estimator.predict_proba(m.encode(test)), rtol=0, atol=0)
    # said once per call, naming the columns and the counts
    texts = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert len(texts) == 2, texts
    assert "missing values filled in" in texts[0] and "age (3 rows)" in texts[0] and "hours (2 rows)" in texts[0]
    assert "job (1 row)" in texts[0]
    assert "levels absent from training" in texts[1] and "job (4 rows)" in texts[1]
    assert re.search(r"imputed +missing values filled in .*age \(3 rows\)", res.stderr)
    assert re.search(r"unseen +levels absent from training.*job \(4 rows\)", res.stderr)


def test_loaded_regressor_intervals_from_raw_table_as_the_command(tmp_path, rng):
    _table(rng, 220, "regression").to_csv(tmp_path / "train.csv", index=False)
    _cli(["select", str(tmp_path / "train.csv"), *FAST, "-o", str(tmp_path / "r.npz"), "--no-report"])
    test = _new_rows(rng, "regression")
    test.to_csv(tmp_path / "test.csv", index=False)
    out = pd.read_csv(io.StringIO(_cli(["predict", str(tmp_path / "r.npz"), str(tmp_path / "test.csv"),
                                        "--interval", "0.8"]).stdout))
    m = load_model(tmp_path / "r.npz")
    with pytest.warns(InputWarning) as said:
        pred = m.predict(test)
    assert any("hours (2 rows)" in str(w.message) for w in said)
    np.testing.assert_allclose(pred, out["predicted_y"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(pred, m.estimator.predict(m.encode(test)))
    with pytest.warns(InputWarning):
        bounds = m.predict_interval(test, coverage=0.8)
    np.testing.assert_allclose(bounds, out[["lower_y", "upper_y"]], rtol=1e-12, atol=1e-12)
    with pytest.raises(AttributeError, match="no predict_proba"):
        m.predict_proba(test)


def test_clean_rows_predict_without_a_warning_and_arrays_are_refused(classifier_file, rng):
    m = load_model(classifier_file)
    clean = _table(rng, 30, "classification").dropna()
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        m.predict(clean)
    with pytest.raises(ValueError, match="pass a pandas DataFrame with the input columns age, hours, job, city"):
        m.predict(m.encode(clean))
    with pytest.raises(ValueError, match="input column\\(s\\) not found: city"):
        m.predict(clean.drop(columns="city"))


def test_select_says_what_it_filled_in_on_the_test_rows(tmp_path, rng):
    _table(rng, 200, "classification").to_csv(tmp_path / "train.csv", index=False)
    test = _new_rows(rng, "classification")
    test["y"] = "yes"
    test.to_csv(tmp_path / "test.csv", index=False)
    res = _cli(["select", str(tmp_path / "train.csv"), *FAST, "--test", str(tmp_path / "test.csv"),
                "-o", str(tmp_path / "m.npz"), "--no-report"])
    assert "imputed    test rows' missing values filled in as in training: age (3 rows), hours (2 rows), " \
           "job (1 rows)" in res.stdout
    assert "unseen     test levels absent from training: job (4 rows)" in res.stdout
