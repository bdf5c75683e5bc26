"""The uncertainty figure of the ``lssvm select`` report: its
numbers against a direct computation from ``loo_residuals`` /
``loo_decision_function`` and the fitted calibration maps."""

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVCCV, SparseLSSVRCV
from lssvm.cli.main import cli
from lssvm.cli.report import write_report

LEVELS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99)
TABLE = pd.DataFrame({"rank": [1]})


def _report(tmp_path, search):
    folder = tmp_path / "rep"
    folder.mkdir()
    write_report(folder, search, [("data", "test")], TABLE)
    return folder


def _direct_intervals(R, F):
    """Brute force: row i's jackknife half-width from the other m - 1 residuals, by an explicit delete and sort."""
    a = np.abs(R)
    m = a.size
    third = np.empty(m, dtype=int)
    third[np.argsort(F, kind="stable")] = np.arange(m) * 3 // m
    rows = []
    for level in LEVELS:
        k = math.ceil(level * m - 1e-9)  # ceil(coverage ((m - 1) + 1)) of m - 1 calibration rows
        if k > m - 1:
            continue
        q = np.array([np.sort(np.delete(a, i))[k - 1] for i in range(m)])
        inside = a <= q
        for name, sel in (("all", np.ones(m, bool)), ("low", third == 0), ("middle", third == 1),
                          ("high", third == 2)):
            rows.append((name, level, inside[sel].mean(), 2 * q[sel].mean(), sel.sum()))
    return pd.DataFrame(rows, columns=["group", "nominal", "coverage", "width", "rows"])


@pytest.mark.parametrize("outputs", [1, 2])
def test_interval_figure_matches_loo_residuals(tmp_path, rng, outputs):
    m = 150
    X = rng.uniform(-2, 2, (m, 3))
    Y = np.column_stack([np.sin(X[:, 0]) * (1 + j) + (0.2 + 0.3 * np.abs(X[:, 1])) * rng.standard_normal(m)
                         for j in range(outputs)])
    y = Y[:, 0] if outputs == 1 else Y
    search = SparseLSSVRCV(param_space={"gamma": [0.3, 1.0]}, alphas=np.geomspace(1e-3, 10, 5), basis="random",
                           n_basis=40, random_state=0).fit(X, y)
    folder = _report(tmp_path, search)
    assert (folder / "intervals.png").stat().st_size > 0
    page = (folder / "index.html").read_text()
    assert 'src="intervals.png"' in page and "by construction" in page
    table = pd.read_csv(folder / "uncertainty.csv")
    R = np.reshape(search.best_estimator_.loo_residuals(), (m, -1))
    for j in range(outputs):
        got = table[table["output"] == j].drop(columns="output").reset_index(drop=True)
        want = _direct_intervals(R[:, j], Y[:, j] - R[:, j])
        assert list(got["group"]) == list(want["group"])
        np.testing.assert_allclose(got[["nominal", "coverage", "width", "rows"]].to_numpy(float),
                                   want[["nominal", "coverage", "width", "rows"]].to_numpy(float), rtol=1e-12)
        # over all rows the coverage is ceil(level m) / m: exchangeable ranks (no ties in continuous data)
        overall = got[got["group"] == "all"]
        np.testing.assert_allclose(overall["coverage"], [math.ceil(c * m - 1e-9) / m for c in overall["nominal"]])
    assert sorted(table["nominal"].unique()) == [c for c in LEVELS if math.ceil(c * m - 1e-9) <= m - 1]


def test_interval_figure_uses_the_k_fold_residuals_of_a_k_fold_search(tmp_path, rng):
    m = 120
    X = rng.uniform(-2, 2, (m, 2))
    y = np.cos(X[:, 0]) + 0.3 * rng.standard_normal(m)
    search = SparseLSSVRCV(param_space={"gamma": [0.5]}, alphas=np.geomspace(1e-3, 10, 4), basis="random",
                           n_basis=30, random_state=0, cv=5).fit(X, y)
    folder = _report(tmp_path, search)
    table = pd.read_csv(folder / "uncertainty.csv")
    pairs = [(np.setdiff1d(np.arange(m), t), t) for t in search.cv_folds_]
    F = search.best_estimator_.cv_predict(pairs, basis_in_holdout=search.basis_in_holdout)
    want = _direct_intervals(y - F, F)
    np.testing.assert_allclose(table["coverage"], want["coverage"], rtol=1e-12)
    np.testing.assert_allclose(table["width"], want["width"], rtol=1e-10)


