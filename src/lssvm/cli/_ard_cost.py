"""The ARD stage's share of ``lssvm select``'s cost line.

After the isotropic search the sparse searches run the ARD stage
(:mod:`lssvm.estimators.ard_stage`) in what is left of ``time_budget``.
Its predicted time is the stage's own cost model applied to the search's
estimated seconds per evaluation: :data:`~lssvm.estimators.ard_stage.ARD_EVALUATIONS`
evaluations on a basis of at most
:data:`~lssvm.estimators.ard_stage.ARD_BASIS_CAP` rows, each about
:data:`~lssvm.estimators.ard_stage.ARD_COST_RATIO` times an isotropic
evaluation per basis-size ratio, plus the basis draw, the refit and its
scoring.  With a budget, the stage gets what the search leaves, and none
when fewer than :data:`~lssvm.estimators.ard_stage.ARD_MIN_EVALUATIONS`
evaluations fit (``ard="auto"``).
"""

from __future__ import annotations

from ..estimators.ard_stage import (
    ARD_BASIS_CAP,
    ARD_EVALUATIONS,
    ARD_MIN_EVALUATIONS,
    ard_stage_planned,
    ard_stage_seconds,
)
from ._cost import _duration

__all__ = ["ard_stage_cost"]


def ard_stage_cost(est, X, cost):
    """``(line, seconds)`` of the ARD stage after the search ``est`` (unfitted) on the encoded rows ``X``
    (m, d), whose search costs ``cost`` (a :class:`lssvm.cli._cost.SearchCost`); ``(None, 0.0)`` where the
    stage does not apply (another kernel or search, given widths, one input, too few rows)."""
    if not hasattr(est, "ard") or not ard_stage_planned(est, X):
        return None, 0.0
    per_search_evaluation = cost.part_seconds("evaluations") / max(1, cost.evaluations)
    stage, per_eval = ard_stage_seconds(per_search_evaluation, cost.size)
    head = (f"ard        then the ARD stage: one width per input, at most {ARD_EVALUATIONS} evaluations on "
            f"{min(ARD_BASIS_CAP, cost.size)} basis rows: about {_duration(stage)}")
    budget = getattr(est, "time_budget", None)
    if budget is None:
        return head, stage
    left = budget - cost.seconds
    if est.ard == "auto" and left - 3.0 * per_eval < ARD_MIN_EVALUATIONS * per_eval:
        return head + f"; skipped if the search takes the {budget:g} s budget as estimated", 0.0
    seconds = min(stage, max(left, ARD_MIN_EVALUATIONS * per_eval))
    return head + f", within what the search leaves of the {budget:g} s budget: about {_duration(seconds)}", seconds
