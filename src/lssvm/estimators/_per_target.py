"""One alpha per target in the sparse regression search (``SparseLSSVRCV(alpha_per_target=True)``).

The kernel parameters stay shared.  Every candidate is scored on the whole
alpha path for every target at once (the criterion's per-target error sums,
:attr:`lssvm.selection.CVPath.mse_per_target`); its value is the mean over
targets of each target's lowest CV error along the path (the scoring
``"mse_per_target"``), so the kernel parameters are those whose
per-target-tuned model has the lowest mean CV error.  At the chosen kernel
parameters each target then takes the alpha that minimises its own exact
LOO, k-fold or grouped CV error (the first of equal minima, as scikit-learn's
``RidgeCV``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TargetPaths", "check_per_target_request", "finish_per_target"]


class TargetPaths:
    """A sparse criterion that also keeps per-target CV paths.

    Parameters
    ----------
    criterion : lssvm.selection.SparseLSSVMCV
    keep_all : bool
        Keep every evaluated candidate's (A, v) path (``store_cv_results``);
        otherwise only the best candidate's so far (memory A v floats).

    Everything else is the wrapped criterion's (attribute access is delegated).
    """

    def __init__(self, criterion, keep_all=False):
        self.criterion = criterion
        self.keep_all = keep_all
        self.paths = []
        self.best_key, self.best_path, self.best_value = None, None, np.inf

    def __getattr__(self, name):
        return getattr(self.__dict__["criterion"], name)

    def __call__(self, **params):
        path = self.criterion(**params)
        per = path.mse_per_target
        value = float(path.score("mse_per_target")[0])
        if self.keep_all:
            self.paths.append(per)
        if self.best_path is None or value < self.best_value:
            self.best_key, self.best_path, self.best_value = _key(params), per, value
        return path

    def path_at(self, params):
        """The (A, v) per-target MSE path at these kernel parameters (evaluated again if not kept)."""
        if _key(params) == self.best_key:
            return self.best_path
        return self.criterion(**params).mse_per_target


def _key(params):
    return tuple(sorted((k, float(v)) for k, v in params.items()))


def check_per_target_request(search, scoring, on_dask):
    """Refuse what one alpha per target cannot do (a clear error before any work)."""
    if search._classification:
        raise ValueError("alpha_per_target=True is for regression (one alpha per target column); "
                         "a classifier's outputs share one alpha")
    if scoring != "mse":
        raise ValueError(f"alpha_per_target=True chooses each target's alpha by its CV mean squared error; "
                         f"scoring must be 'mse' (or None), got {scoring!r}")
    if search.search == "gradient":
        raise ValueError("alpha_per_target=True works with search='grid', 'nelder-mead' or 'csa', "
                         "not 'gradient'")
    if on_dask:
        raise ValueError("alpha_per_target=True needs the rows in memory; pass NumPy arrays, not Dask input")


def finish_per_target(search, criterion, kernel_params):
    """Set ``alpha_`` (v,), ``best_params_["alpha"]``, ``best_score_per_target_`` and, with
    ``store_cv_results``, ``cv_results_["per_target_test_mse"]`` on a finished search."""
    path = criterion.path_at(kernel_params)  # (A, v)
    alphas = criterion.alphas
    best = np.argmin(np.where(np.isnan(path), np.inf, path), axis=0)
    search.alpha_ = alphas[best]
    search.best_params_["alpha"] = search.alpha_
    search.best_score_per_target_ = -path[best, np.arange(path.shape[1])]
    if criterion.keep_all:
        search.cv_results_["per_target_test_mse"] = np.concatenate(criterion.paths, axis=0)
