from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_classifier

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVR,
    NystromLSSVC,
    NystromLSSVR,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.datasets import load_boston, load_dataset, load_motorcycle, load_ripley
from lssvm.exceptions import NotFittedError
from lssvm.io import SavedModel, infer_task, load_model, read_table, save_model, split_xy


def test_bundled_datasets_shapes_and_citations():
    b = load_motorcycle()
    assert b.data.shape == (133, 1) and b.target.shape == (133,)
    assert b.feature_names == ["times"] and b.target_names == ["accel"]
    assert "Silverman" in b.DESCR
    X, y = load_boston(return_X_y=True)
    assert X.shape == (506, 13) and y.shape == (506,)
    X, y = load_ripley(return_X_y=True)
    assert X.shape == (250, 2) and sorted(np.unique(y)) == [0, 1]
    assert load_ripley(subset="test", return_X_y=True)[0].shape == (1000, 2)
    assert load_ripley(subset="all").data.shape == (1250, 2)
    assert load_dataset("boston").frame.shape == (506, 14)
    with pytest.raises(ValueError, match="unknown data set"):
        load_dataset("iris")
    with pytest.raises(ValueError, match="subset"):
        load_ripley(subset="valid")


@pytest.mark.parametrize("classifier", [False, True])
def test_model_round_trip_without_pickle(tmp_path, rng, classifier):
    X = rng.standard_normal((40, 3))
    if classifier:
        y = np.array(["left", "mid", "right"])[np.digitize(X[:, 0], [-0.5, 0.5])]
        est = SparseLSSVC(gamma=0.5, alpha=0.1).fit(X, y)
    else:
        y = np.column_stack([X[:, 0], X[:, 1] ** 2])
        est = SparseLSSVR(kernel="poly", degree=2, gamma=0.5, alpha=0.1).fit(X, y)
    center, scale = X.mean(0), X.std(0)
    model = SavedModel(est, center, scale, ["a", "b", "c"], "y", {"note": 1})
    path = save_model(tmp_path / "m.npz", model)
    with np.load(path, allow_pickle=False) as data:  # loads with pickle disabled
        assert "metadata" in data.files
    loaded = load_model(path)
    Xn = rng.standard_normal((10, 3))
    if classifier:
        np.testing.assert_array_equal(loaded.predict(Xn * scale + center), est.predict(Xn))
    else:
        np.testing.assert_allclose(loaded.predict(Xn * scale + center), est.predict(Xn), rtol=1e-10, atol=1e-12)
    assert loaded.feature_names == ["a", "b", "c"] and loaded.metadata == {"note": 1}
    if classifier:
        np.testing.assert_array_equal(loaded.estimator.classes_, est.classes_)
    with pytest.raises(NotFittedError, match="loaded from a file"):
        loaded.estimator.loo_residuals()
    with pytest.raises(ValueError, match="expects 3 input column"):
        loaded.predict(Xn[:, :2])


def test_load_model_rejects_other_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.ones(3))
    with pytest.raises(ValueError, match="not an lssvm model file"):
        load_model(p)
    q = tmp_path / "y.npz"
    q.write_text("hello")
    with pytest.raises(ValueError, match=r"not an lssvm model file \(not an .npz archive\)"):
        load_model(q)
    r = tmp_path / "z.npy"
    np.save(r, np.ones(3))
    with pytest.raises(ValueError, match="not an .npz archive"):
        load_model(r)
    t = tmp_path / "t.npz"
    np.savez(t, a=np.ones(1000))
    t.write_bytes(t.read_bytes()[:200])  # truncated archive
    with pytest.raises(ValueError, match="not a readable lssvm model file"):
        load_model(t)


