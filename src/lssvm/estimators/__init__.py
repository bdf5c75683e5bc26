"""Estimators (layer 6): scikit-learn style models."""

from .classifier import SparseLSSVC
from .regressor import SparseLSSVR

__all__ = ["SparseLSSVC", "SparseLSSVR"]
