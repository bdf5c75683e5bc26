"""Reading tabular data (CSV, compressed CSV, Parquet) into inputs and targets.

A table is read whole into memory, so its size is bounded before it can
exhaust memory: a 2 MB ``.csv.gz`` can inflate to gigabytes (a
decompression bomb), and its compressed size says nothing of that.  The
decompressed bytes are counted while they are read (``.gz``, ``.bz2``,
``.xz``, ``.zip``, and plain files that are not regular files, e.g. pipes),
a plain file's size is checked before reading, a Parquet file's in-memory
size is estimated from its metadata (rows times column widths, or the
uncompressed pages where larger) before reading; beyond
:func:`max_table_bytes` the table is refused with
:class:`TableTooLargeError`, naming ``--chunk-rows`` (``lssvm select``
streams such data with Dask).  Memory used by a refusal is about the bound
itself (the text parsed so far).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import type_of_target

__all__ = ["read_table", "split_xy", "input_matrix", "infer_task", "max_table_bytes", "TableTooLargeError",
           "MAX_TABLE_BYTES_ENV"]

_CSV_SUFFIXES = {".csv", ".txt", ".tsv", ".gz", ".bz2", ".xz", ".zip"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}

#: Environment variable that sets the largest table read into memory, in bytes
#: (default: a quarter of the available memory).
MAX_TABLE_BYTES_ENV = "LSSVM_MAX_TABLE_BYTES"


class TableTooLargeError(ValueError):
    """A table larger than :func:`max_table_bytes` (decompressed): it does not
    fit in memory, so it must be streamed (``lssvm select --chunk-rows``)."""


def max_table_bytes():
    """The largest table (bytes of decompressed text, or of Parquet columns
    in memory) :func:`read_table` reads.

    ``LSSVM_MAX_TABLE_BYTES`` if set (a whole number of bytes, e.g.
    ``2e9``), else a quarter of the available memory (psutil, else
    ``/proc/meminfo``'s MemAvailable, within a cgroup's memory limit), else
    None (no bound) where neither is known: the parsed table, the
    estimator's copies and its factorisation need the rest.

    Raises
    ------
    ValueError
        ``LSSVM_MAX_TABLE_BYTES`` is not a positive number.
    """
    text = os.environ.get(MAX_TABLE_BYTES_ENV, "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (np.isfinite(value) and value >= 1):
            raise ValueError(f"{MAX_TABLE_BYTES_ENV}={text!r}: give a whole number of bytes >= 1, e.g. 2e9")
        return int(value)
    available = _available_memory()
    return None if available is None else available // 4


def _available_memory():
    """Bytes of memory available to this process, or None if unknown."""
    try:
        import psutil

        available = int(psutil.virtual_memory().available)
    except Exception:  # not installed, or no such information on this platform
        available = _meminfo_available()
    try:  # a container's limit (cgroup v2) can be far below the machine's memory
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as fh:
            limit = fh.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as fh:
            used = int(fh.read().strip())
        if limit.isdigit():
            left = max(int(limit) - used, 0)
            available = left if available is None else min(available, left)
    except (OSError, ValueError):
        pass
    return available


def _meminfo_available():
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _too_large(path, what, bound):
    return TableTooLargeError(
        f"{path}: {what} more than {bound:,} bytes, the most read into memory (a quarter of the available "
        f"memory, or {MAX_TABLE_BYTES_ENV}); stream it instead: lssvm select --chunk-rows 100000 (needs "
        f"lssvm[dask]), or raise {MAX_TABLE_BYTES_ENV} if the memory is there"
    )


class _BoundedReader(io.RawIOBase):
    """A binary stream that counts the bytes read from ``raw`` and raises
    :class:`TableTooLargeError` past ``bound``: what pandas parses is never
    more than ``bound`` bytes of text plus one buffer."""

    def __init__(self, raw, bound, path, what):
        self._raw, self._bound, self._path, self._what = raw, bound, path, what
        self.count = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        if self.count > self._bound:
            raise _too_large(self._path, self._what, self._bound)
        return n

    def close(self):
        try:
            self._raw.close()
        finally:
            super().close()


def _open_text(path, suffix, bound):
    """A binary stream of the CSV text of ``path``, decompressed, counted
    against ``bound`` where the size is not known up front; or None to let
    pandas read the (regular, plain, small enough) file itself."""
    if suffix == ".zip":
        zf = zipfile.ZipFile(path)
        names = [n for n in zf.namelist() if not n.endswith("/") and not n.startswith("__MACOSX/")]
        if len(names) != 1:
            zf.close()
            raise ValueError(f"{path}: a .zip table must hold exactly one file; it holds {len(names)}")
        raw = zf.open(names[0])
        what = "the file inside the .zip inflates to"
    elif suffix in _OPENERS:
        raw = _OPENERS[suffix](path, "rb")
        what = f"the {suffix} file inflates to"
    else:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            if bound is not None and st.st_size > bound:
                raise _too_large(path, "the table holds", bound)
            return None
        raw = open(path, "rb")  # a pipe or device: its size is known only once read
        what = "the stream holds"
    if bound is None:
        return raw
    return io.BufferedReader(_BoundedReader(raw, bound, path, what), buffer_size=1 << 16)


def _parquet_bytes(path):
    """Estimated bytes of a Parquet table in memory, from its metadata: per
    row group and column, the rows times the column's width (8 bytes for
    variable-width ones: an object pointer) or the uncompressed pages,
    whichever is larger.  Reads the footer only."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    schema = meta.schema.to_arrow_schema()
    widths = []
    for field in schema:
        try:
            widths.append(max(field.type.bit_width // 8, 1))
        except ValueError:  # variable width
            widths.append(8)
    total = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            width = widths[c] if c < len(widths) else 8
            total += max(group.column(c).total_uncompressed_size, group.num_rows * width)
    return total


def read_table(path) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file with a header row.

    Raises
    ------
    TableTooLargeError
        (a ``ValueError``) The table, decompressed, is larger than
        :func:`max_table_bytes`: stream it (``lssvm select --chunk-rows``).
    ValueError
        Unknown file type, unreadable or empty file.

    Notes
    -----
    Memory: the table, and at most :func:`max_table_bytes` of text when it
    is refused (the bytes are counted as they are decompressed).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    bound = max_table_bytes()
    try:
        if suffix in _PARQUET_SUFFIXES:
            if bound is not None and _parquet_bytes(path) > bound:
                raise _too_large(path, "its columns take", bound)
            frame = pd.read_parquet(path)
        elif suffix in _CSV_SUFFIXES:
            sep = "\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ","
            stream = _open_text(path, suffix, bound)
            if stream is None:
                frame = pd.read_csv(path, sep=sep)
            else:
                with stream:
                    frame = pd.read_csv(stream, sep=sep, compression=None)
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
            f"target {y.name!r} is constant (every value is {np.asarray(y.iloc[0]).tolist()!r}): there is nothing to learn; "
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
