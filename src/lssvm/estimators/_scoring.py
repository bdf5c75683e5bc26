"""The ``scoring`` names of the estimators' ``cv_error`` methods."""

from __future__ import annotations

__all__ = ["CLASSIFICATION_SCORINGS", "REGRESSION_SCORINGS", "check_scoring_name"]

#: ``scoring`` of the regressors' ``cv_error``; the first is the default (None).
REGRESSION_SCORINGS = ("mse", "press")
#: ``scoring`` of the classifiers' ``cv_error``; the first is the default (None).
CLASSIFICATION_SCORINGS = ("error_rate", "mse", "press")


def check_scoring_name(estimator, scoring, allowed):
    """The ``scoring`` of a ``cv_error`` method: ``allowed[0]`` for None.

    Raises a ``ValueError`` naming the allowed values for anything else
    (a non-string, e.g. a groups array passed by position, included).
    """
    if scoring is None:
        return allowed[0]
    if not (isinstance(scoring, str) and scoring in allowed):
        got = repr(scoring) if isinstance(scoring, str) else f"a {type(scoring).__name__}"
        raise ValueError(
            f"{type(estimator).__name__}.cv_error: scoring must be one of {', '.join(map(repr, allowed))} "
            f"or None (meaning {allowed[0]!r}); got {got}"
        )
    return scoring
