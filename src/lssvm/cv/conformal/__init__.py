"""Conformal prediction from the exact held-out models, in one place.

- :mod:`.ranks`: coverage levels, the conformal ranks and order statistics
  shared by every method;
- :mod:`.jackknife`: the leave-one-out models at new points (jackknife,
  jackknife+); :mod:`.screened` the order statistics of jackknife+ and
  full conformal over the m training rows for many test rows, screened by
  Cauchy-Schwarz so that only a few per cent of the (t x m) values are formed;
- :mod:`.cv_plus`: the K hold-out models of CV+ and their out-of-fold
  predictions; :mod:`.shifted_blocks` the CV+ order statistics from the
  folds' sorted scores;
- :mod:`.full`: full (transductive) conformal sets of a ridge model in
  closed form (the ridge regression confidence machine);
- :mod:`.sets`: classification sets (LAC, APS, Mondrian) from held-out
  class probabilities;
- :mod:`.training_rows`: jackknife+ and full conformal intervals of the
  training rows, each from the other m - 1 rows (the report's check).
"""

from .cv_plus import cv_plus_folds, fold_models
from .full import full_conformal_bounds, ridge_full_conformal, screened_full_conformal, sparse_full_conformal
from .jackknife import eigen_rows, loo_values, sparse_jackknife, sparse_jackknife_plus
from .ranks import (
    INTERVAL_METHODS,
    check_coverage,
    conformal_ranks,
    interval_from_values,
    kth_smallest,
    min_rows_for,
)
from .screened import MonotoneValues, screened_kth
from .sets import SET_METHODS, calibration_scores, class_scores, set_membership, set_thresholds
from .shifted_blocks import CountGrid, ShiftedBlocks, SortedFoldScores, kth_of_shifted_blocks
from .training_rows import training_row_intervals

__all__ = [
    "INTERVAL_METHODS",
    "SET_METHODS",
    "CountGrid",
    "MonotoneValues",
    "ShiftedBlocks",
    "SortedFoldScores",
    "calibration_scores",
    "check_coverage",
    "class_scores",
    "conformal_ranks",
    "cv_plus_folds",
    "eigen_rows",
    "fold_models",
    "full_conformal_bounds",
    "interval_from_values",
    "kth_of_shifted_blocks",
    "kth_smallest",
    "loo_values",
    "min_rows_for",
    "ridge_full_conformal",
    "screened_full_conformal",
    "screened_kth",
    "set_membership",
    "set_thresholds",
    "sparse_full_conformal",
    "sparse_jackknife",
    "sparse_jackknife_plus",
    "training_row_intervals",
]
