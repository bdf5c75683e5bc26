"""Reader for the IDA (Rätsch) binary benchmarks kept outside the package.

The 13 sets are too large to ship; they live in a data folder (the
project's ``shared/data``) as ``ida_<name>.csv.gz`` (distinct patterns) and
``ida_<name>_splits.csv.gz`` / ``ida_<name>_substitute_splits.csv.gz``
(train/test partitions: realisation, set, position, row).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["IDA_NAMES", "ida_realisations", "load_ida"]

IDA_NAMES = (
    "banana", "breast_cancer", "diabetis", "flare_solar", "german", "heart", "image",
    "ringnorm", "splice", "thyroid", "titanic", "twonorm", "waveform",
)

_cache: dict = {}


def _data_dir(data_dir):
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get("LSSVM_DATA")
    if env:
        return Path(env)
    raise ValueError("give data_dir (the folder with ida_<name>.csv.gz) or set LSSVM_DATA")


def _tables(name, data_dir, substitute):
    if name not in IDA_NAMES:
        raise ValueError(f"unknown IDA set {name!r}; choose one of {IDA_NAMES}")
    folder = _data_dir(data_dir)
    key = (str(folder), name, substitute)
    if key not in _cache:
        data = folder / f"ida_{name}.csv.gz"
        splits = folder / f"ida_{name}_{'substitute_' if substitute else ''}splits.csv.gz"
        if not data.exists() or not splits.exists():
            raise FileNotFoundError(f"{data.name} or {splits.name} not found in {folder}")
        _cache[key] = (pd.read_csv(data).to_numpy(dtype=float), pd.read_csv(splits))
    return _cache[key]


def ida_realisations(name, data_dir=None, substitute=False):
    """Realisation numbers available for ``name`` (original or substitute partitions).

    Returns an empty list when the requested kind of partition is missing.
    """
    try:
        _, splits = _tables(name, data_dir, substitute)
    except FileNotFoundError:
        return []
    return sorted(int(r) for r in splits["realisation"].unique())


def load_ida(name, realisation, data_dir=None, substitute=False):
    """One train/test realisation of an IDA benchmark, rows in the original order.

    Parameters
    ----------
    name : str
        One of :data:`IDA_NAMES`.
    realisation : int
        1-based, as in the original file names.
    data_dir : path, optional
        Folder of the files; default ``$LSSVM_DATA``.
    substitute : bool, default=False
        Use the seeded substitute partitions (not IDA's; see the data README).

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarrays
        Labels are -1 / +1.
    """
    table, splits = _tables(name, data_dir, substitute)
    part = splits[splits["realisation"] == int(realisation)]
    if part.empty:
        raise ValueError(f"{name} has no {'substitute ' if substitute else ''}realisation {realisation}")
    out = []
    for which in ("train", "test"):
        rows = part[part["set"] == which].sort_values("position")["row"].to_numpy()
        out += [table[rows, :-1], table[rows, -1]]
    return tuple(np.ascontiguousarray(a) for a in out)
