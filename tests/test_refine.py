"""Coarse-to-fine search of the default width grid: same best value as the exhaustive grid on
one-minimum curves, fewer criterion calls, the same edge warnings."""

import warnings

import numpy as np
import pytest

from lssvm import SearchEdgeWarning, SparseLSSVRCV
from lssvm.selection import CVPath, coarse_to_fine_evaluations, coarse_to_fine_search, grid_search

GRID = {"gamma": 2.0 ** np.arange(-6, 7)}


def _criterion(best_log2_gamma, calls, best_alpha=1e-2, bump=None):
    alphas = np.logspace(-4, 2, 7)

    def crit(gamma):
        calls.append(gamma)
        z = np.log2(gamma)
        mse = 1.0 + (z - best_log2_gamma) ** 2 + (np.log10(alphas) - np.log10(best_alpha)) ** 2
        if bump is not None:  # a narrow second minimum between coarse values
            mse = mse - 50.0 * (abs(z - bump) < 0.1)
        return CVPath(alphas, mse)

    return crit


@pytest.mark.parametrize("best", [-6.0, -4.6, -2.0, 0.3, 1.0, 2.4, 4.0, 5.2, 6.0])
def test_coarse_to_fine_finds_the_grid_best_with_fewer_calls(best):
    full, fine = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        ref = grid_search(_criterion(best, full), GRID)
        res = coarse_to_fine_search(_criterion(best, fine), GRID)
    assert res.best_params == ref.best_params
    assert res.best_score == ref.best_score
    assert len(full) == 13 and res.n_evaluations == len(fine) == len(set(fine)) <= 7
    assert len(fine) <= coarse_to_fine_evaluations(13) + 2
    # every row reported is the criterion's own number for that width
    for g, a, s in zip(res.cv_results["param_gamma"], res.cv_results["param_alpha"], res.cv_results["score"], strict=True):
        i = np.flatnonzero((ref.cv_results["param_gamma"] == g) & (ref.cv_results["param_alpha"] == a))
        assert ref.cv_results["score"][i[0]] == s


def test_coarse_to_fine_misses_only_a_minimum_hidden_between_worse_coarse_values():
    calls = []
    res = coarse_to_fine_search(_criterion(0.0, calls, bump=4.0), GRID)  # dip at 2^4, coarse values 3, 6 worse
    assert res.best_params["gamma"] == 1.0
    assert grid_search(_criterion(0.0, [], bump=4.0), GRID).best_params["gamma"] == 16.0  # the full grid finds it
    assert 2.0**4 not in calls and 2.0**6 not in calls  # the far side of the curve is never scored


def test_coarse_to_fine_warns_at_the_edges_like_the_grid():
    with pytest.warns(SearchEdgeWarning, match=r"gamma=64 lies on the upper edge.*extend the range above"):
        coarse_to_fine_search(_criterion(9.0, []), GRID)
    with pytest.warns(SearchEdgeWarning, match=r"gamma=0.01562 lies on the lower edge"):
        coarse_to_fine_search(_criterion(-9.0, []), GRID)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchEdgeWarning)
        coarse_to_fine_search(_criterion(1.0, []), GRID)


def test_coarse_to_fine_falls_back_to_the_exhaustive_grid():
    calls = []
    res = coarse_to_fine_search(_criterion(0.0, calls), {"gamma": [0.5, 1.0]})
    assert len(calls) == 2 and res.best_params["gamma"] == 1.0
    calls.clear()
    res = coarse_to_fine_search(_criterion(0.0, calls), GRID, step=1)  # one walk on the full grid
    assert calls == [1.0, 0.5, 2.0] and res.best_params["gamma"] == 1.0
    with pytest.raises(ValueError, match="step must be an integer >= 1"):
        coarse_to_fine_search(_criterion(0.0, []), GRID, step=0)
    with pytest.raises(ValueError, match="must be a sequence of numbers"):
        coarse_to_fine_search(_criterion(0.0, []), {"gamma": ["a", "b", "c"]})


def test_default_search_is_coarse_to_fine_and_an_explicit_grid_exhaustive(rng):
    X = rng.standard_normal((120, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(120)
    kw = dict(basis="random", n_basis=40, random_state=0, gamma="scale", ard=False)  # the isotropic searches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEdgeWarning)
        fine = SparseLSSVRCV(**kw).fit(X, y)
        scale = fine._scale
        full = SparseLSSVRCV(**kw, param_space={"gamma": scale * 2.0 ** np.arange(-6, 7)}).fit(X, y)
    assert full.n_evaluations_ == 13 and fine.n_evaluations_ < 13
    assert fine.best_params_["gamma"] == pytest.approx(full.best_params_["gamma"], rel=1e-12)
    assert fine.best_params_["alpha"] == full.best_params_["alpha"]
    np.testing.assert_allclose(fine.predict(X), full.predict(X), rtol=1e-10, atol=1e-12)
