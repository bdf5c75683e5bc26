"""Saved and pickled models attacked as a hostile user would: a pickled calibrated classifier
predicts the same, ``save_model`` never writes an earlier fit's model and says what it takes."""

import pickle
import warnings

import numpy as np
import pytest

from lssvm import SparseLSSVC, SparseLSSVR, SparseLSSVRCV


def _regression_data(m=40, d=2, seed=1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, d))
    return X, np.sin(X[:, 0]) + 0.3 * r.normal(size=m), r.normal(size=(7, d))


def _sparse(**kw):
    return SparseLSSVR(**{"gamma": 0.3, "alpha": 0.05, "basis": "random", "n_basis": 12, "random_state": 0, **kw})


@pytest.mark.filterwarnings("ignore")
def test_pickled_calibrated_classifier_predicts_the_same():
    X, y, Xt = _regression_data()
    clf = SparseLSSVC(calibration="sigmoid").fit(X, np.where(y > 0, "a", "b"))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(Xt), clf.predict_proba(Xt))


def test_save_model_does_not_write_an_earlier_fits_model_after_a_refit_false_fit(rng, tmp_path):
    from lssvm.io.model_io import SavedModel, save_model

    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = SparseLSSVRCV(kernel="rbf", gamma=1.0, basis="random", n_basis=10, random_state=0).fit(X, y)
        s.set_params(refit=False).fit(X, -10.0 * y)
    model = SavedModel(estimator=s, x_center=np.zeros(3), x_scale=np.ones(3), feature_names=["a", "b", "c"])
    with pytest.raises(AttributeError, match="refit=False"):
        save_model(tmp_path / "m.lssvm", model)
    assert not list(tmp_path.iterdir())  # nothing written


def test_save_model_with_a_bare_estimator_or_swapped_arguments_says_what_it_takes(rng, tmp_path):
    from lssvm.io.model_io import save_model

    X = rng.standard_normal((30, 2))
    est = _sparse(n_basis=5).fit(X, X[:, 0])
    for args in ((tmp_path / "m.lssvm", est), (est, tmp_path / "m.lssvm")):
        with pytest.raises(TypeError, match="SavedModel"):
            save_model(*args)
    assert not list(tmp_path.iterdir())
