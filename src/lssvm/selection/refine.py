"""Coarse-to-fine search of one kernel parameter's grid: the searches' default.

The sorted grid is walked twice.  First on the coarse grid (every
``step``-th value, both ends included), from its middle value: the best
value's coarse neighbours are scored until neither is better.  Then on the
full grid: the best value's neighbours likewise.  On a CV curve with one
minimum over the grid (the usual shape over log-width: too wide underfits,
too narrow predicts the mean) this ends on the grid's best value, having
scored 5 to 9 of the 13 default widths, and never the far side of the
curve; the criterion itself, and so every reported CV number, is unchanged.
"""

from __future__ import annotations

import numpy as np

from .edges import warn_at_edges
from .search import _Recorder, grid_search

__all__ = ["DEFAULT_REFINE_STEP", "coarse_to_fine_evaluations", "coarse_to_fine_search"]

#: Coarse stride of the default search: every third of the 13 default widths (factors 8 apart).
DEFAULT_REFINE_STEP = 3


def _coarse(size, step):
    """Indices of the coarse grid: every ``step``-th value and the last."""
    return sorted(set(range(0, size, step)) | {size - 1})


def coarse_to_fine_evaluations(size):
    """The typical number of criterion calls of :func:`coarse_to_fine_search`
    on a grid of ``size`` values (6 of 13): the middle coarse value, its two
    neighbours, one move, and the two fine neighbours of the best (an
    estimate: each further move of either walk costs one call)."""
    if size <= 2:
        return size
    return min(size, 6)


def coarse_to_fine_search(criterion, param_grid, scoring="mse", step=DEFAULT_REFINE_STEP, callback=None):
    """Coarse-to-fine search over one kernel parameter, each candidate scored
    on the criterion's whole alpha path (as :func:`lssvm.selection.grid_search`).

    Parameters
    ----------
    criterion : callable
        ``criterion(**params) -> CVPath``.
    param_grid : dict of str to sequence
        Exactly one parameter and its values (sorted here); a grid of any
        other shape is searched exhaustively by :func:`grid_search`.
    scoring : {"mse", "error_rate", "gcv", "evidence"}, default="mse"
    step : int >= 1, default=3
        Stride of the coarse grid (1: a single walk on the full grid).
    callback : callable, optional
        ``callback(params, path)`` after each new evaluation.

    Returns
    -------
    SearchResult
        Over the values scored (``cv_results`` holds only those).

    Warns
    -----
    lssvm.SearchEdgeWarning
        When the best value (or alpha) is the smallest or largest of the
        grid, as :func:`grid_search`.

    Notes
    -----
    Cost: three criterion calls (the middle coarse value and its
    neighbours), one per move of the coarse walk, and two or more for the
    fine walk: 5 to 9 of the 13 default widths, where the exhaustive grid
    makes 13.  The walks end on a local minimum of the full grid; a second,
    deeper minimum behind a worse coarse value is missed (an exhaustive
    ``grid_search`` finds it at the full cost).
    """
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise ValueError(f"step must be an integer >= 1; got {step!r}")
    if not isinstance(param_grid, dict) or len(param_grid) != 1:
        return grid_search(criterion, param_grid, scoring, callback=callback)
    (name, raw), = param_grid.items()
    try:
        values = np.unique(np.asarray(raw, dtype=float).ravel())
    except (TypeError, ValueError):
        return grid_search(criterion, param_grid, scoring, callback=callback)  # it says what is wrong
    if values.size <= 2 or not np.all(np.isfinite(values)) or np.ndim(raw) != 1:
        return grid_search(criterion, param_grid, scoring, callback=callback)
    rec = _Recorder(criterion, [name], scoring, callback)
    done = set()
    coarse = _coarse(values.size, step)

    def walk(grid):
        """Score the best value's unscored neighbours on ``grid`` (sorted indices) until none is better."""
        while True:
            best = int(np.searchsorted(values, rec.result().best_params[name]))
            at = int(np.searchsorted(grid, best))
            todo = [grid[p] for p in (at - 1, at + 1) if 0 <= p < len(grid) and grid[p] not in done]
            if not todo:
                return
            for i in todo:
                done.add(i)
                rec({name: values[i]})

    middle = coarse[(len(coarse) - 1) // 2]
    done.add(middle)
    rec({name: values[middle]})
    walk(coarse)
    walk(range(values.size))
    result = rec.result()
    warn_at_edges(result, {name: (float(values[0]), float(values[-1]))})
    return result
