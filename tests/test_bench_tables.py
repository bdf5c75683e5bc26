"""The splits and the ratio summary of ``benchmarks/tables.py``: its comparison is fair only if every
contender sees the same disjoint rows, the given split where there is one, and if the summary's ratios are
the per-split ratios to gradient boosting."""

import importlib
import os
import sys

import numpy as np
import pandas as pd
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


@pytest.fixture(scope="module")
def tables():
    sys.path.insert(0, BENCH)
    try:
        module = importlib.import_module("tables")
    finally:
        sys.path.remove(BENCH)
    if not (module.DEFAULT_DATA / "boston.csv.gz").is_file():
        pytest.skip("the shared data folder is not here")
    return module


def _rows(X):
    return {tuple(np.round(r, 9)) for r in X}


def test_random_splits_are_disjoint_seeded_and_sized(tables):
    first = list(tables.splits(tables.DEFAULT_DATA, "boston", 3))
    again = list(tables.splits(tables.DEFAULT_DATA, "boston", 3))
    for (Xtr, ytr, Xte, _), (Xtr2, _, _, _) in zip(first, again, strict=True):
        assert Xtr.shape == (380, 13) and Xte.shape == (126, 13) and ytr.dtype == float
        assert not _rows(Xtr) & _rows(Xte)
        np.testing.assert_array_equal(Xtr, Xtr2)
        np.testing.assert_allclose(Xtr.mean(axis=0), 0, atol=1e-12)  # scaled on the training rows only
    assert not np.array_equal(first[0][1], first[1][1])


@pytest.mark.slow
def test_split_zero_is_the_given_split_and_classes_are_stratified(tables):
    (Xtr, ytr, Xte, yte), (_, ytr1, _, yte1) = tables.splits(tables.DEFAULT_DATA, "adult", 2)
    train = pd.read_csv(tables.DEFAULT_DATA / "adult_train.csv.gz")
    test = pd.read_csv(tables.DEFAULT_DATA / "adult_test.csv.gz")
    assert (Xtr.shape[0], Xte.shape[0]) == (len(train), len(test))
    assert set(np.unique(ytr)) == {0, 1}  # the test file's "<=50K." is the training file's "<=50K"
    codes = np.unique(tables._labels(train.iloc[:, -1]), return_inverse=True)[1].ravel()
    np.testing.assert_array_equal(ytr, codes)
    assert yte1.size == len(test) and abs(ytr1.mean() - yte1.mean()) < 2 / len(test)


def test_summary_ratios_are_per_split_ratios_to_gradient_boosting(tables, rng):
    records = [{"table": t, "split": s, "contender": c, "error": e, "seconds": 1.0}
               for t in ("a", "b") for s in range(3) for c, e in
               (("lssvm", rng.uniform(1, 2)), ("hgb", rng.uniform(1, 2)), ("neo", rng.uniform(1, 2)))]
    out = tables.summary(records).set_index(["table", "contender"])
    df = pd.DataFrame(records)
    for (t, c), row in out.iterrows():
        ratios = [df[(df.table == t) & (df.split == s) & (df.contender == c)].error.item()
                  / df[(df.table == t) & (df.split == s) & (df.contender == "hgb")].error.item() for s in range(3)]
        assert row["ratio"] == pytest.approx(np.mean(ratios), rel=1e-14)
        assert (row["ratio_min"], row["ratio_max"]) == pytest.approx((min(ratios), max(ratios)), rel=1e-14)
    assert out.loc[("a", "hgb"), "ratio"] == 1.0
