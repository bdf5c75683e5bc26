"""Model selection (layer 5): CV criteria over kernel parameters, each
giving the whole alpha path at once, and the searches that drive them.

A criterion is called with kernel parameters (``criterion(gamma=0.5)``)
and returns the CV scores for every alpha of its path; a search
(:func:`grid_search`, :func:`nelder_mead_search`, :func:`csa_search`) only talks to that interface, so exact and
approximate criteria are interchangeable.
"""

from .criteria import (
    DEFAULT_ALPHAS,
    PAPER003_GAMMAS,
    CVPath,
    DenseLSSVMCV,
)
from .csa import CSAResult, coupled_simulated_annealing
from .gradient import cv_error_and_gradient
from .refine import coarse_to_fine_evaluations, coarse_to_fine_search
from .search import MAX_EVALUATIONS, SearchResult, csa_search, grid_search, nelder_mead_search
from .sparse_cv import SparseLSSVMCV

__all__ = ["MAX_EVALUATIONS", "DEFAULT_ALPHAS", "PAPER003_GAMMAS", "CVPath", "DenseLSSVMCV", "SparseLSSVMCV", "SearchResult", "grid_search", "coarse_to_fine_search", "coarse_to_fine_evaluations", "nelder_mead_search", "csa_search", "CSAResult", "coupled_simulated_annealing", "cv_error_and_gradient"]
