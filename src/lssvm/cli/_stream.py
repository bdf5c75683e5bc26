"""Streaming tables for ``lssvm select --chunk-rows``: files read block by
block with Dask (never whole), inputs scaled lazily, a progress bar per
pass over the data."""

from __future__ import annotations

import copy
import glob
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import click
import numpy as np
import pandas as pd

from ..io import infer_task

__all__ = ["expand_paths", "stream_xy", "pass_progress"]

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".csv.gz", ".txt", ".tsv")


def expand_paths(items):
    """File paths from arguments that may be quoted glob patterns."""
    paths = []
    for item in items:
        if Path(item).exists():
            paths.append(item)
            continue
        found = sorted(glob.glob(item))
        if not found:
            raise click.BadParameter(f"no such file {item!r}", param_hint="DATA")
        paths.extend(found)
    for p in paths:
        if Path(p).is_dir():
            raise click.BadParameter(f"{p} is a directory, not a table file", param_hint="DATA")
    return paths


def _read(paths, chunk_rows):
    import dask.dataframe as dd

    names = [p.lower() for p in paths]
    try:
        if all(n.endswith(_PARQUET) for n in names):
            return dd.read_parquet(paths)
        if all(n.endswith(_CSV) for n in names):
            sep = "\t" if all(n.endswith(".tsv") for n in names) else ","
            compressed = all(n.endswith(".gz") for n in names)
            # gzip cannot be split: one block per file; else about chunk_rows * 100 bytes
            return dd.read_csv(paths, sep=sep, blocksize=None if compressed else max(chunk_rows * 100, 1 << 20),
                               compression="gzip" if compressed else None)
    except Exception as exc:  # pandas / pyarrow errors of every kind, wrapped by Dask
        reason = str(exc).splitlines()[-1].replace("Original Message: ", "")
        raise ValueError(f"{', '.join(paths)}: cannot read the table ({reason})") from None
    raise click.BadParameter("--chunk-rows reads Parquet or CSV files (all of one kind)", param_hint="DATA")


