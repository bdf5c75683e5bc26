"""``lssvm select --target-transform``: the regression target's transform
(identity, log or Box-Cox) chosen by the exact CV error on the original
scale after the search (:func:`lssvm.estimators.target_transform.transform_fitted_target`),
saved in the model file so that ``lssvm predict`` maps back, and shown in
the terminal and the report.
"""

from __future__ import annotations

import click
import numpy as np

from ..estimators.target_transform import transform_fitted_target

__all__ = ["target_transform_option", "check_cli_target_transform", "choose_cli_target_transform", "target_transform_text"]

#: the option's values -> the library's names
_NAMES = {"auto": "auto", "identity": "identity", "log": "log", "box-cox": "boxcox"}

target_transform_option = click.option(
    "--target-transform", type=click.Choice(list(_NAMES)), default="auto", show_default=True,
    help="Regression: a transform of the target, the model fitted on its scale and its predictions mapped back.  "
         "auto: identity, log and Box-Cox (exponent by maximum likelihood) scored by the exact CV error of the "
         "searched model refitted on each, on the original scale, when every target is positive; a transform "
         "replaces identity only if it lowers that error by more than one standard error of the per-row "
         "differences.  One refit per transform, no new search.")


def choose_cli_target_transform(est, X, y, asked, task, streaming):
    """``(estimator, choice or None)`` after the search: the choice for in-memory regression, None otherwise.

    Raises
    ------
    ValueError
        A transform other than auto/identity asked for a classification task, for rows streamed with
        Dask (the refits need the rows in memory), or for a target it cannot take (log / Box-Cox of a
        target that is not positive).
    """
    if not check_cli_target_transform(y, asked, task, streaming):
        return est, None
    return transform_fitted_target(est, X, y, _NAMES[asked])


def check_cli_target_transform(y, asked, task, streaming):
    """Whether the transform choice applies (in-memory regression of one target); run before the search too,
    so that a transform the target cannot take is refused before the search's time is spent.

    Raises
    ------
    ValueError
        As :func:`choose_cli_target_transform`.
    """
    name = _NAMES[asked]
    if task != "regression" or streaming or np.ndim(y) != 1:
        if name not in ("auto", "identity"):
            why = ("is for regression" if task != "regression" else
                   "needs the rows in memory (leave out --chunk-rows)" if streaming else "needs one target column")
            raise ValueError(f"--target-transform {asked} {why}")
        return False
    if name in ("log", "boxcox") and not np.all(np.asarray(y, dtype=float) > 0):
        raise ValueError(f"--target-transform {asked} needs a positive target; the smallest value is "
                         f"{float(np.min(y)):.6g}")
    return True


def target_transform_text(choice):
    """One line on the chosen transform and every candidate's CV error on the original scale, or None."""
    if choice is None:
        return None
    tr = choice.transform
    what = {"identity": "identity", "log": "log", "boxcox": "Box-Cox"}[tr.name]
    if tr.name == "boxcox":
        what += f" (lambda {tr.lmbda:.3g})"
    if not choice.scores:
        return f"{what} (as asked)" if tr.name != "identity" else "identity"
    scores = ", ".join(f"{n} {v:.4g}" for n, v in sorted(choice.scores.items(), key=lambda kv: kv[1]))
    return f"{what}; {choice.cv} MSE on the original scale: {scores}"
