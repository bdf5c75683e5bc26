"""``lssvm predict --interval / --proba``."""

import numpy as np
import pandas as pd
from click.testing import CliRunner

from lssvm.cli.main import cli
from lssvm.datasets import load_dataset
from lssvm.io import load_model


def test_interval_and_proba_columns(tmp_path):
    runner = CliRunner()
    reg, clf = tmp_path / "m.npz", tmp_path / "r.npz"
    assert runner.invoke(cli, ["fit", "motorcycle", "--target", "accel", "--gamma", "13.1", "--alpha", "0.01",
                               "--basis", "random", "--n-basis", "30", "-o", str(reg)]).exit_code == 0
    res = runner.invoke(cli, ["predict", str(reg), "motorcycle", "--interval", "0.9"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(__import__("io").StringIO(res.stdout))
    assert list(out.columns) == ["predicted_accel", "lower_accel", "upper_accel"]
    assert np.all(out.lower_accel <= out.upper_accel)
    model = load_model(reg)
    X = model.transform(load_dataset("motorcycle", as_frame=True).frame[model.feature_names].to_numpy(float))
    np.testing.assert_allclose(out[["lower_accel", "upper_accel"]].to_numpy(),
                               model.estimator.predict_interval(X, 0.9), rtol=1e-9)
    assert runner.invoke(cli, ["fit", "ripley", "--gamma", "2", "--alpha", "0.1", "--basis", "random",
                               "--n-basis", "30", "-o", str(clf)]).exit_code == 0
    res = runner.invoke(cli, ["predict", str(clf), "ripley", "--proba"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(__import__("io").StringIO(res.stdout))
    P = out[[c for c in out.columns if c.startswith("proba_")]].to_numpy()
    assert P.shape[1] == 2 and np.allclose(P.sum(axis=1), 1.0)
    # bad input: clear messages, no traceback
    for args, msg in (([str(reg), "motorcycle", "--interval", "1.5"], "strictly between 0 and 1"),
                      ([str(clf), "ripley", "--interval", "0.9"], "for regression models"),
                      ([str(reg), "motorcycle", "--proba"], "for classifiers")):
        res = runner.invoke(cli, ["predict", *args])
        assert res.exit_code == 1 and msg in res.output and "Traceback" not in res.output
