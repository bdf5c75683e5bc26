"""Mixed tabular data -- the encoding, its stored form, the pipeline."""

import warnings

import numpy as np
import pandas as pd
import pytest

from lssvm import SparseLSSVC, SparseLSSVR, make_tabular_pipeline
from lssvm.io import ModelFileError, SavedModel, load_model, save_model
from lssvm.io.tabular import TabularEncoding, as_text, categorical_columns, make_tabular_preprocessor


def _frame(rng, n=300):
    f = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.integers(0, 5, n).astype(float),
        "c": rng.choice(["x", "y", "z", "w"], n, p=[0.3, 0.3, 0.2, 0.2]),
        "d": rng.choice(["p", "q"], n),
    })
    f.loc[rng.random(n) < 0.1, "a"] = np.nan
    f.loc[rng.random(n) < 0.1, "c"] = np.nan
    f.loc[f.index[:2], "c"] = "r"  # rarer than 1 %: grouped as infrequent when n > 200
    return f


@pytest.mark.parametrize("categorical", ["auto", ["c", "d", "b"], "none"])
@pytest.mark.parametrize("scale", ["standard", "minmax", "none"])
def test_encoding_reproduces_the_column_transformer(rng, categorical, scale):
    f = _frame(rng)
    if categorical == "none":
        f = f[["a", "b"]]
    ct = make_tabular_preprocessor(categorical, scale=scale).fit(f)
    enc = TabularEncoding.from_fitted(ct)
    new = _frame(rng, 60)[list(f.columns)]
    if categorical != "none":
        new.loc[new.index[:3], "c"] = "never-seen"
        new.loc[new.index[3], "c"] = "r"  # a rare training level: infrequent, not unseen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns about unknown levels
        expected = ct.transform(new)
    got = enc.transform(new)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14)
    assert enc.feature_names == list(ct.get_feature_names_out())
    if categorical != "none":
        assert enc.unseen == {"c": 3}
        assert any(n.endswith("c_infrequent_sklearn") for n in enc.feature_names)  # 'r' grouped
    meta, arrays = enc.to_stored()
    assert TabularEncoding.from_stored(meta, arrays) == enc


def test_unseen_level_without_infrequent_group_is_all_zero(rng):
    f = pd.DataFrame({"a": rng.normal(size=40), "d": rng.choice(["p", "q"], 40)})
    enc = TabularEncoding.from_fitted(make_tabular_preprocessor().fit(f))
    Z = enc.transform(pd.DataFrame({"a": [0.0], "d": ["new"]}))
    assert Z.shape == (1, 3) and np.all(Z[0, 1:] == 0) and enc.unseen == {"d": 1}


def test_as_text_merges_integer_spellings():
    out = as_text(pd.DataFrame({"k": [3, 4]}))
    out2 = as_text(pd.DataFrame({"k": [3.0, np.nan]}))
    assert out[0, 0] == out2[0, 0] == "3" and np.isnan(out2[1, 0])


def test_categorical_columns_choices():
    f = pd.DataFrame({"n": [1.0, 2.0], "t": ["a", "b"], "k": [1, 2], "y": [0, 1]})
    assert categorical_columns(f, "auto", exclude=["y"]) == (["t"], ["n", "k"])
    assert categorical_columns(f, ["t", "k"], exclude=["y"]) == (["t", "k"], ["n"])
    with pytest.raises(ValueError, match="non-numeric input column.*t"):
        categorical_columns(f, "none", exclude=["y"])
    with pytest.raises(ValueError, match="not found.*zz"):
        categorical_columns(f, ["zz"], exclude=["y"])


def test_pipeline_fits_mixed_frames_with_missing_values(rng):
    f = _frame(rng)
    y = (f["d"] == "p").to_numpy() ^ (rng.random(len(f)) < 0.1)
    clf = make_tabular_pipeline(SparseLSSVC(gamma=0.2, alpha=0.1, basis="random", n_basis=40, random_state=0))
    assert clf.fit(f, y).score(f, y) > 0.8
    reg = make_tabular_pipeline(SparseLSSVR(gamma=0.2, alpha=0.1, basis="random", n_basis=40, random_state=0),
                                categorical=["c", "d"])
    assert reg.fit(f, f["b"].to_numpy()).predict(f).shape == (len(f),)