def stream_xy(paths, target, drop, task, scale, group_col, chunk_rows, categorical="auto", impute=True,
              min_frequency=0.01):
    """Lazy inputs, target and groups of the files, inputs scaled or encoded.

    Returns
    -------
    dict with X (dask array, rows in chunks of ``chunk_rows``), y, groups
    (or None), features, task, chosen, center, scale, n_rows, target,
    encoding (:class:`lssvm.io.TabularEncoding` or None) and notes.

    Notes
    -----
    Passes over the files: one for the row counts, one for the scaling
    (unless ``scale="none"``).  Tables with categorical columns or missing
    values are encoded as in memory (:func:`lssvm.io.tabular_stats.streamed_encoding`:
    a pass for the levels, counts and sums, one for the medians), each block as
    it is read.  The task is inferred from the first block of the target
    (``--task`` overrides).
    """
    import dask

    from ..io.tabular import categorical_columns
    from ..io.tabular_stats import streamed_encoding

    ddf = _read(paths, chunk_rows)
    cols = [str(c) for c in ddf.columns]
    target = cols[-1] if target is None else target
    if target not in cols:
        raise ValueError(f"target column {target!r} not found; columns are {', '.join(cols)}")
    for c in drop:
        if c not in cols:
            raise ValueError(f"column {c!r} (from --drop or --cv group:) not found")
    features = [c for c in cols if c != target and c not in drop]
    if not features:
        raise ValueError("no input columns left")
    sample = ddf[target].partitions[0].compute()
    if sample.size == 0:
        raise ValueError(f"{paths[0]}: the table is empty (no rows in its first block)")
    if sample.isna().any():
        row = int(np.flatnonzero(sample.isna().to_numpy())[0])
        raise ValueError(f"target column {target!r} has missing values (first at row {row}); remove or impute "
                         "those rows")
    cat, num = categorical_columns(_empty_like(ddf), categorical, exclude=[target, *drop])
    features = [c for c in features if c in set(cat) | set(num)]
    encoding, notes = None, []
    if not cat:
        with pass_progress("counting missing values"):
            any_missing = bool(ddf[features].isna().sum().compute().any())
    if cat or any_missing:
        with warnings.catch_warnings():  # the command line owns the process's filters (library code never)
            warnings.filterwarnings("ignore", "Computing mixed collections", UserWarning)
            encoding, missing = streamed_encoding(ddf, cat, num, impute=impute, scale=scale,
                                                  min_frequency=min_frequency, progress=pass_progress)
        notes = _encoding_notes(encoding, cat, missing)
    chosen = "chosen from the first block of the target; --task overrides" if task == "auto" else "as asked"
    task = infer_task(pd.Series(sample, name=target)) if task == "auto" else task
    if task == "regression" and not pd.api.types.is_numeric_dtype(sample):
        raise ValueError(f"target {target!r} is not numeric; use --task classification")
    from ..backends.dask import frame_to_arrays, report_passes

    tkind = getattr(ddf[target].dtype, "kind", "O")
    # class labels keep their type (integers stay integers in the saved model)
    ydt = (float if task == "regression" else np.dtype(ddf[target].dtype)) if tkind in "biuf" else object
    if encoding is not None:  # each block encoded as it is read: the encoded inputs beside the target
        ddf, features = _encoded_frame(ddf, encoding, [target] + ([] if group_col is None else [group_col])), \
            list(encoding.feature_names)
    sets, dtypes = [features, target], [float, ydt]
    if group_col is not None:
        sets.append(group_col)
        dtypes.append(ddf[group_col].dtype if ddf[group_col].dtype.kind in "biuf" else object)
    with report_passes(pass_progress):
        arrays = frame_to_arrays(ddf, sets, dtypes)
    X = arrays[0].rechunk({0: chunk_rows, 1: -1})
    y = arrays[1].rechunk({0: X.chunks[0]})
    groups = arrays[2].rechunk({0: X.chunks[0]}) if group_col is not None else None
    d = len(features)
    if scale == "none" or encoding is not None:  # the encoding scales the numeric columns itself
        center, scale_ = np.zeros(d), np.ones(d)
    else:
        with pass_progress("scaling inputs"):
            if scale == "standard":
                center, scale_ = dask.compute(X.mean(axis=0), X.std(axis=0))
            else:
                lo, hi = dask.compute(X.min(axis=0), X.max(axis=0))
                center, scale_ = lo, hi - lo
        if not (np.all(np.isfinite(center)) and np.all(np.isfinite(scale_))):
            raise ValueError("the inputs contain NaN or infinity, or values too large to scale (about 1e308); "
                             "remove or impute those rows, or divide the column by a large constant")
        scale_ = np.where(scale_ > 0, scale_, 1.0)
    Xs = (X - center) / scale_
    return {"X": Xs, "y": y, "groups": groups, "features": features, "task": task, "chosen": chosen,
            "center": np.asarray(center, float), "scale": np.asarray(scale_, float), "n_rows": int(X.shape[0]),
            "target": target, "encoding": encoding, "notes": notes}


def _empty_like(ddf):
    """An empty pandas frame of the Dask frame's columns and dtypes."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in ddf.dtypes.items()})


def _encode_block(block, encoding, keep):
    out = pd.DataFrame(copy.copy(encoding).transform(block), columns=encoding.feature_names, index=block.index)
    for c in keep:
        out[c] = block[c]
    return out


def _encoded_frame(ddf, encoding, keep):
    """The Dask DataFrame of the encoded inputs and the ``keep`` columns (target, groups)."""
    meta = pd.DataFrame({c: pd.Series(dtype=float) for c in encoding.feature_names})
    empty = _empty_like(ddf)
    for c in keep:
        meta[c] = empty[c]
    return ddf.map_partitions(_encode_block, encoding, keep, meta=meta)


def _encoding_notes(encoding, categorical, missing):
    """The lines that say what the encoding did, as in memory."""
    notes = []
    if categorical:
        n_onehot = sum(len(v) + bool(r) for v, r in zip(encoding.levels, encoding.rare_levels, strict=True))
        grouped = sum(len(r) for r in encoding.rare_levels)
        notes.append(f"{len(categorical)} categorical column(s) -> {n_onehot} one-hot columns"
                     + (f" ({grouped} rare levels grouped)" if grouped else ""))
    if missing:
        notes.append(f"{sum(missing.values())} missing value(s) in {len(missing)} column(s) imputed, "
                     "with missing indicators")
    return notes


@contextmanager
def pass_progress(label):
    """A labelled Dask progress bar on stderr while a pass runs."""
    from dask.diagnostics import ProgressBar

    click.echo(f"pass       {label}", err=True)
    with ProgressBar(out=sys.stderr, minimum=0.5, dt=0.5):
        yield
