"""Estimators (layer 6): scikit-learn style models."""

from ._robust_search import RobustLSSVRCV
from .classifier import SparseLSSVC
from .family_search_cv import SparseLSSVCCV, SparseLSSVRCV
from .fixed_size import FixedSizeLSSVC, FixedSizeLSSVCCV, FixedSizeLSSVR, FixedSizeLSSVRCV, scdp
from .input_transform import InputTransformSearch
from .nystrom import NystromLSSVC, NystromLSSVCCV, NystromLSSVR, NystromLSSVRCV
from .regressor import SparseLSSVR
from .robust import RobustLSSVR

#: The ``*CV`` presets of each model family, by the name ``lssvm select --model`` takes: (regressor,
#: classifier).  The command line reads every family-dependent choice from these classes.
MODELS = {
    "sparse": (SparseLSSVRCV, SparseLSSVCCV),
    "fixed-size": (FixedSizeLSSVRCV, FixedSizeLSSVCCV),
    "nystrom": (NystromLSSVRCV, NystromLSSVCCV),
}

__all__ = [
    "FixedSizeLSSVC",
    "FixedSizeLSSVCCV",
    "FixedSizeLSSVR",
    "FixedSizeLSSVRCV",
    "InputTransformSearch",
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
    "scdp",
]