def _saved_model(rng, tmp_path):
    f = _frame(rng)
    ct = make_tabular_preprocessor().fit(f)
    X = ct.transform(f)
    y = (f["d"] == "p").to_numpy().astype(int)
    est = SparseLSSVC(gamma=0.2, alpha=0.1, basis="random", n_basis=30, random_state=0).fit(X, y)
    enc = TabularEncoding.from_fitted(ct)
    names = enc.feature_names
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(len(names)), np.ones(len(names)), names,
                                                      "y", preprocessing=enc))
    return path, f, est, ct, enc


def test_model_file_round_trips_the_encoding_exactly(rng, tmp_path):
    path, f, est, ct, enc = _saved_model(rng, tmp_path)
    model = load_model(path)
    assert model.preprocessing == enc
    for name in ("medians", "center", "scale"):
        np.testing.assert_array_equal(getattr(model.preprocessing, name), getattr(enc, name))
    new = _frame(rng, 50)
    new.loc[new.index[0], "c"] = "never-seen"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = est.decision_function(ct.transform(new))
    np.testing.assert_array_equal(model.estimator.decision_function(model.encode(new)), expected)


def _rewrite(path, edit):
    """Edit the stored JSON of the encoding and recompute the checksum (a
    consistent-looking but wrong file) -- or not (tampering)."""
    import json

    from lssvm.io.model_io import _checksum

    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["metadata"]))
    rechecksum = edit(meta, arrays)
    arrays["metadata"] = np.array(json.dumps(meta))
    if rechecksum:
        arrays.pop("checksum")
        arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(path, **arrays)


def test_tampered_encoding_is_refused(rng, tmp_path):
    path = _saved_model(rng, tmp_path)[0]

    def level_swap(meta, arrays):
        meta["preprocessing"]["levels"][0][0] = "other"
        return False

    _rewrite(path, level_swap)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(path)


@pytest.mark.parametrize("edit, match", [
    (lambda m, a: m["preprocessing"]["levels"].pop(), "levels are inconsistent"),
    (lambda m, a: m["preprocessing"].__setitem__("numeric_indicators", [7]), "indicators"),
    (lambda m, a: a.__setitem__("pre_scale", np.zeros_like(a["pre_scale"])), "zero scale"),
    (lambda m, a: a.__setitem__("pre_center", a["pre_center"][:1]), "does not match|metadata declares"),
    (lambda m, a: m["preprocessing"]["feature_names"].pop(), "encoded column names"),
])
def test_inconsistent_encoding_is_refused(rng, tmp_path, edit, match):
    path = _saved_model(rng, tmp_path)[0]

    def do(meta, arrays):
        edit(meta, arrays)
        return True

    _rewrite(path, do)
    with pytest.raises(ModelFileError, match=match):
        load_model(path)


@pytest.mark.parametrize("text_column", [False, True])
def test_boolean_column_is_a_two_level_categorical(rng, text_column):
    # a True/False column (pandas' bool dtype, as read from a CSV) is categorical under "auto"; the
    # missing-value indicator of the categorical block takes it as it takes text, alone or beside text
    f = pd.DataFrame({"a": rng.normal(size=40), "flag": rng.random(40) > 0.5})
    new = pd.DataFrame({"a": [0.0, 1.0], "flag": [True, False]})
    if text_column:
        f["d"] = rng.choice(["p", "q"], 40)
        f.loc[f.index[:2], "d"] = np.nan
        new["d"] = ["p", np.nan]
    ct = make_tabular_preprocessor().fit(f)
    enc = TabularEncoding.from_fitted(ct)
    np.testing.assert_allclose(enc.transform(new), ct.transform(new), rtol=0, atol=1e-14)
    assert enc.categorical[0] == "flag" and enc.levels[0] == ["False", "True"]
    assert enc.categorical_indicators == ([1] if text_column else [])  # only "d" had missing values
