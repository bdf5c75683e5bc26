"""Reading tabular data (CSV, gzip CSV, Parquet) into inputs and targets."""

from __future__ import annotations

import lzma
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import type_of_target

__all__ = ["read_table", "split_xy", "input_matrix", "infer_task"]

_CSV_SUFFIXES = {".csv", ".txt", ".tsv", ".gz", ".bz2", ".xz", ".zip"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}


def read_table(path) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file with a header row.

    Raises
    ------
    ValueError
        Unknown file type, unreadable or empty file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in _PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
        elif suffix in _CSV_SUFFIXES:
            sep = "\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ","
            frame = pd.read_csv(path, sep=sep)
        else:
            raise ValueError(
                f"{path}: unknown file type {suffix!r}; use .csv, .csv.gz, .tsv or .parquet"
            )
    except ImportError as exc:
        raise ValueError(f"{path}: reading Parquet needs pyarrow: pip install 'lssvm[parquet]' ({exc})") from None
    except EOFError as exc:  # a truncated .gz/.bz2/.xz (click would turn it into a bare "Aborted!")
        raise ValueError(f"{path}: the compressed file is truncated or corrupt ({exc}); "
                         "download or copy it again") from None
    except (zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: the compressed file is corrupt ({exc})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path}: cannot read the table ({exc})") from None
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"{path}: the table is empty")
    return frame


def split_xy(frame: pd.DataFrame, target=None, drop=()):
    """Split a table into a numeric input matrix and a target column.

    Parameters
    ----------
    frame : DataFrame
    target : str, optional
        Target column; default the last column.
    drop : iterable of str
        Columns to ignore.

    Returns
    -------
    X : ndarray of shape (m, d)
    y : Series of shape (m,)
    feature_names : list of str

    Raises
    ------
    ValueError
        Missing target or dropped column, no input column left, a
        non-numeric input column, or missing values.
    """
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    target = columns[-1] if target is None else str(target)
    if target not in columns:
        raise ValueError(f"target column {target!r} not found; columns are: {', '.join(columns)}")
    missing = [c for c in drop if c not in columns]
    if missing:
        raise ValueError(f"--drop column(s) not found: {', '.join(missing)}")
    features = [c for c in columns if c != target and c not in set(drop)]
    if not features:
        raise ValueError("no input columns left after removing the target and dropped columns")
    X = input_matrix(frame, features)
    y = frame[target]
    if y.isna().any():
        raise ValueError(f"target column {target!r} has {int(y.isna().sum())} missing value(s)")
    return X, y, features


#: a non-numeric target with more distinct values than this (and than half the rows) is refused
MAX_AUTO_CLASSES = 20


def stray_text_in_target(y: pd.Series):
    """For a non-numeric target whose values are mostly numbers: a message
    naming the (first three) values that are not, with their 1-based data
    rows; else None.  O(m)."""
    if pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return None
    bad = pd.to_numeric(y, errors="coerce").isna().to_numpy()
    if not 0 < bad.sum() <= y.size // 2:
        return None
    rows = np.flatnonzero(bad)
    shown = ", ".join(f"data row {i + 1}: {y.iloc[i]!r}" for i in rows[:3]) + (", ..." if rows.size > 3 else "")
    return (f"target {y.name!r} is numeric except {rows.size} value(s) that are not numbers ({shown}); fix or "
            "remove those rows (or pass --task classification if it really holds class labels)")


def infer_task(y: pd.Series) -> str:
    """"classification" for non-numeric or boolean targets and for numeric
    targets with exactly two integer values; otherwise "regression" (numeric
    targets with more integer values may be counts: ask for classification
    explicitly).  A non-numeric target whose values are mostly distinct
    (names, free text) raises ``ValueError``."""
    if y.nunique() < 2:
        raise ValueError(
            f"target {y.name!r} is constant (every value is {y.iloc[0]!r}): there is nothing to learn; "
            "choose another target column"
        )
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        stray = stray_text_in_target(y)
        numbers = pd.to_numeric(y, errors="coerce").dropna().to_numpy()
        if stray is not None and np.any(numbers != np.round(numbers)):  # measurements, not class codes
            raise ValueError(stray)
        n_classes = y.nunique()
        if not pd.api.types.is_bool_dtype(y) and n_classes > max(MAX_AUTO_CLASSES, y.size // 2):
            raise ValueError(stray_text_in_target(y) or (
                f"target {y.name!r} is not numeric and has {n_classes} distinct values in {y.size} rows, "
                "so it does not look like class labels; choose a numeric target column, or pass "
                "--task classification if these really are classes"
            ))
        return "classification"
    with np.errstate(invalid="ignore"):  # scikit-learn casts to int to test integrality (huge values warn)
        kind = type_of_target(y.to_numpy())
    return "classification" if kind == "binary" else "regression"


def input_matrix(frame: pd.DataFrame, features) -> np.ndarray:
    """The named columns as a float matrix (m, d), checked to be numeric and finite.

    Raises
    ------
    ValueError
        A missing or non-numeric column, missing or infinite values.
    """
    absent = [c for c in features if c not in frame.columns]
    if absent:
        raise ValueError(f"input column(s) not found: {', '.join(map(str, absent))}")
    bad = [
        c
        for c in features
        if not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c])
    ]
    if bad:
        raise ValueError(
            f"non-numeric input column(s): {', '.join(map(str, bad))}; encode them as numbers "
            "or leave them out with --drop"
        )
    X = frame[list(features)].to_numpy(dtype=float)
    nan_cols = [c for c, has in zip(features, np.isnan(X).any(axis=0), strict=True) if has]
    if nan_cols:
        raise ValueError(
            f"missing values in input column(s): {', '.join(map(str, nan_cols))}; impute or drop those rows"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("input columns contain infinite values")
    return X
