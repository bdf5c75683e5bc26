"""``lssvm select --categorical-encoding``: one-hot or ordinal columns for the categorical inputs, the choice
the argmin of the exact CV error of the searched model refitted on each encoding."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import load_model
from lssvm.io.tabular import TabularEncoding, make_tabular_preprocessor

ALPHAS = np.logspace(-3, 1, 5)
OPTIONS = ["--gammas", "0.25:1:2", "--alphas", "1e-3:1e1:5", "--n-basis", "12", "--target-transform", "identity",
           "--no-report"]


def _frame(seed, m=60):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, m)
    c = rng.choice(list("abcdefgh"), m)
    effect = dict(zip("abcdefgh", np.linspace(0, 2, 8), strict=True))  # monotone in the level order
    y = np.sin(2 * x) + np.array([effect[v] for v in c]) + 0.2 * rng.normal(size=m)
    return pd.DataFrame({"x": x, "c": c, "y": y})


def _explicit_loo_mse(X, y, rows, gamma):
    """Lowest over ALPHAS of the LOO mean squared error by m refits (the basis points kept in each)."""
    out = []
    for alpha in ALPHAS:
        err = []
        for i in range(X.shape[0]):
            keep = np.arange(X.shape[0]) != i
            est = SparseLSSVR(gamma=gamma, alpha=alpha, basis=X[rows]).fit(X[keep], y[keep])
            err.append(float(est.predict(X[i:i + 1])[0]) - y[i])
        out.append(np.mean(np.square(err)))
    return min(out)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_choice_is_the_argmin_of_explicit_cv(tmp_path, seed):
    frame = _frame(seed)
    frame.to_csv(tmp_path / "t.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", *OPTIONS,
                                   "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    line = next(t for t in res.output.splitlines() if t.startswith("encoding   categorical:"))
    chosen = line.split(":", 1)[1].split(";")[0].strip()
    reported = dict(p.rsplit(" ", 1) for p in line.split("each: ")[1].split(", "))
    # the two encodings built afresh from the table, as prepare_table does
    ct = make_tabular_preprocessor(["c"], numeric=["x"])
    onehot = np.asarray(ct.fit_transform(frame[["x", "c"]]), dtype=float)
    encoding = TabularEncoding.from_fitted(ct)
    ordinal = encoding.to_ordinal(frame[["x", "c"]]).transform(frame[["x", "c"]])
    assert ordinal.shape == (60, 2)
    model = load_model(tmp_path / "m.npz")
    assert model.preprocessing.categorical_encoding == ("ordinal" if chosen == "ordinal" else "one-hot")
    X_chosen = ordinal if chosen == "ordinal" else onehot
    np.testing.assert_allclose(model.preprocessing.transform(frame), X_chosen, atol=1e-12)
    est = model.estimator
    rows = [int(np.flatnonzero(np.all(np.isclose(X_chosen, b, atol=1e-10), axis=1))[0]) for b in est.basis_vectors_]
    gamma = float(est.kernel_.gamma)
    y = frame["y"].to_numpy()
    explicit = {"one-hot": _explicit_loo_mse(onehot, y, rows, gamma),
                "ordinal": _explicit_loo_mse(ordinal, y, rows, gamma)}
    for name in explicit:
        np.testing.assert_allclose(float(reported[name]), explicit[name], rtol=2e-3)
    assert chosen == min(explicit, key=explicit.get)


def test_ordinal_file_round_trips(tmp_path):
    frame = _frame(2)
    frame.to_csv(tmp_path / "t.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "t.csv"), "--target", "y", *OPTIONS,
                                   "--categorical-encoding", "ordinal", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    assert "encoding   categorical: ordinal (as asked)" in res.output
    model = load_model(tmp_path / "m.npz")
    enc = model.preprocessing
    assert enc.categorical_encoding == "ordinal" and enc.feature_names == ["num__x", "cat__c"]
    pred = model.predict(frame)
    np.testing.assert_allclose(pred, model.estimator.predict(enc.transform(frame)), rtol=1e-12)
    res = CliRunner().invoke(cli, ["predict", str(tmp_path / "m.npz"), str(tmp_path / "t.csv"),
                                   "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["predicted_y"], pred, rtol=1e-9)
    # an unseen level sits at the training mean of the codes: 0 after scaling
    unseen = frame.iloc[:2].assign(c="zzz")
    assert np.allclose(enc.transform(unseen)[:, 1], 0.0) and enc.unseen == {"c": 2}


def test_stored_ordinal_encoding_is_checked():
    frame = _frame(3)
    ct = make_tabular_preprocessor(["c"], numeric=["x"])
    ct.fit(frame[["x", "c"]])
    enc = TabularEncoding.from_fitted(ct).to_ordinal(frame[["x", "c"]])
    meta, arrays = enc.to_stored()
    assert TabularEncoding.from_stored(meta, arrays) == enc
    bad = {**arrays, "pre_ordinal_scale": np.zeros(1)}
    with pytest.raises(ValueError, match="zero scale"):
        TabularEncoding.from_stored(meta, bad)
    with pytest.raises(ValueError, match="pre_ordinal_center"):
        TabularEncoding.from_stored(meta, {k: v for k, v in arrays.items() if k != "pre_ordinal_center"})

