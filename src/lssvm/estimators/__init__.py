"""Estimators (layer 6): scikit-learn style models."""

from ._robust_search import RobustLSSVRCV
from .classifier import SparseLSSVC
from .family_search_cv import (
    NystromLSSVCCV,
    NystromLSSVRCV,
    SparseLSSVCCV,
    SparseLSSVRCV,
)
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .fixed_size_search import FixedSizeLSSVCCV, FixedSizeLSSVRCV
from .nystrom import NystromLSSVC, NystromLSSVR
from .regressor import SparseLSSVR
from .robust import RobustLSSVR

__all__ = [
    "FixedSizeLSSVC",
    "FixedSizeLSSVCCV",
    "FixedSizeLSSVR",
    "FixedSizeLSSVRCV",
    "NystromLSSVC",
    "NystromLSSVCCV",
    "NystromLSSVR",
    "NystromLSSVRCV",
    "RobustLSSVR",
    "RobustLSSVRCV",
    "SparseLSSVC",
    "SparseLSSVCCV",
    "SparseLSSVR",
    "SparseLSSVRCV",
]