def test_split_xy_errors():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "s": ["x", "y", "z"], "t": [0.5, 1.5, 2.5]})
    with pytest.raises(ValueError, match="target column 'q' not found"):
        split_xy(frame, "q")
    with pytest.raises(ValueError, match="non-numeric input column.*s"):
        split_xy(frame, "t")
    X, y, names = split_xy(frame, "t", drop=["s"])
    assert X.shape == (3, 1) and names == ["a"]
    with pytest.raises(ValueError, match="missing values in input column.*a"):
        split_xy(frame.assign(a=[1.0, None, 2.0]), "t", drop=["s"])
    with pytest.raises(ValueError, match="missing value"):
        split_xy(frame.assign(t=[1.0, None, 2.0]), "t", drop=["s"])
    with pytest.raises(ValueError, match="no input columns"):
        split_xy(frame[["t"]], "t")
    assert infer_task(pd.Series(["a", "b"])) == "classification"
    assert infer_task(pd.Series([0, 1, 1])) == "classification"
    assert infer_task(pd.Series([0.1, 1.2, 3.0])) == "regression"
    assert infer_task(pd.Series([0.5, 1.5, 0.5])) == "regression"  # two values, not labels
    assert infer_task(pd.Series([True, False])) == "classification"


def test_read_table_formats(tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    frame.to_csv(tmp_path / "t.csv.gz", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.csv.gz"), frame)
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.parquet"), frame)
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(ValueError, match="unknown file type"):
        read_table(tmp_path / "t.xlsx")
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(ValueError, match="cannot read|empty"):
        read_table(tmp_path / "e.csv")


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.skipif(not (SHARED_DATA / "ida_heart.csv.gz").exists(), reason="shared/data not beside the checkout")
def test_ida_reader_rebuilds_a_realisation():
    from lssvm.datasets import ida_realisations, load_ida

    assert ida_realisations("heart", SHARED_DATA) == list(range(1, 11))
    assert ida_realisations("diabetis", SHARED_DATA) == []
    assert len(ida_realisations("diabetis", SHARED_DATA, substitute=True)) == 100
    Xtr, ytr, Xte, yte = load_ida("heart", 3, SHARED_DATA)
    assert Xtr.shape == (170, 13) and Xte.shape == (100, 13)
    assert set(np.unique(ytr)) == {-1.0, 1.0}
    with pytest.raises(ValueError, match="no realisation 11"):
        load_ida("heart", 11, SHARED_DATA)
    with pytest.raises(ValueError, match="unknown IDA set"):
        load_ida("hearts", 1, SHARED_DATA)


@pytest.mark.parametrize("make", [
    lambda: FixedSizeLSSVR(gamma=0.5, alpha=0.1, n_basis=20, random_state=0),
    lambda: NystromLSSVR(gamma=0.5, alpha=0.1, n_basis=15, predictor="low-rank", random_state=0),
    lambda: NystromLSSVR(gamma=0.5, alpha=0.1, n_basis=15, predictor="exact", random_state=0),
    lambda: FixedSizeLSSVC(gamma=0.5, alpha=0.1, n_basis=20, random_state=0),
    lambda: NystromLSSVC(gamma=0.5, alpha=0.1, n_basis=15, random_state=0),
    lambda: SparseLSSVRCV(param_space={"gamma": [0.5, 2.0]}, basis="random", n_basis=20, random_state=0),
])
def test_every_model_saves_as_its_kernel_expansion(tmp_path, rng, make):
    X = rng.standard_normal((60, 3))
    y = X[:, 0] - X[:, 1] ** 2
    est = make()
    if is_classifier(est):
        y = np.where(y > 0, "up", "down")
    est.fit(X, y)
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], "t"))
    loaded = load_model(path)
    Xn = rng.standard_normal((25, 3))
    if is_classifier(est):
        np.testing.assert_array_equal(loaded.predict(Xn), est.predict(Xn))
        np.testing.assert_allclose(loaded.estimator.decision_function(Xn), est.decision_function(Xn), rtol=1e-10,
                                   atol=1e-12)
    else:
        np.testing.assert_allclose(loaded.predict(Xn), est.predict(Xn), rtol=1e-10, atol=1e-12)
    assert loaded.fitted_as == type(est).__name__
