"""The ``lssvm select`` report shows full conformal beside jackknife+: the
coverage and width of both on the training rows, each row's interval built
from the other rows, against explicit refits without the row."""

import numpy as np
import pandas as pd
import pytest

from lssvm import SparseLSSVR, SparseLSSVRCV
from lssvm.cli._report_uncertainty import interval_methods
from lssvm.cli.report import write_report

LEVELS = (0.5, 0.8, 0.9)


def _search(rng, m=60):
    X = rng.uniform(-2, 2, (m, 2))
    y = np.sin(X[:, 0]) + (0.2 + 0.3 * np.abs(X[:, 1])) * rng.standard_normal(m)
    search = SparseLSSVRCV(param_space={"gamma": [0.3, 1.0]}, alphas=np.geomspace(1e-3, 10, 5), basis="random",
                           n_basis=15, random_state=0).fit(X, y)
    return X, y, search


def test_the_report_shows_full_conformal_beside_jackknife_plus(tmp_path, rng):
    X, y, search = _search(rng)
    folder = tmp_path / "rep"
    folder.mkdir()
    write_report(folder, search, [("data", "test")], pd.DataFrame({"rank": [1]}))
    page = (folder / "index.html").read_text()
    assert "full conformal" in page and "jackknife+" in page
    table = pd.read_csv(folder / "interval_methods.csv")
    assert set(table["method"]) == {"jackknife+", "full"}
    assert (table["rows"] == len(X)).all()  # fewer rows than the sample size: every row is scored
    at = table[np.isclose(table["nominal"], 0.9)].set_index("method")
    assert f"full conformal {at.loc['full', 'width']:.4g}" in page


def test_interval_methods_equal_refits_without_each_row(rng):
    X, y, search = _search(rng, m=40)
    best = search.best_estimator_
    table = interval_methods(best.factorization_, search.alpha_, LEVELS).set_index(["method", "nominal"])
    params = dict(gamma=best.gamma, alpha=search.alpha_, basis=np.asarray(best.basis_vectors_) + 0.0)
    inside = {(method, c): [] for method in ("jackknife+", "full") for c in LEVELS}
    width = {key: [] for key in inside}
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        refit = SparseLSSVR(**params).fit(X[keep], y[keep])
        for method, c in inside:
            lo, hi = refit.predict_interval(X[i:i + 1], c, method)[0]
            inside[method, c].append(lo <= y[i] <= hi)
            width[method, c].append(hi - lo)
    for key in inside:
        assert table.loc[key, "coverage"] == pytest.approx(np.mean(inside[key]), abs=1e-12)
        assert table.loc[key, "width"] == pytest.approx(np.mean(width[key]), rel=1e-8)


def test_a_sample_of_rows_when_there_are_many(rng):
    X, y, search = _search(rng, m=80)
    table = interval_methods(search.best_estimator_.factorization_, search.alpha_, LEVELS, n_rows=25)
    assert (table["rows"] == 25).all() and len(table) == 2 * len(LEVELS)
