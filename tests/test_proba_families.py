"""Calibrated probabilities for every classifier: the fixed-size and
Nyström classifiers, the three ``*CV`` searches, their model files and
``lssvm select --calibration``.  The decision values the maps are fitted on
are checked against explicit retraining on each fold."""

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.calibration import CalibratedClassifierCV
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    NystromLSSVC,
    NystromLSSVCCV,
    SparseLSSVC,
    SparseLSSVCCV,
)
from lssvm.io import SavedModel, load_model, save_model


def blobs(rng, m=72, k=2):
    y = np.arange(m) % k
    X = rng.standard_normal((m, 2)) + 1.2 * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
    return X, np.array(["b", "a", "d", "c"])[y]  # classes_ sorts them: not the order of appearance


def fixed(**kw):
    return FixedSizeLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=15, random_state=0, **kw)


def nystrom(**kw):
    return NystromLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=15, random_state=0, **kw)


MODELS = {"fixed": fixed, "nystrom": nystrom}


def _iso_fold_check(est, F, y):
    """The fitted maps are the isotonic fits on the decision values F."""
    codes = np.searchsorted(est.classes_, y)
    T = np.linspace(-2, 2, 41)
    for j, cal in enumerate(est.calibrators_):
        target = codes == (1 if est.classes_.size == 2 else j)
        iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(F[:, j], target)
        np.testing.assert_allclose(cal(T), iso.predict(T), atol=1e-9)


def _dense_held_out(Phi, Y, alpha, held, keep=None):
    """Brute force: an explicit dense LS-SVM on features Phi (m, r) per held-out set, its values there;
    ``keep(test) -> columns`` the features the fold keeps (default all)."""
    F = np.empty_like(Y)
    for test in held:
        train = np.setdiff1d(np.arange(Phi.shape[0]), test)
        P = Phi if keep is None else Phi[:, keep(test)]
        n = train.size
        A = np.block([[P[train] @ P[train].T + alpha * np.eye(n), np.ones((n, 1))], [np.ones((1, n)), 0.0]])
        sol = np.linalg.solve(A, np.vstack([Y[train], np.zeros((1, Y.shape[1]))]))
        F[test] = P[test] @ (P[train].T @ sol[:n]) + sol[n]
    return F


def _coded(est, y):
    codes = np.searchsorted(est.classes_, y)
    if est.classes_.size == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(est.classes_.size), 1.0, -1.0)


@pytest.mark.parametrize("solver", ["scdp", "direct"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("calibration_cv", [None, 4])
def test_fixed_size_calibrates_on_the_held_out_values_at_its_support(rng, solver, k, calibration_cv):
    # the model at its support is the sparse model on the prototypes with a weight (each one-vs-rest
    # output on its own); brute force: a dense LS-SVM on their whitened features per held-out set
    X, y = blobs(rng, k=k)
    est = fixed(solver=solver, cv=None, max_size=None if solver == "direct" else 10, nu=1e-12,
                calibration="isotonic", calibration_cv=calibration_cv).fit(X, y)
    Y = _coded(est, y)
    held = ([np.array([i]) for i in range(X.shape[0])] if calibration_cv is None else
            [t for _, t in StratifiedKFold(4).split(X, y)])
    F = np.empty_like(Y)
    for j in range(Y.shape[1]):
        support = np.flatnonzero(est.coef_full_[:est.n_basis_, j] != 0)
        for test in held:  # a k-fold removes the prototypes its held-out rows are (basis_in_holdout="remove")
            kept = support if calibration_cv is None else support[~np.isin(est.basis_indices_[support], test)]
            Z = est.basis_vectors_[kept]
            s, U = np.linalg.eigh(est.kernel_(Z, Z))
            Phi = est.kernel_(X, Z) @ (U / np.sqrt(s))
            F[test, j:j + 1] = _dense_held_out(Phi, Y[:, j:j + 1], 0.1, [test])[test]
    _iso_fold_check(est, F, y)


@pytest.mark.parametrize("calibration_cv", [None, 4])
def test_nystrom_calibrates_on_its_exact_cv(rng, calibration_cv):
    X, y = blobs(rng, k=3)
    est = nystrom(rank=10, calibration="isotonic", calibration_cv=calibration_cv).fit(X, y)
    Y = _coded(est, y)
    # brute force: the Nyström features, an explicit dense LS-SVM per held-out set; the family's default
    # keeps the fitted rank-k map, for leave-one-out and k-fold alike
    Z = est.basis_vectors_
    held = ([np.array([i]) for i in range(X.shape[0])] if calibration_cv is None else
            [t for _, t in StratifiedKFold(4).split(X, y)])
    F = _dense_held_out(est.kernel_(X, Z) @ est.factorization_.whitener, Y, 0.1, held)
    _iso_fold_check(est, F, y)


@pytest.mark.parametrize("family", list(MODELS))
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_rows_sum_to_one_in_classes_order_and_work_with_log_loss(rng, family, k, calibration):
    X, y = blobs(rng, k=k)
    est = MODELS[family](calibration=calibration).fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (X.shape[0], k) and list(est.classes_) == sorted(set(y))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((P >= 0) & (P <= 1))
    for j, c in enumerate(est.classes_):
        assert P[y == c, j].mean() > P[y != c, j].mean()
    assert log_loss(y, P, labels=est.classes_) < log_loss(y, np.full_like(P, 1.0 / k))
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), P, rtol=1e-12)


