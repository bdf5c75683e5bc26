"""Basis selection (layer 2): which points carry the kernel expansion."""

from ._select import BASIS_METHODS, BasisSelection, check_n_basis, default_basis_size, select_basis
from .duplicates import NEAR_DUPLICATE_RTOL, drop_near_duplicates, near_duplicate_free
from .fvs import FVSResult, feature_vector_selection
from .greedy import GreedyResult, greedy_selection
from .identity import basis_holders
from .kcenter import kcenter
from .pchol import (
    DEFAULT_BASIS_CAP,
    DEFAULT_REGRESSION_BASIS_CAP,
    PivotedCholeskyResult,
    default_n_basis,
    pivoted_cholesky,
)
from .pools import DEFAULT_N_PROTOTYPES, PROTOTYPE_METHODS, SAMPLINGS, prototype_pool, sampled_columns
from .random import draw_basis_rows, random_basis
from .renyi import RenyiResult, renyi_entropy_selection
from .sampled import SAMPLE_FACTOR, sampled_pivoted_cholesky

__all__ = [
    "basis_holders",
    "BASIS_METHODS",
    "BasisSelection",
    "NEAR_DUPLICATE_RTOL",
    "drop_near_duplicates",
    "near_duplicate_free",
    "DEFAULT_N_PROTOTYPES",
    "PROTOTYPE_METHODS",
    "SAMPLINGS",
    "sampled_columns",
    "prototype_pool",
    "FVSResult",
    "check_n_basis",
    "default_basis_size",
    "feature_vector_selection",
    "GreedyResult",
    "greedy_selection",
    "kcenter",
    "DEFAULT_BASIS_CAP",
    "DEFAULT_REGRESSION_BASIS_CAP",
    "PivotedCholeskyResult",
    "default_n_basis",
    "pivoted_cholesky",
    "random_basis",
    "draw_basis_rows",
    "RenyiResult",
    "renyi_entropy_selection",
    "select_basis",
    "SAMPLE_FACTOR",
    "sampled_pivoted_cholesky",
]
