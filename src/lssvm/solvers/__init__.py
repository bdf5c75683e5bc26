"""Solvers (layer 3): factorisations that serve a whole regularisation path."""

from ._nogil import syr2k_lower_
from .scdp import SCDPResult, scdp
from .sparse_rls import PathSolution, SparseRLSFactorization, check_alphas, factorize_sparse_rls

__all__ = ["PathSolution", "SCDPResult", "SparseRLSFactorization", "check_alphas", "factorize_sparse_rls", "scdp", "syr2k_lower_"]
