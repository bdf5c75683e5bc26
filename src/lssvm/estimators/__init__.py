"""Estimators (layer 6): scikit-learn style models."""

from .classifier import SparseLSSVC
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .nystrom import NystromLSSVC, NystromLSSVR
from .regressor import SparseLSSVR

__all__ = ["FixedSizeLSSVC", "FixedSizeLSSVR", "NystromLSSVC", "NystromLSSVR", "SparseLSSVC", "SparseLSSVR"]
