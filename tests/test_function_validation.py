"""Input validation of the public functions (kernels, basis selection,
solvers, folds, brute-force references, searches): bad input raises a clear
ValueError / TypeError naming the argument, never a wrong answer, an endless
loop or an obscure internal error."""

from functools import lru_cache

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GroupKFold, LeaveOneOut

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.basis import (
    feature_vector_selection,
    greedy_selection,
    kcenter,
    prototype_pool,
    random_basis,
    renyi_entropy_selection,
    sampled_columns,
    select_basis,
)
from lssvm.cv import check_indices, cross_val_predictions, resolve_folds
from lssvm.cv.explicit import explicit_holdout_predict, explicit_loo_residuals
from lssvm.kernels import (
    RBF,
    Laplacian,
    Linear,
    Normalized,
    Polynomial,
    kernel_from_dict,
    make_kernel,
    manhattan_distances,
    squared_distances,
)
from lssvm.selection import DenseLSSVMCV, csa_search, grid_search, nelder_mead_search
from lssvm.solvers import factorize_sparse_rls
from lssvm.solvers.fixed_size import scdp

rng = np.random.RandomState(0)
X = rng.randn(30, 3)
y = np.sin(X[:, 0])
X_nan = X.copy()
X_nan[3, 1] = np.nan
X_inf = X.copy()
X_inf[5, 0] = np.inf
X_half_zero = np.vstack([X[:15], np.zeros((15, 3))])
K_mn = RBF(0.5)(X, X[:5])
K_BB = K_mn[:5]
A_spd = K_mn.T @ K_mn + np.eye(5)
A_asym = A_spd.copy()
A_asym[0, 1] += 1.0


def _with_nan(A, i=0, j=0):
    A = np.array(A, dtype=float)
    A[i, j] = np.nan
    return A


@lru_cache(maxsize=None)
def _regressor():
    return SparseLSSVR(n_basis=6, basis="random", random_state=0).fit(X, y)


@lru_cache(maxsize=None)
def _classifier():
    return SparseLSSVC(n_basis=6, basis="random", random_state=0).fit(X, np.where(X[:, 1] > 0, "a", "b"))


def _criterion():
    return DenseLSSVMCV(X, y, cv=3)


BOUNDS = {"gamma": (0.1, 10.0)}

