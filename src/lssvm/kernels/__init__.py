"""Kernels (layer 1): cross-kernel matrices computed in row blocks."""

from ._distances import iter_row_blocks, manhattan_distances, map_row_blocks, squared_distances
from ._kernels import KERNELS, RBF, Kernel, Laplacian, Linear, Polynomial, make_kernel

__all__ = [
    "Kernel",
    "RBF",
    "Laplacian",
    "Linear",
    "Polynomial",
    "KERNELS",
    "make_kernel",
    "squared_distances",
    "manhattan_distances",
    "iter_row_blocks",
    "map_row_blocks",
]
