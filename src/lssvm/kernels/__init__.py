"""Kernels (layer 1): cross-kernel matrices computed in row blocks."""

from ._distances import (
    DEFAULT_BLOCK_SIZE,
    iter_row_blocks,
    manhattan_distances,
    map_row_blocks,
    squared_distances,
)
from ._kernels import (
    KERNELS,
    RBF,
    Kernel,
    Laplacian,
    Linear,
    Normalized,
    Polynomial,
    kernel_from_dict,
    make_kernel,
    unchecked,
)
from .ard import ARD
from .expansion import KernelExpansion
from .scale import GAMMA_SCALE, gamma_scale, resolve_gamma

__all__ = [
    "Kernel",
    "KernelExpansion",
    "RBF",
    "ARD",
    "Laplacian",
    "Linear",
    "Polynomial",
    "Normalized",
    "kernel_from_dict",
    "KERNELS",
    "make_kernel",
    "GAMMA_SCALE",
    "gamma_scale",
    "resolve_gamma",
    "squared_distances",
    "manhattan_distances",
    "iter_row_blocks",
    "map_row_blocks",
    "DEFAULT_BLOCK_SIZE",
    "unchecked",
]
