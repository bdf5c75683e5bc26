"""Searches over kernel parameters, each candidate scored on a whole alpha path.

Every search evaluates ``criterion(**params)`` (a :class:`CVPath` over the
criterion's alphas) and profiles alpha out: a candidate's value is its best
score along the path.  The continuous searches work in log2 space of the
kernel parameters, as the papers do.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize

from ..exceptions import numerical_warnings_collect, warn_numerical
from .csa import coupled_simulated_annealing
from .edges import warn_at_edges

__all__ = ["MAX_EVALUATIONS", "SearchResult", "csa_search", "grid_search", "nelder_mead_search"]

SCORINGS = ("mse", "error_rate", "gcv", "evidence", "mse_per_target")
#: Most criterion calls a search may be asked for (each is a full CV path).
MAX_EVALUATIONS = 10_000


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
        if not callable(criterion):
            raise TypeError(f"criterion must be callable, criterion(**params) -> CVPath; got {criterion!r}")
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable, callback(params, path), or None; got {callback!r}")
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
        params = dict(zip(self.names, key, strict=True))
        with numerical_warnings_collect() as notes:  # tagged with the candidate: a search reports what concerns its choice
            path = self.criterion(**params)
            score = np.asarray(path.score(self.scoring), dtype=float)
        for w in notes:
            if getattr(w, "params", None) is None:
                w.params = params
            warn_numerical(w)
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


def grid_search(criterion, param_grid, scoring="mse", callback=None, warn_edges=True):
    """Exhaustive search over kernel parameters (Ding & Liao 2012, Algorithm 2 with
    an exact or approximate criterion), every alpha of the criterion's path
    scored per evaluation.

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath``: any criterion of
        :mod:`lssvm.selection` (such as :class:`lssvm.selection.DenseLSSVMCV`).
    param_grid : dict of str to sequence
        Kernel parameter values, e.g. ``{"gamma": 2.0 ** np.arange(-15, 6, 2)}``;
        empty for a kernel without parameters (one evaluation: the alpha path).
    scoring : {"mse", "error_rate"}, default="mse"
        Ties (frequent for error rates on small folds) go to the lower MSE,
        then to the first candidate.
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation (progress bars).
    warn_edges : bool, default=True
        Warn (``SearchEdgeWarning``) when the best point lies on an edge of
        the grid; False where the grid only starts a search that is not
        bounded by it (the gradient search).

    Returns
    -------
    SearchResult

    Raises
    ------
    TypeError
        If ``param_grid`` is not a dict with string keys, or ``criterion``
        or ``callback`` is not callable.
    ValueError
        If a parameter has no value or a non-numeric, non-finite or
        nested value, or ``scoring`` is unknown.

    Warns
    -----
    lssvm.SearchEdgeWarning
        When the best value of a parameter (alpha included) is the
        smallest or largest it was given.

    Notes
    -----
    Cost: one criterion call per point of ``param_grid``.
    """
    names = _param_names(param_grid, "param_grid", "{'gamma': [0.1, 1.0, 10.0]}")
    values = []
    for k in names:
        try:
            v = np.atleast_1d(np.asarray(param_grid[k], dtype=float))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"param_grid[{k!r}] must be a sequence of numbers; {exc}") from None
        if v.ndim != 1:
            raise ValueError(f"param_grid[{k!r}] must be a flat sequence of numbers; got shape {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"param_grid[{k!r}] contains NaN or infinity")
        values.append(v)
    if any(v.size == 0 for v in values):
        raise ValueError("every parameter in param_grid needs at least one value")
    rec = _Recorder(criterion, names, scoring, callback)
    for combo in itertools.product(*values):
        rec(dict(zip(names, combo, strict=True)))
    result = rec.result()
    if warn_edges:  # off where the grid only gives a start to a search that is not bounded by it
        warn_at_edges(result, {k: (float(v.min()), float(v.max())) for k, v in zip(names, values, strict=True)})
    return result


def _param_names(params, what, example):
    """The keys of a dict of kernel parameters (``TypeError`` unless a dict with str keys)."""
    if not isinstance(params, Mapping):
        raise TypeError(f"{what} must be a dict mapping kernel parameter names to values, e.g. {example}; "
                        f"got {params!r}")
    names = list(params)
    bad = [k for k in names if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{what} keys must be parameter names (str); got {bad[0]!r}")
    return names


def _check_int(name, value, low, high=None):
    """An integer >= ``low`` (and <= ``high``; for evaluation counts
    :data:`MAX_EVALUATIONS`), as ``int``; ``ValueError`` otherwise."""
    if high is None and name.endswith("evaluations"):
        high = MAX_EVALUATIONS
    if not isinstance(value, Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name}={value} is more than the {high} criterion calls a search may make; "
                         f"use at most {high} (a converged search stops earlier anyway)")
    return int(value)


def _log2_box(bounds):
    names = _param_names(bounds, "bounds", "{'gamma': (1e-3, 1e3)}")
    if not names:
        raise ValueError("bounds is empty; give (low, high) for at least one kernel parameter")
    try:
        box = np.array([bounds[k] for k in names], dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bounds must map each parameter to a pair of numbers (low, high); {exc}") from None
    if (box.shape != (len(names), 2) or not np.all(np.isfinite(box)) or np.any(box <= 0)
            or np.any(box[:, 1] <= box[:, 0])):
        raise ValueError("bounds must map each parameter to (low, high) with 0 < low < high, both finite; "
                         f"got {dict(bounds)!r}")
    return names, np.log2(box)


def _log2_start(x0, names, box):
    """Starting point ``x0`` (dict of parameter values) in log2 coordinates."""
    if x0 is None:
        return box.mean(axis=1)
    keys = _param_names(x0, "x0", "{'gamma': 1.0}")
    missing, extra = [k for k in names if k not in x0], [k for k in keys if k not in names]
    if missing or extra:
        raise ValueError(f"x0 must give a value for exactly the parameters of bounds {names}; "
                         + (f"missing {missing}" if missing else f"unknown {extra}"))
    start = []
    for k, (lo, hi) in zip(names, box, strict=True):
        v = x0[k]
        if not isinstance(v, Real) or isinstance(v, bool) or not np.isfinite(v) or v <= 0:
            raise ValueError(f"x0[{k!r}] must be a finite number > 0; got {v!r}")
        z = float(np.log2(v))
        if not lo <= z <= hi:
            raise ValueError(f"x0[{k!r}]={v!r} lies outside bounds[{k!r}] = ({2.0**lo:g}, {2.0**hi:g})")
        start.append(z)
    return np.asarray(start)


def _log2_objective(rec, names, box):
    """``z -> criterion value`` at kernel parameters ``2^z`` clipped to the box."""
    return lambda z: rec(dict(zip(names, 2.0 ** np.clip(z, box[:, 0], box[:, 1]), strict=True)))


def _nelder_mead(f, start, box, step_fraction, max_evaluations, xatol, fatol):
    """SciPy's Nelder-Mead inside ``box`` from an axis-aligned simplex of
    ``step_fraction`` of the box width.

    SciPy stops once the vertices lie within ``xatol`` of the best one AND
    their values within an absolute ``fatol``; ``fatol`` is given here
    relative to the value at ``start`` (an MSE's scale is the target's), so
    a converged simplex stops before ``max_evaluations``.
    """
    step = step_fraction * (box[:, 1] - box[:, 0])
    simplex = np.vstack([start, start + np.diag(step)])
    f0 = f(start)  # the first vertex: cached, so no extra criterion call
    scale = abs(f0) if np.isfinite(f0) and f0 != 0 else 1.0
    minimize(f, start, method="Nelder-Mead", bounds=box,
             options={"maxfev": int(max_evaluations), "initial_simplex": simplex, "xatol": xatol,
                      "fatol": fatol * scale})


def nelder_mead_search(criterion, bounds, x0=None, scoring="mse", max_evaluations=30, xatol=0.05, fatol=1e-3,
                       callback=None):
    """Nelder-Mead (``scipy.optimize.minimize``) over the log2 kernel
    parameters inside ``bounds``, alpha profiled along the path (as Cawley & Talbot 2004).

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
        Most criterion calls, at most :data:`MAX_EVALUATIONS`.
    xatol : float, default=0.05
        Convergence tolerance on the parameters, in log2 units.
    fatol : float, default=1e-3
        Convergence tolerance on the criterion, relative to its value at
        the start.  The search stops when the simplex is within ``xatol``
        AND its values within ``fatol`` (SciPy's rule), or after
        ``max_evaluations``.
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation.

    Returns
    -------
    SearchResult

    Raises
    ------
    TypeError
        If ``bounds`` or ``x0`` is not a dict, or ``criterion`` or
        ``callback`` is not callable.
    ValueError
        If ``bounds`` are not finite pairs 0 < low < high, ``x0`` does not
        give one value inside ``bounds`` per parameter, ``max_evaluations``
        is not an integer in [1, MAX_EVALUATIONS], ``xatol`` or ``fatol``
        not a finite number >= 0, or ``scoring`` is unknown.
    """
    names, box = _log2_box(bounds)
    max_evaluations = _check_int("max_evaluations", max_evaluations, 1)
    for name, tol, unit in (("xatol", xatol, "log2 units"), ("fatol", fatol, "relative")):
        if not isinstance(tol, Real) or isinstance(tol, bool) or not np.isfinite(tol) or tol < 0:
            raise ValueError(f"{name} must be a finite number >= 0 ({unit}); got {tol!r}")
    rec = _Recorder(criterion, names, scoring, callback)
    start = _log2_start(x0, names, box)

    _nelder_mead(_log2_objective(rec, names, box), start, box, 0.1, max_evaluations, xatol, fatol)
    return _edge_checked(rec.result(), names, box)


def csa_search(criterion, bounds, scoring="mse", max_evaluations=40, refine_evaluations=20, n_optimizers=5,
               random_state=None, callback=None):
    """Coupled simulated annealing over the log2 kernel parameters, then a
    Nelder-Mead refinement from its best point (the tuning of Karsmakers et al. 2011 and
    LS-SVMlab), alpha profiled along the path.

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

    Raises
    ------
    TypeError
        If ``bounds`` is not a dict, or ``criterion`` or ``callback`` is
        not callable.
    ValueError
        If ``bounds`` are not finite pairs 0 < low < high, ``n_optimizers``
        is not an integer >= 2, ``max_evaluations`` not an integer >=
        ``n_optimizers`` (one evaluation per starting point),
        ``refine_evaluations`` not an integer >= 0, or ``scoring`` is
        unknown.
    """
    names, box = _log2_box(bounds)
    n_optimizers = _check_int("n_optimizers", n_optimizers, 2)
    max_evaluations = _check_int("max_evaluations", max_evaluations, 1)
    if max_evaluations < n_optimizers:
        raise ValueError(
            f"max_evaluations={max_evaluations} must cover the {n_optimizers} starting points "
            f"(n_optimizers); use max_evaluations >= {n_optimizers}"
        )
    refine_evaluations = _check_int("refine_evaluations", refine_evaluations, 0)
    rec = _Recorder(criterion, names, scoring, callback)

    f = _log2_objective(rec, names, box)
    csa = coupled_simulated_annealing(f, box, n_optimizers=n_optimizers, max_evaluations=max_evaluations,
                                      random_state=random_state)
    if refine_evaluations:
        _nelder_mead(f, csa.x, box, 0.05, refine_evaluations, 0.02, 1e-3)
    return _edge_checked(rec.result(), names, box)


def _edge_checked(result, names, box):
    """``result``, after warning about best values against a bound of the log2 ``box``."""
    warn_at_edges(result, {k: (2.0 ** lo, 2.0 ** hi) for k, (lo, hi) in zip(names, box, strict=True)},
                  continuous=True, stacklevel=4)
    return result
