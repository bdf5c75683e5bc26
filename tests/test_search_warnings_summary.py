"""A search issues at most one NumericalWarning, and only when a note concerns
the fitted model: default fits on the bundled data sets and an ARD gradient
search stay quiet (or give one warning), while a genuinely ill-conditioned
choice still warns, naming the chosen point and what to do."""

import warnings

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV, make_tabular_pipeline
from lssvm.datasets import load_boston, load_motorcycle, load_ripley


def _numerical(caught):
    return [w for w in caught if issubclass(w.category, NumericalWarning)]


def _fit_recording(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return caught


@pytest.mark.parametrize("load, cls", [(load_motorcycle, SparseLSSVRCV), (load_boston, SparseLSSVRCV),
                                       (load_ripley, SparseLSSVCCV)])
@pytest.mark.parametrize("seed", [0, 1])
def test_default_fit_on_bundled_data_warns_at_most_once(load, cls, seed):
    X, y = load(return_X_y=True, as_frame=True)
    caught = _fit_recording(make_tabular_pipeline(cls(random_state=seed)), X, y)
    assert len(_numerical(caught)) <= 1, [str(w.message)[:200] for w in caught]


@pytest.mark.slow
def test_ard_gradient_search_warns_at_most_once():
    X, y = load_boston(return_X_y=True, as_frame=True)
    model = make_tabular_pipeline(SparseLSSVRCV(kernel="ard", search="gradient", random_state=0,
                                                max_evaluations=40))
    caught = _fit_recording(model, X, y)
    assert len(_numerical(caught)) <= 1, [str(w.message)[:200] for w in caught]
    # the notes are kept, not lost
    assert isinstance(model[-1].numerical_notes_, list)


def _interpolating(m=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, 1))
    return X, np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(m)


def test_ill_conditioned_choice_still_warns_once():
    """Every basis point, a very narrow kernel and alpha 1e-13 only: the model interpolates, every leverage is
    within 1e-8 of 1 at the chosen alpha, and the LOO score it was chosen by is unreliable."""
    X, y = _interpolating()
    est = SparseLSSVRCV(param_space={"gamma": [1e3, 1e4]}, alphas=[1e-13, 1e-12], basis="random", n_basis=80,
                        random_state=0)
    caught = _numerical(_fit_recording(est, X, y))
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "concern the fitted model" in text and "alpha=1e-1" in text and "pass alphas above it" in text


def test_notes_on_losing_candidates_are_kept_not_issued():
    """A candidate whose LOO residuals are unreliable at alphas the search did not choose: no warning, a note."""
    X, y = _interpolating()
    est = SparseLSSVRCV(param_space={"gamma": [1.0, 1e4]}, alphas=[1e-13, 1e-2, 1e-1], basis="random",
                        n_basis=80, random_state=0)
    caught = _numerical(_fit_recording(est, X, y))
    assert est.best_params_["alpha"] > 1e-13
    assert caught == []
    assert any("hat-matrix diagonal" in n for n in est.numerical_notes_)


def test_plain_fit_still_warns():
    X, y = _interpolating()
    with pytest.warns(NumericalWarning, match="K_BB"):
        SparseLSSVR(gamma=1e-6, alpha=1e-3, basis="random", n_basis=40, random_state=0).fit(X, y)


def test_default_gradient_search_on_data_with_repeated_rows():
    """The motorcycle data's 133 rows hold 94 distinct inputs: the default basis size is capped by them."""
    X, y = load_motorcycle(return_X_y=True)
    est = SparseLSSVRCV(search="gradient", random_state=0, max_evaluations=10).fit(X, y / y.std())
    assert est.gradient_basis_["n_basis"] <= 94
