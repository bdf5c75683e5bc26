"""Basis points are identified with the training rows that
hold them (their index, or equal values), so basis_in_holdout="remove"
works for points given as an array, and a point held by duplicate rows
leaves the model only when all of them are held out.

The reference retrains from scratch with its own bookkeeping (plain loops,
no lssvm identity code): the basis is the fitted basis minus the points no
remaining training row equals.
"""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVC, SparseLSSVR
from lssvm.basis import basis_holders

ALPHAS = [1e-2, 1.0]


def _data(seed, m=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    X[7] = X[0]  # duplicate rows
    X[12] = X[3]
    X[30] = X[3]
    y = np.sin(X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=m)
    return X, y


def _retrain(X, y, Z, H, mode):
    """Predictions at rows H of a model retrained without them, from scratch."""
    train = np.ones(len(X), dtype=bool)
    train[H] = False
    holds = [[i for i in range(len(X)) if np.array_equal(X[i], z)] for z in Z]
    if mode == "train":
        for rows in holds:
            train[[i for i in rows if i in set(H)]] = True
    keep = [j for j, rows in enumerate(holds)
            if mode != "remove" or not rows or any(train[i] for i in rows)]
    out = []
    for a in ALPHAS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            est = SparseLSSVR(kernel="rbf", gamma=0.4, alpha=a, basis=Z[keep]).fit(X[train], y[train])
        out.append(est.predict(X[H]))
    return np.array(out)


@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
@pytest.mark.parametrize("given", ["points", "indices", "duplicate_indices"])
@pytest.mark.parametrize("seed", [0])
def test_item8_holdout_equals_retraining(seed, given, mode):
    X, y = _data(seed)
    rows = np.array([0, 3, 5, 9, 14, 20, 33])
    basis = {"points": X[rows] + 0.0, "indices": rows,
             "duplicate_indices": np.r_[rows, 7, 12]}[given]  # 7, 12 repeat rows 0 and 3: dropped, yet holders
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        est = SparseLSSVR(kernel="rbf", gamma=0.4, alpha=1.0, basis=basis).fit(X, y)
    Z = est.basis_vectors_
    assert Z.shape[0] == rows.size
    for H in ([0], [0, 7], [3, 12], [3, 12, 30], [5], [0, 5, 7, 9, 11], np.arange(0, 40, 3)):
        H = np.asarray(H)
        fast = est.holdout_predict(H, alpha=ALPHAS, basis_in_holdout=mode)
        np.testing.assert_allclose(fast, _retrain(X, y, Z, H, mode), rtol=1e-7, atol=1e-8,
                                   err_msg=f"H={H.tolist()} mode={mode}")


def test_item8_point_held_by_duplicates_is_removed_only_with_all_of_them():
    X, y = _data(2)
    est = SparseLSSVR(kernel="rbf", gamma=0.4, alpha=1.0, basis=np.array([0, 3, 5])).fit(X, y)
    keep = est.holdout_predict([0], basis_in_holdout="keep")
    np.testing.assert_allclose(est.holdout_predict([0], basis_in_holdout="remove"), keep)  # row 7 still holds it
    both_keep = est.holdout_predict([0, 7], basis_in_holdout="keep")
    assert not np.allclose(est.holdout_predict([0, 7], basis_in_holdout="remove"), both_keep)


def test_item8_cv_uses_the_same_identity():
    X, y = _data(3)
    folds = [(None, np.arange(i, 40, 5)) for i in range(5)] + []
    est = SparseLSSVR(kernel="rbf", gamma=0.4, alpha=1.0, basis=X[[0, 3, 5, 9]] + 0.0).fit(X, y)
    fast = est.cv_predict(folds, alpha=ALPHAS, basis_in_holdout="remove")
    for _, test in folds:
        np.testing.assert_allclose(fast[:, test], _retrain(X, y, est.basis_vectors_, test, "remove"),
                                   rtol=1e-7, atol=1e-8)
    loo = est.cv_predict(len(X), alpha=ALPHAS, basis_in_holdout="remove")  # single rows: closed form or removal
    for i in (0, 7, 3, 9, 10):
        np.testing.assert_allclose(loo[:, i], _retrain(X, y, est.basis_vectors_, np.array([i]), "remove")[:, 0],
                                   rtol=1e-7, atol=1e-8)


def test_item8_basis_holders_hashing():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 4))
    X[10] = X[200]
    X[11, 2] = -0.0
    Z = np.vstack([X[200], X[11] * 1.0, rng.normal(size=(3, 4))])
    Z[1, 2] = 0.0  # -0.0 and 0.0 are the same value
    rows, points = basis_holders(X, Z)
    assert rows.tolist() == [10, 11, 200] and points.tolist() == [0, 1, 0]
    rows, points = basis_holders(X, Z, indices=np.array([200, 11, 5, 6, 7]))
    assert sorted(zip(rows.tolist(), points.tolist(), strict=True)) == [(5, 2), (6, 3), (7, 4), (10, 0), (11, 1),
                                                                        (200, 0)]


def test_item8_classifier_points_remove_like_indices():
    X, y = _data(5)
    labels = np.where(y > 0, "p", "n")
    by_points = SparseLSSVC(kernel="rbf", gamma=0.4, alpha=1.0, basis=X[[0, 3, 5, 9]] + 0.0).fit(X, labels)
    by_rows = SparseLSSVC(kernel="rbf", gamma=0.4, alpha=1.0, basis=np.array([0, 3, 5, 9])).fit(X, labels)
    np.testing.assert_allclose(by_points.cv_decision_function(4, basis_in_holdout="remove"),
                               by_rows.cv_decision_function(4, basis_in_holdout="remove"), rtol=1e-9, atol=1e-12)
