"""The searches attacked as a hostile user would: ARD width vectors, refits on other data against
a fresh fit, splitters that do not fit the task, ``refit=False`` after an earlier fit, explicit
fold pairs that are not complements, and the one-SE rule's score against brute-force LOO."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

import lssvm.estimators as E
from lssvm import (
    FixedSizeLSSVRCV,
    NystromLSSVRCV,
    SearchEdgeWarning,
    SparseLSSVR,
    SparseLSSVRCV,
)


def _data_with_labels(m=40, d=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=m)
    return X, y, (y > 0).astype(int)


ARD_GAMMA = np.array([1.0, 2.0, 0.5])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", [n for n in E.__all__ if n.endswith("CV")])
def test_search_takes_an_ard_width_vector(name):
    # was: `self.gamma == "scale"` on a vector -> "truth value of an array is ambiguous"
    X, y, yc = _data_with_labels()
    est = getattr(E, name)(kernel="ard", gamma=ARD_GAMMA, n_basis=10, alphas=[0.1, 1.0],
                           param_space={"degree": [3]}, random_state=0)
    est.fit(X, yc if "SVC" in name else y)
    np.testing.assert_array_equal(est.best_estimator_.gamma_, ARD_GAMMA)


@pytest.mark.filterwarnings("ignore::lssvm.SearchEdgeWarning")
def test_search_refit_on_new_data_equals_a_fresh_fit():
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(120, 3)), rng.normal(size=(120, 3))
    y1, y2 = np.sin(X1[:, 0]), np.cos(X2[:, 1])
    Xt = rng.normal(size=(10, 3))
    search = SparseLSSVRCV(gamma=0.5, n_basis=20, basis="pchol", random_state=0, param_space={"gamma": [0.2, 0.5]},
                           alphas=[1e-3, 1e-1])
    for X, y in [(X1, y1), (X2, y2), (X1, y2)]:  # the kept factorisation must be the last fit's
        search.fit(X, y)
        best = search.best_estimator_
        fresh = SparseLSSVR(kernel="rbf", gamma=search.gamma_, alpha=search.alpha_, basis=best.basis_indices_,
                            n_basis=20).fit(X, y)
        np.testing.assert_allclose(search.predict(Xt), fresh.predict(Xt), rtol=1e-10, atol=1e-10)
        assert "_kept_factorization" not in vars(best)
        assert b"KeptFactorization" not in pickle.dumps(search)


@pytest.mark.parametrize("search", [SparseLSSVRCV, NystromLSSVRCV, FixedSizeLSSVRCV])
def test_regression_search_with_a_stratified_splitter_is_a_clear_error(search):
    """The regression searches score folds without targets for the splitter:
    StratifiedKFold failed inside scikit-learn with a TypeError about a scalar."""
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0])
    with pytest.raises(ValueError, match="StratifiedKFold splits by class labels"):
        search(cv=StratifiedKFold(3), param_space={"gamma": [0.5]}, alphas=[0.1]).fit(X, y)


def test_one_se_best_score_is_the_kept_models_brute_force_loo():
    """best_score_ is minus the LOO MSE of the refitted model, by m explicit refits on the same basis."""
    m, rng = 60, np.random.default_rng(0)  # a problem where the kept point is not the lowest LOO (1.3 % above)
    X = rng.standard_normal((m, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # edge-of-range warnings of the isotropic grid
        s = SparseLSSVRCV(kernel="ard", search="gradient", gamma=1.0, basis="random", n_basis=10, random_state=0,
                          max_evaluations=10).fit(X, y)
    chosen = s.gradient_selection_["chosen_index"]
    assert chosen != s.gradient_selection_["best_index"]
    np.testing.assert_allclose(np.exp(s.gradient_trace_["theta"][chosen]), np.r_[s.gamma_, s.alpha_], rtol=1e-12)
    Z = X[s.basis_rows_]
    e = [y[i] - SparseLSSVR(kernel="ard", gamma=s.gamma_, alpha=s.alpha_, basis=Z).fit(
        np.delete(X, i, 0), np.delete(y, i)).predict(X[i:i + 1])[0] for i in range(m)]
    assert -s.best_score_ == pytest.approx(np.mean(np.square(e)), rel=1e-8)


@pytest.mark.parametrize("search", ["grid", "gradient"])
def test_a_refit_false_fit_does_not_predict_with_the_previous_fits_model(rng, search):
    """fit(refit=True), then set_params(refit=False).fit on other targets: predict used the first fit's
    best_estimator_ (the other targets' model was never fitted) without a word.  As scikit-learn's searches
    do, refit=False has nothing to predict with."""
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # edge-of-range warnings of the small searches
        s = SparseLSSVRCV(kernel="rbf", search=search, gamma=1.0, basis="random", n_basis=10, random_state=0,
                          max_evaluations=8).fit(X, y)
        s.set_params(refit=False).fit(X, -10.0 * y)
    for call in (lambda: s.predict(X[:2]), s.kernel_expansion, lambda: s.predict_interval(X[:2], 0.8, method="cv+")):
        with pytest.raises(AttributeError, match="refit=False"):
            call()


def test_explicit_pairs_whose_train_is_not_the_complement_are_refused():
    """The exact CV trains each fold's model on all rows outside its test fold; a (train, test) pair with
    fewer (or other) training rows used to be accepted and its train indices silently ignored."""
    rng = np.random.default_rng(28)
    X = rng.standard_normal((120, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    est = SparseLSSVR(gamma=0.5, alpha=1.0, basis="random", n_basis=20, random_state=0).fit(X, y)
    good = list(KFold(10).split(X))
    as_masks = [(np.isin(np.arange(120), tr), te) for tr, te in good]
    short = [(tr[5:], te) for tr, te in good]
    swapped = [(np.r_[tr[:-1], te[0]], te) for tr, te in good]  # right count, a test row trained on
    ref = est.predict_interval(X[:7], 0.8, method="cv+", cv=10, basis_in_holdout="keep")
    np.testing.assert_array_equal(est.predict_interval(X[:7], 0.8, method="cv+", cv=good, basis_in_holdout="keep"),
                                  ref)
    np.testing.assert_array_equal(est.predict_interval(X[:7], 0.8, method="cv+", cv=as_masks,
                                                       basis_in_holdout="keep"), ref)
    for bad in (short, swapped):
        for mode in ("keep", "remove"):
            with pytest.raises(ValueError, match="training rows must be all rows outside"):
                est.predict_interval(X[:7], 0.8, method="cv+", cv=bad, basis_in_holdout=mode)
        with pytest.raises(ValueError, match="training rows must be all rows outside"):
            est.cv_predict(bad)


def test_gradient_search_does_not_pass_on_its_start_grids_edge_warning():
    """The isotropic grid only starts L-BFGS-B (widths and alpha range over the search's own bounds), so its
    best point on the grid's edge is no advice for the user; the grid search itself still warns."""

    rng = np.random.default_rng(30)
    X = rng.standard_normal((150, 8))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(150)
    space = {"gamma": [4.0, 8.0, 16.0]}  # every width too large for 7 noise inputs: best on the lower edge
    with pytest.warns(SearchEdgeWarning, match="lower edge"):
        SparseLSSVRCV(param_space=space, basis="random", n_basis=30, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SparseLSSVRCV(kernel="ard", search="gradient", param_space=space, basis="random", n_basis=30,
                            random_state=0, max_evaluations=15, n_restarts=0).fit(X, y)
    assert est.grid_best_params_["gamma"] == 4.0
    assert not [w for w in caught if issubclass(w.category, SearchEdgeWarning)]