@pytest.mark.parametrize("family", list(MODELS))
def test_binary_probability_is_monotone_in_the_decision_value(rng, family):
    X, y = blobs(rng)
    T = rng.standard_normal((150, 2)) * 3
    for calibration in ("sigmoid", "isotonic"):
        est = MODELS[family](calibration=calibration).fit(X, y)
        d = est.decision_function(T)
        p = est.predict_proba(T)[np.argsort(d), 1]
        assert np.all(np.diff(p) >= 0)
        if calibration == "sigmoid":
            assert est.calibrators_[0].params[0] < 0  # strictly increasing: A < 0


@pytest.mark.parametrize("family", list(MODELS))
def test_works_inside_calibrated_classifier_cv(rng, family):
    X, y = blobs(rng, k=3)
    P = CalibratedClassifierCV(MODELS[family](calibration="sigmoid"), cv=3).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


SEARCHES = {
    "sparse": lambda **kw: SparseLSSVCCV(basis="random", n_basis=12, random_state=0, **kw),
    "fixed": lambda **kw: FixedSizeLSSVCCV(basis="random", n_basis=12, cv=4, random_state=0, **kw),
    "nystrom": lambda **kw: NystromLSSVCCV(basis="random", n_basis=12, random_state=0, **kw),
}


@pytest.mark.parametrize("family", list(SEARCHES))
def test_search_refits_a_calibrated_best_model(rng, family):
    X, y = blobs(rng)
    space = {"gamma": [0.25, 1.0]}
    search = SEARCHES[family](calibration="isotonic", param_space=space).fit(X, y)
    best = search.best_estimator_
    assert best.calibration == "isotonic" and best.alpha == search.alpha_
    T = rng.standard_normal((20, 2))
    np.testing.assert_array_equal(search.predict_proba(T), best.predict_proba(T))
    np.testing.assert_array_equal(search.predict_log_proba(T), best.predict_log_proba(T))
    # the best model's own calibration: the same maps as calibrating it directly
    again = type(best)(**best.get_params()).fit(X, y)
    np.testing.assert_allclose(again.predict_proba(T), search.predict_proba(T), atol=1e-10)
    plain = SEARCHES[family](param_space=space, calibration=None).fit(X, y)
    assert not hasattr(plain, "predict_proba") and not hasattr(plain.best_estimator_, "predict_proba")


