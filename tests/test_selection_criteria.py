"""The sparse, fixed-size and Nyström selection criteria against explicit
retraining and against the estimators refitted on the rows they report.

Tolerances: 1e-8 relative on well-conditioned problems (alphas >= 1e-2,
condition numbers below 1e6, so the fast and the retrained solutions agree
to about cond * eps); SCDP sizes and scores are compared exactly where both
sides run the same deterministic steps."""

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR, NumericalWarning, NystromLSSVR, SparseLSSVC, SparseLSSVR
from lssvm.cv import explicit_holdout_predict
from lssvm.kernels import RBF
from lssvm.selection import SparseLSSVMCV
from lssvm.selection.fixed_size import FixedSizeCV
from lssvm.selection.nystrom import NystromCV
from lssvm.solvers.fixed_size import FixedSizeSystem, augmented_rows, solve_spd

from conftest import rel_err


@pytest.fixture
def data(rng):
    X = rng.standard_normal((60, 3))
    y = np.column_stack([np.sin(2 * X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.standard_normal((60, 2))
    return X, y


@pytest.mark.parametrize("basis", ["random", "fvs"])
@pytest.mark.parametrize("mode", ["remove", "keep", "train"])
def test_sparse_criterion_kfold_equals_explicit_retraining(data, basis, mode):
    X, Y = data
    alphas = [1e-2, 0.5, 4.0]
    crit = SparseLSSVMCV(X, Y, basis=basis, n_basis=15, cv=5, alphas=alphas, basis_in_holdout=mode, random_state=3)
    for gamma in (0.2, 1.0):
        path = crit(gamma=gamma)
        rows = crit.rows_for(gamma=gamma)
        assert path.info["n_basis"] == rows.size <= 15
        est = SparseLSSVR(gamma=gamma, basis=rows).fit(X, Y)
        F = np.empty((len(alphas),) + Y.shape)
        for test in crit.folds:
            F[:, test] = explicit_holdout_predict(est, X, test, alphas, mode)
        assert rel_err(path.mse, ((Y - F) ** 2).mean(axis=(1, 2))) < 1e-8


def test_sparse_criterion_loo_and_groups_equal_the_estimator(data, rng):
    X, Y = data
    alphas = np.geomspace(1e-2, 10, 5)
    loo = SparseLSSVMCV(X, Y, basis="kcenter", n_basis=20, cv="loo", alphas=alphas, random_state=0)
    path = loo(gamma=0.5)
    est = SparseLSSVR(gamma=0.5, basis=loo.rows_for(gamma=0.5)).fit(X, Y)
    assert rel_err(path.mse, (est.loo_residuals(alphas) ** 2).mean(axis=(1, 2))) < 1e-12
    groups = rng.integers(0, 6, size=60)
    grouped = SparseLSSVMCV(X, Y, basis="random", n_basis=20, cv=GroupKFold(3), groups=groups, alphas=alphas)
    path = grouped(gamma=0.5)
    est = SparseLSSVR(gamma=0.5, basis=grouped.rows_for(gamma=0.5)).fit(X, Y)
    mse = est.cv_error(cv=GroupKFold(3), groups=groups, alpha=alphas).mean(axis=1)
    assert rel_err(path.mse, mse) < 1e-12


def test_sparse_criterion_error_rate_equals_the_classifier(rng):
    X = rng.standard_normal((80, 2))
    y = np.select([X[:, 0] > 0.5, X[:, 1] > 0], ["a", "b"], "c")
    alphas = [0.1, 1.0]
    crit = SparseLSSVMCV(X, y, classification=True, basis="fvs", n_basis=25, cv=4, alphas=alphas, random_state=0)
    path = crit(gamma=1.0)
    clf = SparseLSSVC(gamma=1.0, basis=crit.rows_for(gamma=1.0)).fit(X, y)
    folds = [(np.setdiff1d(np.arange(80), t), t) for t in crit.folds]
    assert np.allclose(path.error_rate, clf.cv_error(cv=folds, alpha=alphas, scoring="error_rate"))
    assert path.error_rate.max() < 0.5


def explicit_fixed_size_cv(K, rows, Y, folds, alpha, nu=1e-8):
    """All-prototype fixed-size LS-SVM refitted from scratch on each fold."""
    R = np.empty_like(Y)
    for test in folds:
        tr = np.setdiff1d(np.arange(K.shape[0]), test)
        system = FixedSizeSystem.from_kernel(K[tr], K[rows], Y[tr])
        R[test] = Y[test] - augmented_rows(K[test]) @ solve_spd(system.matrix(alpha, nu), system.rhs)
    return R


def test_fixed_size_direct_criterion_equals_explicit_retraining(data):
    X, Y = data
    alphas = [0.05, 1.0]
    crit = FixedSizeCV(X, Y, basis="kcenter", n_basis=12, solver="direct", cv=4, alphas=alphas,
                       random_state=0)
    path = crit(gamma=0.5)
    rows = crit.rows_for(gamma=0.5)
    K = RBF(0.5)(X, X[rows])
    ref = [np.mean(explicit_fixed_size_cv(K, rows, Y, crit.folds, a) ** 2) for a in alphas]
    assert rel_err(path.mse, ref) < 1e-8
    assert path.info["model_size"] == 13


@pytest.mark.parametrize("solver", ["scdp", "scdpp"])
def test_fixed_size_criterion_equals_the_estimators_own_cv(rng, solver):
    X = rng.standard_normal((90, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.2, 1, -1)
    crit = FixedSizeCV(X, y, classification=True, basis="random", n_basis=30, solver=solver,
                       n_candidates=8, cv=5, alphas=[0.1, 2.0], random_state=7, size_scoring="error_rate")
    path = crit(gamma=0.8)
    folds = [(np.setdiff1d(np.arange(90), t), t) for t in crit.folds]
    for a, alpha in enumerate(crit.alphas):
        clf = FixedSizeLSSVC(gamma=0.8, alpha=alpha, basis=crit.rows_for(gamma=0.8), solver=solver,
                             n_candidates=8, cv=folds, random_state=crit.refit_random_state,
                             scoring="error_rate").fit(X, y)
        assert clf.model_size_ == path.info["model_size"][a]
        assert clf.cv_score_ == pytest.approx(path.error_rate[a], abs=1e-12)
    reg = FixedSizeLSSVR(gamma=0.8, alpha=crit.alphas[0], basis=crit.rows_for(gamma=0.8), solver=solver,
                         n_candidates=8, cv=folds, random_state=crit.refit_random_state)
    assert reg.fit(X, y).cv_curve_ is not None


def test_nystrom_criterion_with_fvs_columns_equals_the_estimator(data):
    X, Y = data
    alphas = [0.1, 1.0]
    crit = NystromCV(X, Y, basis="fvs", n_basis=20, rank=0.5, cv=4, alphas=alphas, random_state=2)
    assert crit.rank is None and crit.columns is None
    path = crit(gamma=0.3)
    cols = crit.rows_for(gamma=0.3)
    est = NystromLSSVR(gamma=0.3, basis=cols, rank=0.5, predictor="low-rank").fit(X, Y)
    folds = [(np.setdiff1d(np.arange(60), t), t) for t in crit.folds]
    assert rel_err(path.mse, est.cv_error(cv=folds, alpha=alphas).mean(axis=1)) < 1e-12
    # another width selects other columns from the same seed
    assert not np.array_equal(crit.rows_for(gamma=3.0), cols) or crit.rows_for(gamma=3.0).size != cols.size


def test_criterion_input_errors(data):
    X, Y = data
    with pytest.raises(ValueError, match="basis_in_holdout"):
        SparseLSSVMCV(X, Y, basis_in_holdout="drop")
    with pytest.raises(ValueError, match="got cv='loo'"):
        FixedSizeCV(X, Y, cv="loo")
    with pytest.raises(ValueError, match="solver"):
        FixedSizeCV(X, Y, solver="cg")
    with pytest.raises(ValueError, match="basis"):
        NystromCV(X, Y, basis="leverage")
    with pytest.warns(NumericalWarning, match="dropped 1 of 3 basis points"):
        SparseLSSVMCV(X, Y, basis=np.array([1, 1, 2]))
