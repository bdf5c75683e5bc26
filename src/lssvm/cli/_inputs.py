"""Tables into model inputs for ``fit`` and ``select``: a table from a path
or a bundled data set, numeric tables scaled, mixed tables or missing values
through the tabular encoding (:mod:`lssvm.io.tabular`); held-out test rows
and test metrics."""

from __future__ import annotations

import glob
from pathlib import Path

import click
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from ..datasets import DATASETS, load_dataset
from ..io import infer_task, read_table, split_xy
from ..io.tables import stray_text_in_target
from ..io.tabular import TabularEncoding, categorical_columns, make_tabular_preprocessor

__all__ = ["expand_data", "load_frame", "prepare_table", "prepare_xy", "scaling", "split_test", "evaluate", "format_metrics"]


def expand_data(items):
    """The DATA arguments with quoted glob patterns expanded (sorted); a
    file that exists, a bundled data set name or a pattern that matches
    nothing stays as given (:func:`load_frame` then names what is wrong)."""
    out = []
    for item in items:
        found = [] if Path(item).exists() or item in DATASETS or not glob.has_magic(item) else sorted(glob.glob(item))
        out.extend(found or [item])
    return out


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


def prepare_table(frame, target, drop, task, scale, categorical="auto", impute=True, min_frequency=0.01):
    """Inputs, target and task of a table.

    Returns
    -------
    dict
        ``X`` (m, d) float, ``y`` Series, ``features`` (d names), ``task``,
        ``chosen``, ``center``, ``scale`` (identity when encoded),
        ``encoding`` (:class:`TabularEncoding` or None) and ``notes``
        (lines that say what the encoding did).

    Raises
    ------
    ValueError
        Missing target / columns, non-numeric columns not marked
        categorical, missing values with ``impute=False``, a column with no
        values, a missing or non-numeric (regression) target.
    """
    frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
    cols = list(frame.columns)
    target = cols[-1] if target is None else str(target)
    if target not in cols:
        raise ValueError(f"target column {target!r} not found; columns are: {', '.join(cols)}")
    absent = [c for c in drop if c not in cols]
    if absent:
        raise ValueError(f"--drop column(s) not found: {', '.join(absent)}")
    cat, num = categorical_columns(frame, categorical, exclude=[target, *drop])
    inputs = [c for c in cols if c in set(cat) | set(num)]
    if not inputs:
        raise ValueError("no input columns left after removing the target and dropped columns")
    missing = frame[inputs].isna().sum()
    if not cat and not missing.any():
        Xs, y, features, task, chosen, center, scale_ = prepare_xy(frame, target, drop, task, scale)
        return dict(X=Xs, y=y, features=features, task=task, chosen=chosen, center=center, scale=scale_,
                    encoding=None, notes=[])
    if missing.any() and not impute:
        bad = [f"{c} ({n})" for c, n in missing.items() if n]
        raise ValueError(f"missing values in input column(s) {', '.join(bad)}; drop --no-impute to fill them "
                         "(median / most frequent level, plus a missing indicator), or remove those rows")
    empty = [c for c in inputs if missing[c] == len(frame)]
    if empty:
        raise ValueError(f"input column(s) {', '.join(empty)} have no values at all; leave them out with --drop")
    y = frame[target]
    if y.isna().any():
        raise ValueError(f"target column {target!r} has {int(y.isna().sum())} missing value(s)")
    chosen = "chosen from the target; --task overrides" if task == "auto" else "as asked"
    task = infer_task(y) if task == "auto" else task
    if task == "regression" and not pd.api.types.is_numeric_dtype(y):
        raise ValueError(stray_text_in_target(y) or f"target {y.name!r} is not numeric; use --task classification")
    ct = make_tabular_preprocessor(cat, numeric=num, impute=impute, scale=scale, min_frequency=min_frequency)
    X = np.asarray(ct.fit_transform(frame[inputs]), dtype=float)
    enc = TabularEncoding.from_fitted(ct)
    notes = []
    if cat:
        n_onehot = sum(len(v) + bool(r) for v, r in zip(enc.levels, enc.rare_levels, strict=True))
        grouped = sum(len(r) for r in enc.rare_levels)
        notes.append(f"{len(cat)} categorical column(s) -> {n_onehot} one-hot columns"
                     + (f" ({grouped} rare levels grouped)" if grouped else ""))
    if missing.any():
        notes.append(f"{int(missing.sum())} missing value(s) in {int((missing > 0).sum())} column(s) imputed, "
                     "with missing indicators")
    d = X.shape[1]
    return dict(X=X, y=y, features=enc.feature_names, task=task, chosen=chosen, center=np.zeros(d),
                scale=np.ones(d), encoding=enc, notes=notes)


def split_test(frame, target, test_size, task, random_state):
    """(train, test) rows, stratified by the target for classification when
    every class has two rows or more."""
    y = frame[str(target) if target is not None else frame.columns[-1]]
    if not 0 < test_size < 1:
        raise ValueError(f"--test-size must be a fraction in (0, 1); got {test_size}")
    kind = infer_task(y.dropna()) if task == "auto" else task
    strat = y if kind == "classification" and y.notna().all() and y.value_counts().min() >= 2 else None
    return train_test_split(frame, test_size=test_size, random_state=random_state, stratify=strat)


def evaluate(est, X, y, task):
    """Test-set metrics as [(name, value)].

    Regression: R², RMSE, MAE (first output of a multi-output model).
    Classification: error rate, balanced accuracy, and -- from
    ``predict_proba`` when the estimator has it -- log-loss and AUC, else
    AUC from the decision values (two classes).
    """
    from sklearn import metrics as m

    y = np.asarray(y)
    if task == "regression":
        p = np.asarray(est.predict(X), dtype=float)
        yt = y.astype(float)
        return [("R2", m.r2_score(yt, p)), ("RMSE", float(np.sqrt(m.mean_squared_error(yt, p)))),
                ("MAE", m.mean_absolute_error(yt, p))]
    classes = est.classes_
    y = y.astype(classes.dtype) if classes.dtype.kind in "U" else y
    pred = est.predict(X)
    out = [("error rate", float(np.mean(pred != y))), ("balanced accuracy", m.balanced_accuracy_score(y, pred))]
    known = np.isin(y, classes)
    if hasattr(est, "predict_proba"):
        P = est.predict_proba(X)
        if known.all():
            out.append(("log-loss", m.log_loss(y, P, labels=classes)))
            if classes.size == 2:
                out.append(("AUC", m.roc_auc_score(y == classes[1], P[:, 1])))
            elif np.unique(y).size == classes.size:
                out.append(("AUC", m.roc_auc_score(y, P, multi_class="ovr", labels=classes)))
    elif classes.size == 2 and known.all() and np.unique(y).size == 2:
        out.append(("AUC", m.roc_auc_score(y == classes[1], est.decision_function(X))))
    return out


def format_metrics(values):
    return ", ".join(f"{name} {value:.4g}" for name, value in values)