def test_search_calibration_cv_takes_groups_and_splitters(rng):
    X, y = blobs(rng)
    search = SEARCHES["sparse"](calibration="sigmoid", calibration_cv=GroupKFold(3), param_space={"gamma": [0.5]})
    with pytest.raises(ValueError, match=r"no groups reached SparseLSSVC's calibration .*=list\(splitter.split"):
        search.fit(X, y)  # the refit has no groups for the calibration folds
    groups = np.arange(X.shape[0]) % 6
    search.set_params(calibration_cv=list(GroupKFold(3).split(X, y, groups))).fit(X, y)
    np.testing.assert_allclose(search.predict_proba(X).sum(axis=1), 1.0)
    search.set_params(calibration_cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    np.testing.assert_allclose(search.predict_proba(X).sum(axis=1), 1.0)
    # FixedSizeLSSVC.fit passes its groups on to the calibration folds
    est = fixed(calibration="sigmoid", calibration_cv=GroupKFold(3)).fit(X, y, groups=groups)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("est", [
    fixed(calibration="sigmoid"), nystrom(calibration="isotonic"), nystrom(calibration="sigmoid", predictor="exact"),
    SEARCHES["nystrom"](calibration="sigmoid", param_space={"gamma": [0.5]}),
    SEARCHES["fixed"](calibration="isotonic", param_space={"gamma": [0.5]}),
    SparseLSSVC(gamma=0.5, alpha=0.1, n_basis=15, calibration="sigmoid", calibration_cv=KFold(3, shuffle=True,
                                                                                              random_state=0)),
], ids=["fixed", "nystrom", "nystrom-exact", "nystrom-cv", "fixed-cv", "sparse-splitter"])
def test_model_file_keeps_the_probabilities(rng, tmp_path, est):
    X, y = blobs(rng, k=3)
    est.fit(X, y)
    saved = SavedModel(estimator=est, x_center=np.zeros(2), x_scale=np.ones(2), feature_names=["u", "v"])
    loaded = load_model(save_model(tmp_path / "c.npz", saved)).estimator
    T = rng.standard_normal((25, 2)) * 2
    np.testing.assert_allclose(loaded.predict_proba(T), est.predict_proba(T), rtol=1e-12, atol=1e-14)
    assert list(loaded.classes_) == list(est.classes_)


def test_model_file_of_an_uncalibrated_classifier_has_no_proba(rng, tmp_path):
    X, y = blobs(rng)
    saved = SavedModel(estimator=nystrom(calibration=None).fit(X, y), x_center=np.zeros(2), x_scale=np.ones(2),
                       feature_names=["u", "v"])
    loaded = load_model(save_model(tmp_path / "c.npz", saved)).estimator
    assert not hasattr(loaded, "predict_proba")


@pytest.mark.parametrize("make", [fixed, nystrom, SEARCHES["sparse"], SEARCHES["fixed"], SEARCHES["nystrom"]])
def test_clear_errors(rng, make):
    X, y = blobs(rng)
    est = make(calibration=None)
    name = type(est).__name__
    with pytest.raises(ValueError, match=f"'calibration' parameter of {name} must be a str among"):
        make(calibration="platt").fit(X, y)
    with pytest.raises(ValueError, match=f"'calibration_cv' parameter of {name}"):
        make(calibration="sigmoid", calibration_cv=1.5).fit(X, y)
    with pytest.raises(AttributeError) as info:
        est.predict_proba  # noqa: B018 (hasattr is False; the message says what to do)
    assert "calibration=None" in str(info.value) and "default 'sigmoid'" in str(info.value)
    assert not hasattr(est, "predict_log_proba")
    with pytest.raises(Exception, match="not fitted|fit"):
        make(calibration="sigmoid").predict_proba(X)


def test_select_calibration_serves_predict_proba(tmp_path):
    runner = CliRunner()
    model = tmp_path / "s.npz"
    args = ["select", "ripley", "--gammas", "1,4", "--alphas", "1e-2:1:3", "--basis", "random", "--n-basis", "15",
            "--no-report", "-o", str(model)]
    res = runner.invoke(cli_main(), [*args, "--calibration", "sigmoid"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli_main(), ["predict", str(model), "ripley", "--proba"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.stdout))
    P = out[[c for c in out.columns if c.startswith("proba_")]].to_numpy()
    assert P.shape[1] == 2 and np.allclose(P.sum(axis=1), 1.0)
    assert load_model(model).estimator.calibration == "sigmoid"
    # switched off: the message names the option
    res = runner.invoke(cli_main(), [*args, "--calibration", "none"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli_main(), ["predict", str(model), "ripley", "--proba"])
    assert res.exit_code == 1 and "select --calibration" in res.output
    res = runner.invoke(cli_main(), ["select", "motorcycle", "--target", "accel", "--gammas", "1", "--no-report",
                                     "-o", str(tmp_path / "r.npz"), "--calibration", "sigmoid"])
    assert res.exit_code == 1 and "--calibration is for classification" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "r.npz").exists()


def cli_main():
    from lssvm.cli.main import cli

    return cli


@pytest.mark.parametrize("family", list(MODELS))
def test_a_dask_fit_calibrates_itself(rng, family):
    # equality with the in-memory maps: tests/test_dask_family_uncertainty.py
    da = pytest.importorskip("dask.array")
    X, y = blobs(rng)
    est = MODELS[family](calibration="sigmoid").fit(X[:40], y[:40])  # in memory first: its maps must not survive
    est.fit(da.from_array(X, chunks=36), da.from_array(y, chunks=36))
    ref = MODELS[family](calibration="sigmoid").fit(X, y)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)


# calibrated probabilities need not peak where the decision values do (as SVC(probability=True))
_ARGMAX = {"check_classifiers_train": "predict follows the calibrated probabilities: near the boundary it may differ from "
           "the sign (argmax) of decision_function"}
# Nyström columns are drawn from the rows: repeated rows are more rows and another draw
_DRAWN = {"check_sample_weight_equivalence_on_dense_data": "columns drawn: repetition draws other columns"}


# the weight checks fit on 4 distinct rows, fewer than n_basis=10 (a clear error)
_SMALL = {check: "n_basis=10 is more than the check's distinct rows" for check in
          ("check_sample_weights_shape", "check_sample_weights_not_overwritten")}


@pytest.mark.slow
@parametrize_with_checks([FixedSizeLSSVC(calibration="sigmoid", n_basis=10, cv=3),
                          NystromLSSVC(calibration="isotonic", calibration_cv=3)],
                         expected_failed_checks=lambda est: _ARGMAX | (_SMALL if isinstance(est, FixedSizeLSSVC) else _DRAWN))
def test_calibrated_families_pass_scikit_learn_checks(estimator, check):
    check(estimator)


def test_gradient_search_refit_is_calibrated(rng):
    X, y = blobs(rng)
    search = SparseLSSVCCV(search="gradient", basis="random", n_basis=12, random_state=0, gamma=0.5,
                           calibration="sigmoid").fit(X, y)
    assert search.best_estimator_.calibration == "sigmoid"
    np.testing.assert_allclose(search.predict_proba(X).sum(axis=1), 1.0)
