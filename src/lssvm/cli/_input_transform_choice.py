"""``lssvm select --input-transform``: a per-column transform of the skewed
numeric inputs (normal scores of their quantiles, or Yeo-Johnson), chosen by
the search's exact CV score (:class:`lssvm.estimators.InputTransformSearch`),
saved in the model file so that ``lssvm predict`` applies it to raw inputs,
and shown in the terminal and the report.

With ``auto`` the comparison is planned like the search's other stages: the
candidates' searches count against the search's time budget (the winner's
ARD stage and basis growth get what they leave), and where the cost model
says that one search per candidate would not fit the budget, the inputs are
kept as encoded and the terminal says why.
"""

from __future__ import annotations

import click

from ..estimators.input_transform import INPUT_TRANSFORMS, InputTransformSearch, skewed_columns
from ._cost import _duration

__all__ = ["input_transform_option", "check_cli_input_transform", "input_transform_candidates",
           "plan_input_transform", "fit_with_input_transform", "input_transform_text"]

#: ``--input-transform``'s default: compared by CV where some input is skewed, within the time budget
DEFAULT_INPUT_TRANSFORM = "auto"

input_transform_option = click.option(
    "--input-transform", type=click.Choice(["auto", *INPUT_TRANSFORMS]), default=DEFAULT_INPUT_TRANSFORM,
    show_default=True,
    help="A transform of each numeric input of more than two values, fitted on the training rows and applied by "
         "the saved model: quantile (normal scores of the column's quantiles) or yeo-johnson (power transform), "
         "each followed by standardisation.  auto: where some input's skewness exceeds 1, the search runs on the "
         "inputs as given and on their quantile transform, and the transform of better CV score is kept; the two "
         "searches count against --time-budget, and where the cost estimate says they would not fit it the "
         "inputs are kept as given.  Needs the rows in memory.")


def check_cli_input_transform(asked, streaming):
    """Whether the input transform applies; ``ValueError`` for a transform asked with rows streamed with Dask."""
    if streaming:
        if asked not in ("auto", "none"):
            raise ValueError(f"--input-transform {asked} needs the rows in memory (leave out --chunk-rows)")
        return False
    return asked != "none"


def input_transform_candidates(asked, X):
    """The transforms the search would compare on ``X`` (m, d), before the budget's plan."""
    if asked == "auto":
        return ["none", "quantile"] if skewed_columns(X).any() else ["none"]
    return [asked]


def plan_input_transform(asked, names, est, search_seconds, stages_seconds):
    """``(candidates, line or None, seconds added to the estimate)`` before the search.

    Parameters
    ----------
    asked : str
        The option's value.
    names : list of str
        :func:`input_transform_candidates`.
    est : the search estimator (its ``time_budget``, where it has one, bounds the whole search).
    search_seconds : float
        The cost model's estimate of one search.
    stages_seconds : float
        The estimate of the whole search so far (one search and its stages, within the budget).
    """
    if len(names) < 2:
        return names, None, 0.0
    n = len(names)
    budget = est.get_params().get("time_budget") if "time_budget" in est.get_params() else None
    if budget is not None and n * search_seconds > budget:
        return ["none"], (f"inputs     {asked}: skewed inputs, but {n} searches of about {_duration(search_seconds)} "
                          f"do not fit the {budget:g} s budget: the inputs as given (--input-transform quantile, or "
                          "a larger --time-budget, to compare)"), 0.0
    extra = (n - 1) * search_seconds
    if budget is not None:  # the stages get what the candidates leave of the budget
        extra = max(0.0, min(stages_seconds + extra, max(budget, n * search_seconds)) - stages_seconds)
    return names, (f"inputs     {asked}: skewed inputs: the search also runs on {' and '.join(names[1:])}-"
                   f"transformed inputs, the better CV score kept" + (
                       f", then its stages in what is left of the {budget:g} s budget" if budget is not None else "")
                   + (f": about {_duration(extra)} more" if extra > 0.05 else "")), extra


def fit_with_input_transform(est, X, y, names, **fit_params):
    """Fit the search ``est`` on ``X`` (m, d) under the transforms ``names`` (compared by CV when several).

    Returns
    -------
    search : the fitted search (on the transformed inputs)
    transform : lssvm.estimators.input_transform.InputTransform or None
        The fitted transform kept (None: the inputs as given).
    chosen : str
    scores : dict of str to float
        Each candidate's CV score (the search's ``best_score_``, ARD stage off, fixed basis size rule); empty
        for one candidate.
    """
    wrapper = InputTransformSearch(est, list(names)).fit(X, y, **fit_params)
    # the candidates ran on the folds of the cv asked, resolved once into (train, test) pairs: the saved
    # parameters name the cv as asked
    wrapper.estimator_.set_params(cv=est.get_params()["cv"])
    kept = wrapper.transformer_ if wrapper.input_transform_ != "none" else None
    if kept is not None and kept.transformer_ is None:  # every column binary: nothing was transformed
        kept = None
    return wrapper.estimator_, kept, wrapper.input_transform_, wrapper.input_transform_scores_


def input_transform_text(chosen, scores, asked, scoring, cv, planned=None):
    """One line on the kept transform and every candidate's CV criterion, or None when none was asked;
    ``planned``: the plan's line (:func:`plan_input_transform`), for why "auto" compared nothing."""
    if asked == "none":
        return None
    what = {"none": "none (inputs as encoded)", "quantile": "quantile (normal scores)",
            "yeo-johnson": "Yeo-Johnson"}[chosen]
    if not scores:
        if asked != "auto":
            return what + " (as asked)"
        return what + (": the searches of the candidates do not fit the time budget" if planned else
                       ": no input skewed beyond 1")
    crit = "MSE" if scoring == "mse" else "error rate"
    values = {n: -s if scoring == "mse" else 1 - s for n, s in scores.items()}
    shown = ", ".join(f"{n} {v:.4g}" for n, v in sorted(values.items(), key=lambda kv: kv[1]))
    return f"{what}; {cv} {crit} of each search: {shown}"
