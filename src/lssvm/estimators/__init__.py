"""Estimators (layer 6): scikit-learn style models."""

from .classifier import SparseLSSVC
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVR
from .regressor import SparseLSSVR

__all__ = ["FixedSizeLSSVC", "FixedSizeLSSVR", "SparseLSSVC", "SparseLSSVR"]
