"""The CLI never leaves a model it cannot load.

A feature of about 1e300 (whose std overflows float64) is scaled safely; a
target of about 1e300 (LOO / CV errors overflow) is refused before saving
with a clear message; in every case either the command fails cleanly and
writes nothing, or the saved model loads and predicts.
"""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm.cli._inputs import scaling
from lssvm.cli.main import cli
from lssvm.io import SavedModel, load_model, save_model


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=30)
    out = {}
    for name, cols in {
        "bigx": {"a": X[:, 0], "b": X[:, 1] * 1e300, "y": y},
        "hugex": {"a": X[:, 0], "b": np.where(X[:, 1] > 0, 1.7e308, -1.7e308), "y": y},
        "bigy": {"a": X[:, 0], "b": X[:, 1], "y": y * 1e300},
    }.items():
        out[name] = tmp_path / f"{name}.csv"
        pd.DataFrame(cols).to_csv(out[name], index=False)
    return out


def _fit(args, out):
    return CliRunner().invoke(cli, args + ["-o", str(out)])


@pytest.mark.parametrize("scale", ["standard", "minmax"])
def test_item3_huge_feature_is_scaled_and_the_model_loads(tables, tmp_path, scale):
    out = tmp_path / "m.npz"
    res = _fit(["fit", str(tables["bigx"]), "--gamma", "0.5", "--basis", "random", "--n-basis", "10",
                "--scale", scale], out)
    assert res.exit_code == 0, res.output
    model = load_model(out)
    assert np.all(np.isfinite(model.x_scale)) and model.x_scale[1] > 1e299
    frame = pd.read_csv(tables["bigx"])
    assert np.all(np.isfinite(model.predict(frame[["a", "b"]].to_numpy())))
    res = CliRunner().invoke(cli, ["predict", str(out), str(tables["bigx"])])
    assert res.exit_code == 0, res.output


def test_item3_scaling_matches_the_plain_formula_where_that_does_not_overflow():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3)) * [1.0, 1e5, 1e-5] + [3.0, -2e5, 0.0]
    c, s = scaling(X, "standard")
    np.testing.assert_allclose(c, X.mean(axis=0), rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(s, X.std(axis=0), rtol=1e-12)
    c, s = scaling(X, "minmax")
    np.testing.assert_allclose(s, X.max(axis=0) - X.min(axis=0), rtol=1e-12)


def test_item3_unscalable_feature_is_refused_by_name(tables, tmp_path):
    out = tmp_path / "m.npz"
    res = _fit(["fit", str(tables["hugex"]), "--gamma", "0.5", "--scale", "minmax"], out)
    assert res.exit_code == 1 and "cannot be scaled" in res.output and "column(s) 1" in res.output
    assert "Traceback" not in res.output and not out.exists()


@pytest.mark.parametrize("command", [
    ["fit", "--gamma", "0.5", "--basis", "random", "--n-basis", "10"],
    ["select", "--gammas", "0.1:1:2", "--alphas", "1e-3:1:3", "--no-report"],
])
def test_item3_huge_target_is_refused_before_saving(tables, tmp_path, command):
    out = tmp_path / "m.npz"
    res = _fit(command[:1] + [str(tables["bigy"])] + command[1:], out)
    assert res.exit_code == 1, res.output
    assert "not finite" in res.output and "divide the target" in res.output
    assert "Traceback" not in res.output and not out.exists()


def test_item3_save_model_refuses_non_finite_arrays(tmp_path):
    from lssvm import SparseLSSVR

    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 2))
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis=np.arange(5)).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="'x_scale' holds NaN or infinity"):
        save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(2), np.array([1.0, np.inf]), ["a", "b"]))
    assert not (tmp_path / "m.npz").exists()
