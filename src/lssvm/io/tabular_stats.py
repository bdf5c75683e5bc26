"""The tabular encoding (:mod:`lssvm.io.tabular`) of a table read block by block (Dask
DataFrame): the statistics the in-memory ``ColumnTransformer`` learns, summed over the
blocks instead, so that streamed tables (``lssvm select --chunk-rows``) take the same
categorical columns and missing values as tables in memory.

Passes: one for the counts, sums and levels (every column at once), and one more for
the medians of the numeric columns (imputation).  The result
is a :class:`~lssvm.io.tabular.TabularEncoding`, applied to each block as it is read and
stored with the model as in memory.

Equal to the in-memory encoding but for the medians, which Dask's quantiles approximate
on tables of several blocks (exact on one block); sums of squares are accumulated per
block, so the scale agrees to rounding.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .tabular import TabularEncoding, as_text

__all__ = ["streamed_encoding"]


def _level_counts(block, columns):
    """Per categorical column, a Series level -> count of the block (missing values left out)."""
    T = as_text(block[columns])
    out = []
    for j in range(len(columns)):
        col = pd.Series(T[:, j])
        out.append(col[col.notna()].astype(str).value_counts())
    return out


def _merge_counts(parts):
    cols = None
    for p in parts:
        cols = list(p) if cols is None else [a.add(b, fill_value=0) for a, b in zip(cols, p, strict=True)]
    return cols


def streamed_encoding(ddf, categorical, numeric, *, impute=True, scale="standard", min_frequency=0.01,
                      progress=None):
    """The :class:`TabularEncoding` of a Dask DataFrame's input columns.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    categorical, numeric : list of str
        Input columns (see :func:`lssvm.io.tabular.categorical_columns`).
    impute : bool
        Fill missing values (median / most frequent level) and add missing indicators; if False,
        a missing value raises ValueError.
    scale : {"standard", "minmax", "none"}
    min_frequency : float or int
        Levels seen in fewer rows than this (a fraction of the rows if < 1) are grouped.
    progress : callable, optional
        ``progress(label)``: a context manager shown around each pass.

    Returns
    -------
    encoding : TabularEncoding
    missing : dict
        Missing values per input column (columns with none left out).

    Raises
    ------
    ValueError
        Missing values with ``impute=False``, or an input column with no values.
    """
    import contextlib

    import dask

    progress = progress or (lambda label: contextlib.nullcontext())
    num = ddf[numeric].astype(float) if numeric else None
    tasks = {"n": ddf.shape[0], "missing": ddf[numeric + categorical].isna().sum()}
    if numeric:
        tasks.update(sum=num.sum(), sumsq=(num * num).sum(), lo=num.min(), hi=num.max())
    if categorical:
        parts = ddf[categorical].to_delayed()
        tasks["levels"] = dask.delayed(_merge_counts)([dask.delayed(_level_counts)(p, categorical) for p in parts])
    # the frame's reductions and the blocks' level counts in one pass: Dask warns ("Computing mixed
    # collections") that it materialises the expressions to compute them together, which is what is
    # wanted here; the command line, which owns the process's warning filters, silences that one
    with progress("encoding: counting levels and missing values"):
        (stats,) = dask.compute(tasks)
    n = int(stats["n"])
    missing = {c: int(v) for c, v in stats["missing"].items() if v}
    if missing and not impute:
        bad = [f"{c} ({k})" for c, k in missing.items()]
        raise ValueError(f"missing values in input column(s) {', '.join(bad)}; drop --no-impute to fill them "
                         "(median / most frequent level, plus a missing indicator), or remove those rows")
    empty = [c for c, k in missing.items() if k == n]
    if empty:
        raise ValueError(f"input column(s) {', '.join(empty)} have no values at all; leave them out with --drop")
    medians = np.full(len(numeric), np.nan)
    num_ind = [j for j, c in enumerate(numeric) if c in missing] if impute else []
    if impute and numeric:
        medians = np.zeros(len(numeric))
        # every column's: rows to predict may miss values where the training rows had none
        with progress("encoding: medians"):
            (q,) = dask.compute(num.quantile(0.5))
        medians = np.asarray(q[numeric], dtype=float)
    center, scale_ = _numeric_scaling(numeric, stats, medians, missing, num_ind, n, scale)
    fill, levels, rare_levels, cat_ind, names = None, [], [], [], []
    names = [f"num__{c}" for c in numeric] + [f"num__missingindicator_{numeric[j]}" for j in num_ind]
    if categorical:
        counts = stats["levels"]
        fill = [] if impute else None
        threshold = min_frequency * n if min_frequency < 1 else min_frequency
        for c, cnt in zip(categorical, counts, strict=True):
            cnt = cnt.copy()
            if impute:
                top = cnt.max()
                mode = sorted(cnt.index[cnt == top])[0]  # SimpleImputer's most frequent: the smallest of ties
                fill.append(str(mode))
                if c in missing:
                    cnt[mode] += missing[c]
            order = sorted(cnt.index)
            rare = [v for v in order if cnt[v] < threshold]
            levels.append([v for v in order if v not in set(rare)])
            rare_levels.append(rare)
            names += [f"cat__{c}_{v}" for v in levels[-1]] + ([f"cat__{c}_infrequent_sklearn"] if rare else [])
        if impute:
            cat_ind = [j for j, c in enumerate(categorical) if c in missing]
            names += [f"catmiss__missingindicator_{categorical[j]}" for j in cat_ind]
    enc = TabularEncoding(list(numeric), medians, num_ind, center, scale_, list(categorical), fill, levels,
                          rare_levels, cat_ind, names)
    return enc, missing


def _numeric_scaling(numeric, stats, medians, missing, num_ind, n, scale):
    """``center``, ``scale`` of the imputed numeric columns and their indicators, as the in-memory
    ``StandardScaler`` (population standard deviation, 1 where 0) or ``MinMaxScaler`` learns them."""
    if not numeric:
        return np.zeros(0), np.ones(0)
    k = np.array([missing.get(c, 0) for c in numeric], dtype=float)
    med = np.where(np.isnan(medians), 0.0, medians)
    s1 = np.asarray(stats["sum"][numeric], float) + k * med
    s2 = np.asarray(stats["sumsq"][numeric], float) + k * med * med
    lo = np.asarray(stats["lo"][numeric], float)
    hi = np.asarray(stats["hi"][numeric], float)
    lo = np.where(k > 0, np.minimum(lo, med), lo)
    hi = np.where(k > 0, np.maximum(hi, med), hi)
    p = k[num_ind] / n
    if scale == "standard":
        mean = s1 / n
        var = np.maximum(s2 / n - mean * mean, 0.0)
        center = np.concatenate([mean, p])
        sd = np.sqrt(np.concatenate([var, p * (1 - p)]))
        return center, np.where(sd > 10 * np.finfo(float).eps * np.maximum(np.abs(center), 1.0), sd, 1.0)
    if scale == "minmax":
        lo_all = np.concatenate([lo, np.zeros(len(num_ind))])
        span = np.concatenate([hi - lo, np.ones(len(num_ind))])
        return lo_all, np.where(span > 0, span, 1.0)
    width = len(numeric) + len(num_ind)
    return np.zeros(width), np.ones(width)
