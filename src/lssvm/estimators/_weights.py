"""Row weights shared by the families' weighted fits: the kernel at the weighted width and the check that
the rows of positive weight hold two classes.

The weighted model of every family minimises

    sum_i w_i ||y_i - f(x_i)||^2 + alpha * penalty(f)

with the family's features and penalty (the documentation's Mathematics page, §6), as the weighted sparse
model (:mod:`lssvm.solvers.weighted_rls`), so that the one weighted engine
(:class:`lssvm.cv.WeightedSparseEngine`) gives every family's exact weighted LOO, hold-out and k-fold values.
A method that draws points (columns, prototypes) draws them among the rows of positive weight, and
``gamma="scale"`` is the weighted variance's, so a zero weight is a removed row and an integer weight a
repeated row for the fit.  Each family's weighted fit is in its estimators module
(:mod:`lssvm.estimators.nystrom`, :mod:`lssvm.estimators.fixed_size`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from ..kernels import make_kernel, resolve_gamma

__all__ = ["check_weighted_classes", "weighted_kernel"]


def weighted_kernel(est, X, weights):
    """The kernel of ``est``'s validated parameters with ``gamma="scale"`` resolved on the rows
    repeated by their weights; sets ``gamma_``."""
    gamma = resolve_gamma(est.gamma, X, weights)
    est.gamma_ = gamma
    return make_kernel(est.kernel, gamma=gamma, degree=est.degree, coef0=est.coef0, normalize=est.normalize_kernel)


def check_weighted_classes(est, weights):
    """A classifier's rows of positive weight must hold two classes (a zero weight is a removed row)."""
    if is_classifier(est) and np.unique(est._codes[weights > 0]).size < 2:
        raise ValueError(f"{type(est).__name__}: the rows of positive sample_weight hold one class only; a "
                         "classifier needs at least two classes among the rows it is fitted on")
