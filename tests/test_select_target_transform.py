"""``lssvm select --target-transform``: the transform of the regression target chosen by the exact CV
error on the original scale, saved in the model file and mapped back by ``lssvm predict``."""

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.cli.main import cli
from lssvm.estimators.target_transform import TargetTransform, transform_fitted_target
from lssvm.io import SavedModel, load_model, save_model
from lssvm.io._archive import ModelFileError

GAMMAS = ["--gammas", "0.25:4:3", "--alphas", "1e-4:1e2:7", "--n-basis", "30"]


def _table(path, y, X):
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(y=y)
    frame.to_csv(path, index=False)
    return frame


def _select(tmp_path, frame_path, *extra):
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", str(frame_path), "--target", "y", *GAMMAS, "--no-report",
                                   "-o", str(out), *extra])
    assert res.exit_code == 0, res.output
    return res.output, out


def test_choice_is_scored_on_the_original_scale(tmp_path):
    # a target far from zero with additive noise: on the log scale its errors are ~1e-5 of identity's, so a
    # choice scored on the transformed scale takes log (or Box-Cox); on the original scale none beats identity
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(80, 2))
    y = 1000 + 10 * X[:, 0] + 3 * X[:, 1] ** 2 + rng.normal(size=80)
    _table(tmp_path / "t.csv", y, X)
    output, out = _select(tmp_path, tmp_path / "t.csv")
    line = next(t for t in output.splitlines() if t.startswith("target     transform"))
    assert line.startswith("target     transform identity; LOO MSE on the original scale:"), line
    scores = dict(part.rsplit(" ", 1) for part in line.split("scale: ")[1].split(", "))
    assert set(scores) == {"identity", "log", "boxcox"}
    # the log score is the mean squared error of exp(LOO prediction on the log scale) against y: a refit of the
    # saved model's basis rows on log(y), at the best alpha on the CLI's path
    model = load_model(out)
    assert model.target_transform is None
    est = model.estimator
    basis = est.basis_vectors_  # on the model's (scaled) input scale
    Xs = model.transform(X)
    rows = [int(np.flatnonzero(np.all(np.isclose(Xs, b), axis=1))[0]) for b in basis]
    refit = SparseLSSVR(kernel="rbf", gamma=est.kernel_.gamma, basis=np.asarray(rows)).fit(Xs, np.log(y))
    path = np.logspace(-4, 2, 7)
    mse = np.mean((np.exp(refit.loo_predict(path)) - y[None, :]) ** 2, axis=1)
    np.testing.assert_allclose(float(scores["log"]), mse.min(), rtol=2e-3)
    assert float(scores["identity"]) > 1e-2  # on the log scale every score would be below 1e-4


def test_log_is_chosen_saved_and_mapped_back_by_predict(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = np.exp(3 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.05 * rng.normal(size=150))
    frame = _table(tmp_path / "t.csv", y, X)
    output, out = _select(tmp_path, tmp_path / "t.csv")
    line = next(t for t in output.splitlines() if t.startswith("target     transform"))
    assert line.split()[2] in ("log;", "Box-Cox"), line
    model = load_model(out)
    assert model.target_transform is not None and model.target_transform.name in ("log", "boxcox")
    assert model.metadata["target_transform"] == line.split("transform ", 1)[1]
    raw = model.estimator.predict(model.encode(frame))  # on the transformed scale
    pred = model.predict(frame)
    np.testing.assert_allclose(pred, model.target_transform.inverse(raw), rtol=1e-12)
    assert np.all(pred > 0) and np.mean((pred - y) ** 2) < np.mean((raw - y) ** 2)
    res = CliRunner().invoke(cli, ["predict", str(out), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["predicted_y"], pred, rtol=1e-9)
    lo_hi = model.predict_interval(frame.iloc[:5], coverage=0.8)
    assert np.all(lo_hi[:, 0] <= pred[:5] + 1e-9) and np.all(pred[:5] <= lo_hi[:, 1] + 1e-9)
    # an identity choice asked for explicitly: no transform in the file
    _, out2 = _select(tmp_path, tmp_path / "t.csv", "--target-transform", "identity", "-o", str(tmp_path / "i.npz"))
    assert load_model(tmp_path / "i.npz").target_transform is None


def test_model_file_round_trips_the_transform(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(70, 3))
    y = np.exp(X[:, 0] + 0.2 * rng.normal(size=70))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SparseLSSVRCV(param_space={"gamma": [0.3]}, n_basis=None, random_state=0).fit(X, y)
        est, choice = transform_fitted_target(search, X, y, "boxcox")
    assert choice.transform.name == "boxcox" and set(choice.scores) == {"boxcox"}
    in_memory = choice.transform.inverse(est.predict(X))
    names = ["a", "b", "c"]
    model = SavedModel(est, np.zeros(3), np.ones(3), names, "y", target_transform=choice.transform)
    save_model(tmp_path / "m.npz", model)
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.target_transform == choice.transform
    np.testing.assert_allclose(loaded.predict(X), in_memory, rtol=1e-10)
    np.testing.assert_allclose(loaded.predict(pd.DataFrame(X, columns=names)), in_memory, rtol=1e-10)


@pytest.mark.parametrize("stored, match", [
    ({"name": "sqrt", "lmbda": None, "low": 0.0, "high": 1.0}, "name"),
    ({"name": "log", "lmbda": None, "low": 1.0, "high": 0.0}, "low < high"),
    ({"name": "boxcox", "lmbda": None, "low": 0.0, "high": 1.0}, "lmbda"),
    ({"name": "log", "low": 0.0, "high": 1.0}, "keys"),
])
def test_bad_stored_transform_is_a_clear_error(stored, match):
    with pytest.raises(ValueError, match=match):
        TargetTransform.from_dict(stored)


def test_loaded_classifier_with_a_transform_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="target transform"):
        from lssvm.io import model_io

        meta = {"target_transform": {"name": "log", "lmbda": None, "low": 0.0, "high": 1.0}}
        # the check runs on the metadata object as load_model reads it
        model_io._check_target_transform(meta, is_classifier=True)


def test_transform_options_refused_where_they_do_not_apply(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    _table(tmp_path / "t.csv", X[:, 0] - 5, X)  # negative target
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", *GAMMAS, "--no-report",
                                   "-o", str(tmp_path / "m.npz"), "--target-transform", "log"])
    assert res.exit_code != 0 and "positive target" in res.output
    _table(tmp_path / "c.csv", np.where(X[:, 0] > 0, "a", "b"), X)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "c.csv"), "--target", "y", *GAMMAS, "--no-report",
                                   "-o", str(tmp_path / "c.npz"), "--target-transform", "box-cox"])
    assert res.exit_code != 0 and "is for regression" in res.output
