"""Hostile-user review of the merged tree (defaults, intervals, ARD gradient,
guards, mixed CLI tables, n_jobs): regression tests for what it found, and a
brute-force check of jackknife+ against explicit leave-one-out refits."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVC, SparseLSSVR, SparseLSSVRCV
from lssvm.cli.main import cli
from lssvm.selection import cv_error_and_gradient


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(m=40, d=2, seed=1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.sin(X[:, 0]) + 0.3 * r.normal(size=m), r.normal(size=(7, d))


def test_jackknife_plus_matches_explicit_loo_refits():
    X, y, Xt = _data()
    m = len(y)
    model = SparseLSSVR(gamma=0.5, basis="random", n_basis=15, alpha=0.1, random_state=0).fit(X, y)
    got = model.predict_interval(Xt, 0.8, method="jackknife+")
    B = model.basis_vectors_
    R = np.empty(m)
    P = np.empty((m, len(Xt)))
    for i in range(m):
        keep = np.arange(m) != i
        fi = SparseLSSVR(gamma=0.5, basis=B, alpha=0.1).fit(X[keep], y[keep])
        R[i] = abs(y[i] - fi.predict(X[i:i + 1])[0])
        P[i] = fi.predict(Xt)
    a = 0.2  # Barber et al. 2021: floor(a (m+1))-th / ceil((1-a)(m+1))-th smallest
    lo = np.sort(P - R[:, None], axis=0)[int(np.floor(a * (m + 1))) - 1]
    hi = np.sort(P + R[:, None], axis=0)[int(np.ceil((1 - a) * (m + 1))) - 1]
    np.testing.assert_allclose(got[:, 0], lo, atol=1e-10)
    np.testing.assert_allclose(got[:, 1], hi, atol=1e-10)


def test_cv_error_and_gradient_refuses_a_single_row():
    # was: (nan, [nan, nan]) returned silently
    with pytest.raises(ValueError, match="at least 2 rows"):
        cv_error_and_gradient(np.ones((1, 3)), np.ones(1), [0], "rbf", {"gamma": 1.0}, 0.1)
    with pytest.raises(ValueError, match="2-D"):
        cv_error_and_gradient(np.ones(5), np.ones(5), [0], "rbf", {"gamma": 1.0}, 0.1)


def test_cv_error_and_gradient_constant_data_is_finite():
    value, grad = cv_error_and_gradient(np.ones((10, 3)), np.ones(10), [0, 1, 2], "ard", {"gamma": [1.0] * 3}, 0.1)
    assert value == 0.0 and np.all(np.isfinite(grad))


def test_uncalibrated_predict_proba_says_why():
    X, y, Xt = _data()
    clf = SparseLSSVC().fit(X, np.where(y > 0, "a", "b"))
    assert not hasattr(clf, "predict_proba")  # sklearn's convention is kept
    with pytest.raises(AttributeError) as info:
        clf.predict_proba(Xt)
    assert "calibration='sigmoid'" in str(info.value.__cause__)  # was: only "has no attribute 'predict_proba'"


def test_pickled_calibrated_classifier_predicts_the_same():
    X, y, Xt = _data()
    clf = SparseLSSVC(calibration="sigmoid").fit(X, np.where(y > 0, "a", "b"))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(Xt), clf.predict_proba(Xt))


def test_search_cv_regressor_has_predict_std():
    # was: AttributeError, though SparseLSSVRCV forwards predict_interval to best_estimator_
    X, y, Xt = _data()
    cv = SparseLSSVRCV(n_basis=10).fit(X, y)
    np.testing.assert_allclose(cv.predict_std(Xt), cv.best_estimator_.predict_std(Xt))
    np.testing.assert_allclose(cv.predict_std(Xt, noise=False), cv.best_estimator_.predict_std(Xt, noise=False))


def test_predict_std_noise_must_be_bool():
    # was: noise="no" silently meant noise=True
    X, y, Xt = _data()
    with pytest.raises(TypeError, match="noise"):
        SparseLSSVR(n_basis=10).fit(X, y).predict_std(Xt, noise="no")


@pytest.mark.parametrize("coverage", [0, 1, float("nan"), 0.999])
def test_interval_coverage_refused(coverage):
    X, y, Xt = _data(m=20)
    with pytest.raises(ValueError, match="coverage"):
        SparseLSSVR(n_basis=10).fit(X, y).predict_interval(Xt, coverage)


@pytest.mark.parametrize("n_jobs", [0, 2.5, "x"])
def test_bad_n_jobs(n_jobs):
    X, y, _ = _data(m=20)
    with pytest.raises(ValueError, match="n_jobs"):
        SparseLSSVRCV(n_jobs=n_jobs).fit(X, y)


def test_cli_garbage_leaves_nothing_behind(tmp_path):
    X, y, _ = _data(m=30, d=3)
    data = tmp_path / "reg.csv"
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"]).to_csv(data, index=False)
    runner = CliRunner()
    model = tmp_path / "reg.npz"
    assert runner.invoke(cli, ["fit", str(data), "--n-basis", "10", "-o", str(model)]).exit_code == 0
    out = tmp_path / "out"
    out.mkdir()
    for args in (["predict", str(model), str(data), "--proba", "-o", str(out / "p.csv")],
                 ["predict", str(model), str(data), "--interval", "nan", "-o", str(out / "p.csv")],
                 ["predict", str(model), str(data), "--keep", "nosuchcol", "-o", str(out / "p.csv")],
                 ["select", str(data), "--alphas", "1:2:99999999", "--no-report", "-o", str(out / "m.npz")],
                 ["select", str(data), "--test-size", "1.5", "--no-report", "-o", str(out / "m.npz")]):
        res = runner.invoke(cli, args)
        assert res.exit_code in (1, 2), (args, res.output)
        assert "Traceback" not in res.output and not isinstance(res.exception, (ValueError, TypeError))
    assert list(out.iterdir()) == []


def test_select_checks_the_test_table_before_the_search(tmp_path):
    # was: the whole search ran, then "input column(s) not found: b"
    X, y, _ = _data(m=20, d=3)
    frame = pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"])
    frame.to_csv(tmp_path / "tr.csv", index=False)
    frame.drop(columns="b").to_csv(tmp_path / "te.csv", index=False)
    frame.drop(columns="y").to_csv(tmp_path / "te_noy.csv", index=False)
    for test, message in (("te.csv", "not found: b"), ("te_noy.csv", "no target column 'y'")):
        res = CliRunner().invoke(cli, ["select", str(tmp_path / "tr.csv"), "--test", str(tmp_path / test),
                                       "--no-report", "-o", str(tmp_path / "m.npz")])
        assert res.exit_code == 1 and message in res.output and "evaluating" not in res.output, res.output
    assert not (tmp_path / "m.npz").exists()
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "tr.csv"), "--test", str(tmp_path / "tr.csv"),
                                   "--n-basis", "10", "--no-report", "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0 and "on 20 rows (CV MSE" in res.output, res.output


@pytest.mark.parametrize("args, option", [(["--n-basis", "0"], "--n-basis"),
                                          (["--random-state", "-1"], "--random-state"),
                                          (["--kernel", "poly", "--degree", "0"], "--degree")])
def test_select_refuses_bad_counts_as_usage_errors(tmp_path, args, option):
    # was: --n-basis 0 / --degree 0 / --random-state -1 passed the parser, printed a cost line
    # ("model size 0") and failed only inside the fit (the seed with NumPy's own message)
    X, y, _ = _data(m=20, d=3)
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"]).to_csv(tmp_path / "tr.csv", index=False)
    res = CliRunner().invoke(cli, ["select", str(tmp_path / "tr.csv"), *args, "--no-report",
                                   "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 2 and option in res.output and "evaluating" not in res.output, res.output


def test_loaded_model_predict_std_names_itself(tmp_path):
    # was: "... call fit on the training data to get cross-validation results" for predict_std
    from sklearn.exceptions import NotFittedError

    from lssvm.io import SavedModel, load_model, save_model

    X, y, Xt = _data(d=3)
    model = SparseLSSVR(n_basis=12, alpha=0.05).fit(X, y)
    save_model(tmp_path / "m.npz", SavedModel(model, np.zeros(3), np.ones(3), list("abc"), "y"))
    loaded = load_model(tmp_path / "m.npz").estimator
    np.testing.assert_allclose(loaded.predict_interval(Xt, 0.8), model.predict_interval(Xt, 0.8), atol=1e-12)
    for call in (lambda: loaded.predict_std(Xt), lambda: loaded.log_evidence(), lambda: loaded.gcv()):
        with pytest.raises(NotFittedError, match="loaded from a file"):
            call()


def test_predict_keep_never_repeats_a_column(tmp_path):
    # was: --keep a --keep a wrote "a,a,..."; --keep predicted_y beside the prediction wrote two predicted_y
    X, y, _ = _data(m=20, d=3)
    frame = pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"])
    frame.to_csv(tmp_path / "tr.csv", index=False)
    runner = CliRunner()
    model = tmp_path / "m.npz"
    assert runner.invoke(cli, ["fit", str(tmp_path / "tr.csv"), "--n-basis", "10", "-o", str(model)]).exit_code == 0
    res = runner.invoke(cli, ["predict", str(model), str(tmp_path / "tr.csv"), "--keep", "a", "--keep", "a",
                              "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    assert list(pd.read_csv(tmp_path / "p.csv").columns) == ["a", "predicted_y"]
    frame.assign(predicted_y=1.0).to_csv(tmp_path / "again.csv", index=False)
    res = runner.invoke(cli, ["predict", str(model), str(tmp_path / "again.csv"), "--keep", "predicted_y",
                              "-o", str(tmp_path / "q.csv")])
    assert res.exit_code == 2 and "predicted_y" in res.output and not (tmp_path / "q.csv").exists()


@pytest.mark.parametrize("task", [[], ["--task", "regression"]])
def test_numeric_target_with_stray_text_names_the_value(tmp_path, task):
    # was: "target 'y' is not numeric; use --task classification" (even with --task regression), or with
    # the auto task "... 20 distinct values in 20 rows, so it does not look like class labels"
    X, y, _ = _data(m=20, d=3)
    frame = pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"]).astype({"y": object})
    frame.loc[3, "y"] = "oops"
    frame.to_csv(tmp_path / "tr.csv", index=False)
    res = CliRunner().invoke(cli, ["fit", str(tmp_path / "tr.csv"), *task, "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 1 and "data row 4: 'oops'" in res.output, res.output
    assert not (tmp_path / "m.npz").exists()


def test_cv_plus_keep_matches_explicit_fold_refits():
    from sklearn.model_selection import KFold

    X, y, Xt = _data(seed=3)
    m = len(y)
    model = SparseLSSVR(gamma=0.5, basis="random", n_basis=15, alpha=0.1, random_state=0).fit(X, y)
    folds = list(KFold(5).split(X))
    got = model.predict_interval(Xt, 0.8, method="cv+", cv=folds, basis_in_holdout="keep")
    R = np.empty(m)
    P = np.empty((m, len(Xt)))
    for tr, te in folds:
        f = SparseLSSVR(gamma=0.5, basis=model.basis_vectors_, alpha=0.1).fit(X[tr], y[tr])
        R[te] = np.abs(y[te] - f.predict(X[te]))
        P[te] = f.predict(Xt)
    lo = np.sort(P - R[:, None], axis=0)[int(np.floor(0.2 * (m + 1))) - 1]
    hi = np.sort(P + R[:, None], axis=0)[int(np.ceil(0.8 * (m + 1))) - 1]
    np.testing.assert_allclose(got, np.c_[lo, hi], atol=1e-10)


def test_search_classifier_can_be_calibrated():
    from lssvm import SparseLSSVCCV

    X, y, Xt = _data()
    clf = SparseLSSVCCV(calibration="sigmoid", n_basis=10).fit(X, np.where(y > 0, "a", "b"))
    np.testing.assert_allclose(clf.predict_proba(Xt).sum(axis=1), 1.0)
