"""Where the Nyström classifiers find the out-of-sample
decision values their probability maps are fitted on
(:mod:`lssvm.estimators._calibration` fits and applies the maps).

Every family calibrates as the sparse one does, on the exact held-out
decision values of its fitted model (:meth:`ProbaMixin._calibration_decisions`:
leave-one-out with ``calibration_cv=None``, else the out-of-fold values of
``calibration_cv`` at the default ``basis_in_holdout``), in memory and on
Dask, with no refit (the fixed-size classifier's calibration is in
:mod:`lssvm.estimators.fixed_size`):

* **Nyström** (Ding & Liao 2012): the exact values of the (low-rank) model
  on its sampled columns with the rank-k map (a fold that removes a column
  re-truncates the map of the kept ones).  With ``predictor="exact"`` the
  maps are fitted on the low-rank model's values and applied to the
  exact-kernel predictor's decision values all the same (its own held-out
  values have no closed form).
"""

from __future__ import annotations

from ._calibration import ProbaMixin, with_calibration

__all__ = ["NystromProbaMixin", "with_calibration"]


class NystromProbaMixin(ProbaMixin):
    """``predict_proba`` of :class:`lssvm.NystromLSSVC`, calibrated on the
    low-rank model's exact LOO or k-fold decision values (module docstring)."""

    def _calibration_engine(self):
        return self._low_rank_engine()
