"""Solvers (layer 3): factorisations that serve a whole regularisation path."""

from ._nogil import syr2k_lower_
from .nystrom import dense_factorize
from .sparse_rls import PathSolution, SparseRLSFactorization, check_alphas, factorize_sparse_rls
from .weighted_rls import WeightedRLSFactorization, factorize_weighted_rls

__all__ = ["PathSolution", "SparseRLSFactorization", "check_alphas", "dense_factorize", "factorize_sparse_rls", "factorize_weighted_rls", "WeightedRLSFactorization", "syr2k_lower_"]
