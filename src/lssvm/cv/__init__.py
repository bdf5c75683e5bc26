"""Cross-validation (layer 4): exact hold-out / k-fold / grouped CV from a
training factorisation, and brute-force references.

The closed-form LOO lives with the factorisation
(:meth:`lssvm.solvers.SparseRLSFactorization.loo_residuals`); hold-out sets
of any size, with or without removing held-out basis points, come from
:class:`HoldoutEngine`.  :func:`explicit_loo_residuals` and
:func:`explicit_holdout_predict` retrain and are the slow references.
Conformal prediction (jackknife+, CV+, full conformal, classification
sets) lives in :mod:`lssvm.cv.conformal`.
"""

from .conformal import (
    INTERVAL_METHODS,
    SET_METHODS,
    SortedFoldScores,
    check_coverage,
    conformal_ranks,
    cv_plus_folds,
    full_conformal_bounds,
    ridge_full_conformal,
    sparse_full_conformal,
)
from .engine import ErrorSums, MemorySparseEngine, SparseEngine, TargetGroupsEngine, not_in_memory
from .explicit import explicit_holdout_predict, explicit_loo_residuals
from .folds import (
    FoldSpec,
    check_train_complement,
    cross_val_predictions,
    resolve_folds,
    same_folds_every_time,
    stratifiable,
)
from .holdout import BASIS_IN_HOLDOUT, HoldoutEngine, check_indices
from .weighted import WeightedSparseEngine

__all__ = [
    "INTERVAL_METHODS",
    "SET_METHODS",
    "SortedFoldScores",
    "check_coverage",
    "conformal_ranks",
    "cv_plus_folds",
    "full_conformal_bounds",
    "ridge_full_conformal",
    "sparse_full_conformal",
    "BASIS_IN_HOLDOUT",
    "FoldSpec",
    "HoldoutEngine",
    "check_indices",
    "check_train_complement",
    "ErrorSums",
    "MemorySparseEngine",
    "TargetGroupsEngine",
    "SparseEngine",
    "not_in_memory",
    "cross_val_predictions",
    "explicit_holdout_predict",
    "explicit_loo_residuals",
    "resolve_folds",
    "same_folds_every_time",
    "stratifiable",
    "WeightedSparseEngine",
]
