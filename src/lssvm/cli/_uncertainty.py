"""``lssvm predict --interval / --proba``: the uncertainty columns."""

from __future__ import annotations

import click
import numpy as np

from ..exceptions import NotFittedError

__all__ = ["uncertainty_columns"]


def uncertainty_columns(out, model, X, interval, proba):
    """Append interval bounds and/or class probabilities to the predictions table ``out``.

    ``X`` is DATA as the model's inputs (``SavedModel.encode``).

    Raises ``click.ClickException`` with the library's message when the model
    cannot serve them (a classifier asked for intervals, a model file
    without the stored data, a coverage outside (0, 1), too few rows).
    """
    if interval is None and not proba:
        return out
    est = model.estimator
    try:
        if interval is not None:
            if not hasattr(est, "predict_interval") or hasattr(est, "classes_"):
                raise ValueError("--interval is for regression models; use --proba for classifiers")
            try:
                bounds = np.asarray(est.predict_interval(X, coverage=interval)).reshape(X.shape[0], 2, -1)
            except NotFittedError:  # a loaded model has no factorisation; the file holds no LOO data either
                raise ValueError(
                    "this model file holds no leave-one-out data for intervals (saved by an older lssvm, "
                    "from a Dask fit, or by a fixed-size/Nystrom model); refit it with 'lssvm fit'"
                ) from None
            names = [model.target_name or "prediction"] if bounds.shape[2] == 1 else range(bounds.shape[2])
            for j, name in enumerate(names):
                out[f"lower_{name}"] = bounds[:, 0, j]
                out[f"upper_{name}"] = bounds[:, 1, j]
        if proba:
            if not hasattr(est, "classes_"):
                raise ValueError("--proba is for classifiers; use --interval for regression models")
            if not hasattr(est, "predict_proba"):
                raise ValueError("this classifier was saved without a calibration; refit it with 'lssvm fit' "
                                 "or 'lssvm select --calibration sigmoid'")
            P = est.predict_proba(X)
            for j, c in enumerate(est.classes_):
                out[f"proba_{c}"] = P[:, j]
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    return out
