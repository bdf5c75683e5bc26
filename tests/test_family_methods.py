"""Every model family's shared methods against brute force.

The three families are one model (the documentation's Mathematics page, §6):
ridge with an unpenalised intercept on the whitened kernel features of a
basis, all of them kept (sparse), the top ``rank`` ones (Nyström, low-rank
predictor), or at the prototypes that carry a weight (fixed-size, at its
support).  So each public method of the six base estimators must equal its
definition computed on that model by explicit refits and dense solves
(:mod:`family_reference`), whatever the family:

* regressors: ``loo_residuals``, ``loo_predict``, ``press``, ``cv_predict``,
  ``cv_error``, ``holdout_predict``, ``predict_interval`` (jackknife+,
  jackknife, CV+, full), ``predict_std``, ``log_evidence``, ``gcv``;
* classifiers: ``loo_decision_function``, ``loo_error_rate``,
  ``cv_decision_function``, ``cv_error``, ``holdout_decision_function``,
  ``decision_function``, ``predict_proba``;

with the basis given as points (not training rows), as row indices, or by
the family's default rule; for every fold rule (leave-one-out, an int k, a
shuffled ``KFold``, ``GroupKFold`` with groups, a given hold-out set) and
every ``basis_in_holdout`` mode; and again on Dask arrays of three chunks.

Tolerances: the reference's own solve has a condition number ``cond``; both
sides carry a relative error of about ``eps * cond`` (the library's guards
refit past 1e-8), so a result passes within ``max(1e-9, 1e3 eps cond)`` of
the reference, relative to the size of the values.  The problems are kept
well conditioned (80 rows, 2 features, 14 basis points, alphas 0.05 to 5):
a wrong formula, row or basis point is off by 1e-3 or more.
"""

from __future__ import annotations

import functools
import warnings
import zlib

import family_reference as ref
import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import GroupKFold, KFold, LeaveOneOut, StratifiedKFold

from lssvm import FixedSizeLSSVC, FixedSizeLSSVR, NystromLSSVC, NystromLSSVR, SparseLSSVC, SparseLSSVR

M_ROWS = 80
N_BASIS = 14
RANK = 9  # Nyström: the top 9 of 14 eigenpairs
FIXED_SIZE_MAX = 11  # fixed-size: SCDP stops at 11 non-zeros (10 prototypes and the intercept)
GAMMA = 0.6
ALPHA = 0.3
ALPHAS = np.array([0.05, 0.5, 5.0])
COVERAGE = 0.8
SEEDS = (0, 1, 2)

FAMILIES = ("sparse", "nystrom", "fixed_size")
BASES = ("points", "rows", "default")
MODES = ("remove", "keep", "train")
#: one default per parameter name across families: the CV methods' and k-fold calibration's mode
#: The documented default of ``basis_in_holdout`` per family: Nyström keeps its fitted rank-k map
DEFAULT_BASIS_IN_HOLDOUT = {"sparse": "remove", "nystrom": "keep", "fixed_size": "remove"}
RULES = ("loo", "int", "kfold", "group")
ESTIMATORS = {
    ("sparse", "regressor"): SparseLSSVR,
    ("sparse", "classifier"): SparseLSSVC,
    ("nystrom", "regressor"): NystromLSSVR,
    ("nystrom", "classifier"): NystromLSSVC,
    ("fixed_size", "regressor"): FixedSizeLSSVR,
    ("fixed_size", "classifier"): FixedSizeLSSVC,
}
ESTIMATORS.update({(family, "multi-" + task): cls for (family, task), cls in list(ESTIMATORS.items())})
DEFAULT_RULE = {"sparse": "pchol", "nystrom": "random", "fixed_size": "pchol"}


def _seed(*parts):
    """A data seed that varies with the test's parameters: fresh data across tests, shared fits."""
    return SEEDS[zlib.crc32(repr(parts).encode()) % len(SEEDS)]


# ---------------------------------------------------------------- problems
@functools.lru_cache(maxsize=None)
def _data(task, seed):
    rng = np.random.default_rng(1000 + seed)
    X = rng.uniform(-2.0, 2.0, size=(M_ROWS, 2))
    signal = np.sin(1.5 * X[:, 0]) + np.cos(X[:, 1])
    noise = rng.normal(size=M_ROWS)
    if task == "regressor":
        y = 3.0 + signal + 0.2 * noise  # the offset makes SCDP choose the intercept first
    elif task == "classifier":
        y = (signal + 0.4 * noise > 0.4).astype(int)
    elif task == "multi-regressor":  # two outputs, fitted together (fixed-size: each at its own support)
        y = np.column_stack([3.0 + signal + 0.2 * noise, -4.0 + np.sin(2.0 * X[:, 1]) * X[:, 0]])
    else:  # three classes, one-vs-rest
        y = np.digitize(signal + 0.3 * noise, np.quantile(signal, [0.35, 0.7]))
    points = rng.uniform(-2.2, 2.2, size=(N_BASIS, 2))  # a basis of points that are not training rows
    rows = np.sort(rng.choice(M_ROWS, N_BASIS, replace=False))
    groups = rng.integers(0, 9, M_ROWS)
    X_new = rng.uniform(-2.5, 2.5, size=(6, 2))
    return X, y, points, rows, groups, X_new


