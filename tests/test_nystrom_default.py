"""The Nyström estimators default to the predictor that generalises,
and the exact-kernel predictor warns when it is unstable at new points."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lssvm import NumericalWarning, NystromLSSVC, NystromLSSVR
from lssvm.datasets import load_boston


def test_default_predictor_is_low_rank():
    assert NystromLSSVR().predictor == "low-rank"
    assert NystromLSSVC().predictor == "low-rank"


def test_default_generalises_on_boston():
    X, y = load_boston(return_X_y=True)
    model = make_pipeline(StandardScaler(), NystromLSSVR(gamma=0.1, alpha=0.01))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)  # the default must not warn here
        scores = cross_val_score(model, X, y, cv=KFold(5, shuffle=True, random_state=0))
    assert scores.mean() >= 0.5


def _departure(est, X, Y):
    """Brute force: RMS of (K - K~) a over every training row, per target std."""
    K = est.kernel_(X, X)
    F = est.kernel_(X, est.basis_vectors_) @ est.factorization_.whitener  # the rank-k features
    Kt = F @ F.T
    gap = np.sqrt(np.mean(((K - Kt) @ est._a) ** 2, axis=0))
    return float(np.max(gap / Y.std(axis=0)))


@pytest.mark.parametrize("alpha", [1e-3, 1e-2, 0.1, 1.0, 10.0])
def test_exact_predictor_warns_exactly_when_it_departs(rng, alpha):
    n = 200  # below the 256 rows the check samples: it sees every row
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.standard_normal(n)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = NystromLSSVR(gamma=0.5, alpha=alpha, n_basis=20, predictor="exact", random_state=0).fit(X, y)
    warned = any(issubclass(w.category, NumericalWarning) and "predictor='exact'" in str(w.message) for w in rec)
    assert warned == (_departure(est, X, y[:, None]) > 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        NystromLSSVR(gamma=0.5, alpha=alpha, n_basis=20, random_state=0).fit(X, y)


def test_exact_predictor_warning_at_small_alpha_on_boston():
    X, y = load_boston(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with pytest.warns(NumericalWarning, match="predictor='exact' is unstable"):
        NystromLSSVR(gamma=0.1, alpha=0.01, predictor="exact", random_state=0).fit(X, y)
