"""Model selection (layer 5): CV criteria over kernel parameters, each
giving the whole alpha path at once, and the searches that drive them.

A criterion is called with kernel parameters (``criterion(gamma=0.5)``)
and returns the CV scores for every alpha of its path; a search
(:func:`grid_search`) only talks to that interface, so exact and
approximate criteria are interchangeable.
"""

from .criteria import DEFAULT_ALPHAS, PAPER003_GAMMAS, CVPath, DenseLSSVMCV, NystromCV
from .search import SearchResult, grid_search

__all__ = ["DEFAULT_ALPHAS", "PAPER003_GAMMAS", "CVPath", "DenseLSSVMCV", "NystromCV", "SearchResult", "grid_search"]
