"""Coarse-to-fine search of one kernel parameter's grid: the searches' default.

Every ``step``-th value of the sorted grid (both ends included) is scored
first; then a walk on the full grid moves from the best value to a better
neighbour until the best value's two neighbours are scored and neither is
better.  On a CV curve with one minimum over the grid (the usual shape over
log-width: too wide underfits, too narrow predicts the mean) this ends on
the grid's best value, having scored about ``size / step + 2`` of them; the
criterion itself, and so every reported CV number, is unchanged.
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


def coarse_to_fine_evaluations(size, step=DEFAULT_REFINE_STEP):
    """The typical number of criterion calls of :func:`coarse_to_fine_search`
    on a grid of ``size`` values: the coarse grid and the two neighbours of
    its best value (an estimate: a walk that moves costs one call per move)."""
    if size <= 2:
        return size
    return min(size, len(_coarse(size, step)) + 2)


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
        Stride of the coarse grid (1: every value, an exhaustive search).
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
    Cost: ``ceil(size / step) + 1`` criterion calls for the coarse grid, then
    one per step of the walk (two at least, unless the best coarse value is
    an end of the grid): 7 to 9 of the 13 default widths, where the
    exhaustive grid makes 13.  The walk ends on a local minimum of the full
    grid next to the best coarse value; a second, deeper minimum between
    coarse values that are both worse is missed (an exhaustive
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

    def score(i):
        done.add(i)
        rec({name: values[i]})

    for i in _coarse(values.size, step):
        score(i)
    while True:
        best = int(np.searchsorted(values, rec.result().best_params[name]))
        todo = [i for i in (best - 1, best + 1) if 0 <= i < values.size and i not in done]
        if not todo:
            break
        for i in todo:
            score(i)
    result = rec.result()
    warn_at_edges(result, {name: (float(values[0]), float(values[-1]))})
    return result
