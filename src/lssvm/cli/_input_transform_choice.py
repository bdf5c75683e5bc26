"""``lssvm select --input-transform``: a per-column transform of the skewed
numeric inputs (normal scores of their quantiles, or Yeo-Johnson), chosen by
the search's exact CV score (:class:`lssvm.estimators.InputTransformSearch`),
saved in the model file so that ``lssvm predict`` applies it to raw inputs,
and shown in the terminal and the report.
"""

from __future__ import annotations

import click

from ..estimators.input_transform import INPUT_TRANSFORMS, InputTransformSearch, skewed_columns

__all__ = ["input_transform_option", "check_cli_input_transform", "input_transform_candidates",
           "fit_with_input_transform", "input_transform_text"]

#: ``--input-transform``'s default: the inputs as encoded (module notes of the option's help)
DEFAULT_INPUT_TRANSFORM = "none"

input_transform_option = click.option(
    "--input-transform", type=click.Choice(["auto", *INPUT_TRANSFORMS]), default=DEFAULT_INPUT_TRANSFORM,
    show_default=True,
    help="A transform of each numeric input of more than two values, fitted on the training rows and applied by "
         "the saved model: quantile (normal scores of the column's quantiles) or yeo-johnson (power transform), "
         "each followed by standardisation.  auto: where some input's skewness exceeds 1, the search runs on the "
         "inputs as given and on their quantile transform, and the transform of better CV score is kept (one "
         "more search); else none.  Needs the rows in memory.")


def check_cli_input_transform(asked, streaming):
    """Whether the input transform applies; ``ValueError`` for a transform asked with rows streamed with Dask."""
    if streaming:
        if asked not in ("auto", "none"):
            raise ValueError(f"--input-transform {asked} needs the rows in memory (leave out --chunk-rows)")
        return False
    return asked != "none"


def input_transform_candidates(asked, X):
    """The transforms the search will compare on ``X`` (m, d): for the cost line (one search each)."""
    if asked == "auto":
        return ["none", "quantile"] if skewed_columns(X).any() else ["none"]
    return [asked]


def fit_with_input_transform(est, X, y, asked, **fit_params):
    """Fit the search ``est`` on ``X`` (m, d) under the transform ``asked``.

    Returns
    -------
    search : the fitted search (on the transformed inputs)
    transform : lssvm.estimators.input_transform.InputTransform or None
        The fitted transform kept (None: the inputs as given).
    scores : dict of str to float
        Each candidate's CV score (the search's ``best_score_``, ARD stage off, fixed basis size rule); empty
        for one candidate.
    """
    wrapper = InputTransformSearch(est, asked).fit(X, y, **fit_params)
    # the candidates ran on the folds of the cv asked, resolved once into (train, test) pairs: the saved
    # parameters name the cv as asked
    wrapper.estimator_.set_params(cv=est.get_params()["cv"])
    kept = wrapper.transformer_ if wrapper.input_transform_ != "none" else None
    if kept is not None and kept.transformer_ is None:  # every column binary: nothing was transformed
        kept = None
    return wrapper.estimator_, kept, wrapper.input_transform_, wrapper.input_transform_scores_


def input_transform_text(chosen, scores, asked, scoring, cv):
    """One line on the kept transform and every candidate's CV criterion, or None when none was asked."""
    if asked == "none":
        return None
    what = {"none": "none (inputs as encoded)", "quantile": "quantile (normal scores)",
            "yeo-johnson": "Yeo-Johnson"}[chosen]
    if not scores:
        return what + (" (as asked)" if asked != "auto" else ": no input skewed beyond 1")
    crit = "MSE" if scoring == "mse" else "error rate"
    values = {n: -s if scoring == "mse" else 1 - s for n, s in scores.items()}
    shown = ", ".join(f"{n} {v:.4g}" for n, v in sorted(values.items(), key=lambda kv: kv[1]))
    return f"{what}; {cv} {crit} of each search: {shown}"