def _direct_reliability(p, hit, bins=10):
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return (np.array([np.sum(idx == b) for b in range(bins)]),
            np.array([p[idx == b].mean() if np.any(idx == b) else np.nan for b in range(bins)]),
            np.array([hit[idx == b].mean() if np.any(idx == b) else np.nan for b in range(bins)]))


@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_reliability_figure_matches_the_calibration_map(tmp_path, rng, calibration):
    m = 200
    X = rng.standard_normal((m, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.standard_normal(m) > 0, "yes", "no")
    search = SparseLSSVCCV(param_space={"gamma": [0.5, 2.0]}, alphas=np.geomspace(1e-3, 10, 5), basis="random",
                           n_basis=40, random_state=0, calibration=calibration).fit(X, y)
    folder = _report(tmp_path, search)
    assert (folder / "reliability.png").stat().st_size > 0
    assert 'src="reliability.png"' in (folder / "index.html").read_text()
    table = pd.read_csv(folder / "uncertainty.csv")
    best = search.best_estimator_
    p = best.calibrators_[0](np.ravel(best.loo_decision_function()))
    rows, mean_p, observed = _direct_reliability(p, y == best.classes_[1])
    np.testing.assert_array_equal(table["rows"], rows)
    np.testing.assert_allclose(table["mean_predicted"], mean_p, rtol=1e-12)
    np.testing.assert_allclose(table["observed"], observed, rtol=1e-12)


def test_reliability_of_several_classes_uses_the_normalised_top_class(tmp_path, rng):
    m = 180
    X = rng.standard_normal((m, 2))
    y = np.digitize(X[:, 0] + 0.4 * rng.standard_normal(m), [-0.5, 0.5])
    search = SparseLSSVCCV(param_space={"gamma": [1.0]}, alphas=np.geomspace(1e-2, 10, 4), basis="random",
                           n_basis=40, random_state=0, calibration="sigmoid").fit(X, y)
    table = pd.read_csv(_report(tmp_path, search) / "uncertainty.csv")
    best = search.best_estimator_
    F = best.loo_decision_function()
    P = np.column_stack([cal(F[:, k]) for k, cal in enumerate(best.calibrators_)])
    P /= P.sum(axis=1, keepdims=True)
    rows, mean_p, observed = _direct_reliability(P.max(axis=1), best.classes_[P.argmax(axis=1)] == y)
    np.testing.assert_array_equal(table["rows"], rows)
    np.testing.assert_allclose(table["mean_predicted"], mean_p, rtol=1e-12)
    np.testing.assert_allclose(table["observed"], observed, rtol=1e-12)


@pytest.mark.slow  # three whole reports; the figures' numbers are checked above from write_report
def test_select_report_shows_the_uncertainty_figure(tmp_path):
    runner = CliRunner()
    cases = [(["boston", "--target", "medv"], "intervals.png"),
             (["ripley", "--calibration", "sigmoid"], "reliability.png"),
             (["ripley", "--calibration", "none"], None)]  # no calibration map: no reliability diagram
    for k, (args, figure) in enumerate(cases):
        rep = tmp_path / f"rep{k}"
        res = runner.invoke(cli, ["select", *args, "--gammas", "0.1,1", "--alphas", "1e-3:10:5", "--basis", "random",
                                  "--n-basis", "40", "-o", str(tmp_path / f"m{k}.npz"), "--report", str(rep)])
        assert res.exit_code == 0, res.output
        names = {p.name for p in rep.iterdir()}
        page = (rep / "index.html").read_text()
        if figure is None:
            assert not names & {"reliability.png", "intervals.png", "uncertainty.csv"}
        else:
            assert {figure, "uncertainty.csv"} <= names and f'src="{figure}"' in page
