"""Searches over kernel parameters, each candidate scored on a whole alpha path.

Every search evaluates ``criterion(**params)`` (a :class:`CVPath` over the
criterion's alphas) and profiles alpha out: a candidate's value is its best
score along the path.  The continuous searches work in log2 space of the
kernel parameters, as the papers do.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from .csa import coupled_simulated_annealing

__all__ = ["SearchResult", "csa_search", "grid_search", "nelder_mead_search"]

SCORINGS = ("mse", "error_rate")


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
        ``mse``, ``error_rate`` (classification), the criterion's further
        numbers (``n_basis``, ``model_size``) and ``rank`` (1 = best),
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


class _Recorder:
    """Calls the criterion, caches by parameters, and keeps every row."""

    def __init__(self, criterion, names, scoring, callback=None):
        if scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}; got {scoring!r}")
        self.criterion, self.names, self.scoring = criterion, list(names), scoring
        self.rows = {f"param_{k}": [] for k in self.names}
        self.rows.update(param_alpha=[], score=[], mse=[], error_rate=[])
        self.cache = {}
        self.callback = callback
        self.t0 = time.perf_counter()

    def __call__(self, params):
        key = tuple(float(params[k]) for k in self.names)
        if key in self.cache:
            return self.cache[key]
        path = self.criterion(**dict(zip(self.names, key, strict=True)))
        score = np.asarray(path.score(self.scoring), dtype=float)
        A = path.alphas.size
        for k, v in zip(self.names, key, strict=True):
            self.rows[f"param_{k}"].append(np.full(A, v))
        self.rows["param_alpha"].append(path.alphas)
        self.rows["score"].append(score)
        self.rows["mse"].append(path.mse)
        self.rows["error_rate"].append(path.error_rate if path.error_rate is not None else np.full(A, np.nan))
        for k, v in path.info.items():  # n_basis, model_size, ...: scalar or one per alpha
            self.rows.setdefault(k, []).append(np.broadcast_to(np.asarray(v, dtype=float), (A,)).copy())
        # profile alpha out; ties (frequent for error rates) go to the lower MSE
        i = np.lexsort((path.mse, score))[0]
        self.cache[key] = float(score[i])
        if self.callback is not None:
            self.callback(dict(zip(self.names, key, strict=True)), path)
        return self.cache[key]

    def result(self):
        if not self.cache:
            raise RuntimeError("the search evaluated no candidate")
        res = {k: np.concatenate(v) for k, v in self.rows.items()}
        if np.all(np.isnan(res["error_rate"])):
            del res["error_rate"]
        score = np.where(np.isfinite(res["score"]), res["score"], np.inf)
        mse = np.where(np.isfinite(res["mse"]), res["mse"], np.inf)
        order = np.lexsort((np.arange(score.size), mse, score))
        rank = np.empty(order.size, dtype=int)
        rank[order] = np.arange(1, order.size + 1)
        res["rank"] = rank
        best = int(order[0])
        params = {k: float(res[f"param_{k}"][best]) for k in self.names}
        params["alpha"] = float(res["param_alpha"][best])
        return SearchResult(params, float(res["score"][best]), res, len(self.cache), time.perf_counter() - self.t0)


def grid_search(criterion, param_grid, scoring="mse", callback=None):
    """Exhaustive search over kernel parameters (paper 003, Algorithm 2 with
    an exact or approximate criterion), every alpha of the criterion's path
    scored per evaluation.

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath`` (:class:`lssvm.selection.NystromCV`,
        :class:`lssvm.selection.DenseLSSVMCV`).
    param_grid : dict of str to sequence
        Kernel parameter values, e.g. ``{"gamma": 2.0 ** np.arange(-15, 6, 2)}``;
        empty for a kernel without parameters (one evaluation: the alpha path).
    scoring : {"mse", "error_rate"}, default="mse"
        Ties (frequent for error rates on small folds) go to the lower MSE,
        then to the first candidate.
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation (progress bars).

    Returns
    -------
    SearchResult

    Notes
    -----
    Cost: one criterion call per point of ``param_grid``.
    """
    names = list(param_grid)
    values = [np.atleast_1d(np.asarray(param_grid[k], dtype=float)) for k in names]
    if any(v.size == 0 for v in values):
        raise ValueError("every parameter in param_grid needs at least one value")
    rec = _Recorder(criterion, names, scoring, callback)
    for combo in itertools.product(*values):
        rec(dict(zip(names, combo, strict=True)))
    return rec.result()


def _log2_box(bounds):
    if not bounds:
        raise ValueError("bounds is empty; give (low, high) for at least one kernel parameter")
    names = list(bounds)
    box = np.array([bounds[k] for k in names], dtype=float)
    if box.shape != (len(names), 2) or np.any(box <= 0) or np.any(box[:, 1] <= box[:, 0]):
        raise ValueError("bounds must map each parameter to (low, high) with 0 < low < high")
    return names, np.log2(box)


def _log2_objective(rec, names, box):
    """``z -> criterion value`` at kernel parameters ``2^z`` clipped to the box."""
    return lambda z: rec(dict(zip(names, 2.0 ** np.clip(z, box[:, 0], box[:, 1]), strict=True)))


def _nelder_mead(f, start, box, step_fraction, max_evaluations, xatol):
    """SciPy's Nelder-Mead inside ``box`` from an axis-aligned simplex of
    ``step_fraction`` of the box width."""
    step = step_fraction * (box[:, 1] - box[:, 0])
    simplex = np.vstack([start, start + np.diag(step)])
    minimize(f, start, method="Nelder-Mead", bounds=box,
             options={"maxfev": int(max_evaluations), "initial_simplex": simplex, "xatol": xatol, "fatol": 0.0})


def nelder_mead_search(criterion, bounds, x0=None, scoring="mse", max_evaluations=30, xatol=0.05, callback=None):
    """Nelder-Mead (``scipy.optimize.minimize``) over the log2 kernel
    parameters inside ``bounds``, alpha profiled along the path (paper 000).

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath``.
    bounds : dict of str to (low, high)
        Positive parameter ranges, searched in log2 space.
    x0 : dict of str to float, optional
        Starting point; default the geometric middle of ``bounds``.
    scoring : {"mse", "error_rate"}
    max_evaluations : int, default=30
        Criterion calls.
    xatol : float, default=0.05
        Convergence tolerance in log2 units.
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation.

    Returns
    -------
    SearchResult
    """
    names, box = _log2_box(bounds)
    rec = _Recorder(criterion, names, scoring, callback)
    start = box.mean(axis=1) if x0 is None else np.log2([float(x0[k]) for k in names])

    _nelder_mead(_log2_objective(rec, names, box), start, box, 0.1, max_evaluations, xatol)
    return rec.result()


def csa_search(criterion, bounds, scoring="mse", max_evaluations=40, refine_evaluations=20, n_optimizers=5,
               random_state=None, callback=None):
    """Coupled simulated annealing over the log2 kernel parameters, then a
    Nelder-Mead refinement from its best point (paper 002 and LS-SVMlab's
    tuning), alpha profiled along the path.

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath``.
    bounds : dict of str to (low, high)
        Positive parameter ranges, searched in log2 space.
    scoring : {"mse", "error_rate"}
    max_evaluations : int, default=40
        Criterion calls of the annealing stage.
    refine_evaluations : int, default=20
        Criterion calls of the Nelder-Mead stage (0: none).
    n_optimizers : int, default=5
    random_state : int, RandomState or None
        Makes the search reproducible.
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation.

    Returns
    -------
    SearchResult
        Over both stages' evaluations.
    """
    names, box = _log2_box(bounds)
    rec = _Recorder(criterion, names, scoring, callback)

    f = _log2_objective(rec, names, box)
    csa = coupled_simulated_annealing(f, box, n_optimizers=n_optimizers, max_evaluations=max_evaluations,
                                      random_state=random_state)
    if refine_evaluations:
        _nelder_mead(f, csa.x, box, 0.05, refine_evaluations, 0.02)
    return rec.result()