def _params(family, basis, seed, task):
    X, _, points, rows, _, _ = _data(task, seed)
    spec = {"points": points, "rows": rows, "default": DEFAULT_RULE[family], "row_points": X[rows].copy()}[basis]
    params = dict(gamma=GAMMA, alpha=ALPHA, basis=spec, n_basis=N_BASIS, random_state=seed)
    if family == "nystrom":
        params.update(rank=RANK, predictor="low-rank")
    if family == "fixed_size":
        # nu (the intercept penalty that makes the system definite) small enough to be the unpenalised intercept
        params.update(solver="scdp", cv=None, max_size=FIXED_SIZE_MAX, nu=1e-12)
    return params


@functools.lru_cache(maxsize=None)
def _fitted(family, task, basis, seed, calibration=None, calibration_cv=None, dask=False):
    """The fitted estimator, its data and its reference model (cached: the methods do not change a fit)."""
    X, y, points, rows, groups, X_new = _data(task, seed)
    params = _params(family, basis, seed, task)
    if calibration is not None:
        params.update(calibration=calibration, calibration_cv=calibration_cv)
    est = ESTIMATORS[family, task](**params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a well-conditioned problem: any warning is a defect
        if dask:
            da = pytest.importorskip("dask.array")
            est.fit(da.from_array(X, chunks=((27, 27, 26), 2)), da.from_array(y, chunks=((27, 27, 26),)))
        else:
            est.fit(X, y)
    if basis == "points":  # a basis given as points stays as given
        np.testing.assert_array_equal(est.basis_vectors_, points)
    if basis in ("rows", "row_points"):
        np.testing.assert_array_equal(est.basis_vectors_, X[rows])
    if task.startswith("multi"):
        return est, _reference_groups(est, family)
    return est, _reference_model(est, family)


def _reference_groups(est, family):
    """The reference models of a multi-output fit with the outputs each serves: one for all outputs,
    or for fixed-size one per output at that output's own support (SCDP grows each output alone)."""
    if family != "fixed_size":
        return [(_reference_model(est, family), slice(None))]
    M = est.n_basis_
    W = np.asarray(est.coef_full_)
    groups = []
    for j in range(W.shape[1]):
        assert W[M, j] != 0.0, "precondition: SCDP chose the intercept of every output"
        support = np.flatnonzero(W[:M, j])
        groups.append((ref.RidgeBasis(np.asarray(est.basis_vectors_)[support], GAMMA), [j]))
    return groups


def _reference_model(est, family):
    """The model the fitted estimator is, as a :class:`family_reference.RidgeBasis`."""
    if family == "nystrom":
        return ref.RidgeBasis(np.asarray(est.basis_vectors_), GAMMA, rank=int(est.rank_))
    if family == "fixed_size":
        order = np.atleast_1d(est.selection_order_) if np.ndim(est.selection_order_[0]) == 0 else \
            est.selection_order_[0]
        # the model at its support is the sparse model on those prototypes with an intercept
        assert est.n_basis_ in set(np.asarray(order).tolist()), "precondition: SCDP chose the intercept"
        return ref.RidgeBasis(np.asarray(est.support_vectors_), GAMMA)
    return ref.RidgeBasis(np.asarray(est.basis_vectors_), GAMMA)


def _coded(task, y):
    """Targets as the model regresses them: the values, or +1 / -1 (classes_[1] is +1)."""
    if task.endswith("regressor"):
        return y.astype(float)
    if task == "classifier":
        return np.where(y == 1, 1.0, -1.0)
    return np.where(y[:, None] == np.arange(3)[None], 1.0, -1.0)  # one-vs-rest columns in classes_ order


def _folds(rule, task, y, groups):
    """(cv argument, groups argument, the test folds it means)."""
    dummy = np.zeros((len(y), 1))
    if rule == "loo":
        cv, g = LeaveOneOut(), None
    elif rule == "int":
        cv, g = 5, None
        splitter = StratifiedKFold(5) if task == "classifier" else KFold(5)
        return cv, g, [test for _, test in splitter.split(dummy, y)]
    elif rule == "kfold":
        cv, g = KFold(4, shuffle=True, random_state=7), None
    else:
        cv, g = GroupKFold(4), groups
    return cv, g, [test for _, test in cv.split(dummy, y, g)]


def _holdout_set(est, seed, basis_rows=None):
    """Rows to hold out: a few random ones and, where the basis is rows, two basis rows."""
    rng = np.random.default_rng(50 + seed)
    H = set(rng.choice(M_ROWS, 7, replace=False).tolist())
    if basis_rows is not None:
        return np.array(sorted(H | set(basis_rows[:2].tolist())))
    idx = getattr(est, "support_", None)
    basis_rows = est.basis_indices_
    if basis_rows is not None:
        basis_rows = np.asarray(basis_rows)
        if idx is not None:  # fixed-size: the rows of the supported prototypes
            basis_rows = basis_rows[np.asarray(idx)]
        H.update(basis_rows[:2].tolist())
    return np.array(sorted(H))


def _tol(cond):
    return max(1e-9, 1e3 * np.finfo(float).eps * cond)


def _assert_close(got, want, cond, what):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
    err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
    tol = _tol(cond)
    assert err <= tol, f"{what}: max relative error {err:.2e} > tolerance {tol:.1e} (reference cond {cond:.1e})"


def _ids(*names):
    return "-".join(str(n) for n in names)


# ============================================================ regressors
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", ("regressor", "classifier"))
def test_fitted_model_is_the_reference(task, family, basis):
    seed = _seed("fit", task, family, basis)
    est, model = _fitted(family, task, basis, seed)
    X, y, _, _, _, X_new = _data(task, seed)
    fit = model.fit(X, _coded(task, y), ALPHA)
    got = est.predict(X_new) if task == "regressor" else est.decision_function(X_new)
    _assert_close(got, fit.predict(X_new)[:, 0], fit.cond, f"{task} outputs")


@functools.lru_cache(maxsize=None)
def _cv_reference(family, task, basis, seed, rule, mode, alphas, dask=False):
    """Out-of-fold outputs (A, m) of the reference by explicit refits, and the largest condition
    number (cached: several methods and tests share them)."""
    _, model = _fitted(family, task, basis, seed, dask=dask)
    X, y, _, _, groups, _ = _data(task, seed)
    folds = _folds(rule, task, y, groups)[2]
    out, cond = [], 1.0
    for a in alphas:
        F, c = ref.cv_outputs(model, X, _coded(task, y), folds, a, mode)
        out.append(F[:, 0])
        cond = max(cond, c)
    return np.array(out), cond


def _loo_reference(family, task, basis, seed, dask=False):
    """Leave-one-out keeps the basis (a left-out basis point stays a basis function)."""
    return _cv_reference(family, task, basis, seed, "loo", "keep", tuple(ALPHAS), dask)


@pytest.mark.parametrize("method", ("loo_residuals", "loo_predict", "press"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_loo(family, basis, method):
    """Leave-one-out keeps the basis (a left-out basis point stays a basis function)."""
    seed = _seed("loo", family, basis)
    est, _ = _fitted(family, "regressor", basis, seed)
    y = _data("regressor", seed)[1]
    F, cond = _loo_reference(family, "regressor", basis, seed)
    want = {"loo_residuals": y[None] - F, "loo_predict": F, "press": ((y[None] - F) ** 2).sum(1)}[method]
    _assert_close(getattr(est, method)(ALPHAS), want, cond, method)
    _assert_close(getattr(est, method)(), getattr(est, method)(np.array([ALPHA]))[0], 1.0, f"{method} at the fitted alpha")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("method", ("cv_predict", "cv_error"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_cv(family, basis, method, rule, mode):
    seed = _seed("cv", family, basis, rule, mode)
    est, _ = _fitted(family, "regressor", basis, seed)
    _, y, _, _, groups, _ = _data("regressor", seed)
    cv, g, _ = _folds(rule, "regressor", y, groups)
    alphas = ALPHAS[[0, 2]]
    F, cond = _cv_reference(family, "regressor", basis, seed, rule, mode, tuple(alphas))
    if method == "cv_predict":
        got, want = est.cv_predict(cv, alpha=alphas, groups=g, basis_in_holdout=mode), F
    else:
        got, want = est.cv_error(cv, alpha=alphas, groups=g, basis_in_holdout=mode), ((y[None] - F) ** 2).mean(1)
    _assert_close(got, want, cond, f"{method} ({rule}, {mode})")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_holdout(family, basis, mode):
    seed = _seed("holdout", family, basis, mode)
    est, model = _fitted(family, "regressor", basis, seed)
    X, y, *_ = _data("regressor", seed)
    H = _holdout_set(est, seed)
    want, cond = zip(*(ref.holdout_outputs(model, X, y, H, a, mode) for a in ALPHAS), strict=True)
    got = est.holdout_predict(H, alpha=ALPHAS, basis_in_holdout=mode)
    _assert_close(got, np.array(want)[:, :, 0], max(cond), f"holdout_predict ({mode})")
    mask = np.zeros(M_ROWS, bool)
    mask[H] = True
    _assert_close(est.holdout_predict(mask, basis_in_holdout=mode), est.holdout_predict(H, basis_in_holdout=mode), 1.0,
                  "holdout_predict of a boolean mask")


INTERVALS = ("jackknife+", "jackknife", "full", "cv+/group") + tuple(f"cv+/{mode}" for mode in MODES)


@pytest.mark.parametrize("method", INTERVALS)
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_predict_interval(family, basis, method):
    seed = _seed("interval", family, basis, method)
    est, model = _fitted(family, "regressor", basis, seed)
    X, y, _, _, groups, X_new = _data("regressor", seed)
    m = len(y)
    if method == "full":
        got = est.predict_interval(X_new, coverage=COVERAGE, method="full")
        assert got.shape == (len(X_new), 2)
        for x, (lo, hi) in zip(X_new, got, strict=True):
            delta = 1e-6 * (hi - lo)
            inside = [ref.full_conformal_contains(model, X, y, x, v, ALPHA, COVERAGE) for v in
                      (lo - delta, lo + delta, hi - delta, hi + delta)]
            assert inside == [False, True, True, False], f"full conformal bounds {lo}, {hi}: membership {inside}"
        return
    if method == "cv+/group":  # GroupKFold with groups, at the default mode
        cv, g, folds = _folds("group", "regressor", y, groups)
        mode = DEFAULT_BASIS_IN_HOLDOUT[family]
        got = est.predict_interval(X_new, coverage=COVERAGE, method="cv+", cv=cv, groups=g)
    elif method.startswith("cv+"):
        mode = method.split("/")[1]
        cv = KFold(5, shuffle=True, random_state=3)
        folds = [test for _, test in cv.split(X)]
        got = est.predict_interval(X_new, coverage=COVERAGE, method="cv+", cv=cv, basis_in_holdout=mode)
    else:
        mode, folds = "keep", [np.array([i]) for i in range(m)]
        got = est.predict_interval(X_new, coverage=COVERAGE, method=method)
    fits, fold_of = ref.fold_models(model, X, y, folds, ALPHA, mode)
    oof = np.empty((m, 1))
    for j, H in enumerate(folds):
        oof[H] = fits[j].predict(X[H])
    R = y[:, None] - oof
    cond = max(f.cond for f in fits)
    if method == "jackknife":
        full = model.fit(X, y, ALPHA)
        want = ref.interval_jackknife(full.predict(X_new), R, COVERAGE)
    else:
        want = ref.interval_plus(fits, fold_of, R, X_new, COVERAGE)
    _assert_close(got, want[:, :, 0], cond, f"predict_interval {method}")


@pytest.mark.parametrize("parts", ("noise+residual", "noise", "residual", "function"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_predict_std(family, basis, parts):
    """The dense GP posterior (flat intercept prior, noise precision from the evidence)."""
    seed = _seed("std", family, basis, parts)
    est, model = _fitted(family, "regressor", basis, seed)
    X, y, _, _, _, X_new = _data("regressor", seed)
    noise, residual = "noise" in parts, "residual" in parts
    X_at = np.vstack([X_new, X[:3]])  # new points and training rows
    want = ref.dense_predictive_std(model, X, y, ALPHA, X_at, noise=noise, basis_residual=residual)
    got = est.predict_std(X_at, noise=noise, basis_residual=residual)
    _assert_close(got, want, 1e3, f"predict_std ({parts})")


def test_predictive_std_references_agree():
    """The two references of ``predict_std`` (function space and weight space) agree: a check of the
    references themselves, on a full-rank and a truncated basis."""
    X, y, points, _, _, X_new = _data("regressor", 0)
    for rank in (None, RANK):
        model = ref.RidgeBasis(points, GAMMA, rank)
        for noise in (True, False):
            for residual in (True, False):
                a = ref.dense_predictive_std(model, X, y, ALPHA, X_new, noise, residual)
                b = ref.closed_form_predictive_std(model, X, y, ALPHA, X_new, noise, residual)
                _assert_close(a, b, 1e3, f"references of predict_std (rank {rank}, {noise}, {residual})")


@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_log_evidence(family, basis):
    seed = _seed("evidence", family, basis)
    est, model = _fitted(family, "regressor", basis, seed)
    X, y, *_ = _data("regressor", seed)
    want = [ref.dense_log_evidence(model, X, y, a) for a in ALPHAS]
    got = est.log_evidence(ALPHAS)
    _assert_close(np.asarray(got) / M_ROWS, np.array(want) / M_ROWS, 1e3, "log_evidence per row")


@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_regressor_gcv(family, basis):
    seed = _seed("gcv", family, basis)
    est, model = _fitted(family, "regressor", basis, seed)
    X, y, *_ = _data("regressor", seed)
    want = [ref.gcv_score(model, X, y, a) for a in ALPHAS]
    _assert_close(est.gcv(ALPHAS), want, model.fit(X, y, ALPHAS[0]).cond, "gcv")


# ============================================================ classifiers
def _error_rate(F, t, tol):
    """Misclassification rate of decision values F (A, m) against coded targets t; rows whose
    reference value is within ``tol`` of 0 may fall either way (returned as the slack)."""
    wrong = (np.sign(F) != t[None]).mean(1)
    slack = (np.abs(F) <= tol).mean(1)
    return wrong, slack


@pytest.mark.parametrize("method", ("loo_decision_function", "loo_error_rate"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_classifier_loo(family, basis, method):
    seed = _seed("cloo", family, basis)
    est, _ = _fitted(family, "classifier", basis, seed)
    t = _coded("classifier", _data("classifier", seed)[1])
    F, cond = _loo_reference(family, "classifier", basis, seed)
    got = getattr(est, method)(ALPHAS)
    if method == "loo_decision_function":
        _assert_close(got, F, cond, method)
    else:
        want, slack = _error_rate(F, t, _tol(cond) * np.abs(F).max())
        assert np.all(np.abs(np.asarray(got) - want) <= slack + 1e-12), f"{method}: {got} against {want}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("method", ("cv_decision_function", "cv_error"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_classifier_cv(family, basis, method, rule, mode):
    seed = _seed("ccv", family, basis, rule, mode)
    est, _ = _fitted(family, "classifier", basis, seed)
    _, y, _, _, groups, _ = _data("classifier", seed)
    t = _coded("classifier", y)
    cv, g, _ = _folds(rule, "classifier", y, groups)
    alphas = ALPHAS[[0, 2]]
    F, cond = _cv_reference(family, "classifier", basis, seed, rule, mode, tuple(alphas))
    if method == "cv_decision_function":
        got = est.cv_decision_function(cv, alpha=alphas, groups=g, basis_in_holdout=mode)
        _assert_close(got, F, cond, f"{method} ({rule}, {mode})")
    else:
        got = est.cv_error(cv, alpha=alphas, groups=g, basis_in_holdout=mode)
        want, slack = _error_rate(F, t, _tol(cond) * np.abs(F).max())
        assert np.all(np.abs(np.asarray(got) - want) <= slack + 1e-12), f"{method}: {got} against {want}"
        mse = est.cv_error(cv, alpha=alphas, scoring="mse", groups=g, basis_in_holdout=mode)
        _assert_close(mse, ((t[None] - F) ** 2).mean(1), cond, f"cv_error mse ({rule}, {mode})")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_classifier_holdout(family, basis, mode):
    seed = _seed("choldout", family, basis, mode)
    est, model = _fitted(family, "classifier", basis, seed)
    X, y, *_ = _data("classifier", seed)
    t = _coded("classifier", y)
    H = _holdout_set(est, seed)
    want, cond = zip(*(ref.holdout_outputs(model, X, t, H, a, mode) for a in ALPHAS), strict=True)
    got = est.holdout_decision_function(H, alpha=ALPHAS, basis_in_holdout=mode)
    _assert_close(got, np.array(want)[:, :, 0], max(cond), f"holdout_decision_function ({mode})")


@pytest.mark.parametrize("calibration_cv", (None, 5))
@pytest.mark.parametrize("calibration", ("sigmoid", "isotonic"))
@pytest.mark.parametrize("basis", BASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_classifier_predict_proba(family, basis, calibration, calibration_cv):
    """Calibrated on the exact held-out decision values of the fitted model: leave-one-out (the
    basis kept), or ``cv_decision_function(calibration_cv)`` at the default ``basis_in_holdout``."""
    seed = _seed("proba", family, basis, calibration, calibration_cv)
    est, model = _fitted(family, "classifier", basis, seed, calibration, calibration_cv)
    X, y, _, _, _, X_new = _data("classifier", seed)
    t = _coded("classifier", y)
    if calibration_cv is None:
        folds, mode = [np.array([i]) for i in range(len(y))], "keep"
    else:
        folds = [test for _, test in StratifiedKFold(calibration_cv).split(X, y)]
        mode = DEFAULT_BASIS_IN_HOLDOUT[family]
    F, cond = ref.cv_outputs(model, X, t, folds, ALPHA, mode)
    f_new = model.fit(X, t, ALPHA).predict(X_new)[:, 0]
    if calibration == "sigmoid":
        A, B = ref.platt(F[:, 0], y == 1)
        p1 = 1.0 / (1.0 + np.exp(A * f_new + B))
    else:
        p1 = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(F[:, 0], y == 1).predict(f_new)
    want = np.column_stack([1.0 - p1, p1])
    _assert_close(est.predict_proba(X_new), want, max(cond, 1e4), f"predict_proba ({calibration})")


@pytest.mark.parametrize("task", ("regressor", "classifier"))
@pytest.mark.parametrize("family", FAMILIES)
def test_default_basis_in_holdout(family, task):
    """The CV and hold-out methods called without ``basis_in_holdout`` use the family's documented default."""
    seed = _seed("default-mode", family, task)
    est, _ = _fitted(family, task, "rows", seed)
    H = _holdout_set(est, seed)
    if task == "regressor":
        cv, holdout = est.cv_predict, est.holdout_predict
    else:
        cv, holdout = est.cv_decision_function, est.holdout_decision_function
    _assert_close(cv(5), cv(5, basis_in_holdout=DEFAULT_BASIS_IN_HOLDOUT[family]), 1.0, "default mode of the CV")
    _assert_close(holdout(H), holdout(H, basis_in_holdout=DEFAULT_BASIS_IN_HOLDOUT[family]), 1.0, "default mode of hold-out")
    assert np.abs(cv(5, basis_in_holdout="keep") - cv(5, basis_in_holdout="remove")).max() > 1e-6, \
        "precondition: the modes differ on this problem"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", ("regressor", "classifier"))
def test_basis_points_equal_to_rows(task, family, mode):
    """A basis given as points that equal training rows value for value: those rows hold the points, so
    "remove" and "train" treat them as a basis given by row indices would."""
    seed = _seed("row-points", task, family, mode)
    est, model = _fitted(family, task, "row_points", seed)
    X, y, _, rows, groups, _ = _data(task, seed)
    t = _coded(task, y)
    cv, _, folds = _folds("kfold", task, y, groups)
    F, cond = ref.cv_outputs(model, X, t, folds, ALPHA, mode)
    H = _holdout_set(est, seed, basis_rows=rows if family != "fixed_size" else
                     rows[np.asarray(est.support_)])
    G, c = ref.holdout_outputs(model, X, t, H, ALPHA, mode)
    if task == "regressor":
        got_cv, got_h = est.cv_predict(cv, basis_in_holdout=mode), est.holdout_predict(H, basis_in_holdout=mode)
    else:
        got_cv = est.cv_decision_function(cv, basis_in_holdout=mode)
        got_h = est.holdout_decision_function(H, basis_in_holdout=mode)
    _assert_close(got_cv, F[:, 0], cond, f"cv ({mode})")
    _assert_close(got_h, G[:, 0], c, f"hold-out ({mode})")


# ============================================================ several outputs
MULTI_KINDS = ("outputs", "loo", "loo/path", "kfold/remove", "group/train", "holdout/remove")


@pytest.mark.parametrize("kind", MULTI_KINDS)
@pytest.mark.parametrize("basis", ("points", "rows"))
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", ("multi-regressor", "multi-classifier"))
def test_several_outputs(task, family, basis, kind):
    """Two regression targets, or three classes one-vs-rest: every output is its own reference model's
    (one factorisation for all; fixed-size: each output at the prototypes its SCDP run chose).  At the
    fitted alpha, and (``loo/path``) along a path of alphas."""
    seed = _seed("multi", task, family, basis)
    est, groups = _fitted(family, task, basis, seed)
    X, y, _, _, g_labels, X_new = _data(task, seed)
    T = _coded(task, y)
    regressor = task == "multi-regressor"
    alphas = ALPHAS if kind == "loo/path" else np.array([ALPHA])
    H = _holdout_set(est, seed) if kind.startswith("holdout") else None
    if kind == "outputs":
        want = np.empty((1, len(X_new), T.shape[1]))
    elif kind == "holdout/remove":
        want = np.empty((alphas.size, H.size, T.shape[1]))
    else:
        want = np.empty((alphas.size,) + T.shape)
    cond = 1.0
    for model, cols in groups:
        Tc = T[:, cols]
        for i, a in enumerate(alphas):
            if kind == "outputs":
                fit = model.fit(X, Tc, a)
                F, c = fit.predict(X_new), fit.cond
            elif kind == "holdout/remove":
                F, c = ref.holdout_outputs(model, X, Tc, H, a, "remove")
            else:
                rule, mode = ("loo", "keep") if kind.startswith("loo") else kind.split("/")
                F, c = ref.cv_outputs(model, X, Tc, _folds(rule, task, y, g_labels)[2], a, mode)
            want[i][..., cols], cond = F, max(cond, c)
    path = {"alpha": ALPHAS} if kind == "loo/path" else {}
    if kind == "outputs":
        got = est.predict(X_new) if regressor else est.decision_function(X_new)
    elif kind.startswith("loo"):
        got = est.loo_predict(**path) if regressor else est.loo_decision_function(**path)
    elif kind == "holdout/remove":
        method = est.holdout_predict if regressor else est.holdout_decision_function
        got = method(H, basis_in_holdout="remove")
    else:
        rule, mode = kind.split("/")
        cv, g, _ = _folds(rule, task, y, g_labels)
        method = est.cv_predict if regressor else est.cv_decision_function
        got = method(cv, groups=g, basis_in_holdout=mode)
    _assert_close(got, want if kind == "loo/path" else want[0], cond, f"{task} {kind}")


# ============================================================ Dask
DASK_REGRESSOR = ("predict", "loo_residuals", "press", "cv_predict", "cv_error", "holdout_predict",
                  "predict_interval/jackknife+", "predict_interval/cv+", "predict_std", "log_evidence", "gcv")
DASK_CLASSIFIER = ("decision_function", "loo_decision_function", "loo_error_rate", "cv_decision_function",
                   "cv_error", "holdout_decision_function", "predict_proba")


def _compute(a):
    return np.asarray(a.compute() if hasattr(a, "compute") else a, dtype=float)


@pytest.mark.parametrize("method", DASK_REGRESSOR)
@pytest.mark.parametrize("basis", ("points", "rows"))
@pytest.mark.parametrize("family", FAMILIES)
def test_dask_regressor(family, basis, method):
    """Through Dask (three row chunks): the same numbers as the brute force."""
    dask = pytest.importorskip("dask")
    seed = _seed("dask", family, basis)
    X, y, _, _, groups, X_new = _data("regressor", seed)
    with dask.config.set(scheduler="synchronous"):
        est, model = _fitted(family, "regressor", basis, seed, dask=True)
        cv, g, folds = _folds("kfold", "regressor", y, groups)
        H = _holdout_set(est, seed)
        if method == "predict":
            fit = model.fit(X, y, ALPHA)
            got, want, cond = _compute(est.predict(X_new)), fit.predict(X_new)[:, 0], fit.cond
        elif method in ("loo_residuals", "press"):
            F, cond = _loo_reference(family, "regressor", basis, seed, dask=True)
            got = _compute(getattr(est, method)(ALPHAS))
            want = y[None] - F if method == "loo_residuals" else ((y[None] - F) ** 2).sum(1)
        elif method in ("cv_predict", "cv_error"):
            F, cond = ref.cv_outputs(model, X, y, folds, ALPHA, "remove")
            got = _compute(getattr(est, method)(cv, groups=g, basis_in_holdout="remove"))
            want = F[:, 0] if method == "cv_predict" else np.mean((y - F[:, 0]) ** 2)
        elif method == "holdout_predict":
            F, cond = ref.holdout_outputs(model, X, y, H, ALPHA, "remove")
            got, want = _compute(est.holdout_predict(H, basis_in_holdout="remove")), F[:, 0]
        elif method.startswith("predict_interval"):
            kind = method.split("/")[1]
            if kind == "cv+":
                cv5 = KFold(5, shuffle=True, random_state=3)
                fold_list, mode = [test for _, test in cv5.split(X)], "remove"
                got = _compute(est.predict_interval(X_new, coverage=COVERAGE, method="cv+", cv=cv5,
                                                      basis_in_holdout="remove"))
            else:
                fold_list, mode = [np.array([i]) for i in range(len(y))], "keep"
                got = _compute(est.predict_interval(X_new, coverage=COVERAGE, method="jackknife+"))
            fits, fold_of = ref.fold_models(model, X, y, fold_list, ALPHA, mode)
            oof = np.empty((len(y), 1))
            for j, T in enumerate(fold_list):
                oof[T] = fits[j].predict(X[T])
            want = ref.interval_plus(fits, fold_of, y[:, None] - oof, X_new, COVERAGE)[:, :, 0]
            cond = max(f.cond for f in fits)
        elif method == "predict_std":
            got = _compute(est.predict_std(X_new))
            want, cond = ref.dense_predictive_std(model, X, y, ALPHA, X_new), 1e3
        elif method == "log_evidence":
            got = _compute(est.log_evidence(ALPHAS)) / M_ROWS
            want, cond = np.array([ref.dense_log_evidence(model, X, y, a) for a in ALPHAS]) / M_ROWS, 1e3
        else:
            got = _compute(est.gcv(ALPHAS))
            want, cond = np.array([ref.gcv_score(model, X, y, a) for a in ALPHAS]), 1e3
    _assert_close(got, want, cond, f"Dask {method}")


@pytest.mark.parametrize("method", DASK_CLASSIFIER)
@pytest.mark.parametrize("basis", ("points", "rows"))
@pytest.mark.parametrize("family", FAMILIES)
def test_dask_classifier(family, basis, method):
    dask = pytest.importorskip("dask")
    seed = _seed("cdask", family, basis)
    X, y, _, _, groups, X_new = _data("classifier", seed)
    t = _coded("classifier", y)
    with dask.config.set(scheduler="synchronous"):
        est, model = _fitted(family, "classifier", basis, seed, dask=True)
        cv, g, folds = _folds("group", "classifier", y, groups)
        H = _holdout_set(est, seed)
        if method == "decision_function":
            fit = model.fit(X, t, ALPHA)
            got, want, cond = _compute(est.decision_function(X_new)), fit.predict(X_new)[:, 0], fit.cond
        elif method == "predict_proba":  # Platt's map on the exact leave-one-out values
            est, _ = _fitted(family, "classifier", basis, seed, "sigmoid", None, dask=True)
            F, cond = _cv_reference(family, "classifier", basis, seed, "loo", "keep", (ALPHA,), True)
            A, B = ref.platt(F[0], y == 1)
            p1 = 1.0 / (1.0 + np.exp(A * model.fit(X, t, ALPHA).predict(X_new)[:, 0] + B))
            got, want = _compute(est.predict_proba(X_new)), np.column_stack([1.0 - p1, p1])
            cond = max(cond, 1e4)
        elif method.startswith("loo"):
            F, cond = _loo_reference(family, "classifier", basis, seed, dask=True)
            got = _compute(getattr(est, method)(ALPHAS))
            if method == "loo_error_rate":
                want, slack = _error_rate(F, t, _tol(cond) * np.abs(F).max())
                assert np.all(np.abs(got - want) <= slack + 1e-12), f"Dask {method}: {got} against {want}"
                return
            want = F
        elif method.startswith("cv"):
            F, cond = ref.cv_outputs(model, X, t, folds, ALPHA, "remove")
            got = _compute(getattr(est, method)(cv, groups=g, basis_in_holdout="remove"))
            if method == "cv_error":
                want, slack = _error_rate(F.T, t, _tol(cond) * np.abs(F).max())
                assert np.all(np.abs(got - want) <= slack + 1e-12), f"Dask {method}: {got} against {want}"
                return
            want = F[:, 0]
        else:
            F, cond = ref.holdout_outputs(model, X, t, H, ALPHA, "remove")
            got, want = _compute(est.holdout_decision_function(H, basis_in_holdout="remove")), F[:, 0]
    _assert_close(got, want, cond, f"Dask {method}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rule", ("int", "kfold", "group"))
@pytest.mark.parametrize("family", FAMILIES)
def test_dask_cv_rules(family, rule, mode):
    """Every fold rule and ``basis_in_holdout`` mode through Dask (a basis of rows, so that "remove" removes)."""
    dask = pytest.importorskip("dask")
    seed = _seed("dask-rules", family, rule, mode)
    X, y, _, _, groups, _ = _data("regressor", seed)
    with dask.config.set(scheduler="synchronous"):
        est, model = _fitted(family, "regressor", "rows", seed, dask=True)
        cv, g, folds = _folds(rule, "regressor", y, groups)
        F, cond = ref.cv_outputs(model, X, y, folds, ALPHA, mode)
        got = _compute(est.cv_predict(cv, groups=g, basis_in_holdout=mode))
    _assert_close(got, F[:, 0], cond, f"Dask cv_predict ({rule}, {mode})")
