"""Class probabilities by default: every classifier (the three families and
their ``*CV`` searches) gives ``predict_proba`` without being asked, Platt's
sigmoid fitted on the exact held-out decision values, and ``calibration=None``
switches it off with a message that says so."""

import family_reference as ref
import numpy as np
import pytest

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    NystromLSSVC,
    NystromLSSVCCV,
    SparseLSSVC,
    SparseLSSVCCV,
)

BASE = (SparseLSSVC, NystromLSSVC, FixedSizeLSSVC)
SEARCHES = (SparseLSSVCCV, NystromLSSVCCV, FixedSizeLSSVCCV)
GAMMA, ALPHA = 0.4, 0.3


def _data(seed, m=60, t=25):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 2))
    y = (X[:, 0] + 0.5 * np.sin(2.0 * X[:, 1]) + 0.6 * rng.standard_normal(m) > 0).astype(int)
    return X, y, rng.standard_normal((t, 2)) * 1.5


@pytest.mark.parametrize("cls", BASE + SEARCHES)
def test_every_classifier_calibrates_by_default(cls):
    assert cls().calibration == "sigmoid"
    X, y, X_new = _data(0)
    est = cls().fit(X, y)
    P = est.predict_proba(X_new)
    assert P.shape == (len(X_new), 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X_new), est.classes_[P.argmax(axis=1)])
    assert est.predict_set(X_new, 0.8).shape == (len(X_new), 2)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("family", ("sparse", "nystrom"))
def test_default_probabilities_are_platt_on_explicit_leave_one_out_refits(family, seed):
    """The default map is Platt's sigmoid (maximum likelihood, Platt's smoothed targets) of the
    decision values of m explicit refits, each without its row at the same basis."""
    X, y, X_new = _data(seed)
    rows = np.random.default_rng(seed + 100).choice(len(X), 12, replace=False)
    if family == "sparse":
        est = SparseLSSVC(gamma=GAMMA, alpha=ALPHA, basis=rows).fit(X, y)
        model = ref.RidgeBasis(X[rows], GAMMA)
    else:
        est = NystromLSSVC(gamma=GAMMA, alpha=ALPHA, basis=rows, rank=8, predictor="low-rank").fit(X, y)
        model = ref.RidgeBasis(X[rows], GAMMA, rank=int(est.rank_))
    t = np.where(y == 1, 1.0, -1.0)
    loo = [np.array([i]) for i in range(len(y))]
    F, cond = ref.cv_outputs(model, X, t, loo, ALPHA, "keep")
    A, B = ref.platt(F[:, 0], y == 1)
    p1 = 1.0 / (1.0 + np.exp(A * model.fit(X, t, ALPHA).predict(X_new)[:, 0] + B))
    np.testing.assert_allclose(est.predict_proba(X_new), np.column_stack([1.0 - p1, p1]),
                               rtol=0, atol=1e-12 * max(cond, 1e4))


@pytest.mark.parametrize("cls", BASE)
def test_the_default_equals_an_explicit_sigmoid(cls):
    X, y, X_new = _data(1)
    params = dict(gamma=GAMMA, alpha=ALPHA, n_basis=12, random_state=0)
    np.testing.assert_array_equal(cls(**params).fit(X, y).predict_proba(X_new),
                                  cls(calibration="sigmoid", **params).fit(X, y).predict_proba(X_new))


@pytest.mark.parametrize("cls", SEARCHES)
def test_a_search_passes_the_default_to_its_refit(cls):
    X, y, X_new = _data(2)
    search = cls().fit(X, y)
    assert search.best_estimator_.calibration == "sigmoid"
    np.testing.assert_array_equal(search.predict_proba(X_new), search.best_estimator_.predict_proba(X_new))


@pytest.mark.parametrize("cls", BASE + SEARCHES)
def test_calibration_none_switches_probabilities_off_and_says_so(cls):
    X, y, X_new = _data(3)
    est = cls(calibration=None).fit(X, y)
    assert not hasattr(est, "predict_proba") and not hasattr(est, "predict_log_proba")
    for method in ("predict_proba", "predict_log_proba"):
        with pytest.raises(AttributeError, match=r"calibration=None, which switches class probabilities off") as info:
            getattr(est, method)(X_new)
        assert "default 'sigmoid'" in str(info.value) and cls.__name__ in str(info.value)
    with pytest.raises(ValueError, match=r"calibration=None, which switches them off"):
        est.predict_set(X_new, 0.8)
    # without a map, predict is the sign of the decision values
    np.testing.assert_array_equal(est.predict(X_new), est.classes_[(est.decision_function(X_new) > 0).astype(int)])


def test_the_methods_stay_documented_on_the_class():
    for cls in BASE + SEARCHES:
        assert "predict_proba" in cls.predict_proba.__doc__ or "probabilit" in cls.predict_proba.__doc__
        assert callable(cls.predict_log_proba)
