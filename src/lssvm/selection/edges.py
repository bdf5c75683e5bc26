"""Warn when a search's best value lies on the edge of its range.

A best value on the edge of a grid (or against a bound of a continuous
search, or at either end of the alpha path) says nothing about whether the
optimum lies inside: the searches then raise a
:class:`lssvm.SearchEdgeWarning` naming the parameter and the direction
in which to extend the range.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import SearchEdgeWarning

__all__ = ["edge_messages", "warn_at_edges"]

#: A continuous search's best point counts as on the edge within this fraction of the log2 width.
EDGE_FRACTION = 0.02


def edge_messages(best_params, ranges, *, continuous=False):
    """Messages for the parameters whose best value lies on an edge.

    Parameters
    ----------
    best_params : dict of str to float
    ranges : dict of str to (low, high)
        The searched range of each parameter (only those with low < high
        are checked).
    continuous : bool, default=False
        Values within ``EDGE_FRACTION`` of the log2 width of an edge count
        as on it (continuous searches); otherwise only the edge values do.

    Returns
    -------
    list of str
    """
    out = []
    for name, (lo, hi) in ranges.items():
        best = best_params.get(name)
        if best is None or not lo < hi:
            continue
        if continuous and lo > 0:
            tol = EDGE_FRACTION * np.log2(hi / lo)
            at_lo, at_hi = np.log2(best / lo) <= tol, np.log2(hi / best) <= tol
        else:
            at_lo, at_hi = best <= lo, best >= hi
        if not (at_lo or at_hi):
            continue
        side, way = ("lower", "below") if at_lo else ("upper", "above")
        where = "alphas=..." if name == "alpha" else f"param_space={{{name!r}: ...}}"
        out.append(f"the best {name}={best:.4g} lies on the {side} edge of the searched range "
                   f"[{lo:.4g}, {hi:.4g}]: the optimum may lie {way} it; extend the range {way} ({where})")
    return out


def warn_at_edges(result, ranges, *, continuous=False, stacklevel=3):
    """Warn (:class:`lssvm.SearchEdgeWarning`) for every searched parameter,
    alpha included, whose best value in ``result`` (a
    :class:`lssvm.selection.SearchResult`) lies on the edge of its range.

    Returns the messages (empty when none)."""
    alphas = result.cv_results["param_alpha"]
    msgs = edge_messages(result.best_params, {"alpha": (float(alphas.min()), float(alphas.max()))})
    msgs += edge_messages(result.best_params, ranges, continuous=continuous)
    for msg in msgs:
        warnings.warn(msg, SearchEdgeWarning, stacklevel=stacklevel)
    return msgs
