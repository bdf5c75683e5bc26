"""Searches over kernel parameters, each candidate scored on a whole alpha path."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SearchResult", "grid_search"]


@dataclass
class SearchResult:
    """Outcome of a search.

    Attributes
    ----------
    best_params : dict
        Kernel parameters and ``alpha`` of the best candidate.
    best_score : float
        Its CV score (lower is better).
    cv_results : dict of ndarray
        One entry per (kernel parameters, alpha) candidate, in evaluation
        order: ``param_<name>`` and ``param_alpha`` columns, ``score``,
        ``mse``, ``error_rate`` (classification) and ``rank`` (1 = best),
        shaped like scikit-learn's ``cv_results_``.
    n_evaluations : int
        Criterion calls (each covers every alpha).
    elapsed : float
        Wall time in seconds.
    """

    best_params: dict
    best_score: float
    cv_results: dict = field(repr=False)
    n_evaluations: int
    elapsed: float


def grid_search(criterion, param_grid, scoring="mse"):
    """Exhaustive search over kernel parameters (paper 003, Algorithm 2 with
    an exact or approximate criterion), every alpha of the criterion's path
    scored per evaluation.

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath`` (:class:`lssvm.selection.NystromCV`,
        :class:`lssvm.selection.DenseLSSVMCV`).
    param_grid : dict of str to sequence
        Kernel parameter values, e.g. ``{"gamma": 2.0 ** np.arange(-15, 6, 2)}``.
    scoring : {"mse", "error_rate"}, default="mse"
        Ties (frequent for error rates on small folds) go to the lower MSE,
        then to the first candidate.

    Returns
    -------
    SearchResult

    Notes
    -----
    Cost: one criterion call per point of ``param_grid``.
    """
    if not param_grid:
        raise ValueError("param_grid is empty; give at least one kernel parameter with its values")
    names = list(param_grid)
    values = [np.atleast_1d(np.asarray(param_grid[k], dtype=float)) for k in names]
    if any(v.size == 0 for v in values):
        raise ValueError("every parameter in param_grid needs at least one value")
    t0 = time.perf_counter()
    rows = {f"param_{k}": [] for k in names}
    rows.update(param_alpha=[], score=[], mse=[], error_rate=[])
    n_eval = 0
    for combo in itertools.product(*values):
        params = dict(zip(names, map(float, combo), strict=True))
        path = criterion(**params)
        n_eval += 1
        score = path.score(scoring)
        for k in names:
            rows[f"param_{k}"].append(np.full(path.alphas.size, params[k]))
        rows["param_alpha"].append(path.alphas)
        rows["score"].append(score)
        rows["mse"].append(path.mse)
        rows["error_rate"].append(path.error_rate if path.error_rate is not None else np.full(path.alphas.size, np.nan))
    res = {k: np.concatenate(v) for k, v in rows.items()}
    if np.all(np.isnan(res["error_rate"])):
        del res["error_rate"]
    order = np.lexsort((np.arange(res["score"].size), res["mse"], res["score"]))
    rank = np.empty(order.size, dtype=int)
    rank[order] = np.arange(1, order.size + 1)
    res["rank"] = rank
    best = int(order[0])
    best_params = {k: float(res[f"param_{k}"][best]) for k in names}
    best_params["alpha"] = float(res["param_alpha"][best])
    return SearchResult(best_params, float(res["score"][best]), res, n_eval, time.perf_counter() - t0)