CASES = {
    # 1. greedy selection
    "greedy-n_candidates-0": (lambda: greedy_selection(X, y, RBF(1.0), 2, 1.0, n_candidates=0),
                              ValueError, "n_candidates must be a positive integer"),
    "greedy-n_basis-None": (lambda: greedy_selection(X, y, RBF(1.0), None, 1.0), ValueError, "n_basis must be"),
    "greedy-n_basis-0": (lambda: greedy_selection(X, y, RBF(1.0), 0, 1.0), ValueError, "n_basis must be"),
    "greedy-alpha-0": (lambda: greedy_selection(X, y, RBF(1.0), 2, 0.0), ValueError, "alpha must be a finite"),
    "greedy-alpha-nan": (lambda: greedy_selection(X, y, RBF(1.0), 2, np.nan), ValueError, "alpha must be"),
    "greedy-y-nan": (lambda: greedy_selection(X, y * np.nan, RBF(1.0), 2, 1.0), ValueError,
                     r"Y \(the targets\) contains NaN"),
    "greedy-y-length": (lambda: greedy_selection(X, y[:-1], RBF(1.0), 2, 1.0), ValueError, "one row per row of X"),
    "greedy-pivot_tol": (lambda: greedy_selection(X, y, RBF(1.0), 2, 1.0, pivot_tol=np.nan), ValueError,
                         r"pivot_tol must be a number in \(0, 1\)"),
    "greedy-kernel-str": (lambda: greedy_selection(X, y, "rbf", 2, 1.0), TypeError, "pass|Kernel"),
    "greedy-X-nan": (lambda: greedy_selection(X_nan, y, RBF(1.0), 2, 1.0), ValueError, "X contains NaN"),
    "greedy-all-zero": (lambda: greedy_selection(np.zeros((5, 2)), np.arange(5.0), Linear(), 2, 1.0),
                        ValueError, "no usable basis point"),
    # 2. feature vector selection
    "fvs-tol-1.5": (lambda: feature_vector_selection(X, RBF(1.0), tol=1.5), ValueError, r"tol must be .*\[0, 1\)"),
    "fvs-tol-nan": (lambda: feature_vector_selection(X, RBF(1.0), tol=np.nan), ValueError, "tol must be"),
    "fvs-rcond-2": (lambda: feature_vector_selection(X, RBF(1.0), rcond=2), ValueError, r"rcond must .*\(0, 1\)"),
    "fvs-pivot_tol-0": (lambda: feature_vector_selection(X, RBF(1.0), pivot_tol=0.0), ValueError, "pivot_tol"),
    "fvs-n_candidates-0": (lambda: feature_vector_selection(X, RBF(1.0), n_candidates=0), ValueError,
                           "n_candidates"),
    "fvs-kernel-str": (lambda: feature_vector_selection(X, "rbf"), TypeError, r"lssvm\.kernels\.RBF\(gamma\)"),
    "fvs-sparse-rbf": (lambda: feature_vector_selection(sp.csr_matrix(X), RBF(1.0)), ValueError,
                       "sparse input is supported only by the dot-product kernels"),
    "fvs-empty-basis": (lambda: feature_vector_selection(X_half_zero, Linear(), tol=0.6), ValueError,
                        "chose no point.*lower tol"),
    # 3. kernels
    "RBF-gamma-negative": (lambda: RBF(gamma=-1.0), ValueError, "gamma must be a finite number > 0"),
    "RBF-gamma-nan": (lambda: RBF(gamma=float("nan")), ValueError, "gamma must be a finite number > 0"),
    "RBF-gamma-str": (lambda: RBF(gamma="1"), ValueError, "gamma must be a finite number > 0"),
    "Laplacian-gamma-0": (lambda: Laplacian(0.0), ValueError, "gamma must be a finite number > 0"),
    "Polynomial-degree-0": (lambda: Polynomial(degree=0), ValueError, "degree must be an integer >= 1"),
    "Polynomial-degree-float": (lambda: Polynomial(degree=2.5), ValueError, "degree must be an integer"),
    "Polynomial-coef0-negative": (lambda: Polynomial(coef0=-1.0), ValueError, "coef0 must be a finite number >= 0"),
    "Polynomial-coef0-inf": (lambda: Polynomial(coef0=np.inf), ValueError, "coef0 must be a finite number"),
    "Polynomial-gamma-nan": (lambda: Polynomial(gamma=np.nan), ValueError, "gamma must be"),
    "Normalized-base-str": (lambda: Normalized("rbf"), TypeError, "Normalized needs a Kernel"),
    "kernel-call-nan-X": (lambda: RBF(1.0)(X_nan, X), ValueError, "kernel argument X contains NaN or infinity"),
    "kernel-call-inf-Z": (lambda: Polynomial()(X, X_inf), ValueError, "kernel argument Z contains NaN"),
    "kernel-call-columns": (lambda: RBF(1.0)(X, X[:, :2]), ValueError, "same number of columns"),
    "kernel-call-overflow": (lambda: RBF(1.0)(X * 1e200, X), ValueError, "overflow.*scale the inputs"),
    "poly-kernel-overflow": (lambda: Polynomial(degree=40)(X * 1e10, X), ValueError, "overflow.*StandardScaler"),
    "linear-kernel-overflow": (lambda: Linear()(X * 1e200, X * 1e200), ValueError, "overflow"),
    "normalized-diag-overflow": (lambda: Normalized(Linear())(X * 1e160, X * 1e-160), ValueError, "overflow"),
    "sqdist-columns": (lambda: squared_distances(X, X[:, :2]), ValueError, "same number of columns"),
    "sqdist-1d": (lambda: squared_distances(X[0], X), ValueError, r"2-D arrays.*reshape"),
    "sqdist-overflow": (lambda: squared_distances(X * 1e200, X), ValueError, "squared distances overflow"),
    "sqdist-nan": (lambda: squared_distances(X, X_nan), ValueError, "Z contains NaN or infinity"),
    "l1dist-columns": (lambda: manhattan_distances(X, X[:, :2]), ValueError, "same number of columns"),
    "kernel_from_dict-empty": (lambda: kernel_from_dict({}), ValueError, "missing the 'kernel' key"),
    "kernel_from_dict-no-base": (lambda: kernel_from_dict({"kernel": "normalized"}), ValueError,
                                 "missing the 'base' key"),
    "kernel_from_dict-unknown-key": (lambda: kernel_from_dict({"kernel": "rbf", "sigma": 1.0}), ValueError,
                                     "unknown key"),
    "kernel_from_dict-not-dict": (lambda: kernel_from_dict("rbf"), TypeError, "kernel dict"),
    "kernel_from_dict-bad-gamma": (lambda: kernel_from_dict({"kernel": "rbf", "gamma": -1}), ValueError, "gamma"),
    # 4. basis helpers
    "random_basis-nan": (lambda: random_basis(X_nan, 2), ValueError, "X contains NaN or infinity"),
    "random_basis-0": (lambda: random_basis(X, 0), ValueError, "n_basis must be a positive integer"),
    "random_basis-str": (lambda: random_basis(X, "a"), ValueError, "n_basis must be a positive integer"),
    "random_basis-empty-X": (lambda: random_basis(np.zeros((0, 2)), 1), ValueError, "non-empty 2-D"),
    "kcenter-nan": (lambda: kcenter(X_inf, 2), ValueError, "X contains NaN or infinity"),
    "kcenter-None": (lambda: kcenter(X, None), ValueError, "n must be a positive integer"),
    "renyi-nan": (lambda: renyi_entropy_selection(X_nan, 2, RBF(1.0)), ValueError, "X contains NaN"),
    "renyi-None": (lambda: renyi_entropy_selection(X, None, RBF(1.0)), ValueError, "n must be a positive integer"),
    "renyi-kernel-str": (lambda: renyi_entropy_selection(X, 2, "rbf"), TypeError, "Kernel"),
    "renyi-n_iter": (lambda: renyi_entropy_selection(X, 2, RBF(1.0), n_iter=-1), ValueError, "n_iter must be"),
    "select_basis-nan": (lambda: select_basis(X_nan, RBF(1.0), "random", 2), ValueError, "X contains NaN"),
    "select_basis-kernel-str": (lambda: select_basis(X, "rbf", "random", 2), TypeError, "Kernel"),
    "select_basis-greedy-alpha": (lambda: select_basis(X, RBF(1.0), "greedy", 2, y=y, alpha=-1.0), ValueError,
                                  "alpha must be"),
    "sampled_columns-nan": (lambda: sampled_columns(X_nan, RBF(1.0), "random", 3), ValueError, "X contains NaN"),
    "prototype_pool-nan": (lambda: prototype_pool(X_inf, RBF(1.0), "kcenter", 3), ValueError, "X contains NaN"),
    "prototype_pool-all-nan": (lambda: prototype_pool(X_nan, RBF(1.0), "all"), ValueError, "X contains NaN"),
    # 5. sparse RLS factorisation
    "factorize-K_mn-nan": (lambda: factorize_sparse_rls(_with_nan(K_mn), K_BB, y[:, None]), ValueError,
                           "K_mn contains NaN or infinity"),
    "factorize-K_BB-nan": (lambda: factorize_sparse_rls(K_mn, _with_nan(K_BB), y[:, None]), ValueError,
                           "K_BB contains NaN"),
    "factorize-Y-nan": (lambda: factorize_sparse_rls(K_mn, K_BB, _with_nan(y[:, None])), ValueError,
                        "Y contains NaN"),
    "factorize-no-rows": (lambda: factorize_sparse_rls(K_mn[:0], K_BB, y[:0, None]), ValueError,
                          "at least one training row"),
    "factorize-no-basis": (lambda: factorize_sparse_rls(K_mn[:, :0], K_BB[:0, :0], y[:, None]), ValueError,
                           "one basis point"),
    "factorize-shapes": (lambda: factorize_sparse_rls(K_mn, K_BB, y[:-1, None]), ValueError, "expected K_mn"),
    # 6. SCDP
    "scdp-tol-nan": (lambda: scdp(A_spd, np.ones(5), tol=np.nan), ValueError, "tol must be a finite number >= 0"),
    "scdp-tol-negative": (lambda: scdp(A_spd, np.ones(5), tol=-1.0), ValueError, "tol must be"),
    "scdp-asymmetric": (lambda: scdp(A_asym, np.ones(5)), ValueError, "A must be symmetric"),
    "scdp-empty": (lambda: scdp(np.zeros((0, 0)), np.zeros(0)), ValueError, "A and b are empty"),
    "scdp-nan": (lambda: scdp(_with_nan(A_spd), np.ones(5)), ValueError, "finite"),
    "scdp-max_nonzero-str": (lambda: scdp(A_spd, np.ones(5), max_nonzero="a"), ValueError, "max_nonzero must be"),
    "scdp-n_candidates-str": (lambda: scdp(A_spd, np.ones(5), n_candidates="a"), ValueError, "n_candidates must"),
    "scdp-b-2d": (lambda: scdp(A_spd, np.ones((5, 2))), ValueError, "b must be 1-D"),
    # 7. folds
    "resolve_folds-str": (lambda: resolve_folds("foo", 10), ValueError, "cv must be 'loo', an int"),
    "resolve_folds-classifier-no-y": (lambda: resolve_folds(3, 10, classifier=True), ValueError, "pass y"),
    "resolve_folds-group-no-groups": (lambda: resolve_folds(GroupKFold(2), 10), ValueError,
                                      "GroupKFold splits by group: pass groups="),
    "cross_val_predictions-not-partition": (
        lambda: cross_val_predictions(_regressor()._holdout_engine(), [np.arange(10)], 0.1), ValueError,
        "must partition the rows"),
    "cross_val_predictions-basis_in_holdout": (
        lambda: cross_val_predictions(_regressor()._holdout_engine(), [np.array([i]) for i in range(30)], 0.1,
                                      "drop"), ValueError, "basis_in_holdout must be one of"),
    # 8. check_indices
    "check_indices-out-of-range": (lambda: check_indices([0, 40], 30), ValueError, "index 40 outside"),
    "check_indices-negative": (lambda: check_indices([-1], 30), ValueError, "outside"),
    "check_indices-mask-length": (lambda: check_indices(np.ones(5, dtype=bool), 30), ValueError,
                                  "boolean mask must have length 30"),
    # 9. brute-force references
    "explicit_loo-y-length": (lambda: explicit_loo_residuals(SparseLSSVR(n_basis=5, basis="random"), X, y[:-1]),
                              ValueError, "y must have one entry"),
    "explicit_loo-unknown-label": (
        lambda: explicit_loo_residuals(_classifier(), X, np.where(X[:, 1] > 0, "a", "c")), ValueError,
        "unknown label 'c'"),
    "explicit_loo-features": (lambda: explicit_loo_residuals(_regressor(), X[:, :2], y), ValueError,
                              "X has 2 features"),
    "explicit_holdout-unfitted": (lambda: explicit_holdout_predict(SparseLSSVR(), X, [0, 1]), NotFittedError,
                                  "not fitted"),
    "explicit_holdout-X-length": (lambda: explicit_holdout_predict(_regressor(), X[:-1], [0, 1]), ValueError,
                                  r"X must be the training inputs .*\(30, 3\)"),
    "explicit_holdout-index": (lambda: explicit_holdout_predict(_regressor(), X, [0, 30]), ValueError, "outside"),
    # 10. searches
    "grid_search-list": (lambda: grid_search(_criterion(), [1, 2]), TypeError, "param_grid must be a dict"),
    "grid_search-str-value": (lambda: grid_search(_criterion(), {"gamma": ["abc"]}), ValueError,
                              r"param_grid\['gamma'\] must be a sequence of numbers"),
    "grid_search-nan-value": (lambda: grid_search(_criterion(), {"gamma": [np.nan]}), ValueError,
                              r"param_grid\['gamma'\] contains NaN"),
    "nelder_mead-x0-empty": (lambda: nelder_mead_search(_criterion(), BOUNDS, x0={}), ValueError,
                             r"x0 must give a value .*missing \['gamma'\]"),
    "nelder_mead-x0-outside": (lambda: nelder_mead_search(_criterion(), BOUNDS, x0={"gamma": 100.0}), ValueError,
                               "outside bounds"),
    "nelder_mead-max_evaluations-0": (lambda: nelder_mead_search(_criterion(), BOUNDS, max_evaluations=0),
                                      ValueError, "max_evaluations must be an integer >= 1"),
    "nelder_mead-bounds-list": (lambda: nelder_mead_search(_criterion(), [(0.1, 10.0)]), TypeError,
                                "bounds must be a dict"),
    "csa-max_evaluations-0": (lambda: csa_search(_criterion(), BOUNDS, max_evaluations=0), ValueError,
                              "max_evaluations must be an integer >= 1"),
    "csa-max_evaluations-4": (lambda: csa_search(_criterion(), BOUNDS, max_evaluations=4), ValueError,
                              "must cover the 5 starting points"),
    "csa-refine-negative": (lambda: csa_search(_criterion(), BOUNDS, refine_evaluations=-1), ValueError,
                            "refine_evaluations must be"),
}


