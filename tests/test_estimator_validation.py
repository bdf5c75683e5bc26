"""Bad input to the estimators and searches:
each case raises a ValueError naming the argument and what to do, or warns,
instead of hanging, crashing inside, or returning a silent wrong number."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.model_selection import LeaveOneGroupOut

from lssvm import (
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NumericalWarning,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.cli.main import cli
from lssvm.io import ModelFileError, SavedModel, load_model, save_model
from lssvm.io.model_io import _checksum

RNG = np.random.RandomState(0)
X = RNG.randn(30, 3)
Y = np.sin(X[:, 0])
YC = (X[:, 0] > 0).astype(int)
GS = {"gamma": [0.1, 1.0]}
WORDS = np.array(["a", "b"] * 15)


@pytest.mark.parametrize("fit, message", [
    (lambda: SparseLSSVRCV(basis="greedy", n_candidates=0, param_space=GS).fit(X, Y),
     "'n_candidates' parameter of \\w+ must be"),
    (lambda: SparseLSSVRCV(rcond=2, param_space=GS).fit(X, Y), "'rcond' parameter of \\w+ must be"),
    (lambda: SparseLSSVRCV(basis_tol=1.5, param_space=GS).fit(X, Y), "'basis_tol' parameter of \\w+ must be"),
    (lambda: SparseLSSVRCV(basis="greedy", n_basis=5, alpha=float("nan"), param_space=GS).fit(X, Y),
     "'alpha' parameter of \\w+ must be"),
    (lambda: SparseLSSVRCV(block_size=0, param_space=GS).fit(X, Y), "'block_size' parameter of \\w+ must be"),
    (lambda: FixedSizeLSSVRCV(stop_window=0, param_space=GS, cv=3).fit(X, Y), "'stop_window' parameter of \\w+ must be"),
    (lambda: FixedSizeLSSVRCV(max_size=0, param_space=GS, cv=3).fit(X, Y), "'max_size' parameter of \\w+ must be"),
    (lambda: FixedSizeLSSVRCV(solver="scdpp", n_candidates=0, param_space=GS, cv=3).fit(X, Y),
     "'n_candidates' parameter of \\w+ must be"),
    (lambda: FixedSizeLSSVRCV(nu=float("nan"), param_space=GS, cv=3).fit(X, Y), "'nu' parameter of \\w+ must be"),
    (lambda: FixedSizeLSSVRCV(basis=X[:5], param_space=GS, cv=3).fit(X, Y),
     "must come from the training rows"),
    (lambda: FixedSizeLSSVRCV(cv="foo", param_space=GS).fit(X, Y), "Got 'foo' instead"),
    (lambda: FixedSizeLSSVR(gamma=0.1, cv=3).fit(X, Y * 1e155), "not finite .overflow.: scale the targets"),
    (lambda: NystromLSSVR(block_size=0).fit(X, Y), "'block_size' parameter of \\w+ must be"),
    (lambda: NystromLSSVRCV(param_space={"gamma": "abc"}).fit(X, Y), r"param_space\['gamma'\] must be numbers"),
    (lambda: SparseLSSVRCV(param_space={"foo": [1]}).fit(X, Y), r"parameters of the 'rbf' kernel \(gamma\)"),
    (lambda: SparseLSSVRCV(kernel="linear", param_space=GS).fit(X, Y), "it has none to search"),
    (lambda: FixedSizeLSSVCCV(param_space=GS, cv=3).fit(X, np.array(["a", None] * 15, dtype=object)),
     r"class labels are missing \(None / NaN\) in 15 row"),
    (lambda: SparseLSSVR().fit(pd.DataFrame({"a": X[:, 0], "c": WORDS}), Y), r"non-numeric column\(s\) c"),
    (lambda: SparseLSSVR(normalize_kernel="yes").fit(X, Y), "'normalize_kernel' parameter of \\w+ must be"),
    (lambda: SparseLSSVRCV(refit="no", param_space=GS).fit(X, Y), "'refit' parameter of \\w+ must be"),
])
def test_clear_errors(fit, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the overflow case overflows on purpose
        with pytest.raises(ValueError, match=message):
            fit()


@pytest.mark.parametrize("make", [SparseLSSVR, FixedSizeLSSVR, NystromLSSVR, SparseLSSVRCV, FixedSizeLSSVRCV,
                                  NystromLSSVRCV])
def test_string_regression_targets_name_y(make):
    with pytest.raises(ValueError, match="y must be numeric for regression; .* use a classifier"):
        make().fit(X, WORDS)


def test_a_fold_without_a_class_warns():
    clf = SparseLSSVC(gamma=0.1).fit(X, YC)
    with pytest.warns(UserWarning, match=r"fold 0: its training rows hold no example of class\(es\) 0"):
        assert clf.cv_error(cv=LeaveOneGroupOut(), groups=YC) == 1.0  # true, and now explained


def test_nystrom_loo_warns_about_leverage_and_is_accurate_at_a_tiny_alpha():
    full = NystromLSSVR(gamma=5.0, alpha=1e-14, n_basis=30, rank=30).fit(X, Y)
    with pytest.warns(NumericalWarning, match=r"hat-matrix diagonal of training row\(s\) 0, 1, 2"):
        full.loo_residuals()
    # rank 15 < 30: ridge on the 15 features, whose conditioning does not depend on alpha (the dual's
    # K~ + alpha I, of condition number lambda_max / alpha, is never solved): no warning, and the LOO
    # residuals of the explicit refits
    low = NystromLSSVR(gamma=5.0, alpha=1e-14, n_basis=30).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R = low.loo_residuals()
        NystromLSSVR(gamma=5.0, alpha=1e-3, n_basis=30).fit(X, Y).loo_residuals()
    F = low.kernel_(X, low.basis_vectors_) @ low.factorization_.whitener
    Yc = np.reshape(Y, (len(X), -1))
    for i in (0, 7):
        keep = np.arange(len(X)) != i
        A = np.column_stack([F[keep], np.ones(keep.sum())])
        pen = np.diag(np.append(np.full(F.shape[1], 1e-14), 0.0))
        w = np.linalg.solve(A.T @ A + pen, A.T @ Yc[keep])
        assert np.allclose(np.reshape(R, Yc.shape)[i], Yc[i] - np.append(F[i], 1.0) @ w, rtol=1e-6, atol=1e-8)


def test_model_file_without_a_metadata_field(tmp_path):
    est = SparseLSSVR(gamma=0.5).fit(X, Y)
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], None))
    arrays = dict(np.load(path))
    meta = json.loads(str(arrays["metadata"]))
    del meta["target_name"]  # None is a valid value, a missing key is not
    arrays["metadata"] = np.array(json.dumps(meta))
    arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match="'target_name' is missing"):
        load_model(path)
    with pytest.raises(FileNotFoundError, match="folder to save the model in does not exist"):
        save_model(tmp_path / "no" / "m.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], None))


@pytest.mark.parametrize("args, message", [
    (["fit", "CONST", "--target", "y"], "target 'y' is constant"),
    (["select", "CONST", "--target", "y"], "target 'y' is constant"),
    (["select", "motorcycle", "--model", "nystrom", "--n-basis", "nan"], "must be a whole count or a fraction"),
    (["select", "motorcycle", "--model", "fixed-size", "--cv", "3", "--n-basis", "1.5"], "whole count"),
    (["select", "motorcycle", "--top", "-1"], "-1 is not in the range x>=1"),
    (["fit", "motorcycle", "-o", "NODIR/m.npz"], "folder"),
])
def test_cli_rejects_before_working(tmp_path, args, message):
    pd.DataFrame({"x": np.arange(10.0), "y": np.ones(10)}).to_csv(tmp_path / "const.csv", index=False)
    args = [str(tmp_path / "const.csv") if a == "CONST" else a.replace("NODIR", str(tmp_path / "none"))
            for a in args]
    before = sorted(p.name for p in tmp_path.iterdir())
    res = CliRunner().invoke(cli, args + ([] if "-o" in args else ["-o", str(tmp_path / "m.npz"), "--no-report"]
                                          if args[0] == "select" else ["-o", str(tmp_path / "m.npz")]))
    assert res.exit_code in (1, 2) and message in res.output, res.output
    assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_polynomial_degree_is_searched_on_a_grid_only():
    search = SparseLSSVRCV(kernel="poly", param_space={"degree": [2, 3]}, alphas=[1e-3, 1e-1]).fit(X, X[:, 0] ** 2)
    assert search.best_estimator_.degree in (2, 3) and isinstance(search.best_estimator_.degree, int)
    with pytest.raises(ValueError, match="search the degree with search='grid'"):
        SparseLSSVRCV(kernel="poly", search="nelder-mead", param_space={"degree": [2, 4]}).fit(X, Y)


def test_singular_holdout_system_is_refitted_or_warned():
    # a numerically singular I - U does not raise; the fold is
    # refitted on the whitened factor, and at alpha=1e-20 even that route
    # cannot resolve the isolated rows, which its warning says
    rng = np.random.default_rng(0)
    Xo = np.vstack([rng.uniform(0, 1, (30, 1)), [[10.0], [20.0]]])  # two isolated rows, both basis points
    yo = np.sin(3 * Xo[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = SparseLSSVR(gamma=20.0, alpha=1e-20, basis=np.r_[np.arange(0, 30, 3), 30, 31]).fit(Xo, yo)
    with pytest.warns(NumericalWarning, match="estimated relative error.*Increase alpha"):
        est.holdout_predict([30, 31], basis_in_holdout="keep")
