"""Coarse-to-fine search of one kernel parameter's grid: the searches' default.

The sorted grid is walked twice.  First on the coarse grid (every
``step``-th value, both ends included), from its middle value; then on the
full grid, from the coarse best.  Each walk scores one neighbour of the best
value at a time: the smaller value first on the coarse grid (wider kernels,
where the CV optimum of the default grid usually lies), the side of the
better coarse neighbour on the full grid.  A better neighbour becomes the
best and the walk goes on in that direction; a worse one turns it round
once; a worse neighbour on both sides, or after a move, ends it.  On a CV
curve with one minimum over the grid (the usual shape over log-width: too
wide underfits, too narrow predicts the mean) a better neighbour proves that
the minimum lies on its side, so the far side is never scored and the walk
ends on the grid's best value, having scored 4 to 8 of the 13 default
widths (typically 5); the criterion itself, and so every reported CV number,
is unchanged.
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
    on a grid of ``size`` values (5 of 13): the middle coarse value, a better
    coarse neighbour and a worse one beyond it, then two fine neighbours of
    the best (an estimate: each further move of either walk costs one call,
    a worse first neighbour one more)."""
    if size <= 2:
        return size
    return min(size, 5)


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
    Cost: the middle coarse value, one call per coarse neighbour scored
    (one per move, plus the worse neighbour that ends the walk, plus one
    when the first side tried is worse), then as many on the full grid: 4
    to 8 of the 13 default widths, typically 5, where the exhaustive grid
    makes 13 (the walk that scored both neighbours of every best value
    made 5 to 9, typically 6 or 7).  The walks end on a local minimum of
    the full grid; a second, deeper minimum behind a worse coarse value, or
    on the untried side of a better neighbour, is missed (an exhaustive
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

    def walk(grid, prefer):
        """Walk ``grid`` (sorted indices holding the best value) from the best value, one neighbour at a
        time, ``prefer`` (-1 or +1) first: on through better neighbours, turning once, until none is."""
        direction, moved, turned = prefer, False, False
        while True:
            at = grid.index(best_index())
            nxt = at + direction
            if 0 <= nxt < len(grid) and grid[nxt] not in done:
                done.add(grid[nxt])
                rec({name: values[grid[nxt]]})
                if best_index() == grid[nxt]:
                    moved = True
                    continue
            # this side's neighbour is worse, scored before, or beyond the edge
            if moved or turned:
                return
            direction, turned = -direction, True

    def best_index():
        return int(np.searchsorted(values, rec.result().best_params[name]))

    def cached(i):
        return rec.cache.get((float(values[i]),), np.inf) if 0 <= i < values.size else np.inf

    middle = coarse[(len(coarse) - 1) // 2]
    done.add(middle)
    rec({name: values[middle]})
    walk(coarse, -1)
    best = best_index()
    at = coarse.index(best)
    below, above = (coarse[at - 1] if at > 0 else -1), (coarse[at + 1] if at + 1 < len(coarse) else values.size)
    walk(list(range(values.size)), -1 if cached(below) <= cached(above) else 1)
    result = rec.result()
    warn_at_edges(result, {name: (float(values[0]), float(values[-1]))})
    return result