@pytest.mark.parametrize("call, exc, match", list(CASES.values()), ids=list(CASES))
def test_bad_input_raises_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "make, kwargs",
    [
        (RBF, dict(gamma=0.0)),
        (Laplacian, dict(gamma=-2.0)),
        (Polynomial, dict(degree=0)),
        (Polynomial, dict(coef0=-0.5)),
        (Polynomial, dict(gamma=np.inf)),
    ],
)
def test_kernel_classes_validate_like_make_kernel(make, kwargs):
    name = {RBF: "rbf", Laplacian: "laplacian", Polynomial: "poly"}[make]
    with pytest.raises(ValueError) as direct:
        make(**kwargs)
    with pytest.raises(ValueError) as built:
        make_kernel(name, **kwargs)
    assert str(direct.value) == str(built.value)


def test_kernel_parameters_are_normalised():
    assert RBF(1).gamma == 1.0 and isinstance(RBF(1).gamma, float)
    k = Polynomial(gamma=np.float64(0.5), degree=np.int64(2), coef0=0)
    assert type(k.degree) is int and type(k.coef0) is float
    assert kernel_from_dict(k.to_dict()) == k
    assert kernel_from_dict(Normalized(RBF(0.3)).to_dict()) == Normalized(RBF(0.3))


def test_out_of_range_indices_are_value_errors():
    with pytest.raises(ValueError, match="outside"):
        check_indices([40], 30)


def test_valid_inputs_still_work():
    sel = select_basis(X.tolist(), RBF(1.0), "random", 2, random_state=0)
    assert sel.vectors.shape == (2, 3)
    loo = resolve_folds("loo", 5)
    assert [f.tolist() for f in loo] == [[i] for i in range(5)]
    est = _regressor()
    np.testing.assert_array_equal(est.cv_predict("loo"), est.cv_predict(LeaveOneOut()))
    res = greedy_selection(X, y, RBF(1.0), 3, 1.0, n_candidates=5, random_state=0)
    assert res.indices.size == 3
    assert feature_vector_selection(X, RBF(1.0), tol=0.5).indices.size >= 1
    assert scdp(A_spd, np.ones(5), tol=0.0).order.size == 5
    # symmetric up to rounding is accepted
    assert scdp(A_spd + 1e-14 * np.triu(np.ones((5, 5)), 1), np.ones(5)).order.size == 5
    # huge but finite distances whose kernel values underflow are fine
    assert np.all(RBF(1.0)(X * 1e100, X[:2] * 1e100) >= 0)
