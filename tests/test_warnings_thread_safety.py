"""lssvm never changes the process-wide warnings filter: concurrent fits in
threads (gradient searches, which stop a start on a NumericalWarning, beside
plain fits that warn) neither fail nor leak a filter, and the user's own
filters keep deciding what a warning does."""

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from lssvm import NumericalWarning, SparseLSSVR, SparseLSSVRCV
from lssvm.exceptions import (
    numerical_warnings_collect,
    numerical_warnings_ignore,
    numerical_warnings_raise,
    warn_numerical,
    with_numerical_handler,
)


def _data(seed, m=120, d=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    return X, np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(m)


def _plain_warning_fit(seed):
    """A fit that always warns: a very wide kernel makes K_BB numerically singular."""
    X, y = _data(seed)
    return SparseLSSVR(gamma=1e-6, alpha=1e-3, basis="random", n_basis=40, random_state=seed).fit(X, y)


def _gradient_search(seed):
    X, y = _data(seed)
    return SparseLSSVRCV(kernel="ard", search="gradient", n_basis=30, n_restarts=0, max_evaluations=12,
                         param_space={"gamma": [0.1, 1.0, 10.0]}, random_state=seed).fit(X, y)


def _task(k):
    (_gradient_search if k % 2 else _plain_warning_fit)(k)
    return k


@pytest.mark.slow
def test_concurrent_fits_neither_fail_nor_change_the_filters():
    n_tasks = 32
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(_task, k) for k in range(n_tasks)]
            failures = [repr(f.exception()) for f in futures if f.exception() is not None]
        after = list(warnings.filters)
    assert failures == []
    assert after == before
    # every plain fit's own warning reached the user's record (none lost to another thread's filter)
    singular = [w for w in caught if issubclass(w.category, NumericalWarning) and "K_BB" in str(w.message)]
    assert len(singular) >= n_tasks // 2


def test_user_error_filter_is_respected_in_threads():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        before = list(warnings.filters)
        with pytest.raises(NumericalWarning, match="K_BB"):
            _plain_warning_fit(0)
        with ThreadPoolExecutor(4) as pool:
            errors = [f.exception() for f in [pool.submit(_plain_warning_fit, k) for k in range(4)]]
        assert all(isinstance(e, NumericalWarning) for e in errors)
        assert list(warnings.filters) == before


def test_handlers_stay_in_their_context():
    """raise / ignore / collect act in the calling context only, and leave the filters alone."""
    before = list(warnings.filters)
    with numerical_warnings_raise(), pytest.raises(NumericalWarning, match="stop"):
        warn_numerical("stop")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with numerical_warnings_ignore():
            warn_numerical("dropped")
            with ThreadPoolExecutor(1) as pool:  # a thread of its own starts without the handler
                pool.submit(warn_numerical, "from another thread").result()
        with numerical_warnings_collect() as notes:
            warn_numerical("kept", alphas=np.array([0.5]))
            with ThreadPoolExecutor(1) as pool:  # ... unless handed it explicitly
                pool.submit(with_numerical_handler(warn_numerical), "from a worker").result()
    assert [str(w.message) for w in caught] == ["from another thread"]
    assert [str(w) for w in notes] == ["kept", "from a worker"]
    assert notes[0].alphas[0] == 0.5
    assert list(warnings.filters) == before
