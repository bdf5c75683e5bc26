"""Helpers shared by the commands: reading tables, value lists, scaling."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pandas as pd

from ..datasets import DATASETS, load_dataset
from ..io import infer_task, read_table, split_xy
from ..io.tables import stray_text_in_target

__all__ = ["check_normal", "load_frame", "parse_log_values", "prepare_xy", "scaling"]


def load_frame(data: str):
    """A table from a path, or a bundled data set by name; returns (frame, name)."""
    path = Path(data)
    if path.exists():
        if path.is_dir():
            raise click.BadParameter(f"{data} is a directory, not a table file", param_hint="DATA")
        try:
            return read_table(path), path.name.split(".")[0]
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    if data in DATASETS:
        return load_dataset(data, as_frame=True).frame, data
    raise click.BadParameter(
        f"no such file {data!r}, and not a bundled data set ({', '.join(sorted(DATASETS))})",
        param_hint="DATA",
    )


#: Most values ``--alphas`` / ``--gammas`` may give (``NUM`` or list length).
MAX_GRID_VALUES = {"--alphas": 10_000, "--gammas": 1_000}


def parse_log_values(text: str, option: str) -> np.ndarray:
    """``START:STOP:NUM`` (log-spaced, inclusive) or a comma list of positive
    numbers; at most ``MAX_GRID_VALUES[option]`` of them (default 10,000)."""
    limit = MAX_GRID_VALUES.get(option, 10_000)
    try:
        if ":" in text:
            start, stop, num = text.split(":")
            num = int(num)
            if not 1 <= num <= limit:
                raise click.BadParameter(
                    f"{text!r}: NUM must be between 1 and {limit} (each value is scored); got {num}",
                    param_hint=option)
            values = np.geomspace(float(start), float(stop), num)
        else:
            values = np.array([float(t) for t in text.split(",")])
    except ValueError:
        raise click.BadParameter(
            f"{text!r}: give START:STOP:NUM (log grid) or a comma-separated list", param_hint=option
        ) from None
    if values.size > limit:
        raise click.BadParameter(f"{values.size} values: give at most {limit}", param_hint=option)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise click.BadParameter(f"{text!r}: values must be finite and > 0", param_hint=option)
    check_normal(values, option)
    return values


def check_normal(values, option):
    """Refuse subnormal numbers (below 2.2e-308, the smallest normal
    float64): they carry fewer significant digits, and 1 / value overflows,
    so results computed from them are not to be trusted."""
    tiny = np.finfo(float).tiny
    small = np.asarray(values, dtype=float)
    small = small[(small > 0) & (small < tiny)]
    if small.size:
        raise click.BadParameter(
            f"{small[0]:.3g} is subnormal (below {tiny:.3g}, the smallest normal float64): such a value has few "
            "significant digits and its inverse overflows; give values of 1e-300 or more", param_hint=option)


def scaling(X, how):
    """``(center, scale)`` of the columns of ``X`` (m, d), both finite.

    Columns are divided by their largest absolute value before the mean,
    std or range is taken and the result multiplied back, so values near
    the float64 maximum (about 1.8e308) do not overflow; a column whose
    scaled values still cannot be represented (a range beyond 1.8e308)
    raises ``ValueError`` naming it.  Constant columns get scale 1.
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    if how == "none" or X.shape[0] == 0:
        return np.zeros(d), np.ones(d)
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.abs(X).max(axis=0)
        big = np.where(big > 0, big, 1.0)
        Xn = X / big
        if how == "standard":
            center, scale = Xn.mean(axis=0) * big, Xn.std(axis=0) * big
        else:
            lo, hi = Xn.min(axis=0), Xn.max(axis=0)
            center, scale = lo * big, (hi - lo) * big
        scale = np.where(scale > 0, scale, 1.0)  # constant columns stay constant
        ok = np.isfinite(center) & np.isfinite(scale) & np.isfinite(((X - center) / scale)).all(axis=0)
    if not ok.all():
        cols = ", ".join(str(j) for j in np.flatnonzero(~ok)[:5])
        raise ValueError(
            f"input column(s) {cols} (0-based) cannot be scaled: their values span more than float64 "
            "can hold (about 1.8e308); divide them by a large constant, or use --scale none"
        )
    return center, scale


def prepare_xy(frame, target, drop, task, scale):
    """Inputs, target and task from a table, inputs scaled.

    Returns
    -------
    Xs, y, features, task, how_chosen, center, scale
        ``Xs = (X - center) / scale`` (m, d); y a Series.

    Raises
    ------
    ValueError
        From :func:`lssvm.io.split_xy` and :func:`lssvm.io.infer_task`, or a
        non-numeric target for regression.
    """
    X, y, features = split_xy(frame, target, drop)
    chosen = "chosen from the target; --task overrides" if task == "auto" else "as asked"
    task = infer_task(y) if task == "auto" else task
    if task == "regression" and not pd.api.types.is_numeric_dtype(y):
        raise ValueError(stray_text_in_target(y) or f"target {y.name!r} is not numeric; use --task classification")
    center, scale_ = scaling(X, scale)
    return (X - center) / scale_, y, features, task, chosen, center, scale_
