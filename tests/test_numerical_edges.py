"""Numerical edge cases: leverage h_ii -> 1, constant targets, a
hold-out set holding every basis vector, and a property test that fast
hold-out equals retraining within a tolerance scaled by the measured
condition number of each fold's problem, and that no NaN or inf is returned
without a warning."""

import warnings

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold

from lssvm import (
    ConstantTargetWarning,
    FixedSizeLSSVR,
    NumericalWarning,
    NystromLSSVR,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm.cv import explicit_holdout_predict

EPS = np.finfo(float).eps


def _isolated_row_problem(rng):
    """30 rows in [0, 1] and row 30 far away, itself a basis point: with a
    tiny alpha it is fitted exactly (1 - h_30 ~ alpha), the others are not."""
    X = np.vstack([rng.uniform(0, 1, (30, 1)), [[10.0]]])
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.standard_normal(31)
    y[30] = 5.0
    return X, y, np.r_[np.arange(0, 30, 3), 30]


def test_leverage_warning_names_the_rows(rng):
    X, y, basis = _isolated_row_problem(rng)
    est = SparseLSSVR(gamma=20.0, alpha=1e-14, basis=basis).fit(X, y)
    with pytest.warns(NumericalWarning, match=r"training row\(s\) 30 is within 1e-08 of 1"):
        est.loo_residuals()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.loo_residuals(1e-3)  # a sane alpha: no warning
        assert 1 - est.factorization_.hat_diag(1e-3).max() > 1e-6
    with pytest.warns(NumericalWarning, match=r"concern the fitted model.*row\(s\) 30 is within"):
        SparseLSSVRCV(param_space={"gamma": [20.0]}, alphas=[1e-14], basis=basis, cv="loo").fit(X, y)
    # an alpha the search does not choose: a note, not a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        est = SparseLSSVRCV(param_space={"gamma": [20.0]}, alphas=[1e-14, 1e-2], basis=basis, cv="loo").fit(X, y)
    assert est.alpha_ == 1e-2 and any("row(s) 30 is within" in note for note in est.numerical_notes_)


def test_leverage_warning_on_dask_names_the_rows(rng):
    X, y, basis = _isolated_row_problem(rng)
    est = SparseLSSVR(gamma=20.0, alpha=1e-14, basis=basis).fit(da.from_array(X, chunks=8), da.from_array(y, chunks=8))
    with pytest.warns(NumericalWarning, match=r"training row\(s\) 30 is within"):
        est.press()  # a reduction: warned on the client
    with pytest.warns(NumericalWarning, match=r"training row\(s\) 30 is within"):
        est.loo_residuals().compute()  # lazy: warned where the task runs (here, a local thread)


def test_many_rows_at_leverage_one_are_counted(rng):
    X = rng.standard_normal((40, 2))
    y = rng.standard_normal(40)
    est = SparseLSSVR(gamma=50.0, alpha=1e-15, basis=np.arange(40)).fit(X, y)  # interpolates every row
    with pytest.warns(NumericalWarning, match=r"row\(s\) 0, 1, 2, .* and \d+ more"):
        est.loo_residuals()


@pytest.mark.parametrize("make", [
    lambda: SparseLSSVR(gamma=0.5),
    lambda: FixedSizeLSSVR(gamma=0.5, cv=3, n_basis=20),
    lambda: NystromLSSVR(gamma=0.5, n_basis=20),
    lambda: SparseLSSVRCV(param_space={"gamma": [0.1, 1.0]}),
])
def test_constant_targets_warn_and_predict_the_constant(rng, make):
    X = rng.standard_normal((60, 2))
    with pytest.warns(ConstantTargetWarning, match=r"y is constant \(every value is 3\)"):
        est = make().fit(X, np.full(60, 3.0))
    np.testing.assert_allclose(est.predict(X), 3.0, rtol=1e-8)
    Y = np.column_stack([rng.standard_normal(60), np.full(60, -1.0)])
    with pytest.warns(ConstantTargetWarning, match=r"output column\(s\) 1 of y are constant"):
        make().fit(X, Y)


def test_single_class_is_an_error(rng):
    with pytest.raises(ValueError, match="class"):
        SparseLSSVC(gamma=0.5).fit(rng.standard_normal((20, 2)), np.ones(20))


def test_holdout_holding_every_basis_vector_is_an_error(rng):
    X = rng.standard_normal((50, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(50)
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.array([1, 2, 3])).fit(X, y)
    with pytest.raises(ValueError, match=r"holds every basis vector \(3\).*basis_in_holdout='keep'"):
        est.holdout_predict([1, 2, 3, 10])
    with pytest.raises(ValueError, match="holds every basis vector"):
        est.cv_predict([(None, np.arange(0, 25)), (None, np.arange(25, 50))])
    for mode in ("keep", "train"):
        assert np.all(np.isfinite(est.holdout_predict([1, 2, 3, 10], basis_in_holdout=mode)))


def _fold_condition(est, H, mode):
    """cond(K_BB) times the condition number of the fold's whitened normal
    matrix plus alpha: the accuracy a backward-stable solve of that fold
    (ours or the retraining reference) can promise, relative to eps."""
    fac = est.factorization_
    m = fac.n_samples
    train = np.setdiff1d(np.arange(m), H)
    if mode == "train":
        train = np.union1d(train, np.intersect1d(H, est.basis_indices_))
    Mt = fac.M[train] - fac.M[train].mean(axis=0)
    if mode == "remove":
        E = np.isin(est.basis_indices_, H)
        if E.any():
            Mt = Mt @ np.linalg.svd(fac.Q[E])[2][E.sum():].T  # the null space of Q_E
    mu = np.linalg.eigvalsh(Mt.T @ Mt)
    Zb = est.basis_vectors_
    return np.linalg.cond(est.kernel_(Zb, Zb)) * (mu.max() + est.alpha) / (max(mu.min(), 0.0) + est.alpha)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    m=st.integers(6, 45),
    n=st.integers(1, 14),
    v=st.integers(1, 2),
    kernel=st.sampled_from(["rbf", "laplacian", "poly", "linear"]),
    log_gamma=st.floats(-3, 1.5),
    log_alpha=st.floats(-13, 2),
    mode=st.sampled_from(["remove", "keep", "train"]),
    h_frac=st.floats(0.02, 0.6),
    seed=st.integers(0, 2**31),
)
def test_fast_holdout_equals_retraining_within_the_condition_number(m, n, v, kernel, log_gamma, log_alpha, mode,
                                                                   h_frac, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    Y = np.column_stack([np.sin(X[:, 0]) + 0.1 * rng.standard_normal(m) for _ in range(v)])
    n = min(n, m - 1)
    H = rng.choice(m, max(1, int(h_frac * m)), replace=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SparseLSSVR(kernel=kernel, gamma=10.0**log_gamma, degree=2, alpha=10.0**log_alpha, basis="random",
                          n_basis=n, random_state=seed % 1000).fit(X, Y)
        if mode == "remove" and np.isin(est.basis_indices_, H).all():
            with pytest.raises(ValueError, match="holds every basis vector"):
                est.holdout_predict(H, basis_in_holdout=mode)
            return
        outputs = [est.loo_residuals(), est.holdout_predict(H, basis_in_holdout=mode),
                   est.cv_predict(min(3, m), basis_in_holdout="keep")]
    said = " ".join(str(w.message) for w in caught if issubclass(w.category, NumericalWarning))
    assert ("hat-matrix diagonal" in said or "numerically singular" in said
            or all(np.all(np.isfinite(o)) for o in outputs)), "NaN/inf returned without saying why"
    if est.factorization_.method != "cholesky" or not np.all(np.isfinite(outputs[1])):
        return  # a numerically singular K_BB: the range path, already warned about
    kappa = _fold_condition(est, H, mode)
    ref = explicit_holdout_predict(est, X, H, None, mode).reshape(outputs[1].shape)
    err = np.abs(outputs[1] - ref).max() / max(np.abs(ref).max(), np.abs(Y).max())  # relative to the data scale
    assert err <= max(1e-13, 100 * EPS * kappa), (err, kappa)


def test_random_basis_is_not_the_first_shuffled_fold_of_the_same_seed(rng):
    """``rng.choice(m, n, replace=False)`` is the first n entries of
    ``rng.permutation(m)``, i.e. the first test fold of a shuffled KFold with
    the same seed: the random basis draws differently, so seeding both alike
    does not hold out the whole basis."""
    X = rng.standard_normal((60, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(60)
    for seed in range(5):
        est = SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=12, random_state=seed).fit(X, y)
        first_fold = next(KFold(5, shuffle=True, random_state=seed).split(X))[1]
        assert not np.isin(est.basis_indices_, first_fold).all()
        assert np.all(np.isfinite(est.cv_predict(KFold(5, shuffle=True, random_state=seed))))


def test_leave_one_out_folds_warn_only_about_rows_they_take_from_the_closed_form(rng):
    from sklearn.model_selection import LeaveOneOut

    X, y, basis = _isolated_row_problem(rng)
    est = SparseLSSVR(gamma=20.0, alpha=1e-14, basis=basis).fit(X, y)
    with warnings.catch_warnings():  # row 30 is a basis row: "remove" refits it, no closed-form LOO
        warnings.simplefilter("error", NumericalWarning)
        out = est.cv_predict(LeaveOneOut(), basis_in_holdout="remove")
    assert np.all(np.isfinite(out))
    with pytest.warns(NumericalWarning, match=r"row\(s\) 30 is within"):
        est.cv_predict(LeaveOneOut(), basis_in_holdout="keep")
