"""Mixed tabular data: categorical columns one-hot encoded, missing values
imputed, numeric columns scaled -- scikit-learn's ``ColumnTransformer``,
``OneHotEncoder`` and ``SimpleImputer`` -- and the fitted encoding stored
in model files as arrays and JSON (never pickle).

The encoding, column by column:

* numeric columns: missing values replaced by the training median, plus one
  0/1 indicator column for each column that had missing values in training;
  then scaled (``standard``: zero mean and unit variance; ``minmax``: onto
  [0, 1]; ``none``), indicators included;
* categorical columns: read as text (numbers written with up to 15
  significant digits, so ``3`` and ``3.0`` are one level); missing values
  replaced by the most frequent level, plus an indicator as above; then one
  0/1 column per level seen in at least ``min_frequency`` of the training
  rows (a fraction if < 1, else a count), and one column
  ``COL_infrequent_sklearn`` grouping the rarer levels when there are any.

**Unseen levels** (at prediction, a level absent from training): counted
with the infrequent group when the column has one, otherwise encoded as all
zeros in that column's block (no level), which leaves the prediction to the
other inputs.  :meth:`TabularEncoding.transform` counts them (``unseen``),
and ``lssvm predict`` reports them.

:func:`make_tabular_pipeline` is the Python entry point;
:class:`TabularEncoding` holds a fitted encoding as plain arrays and applies
it with NumPy (scikit-learn's fitted objects can only be saved by pickle);
tests check that it reproduces the ``ColumnTransformer`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, OneHotEncoder, StandardScaler

__all__ = [
    "DEFAULT_MIN_FREQUENCY",
    "TabularEncoding",
    "as_text",
    "categorical_columns",
    "make_tabular_pipeline",
    "make_tabular_preprocessor",
]

#: levels seen in fewer than this fraction of the training rows are grouped
DEFAULT_MIN_FREQUENCY = 0.01
SCALERS = ("standard", "minmax", "none")


def as_text(X):
    """Categorical values as text, missing values kept as NaN: numbers are
    written with up to 15 significant digits (``3``, ``3.0`` -> ``"3"``).

    Parameters
    ----------
    X : DataFrame or array of shape (m, c)

    Returns
    -------
    ndarray of object, shape (m, c)
    """
    frame = pd.DataFrame(X)
    out = np.empty(frame.shape, dtype=object)
    for j, (_, col) in enumerate(frame.items()):
        values = col.to_numpy(dtype=object)
        missing = pd.isna(col).to_numpy()
        out[:, j] = [np.nan if m else _text(v) for v, m in zip(values, missing, strict=True)]
    return out


def _text(v):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return format(float(v), ".15g")
    return str(v)


class _Others:
    """Column selector: every column not in ``exclude`` (picklable)."""

    def __init__(self, exclude):
        self.exclude = list(exclude)

    def __call__(self, X):
        return [c for c in X.columns if c not in set(self.exclude)]


def _text_names(transformer, names):
    return np.asarray(names, dtype=object)


def categorical_columns(frame, categorical="auto", exclude=()):
    """Which columns of ``frame`` are categorical.

    Parameters
    ----------
    frame : DataFrame
    categorical : "auto", "none" (or None) or list of str
        "auto": the non-numeric columns (text, category, boolean); "none":
        no column; a list: those columns, numeric or not.
    exclude : iterable of str
        Columns that are not inputs (target, dropped).

    Returns
    -------
    (categorical, numeric) : two lists of column names

    Raises
    ------
    ValueError
        A listed column that does not exist, or (with "none" or a list) a
        non-numeric column left out of the list.
    """
    cols = [c for c in map(str, frame.columns) if c not in set(exclude)]
    frame = frame.set_axis(list(map(str, frame.columns)), axis=1)

    def numeric(c):
        return pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])

    if categorical is None or categorical == "none":
        cat = []
    elif categorical == "auto":
        cat = [c for c in cols if not numeric(c)]
    else:
        cat = [str(c) for c in categorical]
        absent = [c for c in cat if c not in cols]
        if absent:
            raise ValueError(f"categorical column(s) not found among the inputs: {', '.join(absent)}")
    left = [c for c in cols if c not in cat and not numeric(c)]
    if left:
        raise ValueError(f"non-numeric input column(s): {', '.join(left)}; mark them categorical "
                         "(--categorical auto, or list them) or leave them out with --drop")
    return cat, [c for c in cols if c not in cat]


def make_tabular_preprocessor(categorical="auto", numeric=None, *, impute=True, scale="standard",
                              min_frequency=DEFAULT_MIN_FREQUENCY):
    """The ``ColumnTransformer`` that encodes a mixed table (see the module).

    Parameters
    ----------
    categorical : "auto" or list of str, default="auto"
        Categorical columns; "auto" selects the non-numeric ones by dtype.
    numeric : list of str, optional
        Numeric columns; default every column that is not categorical.
    impute : bool, default=True
        Impute missing values (median / most frequent) and add indicators;
        if False, missing values raise an error in ``fit``.
    scale : {"standard", "minmax", "none"}, default="standard"
    min_frequency : float or int, default=0.01
        Levels rarer than this (fraction of rows if < 1, else a count) are
        grouped into one infrequent column.

    Returns
    -------
    sklearn.compose.ColumnTransformer
        Dense output, columns named ``num__COL``, ``cat__COL_LEVEL``, ...
    """
    if scale not in SCALERS:
        raise ValueError(f"scale must be one of {SCALERS}; got {scale!r}")
    if categorical == "auto":
        cat_sel = make_column_selector(dtype_exclude=["number"])
        num_sel = make_column_selector(dtype_include=["number"]) if numeric is None else list(numeric)
    else:
        cat_sel = [] if categorical in (None, "none") else list(categorical)
        num_sel = _Others(cat_sel) if numeric is None else list(numeric)
    scaler = {"standard": StandardScaler(), "minmax": MinMaxScaler(), "none": "passthrough"}[scale]
    num_steps = ([SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=False)]
                 if impute else []) + [scaler]
    text = FunctionTransformer(as_text, feature_names_out=_text_names)
    cat_steps = [text] + ([SimpleImputer(strategy="most_frequent")] if impute else []) + [
        OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=min_frequency, sparse_output=False)]
    parts = [("num", make_pipeline(*num_steps), num_sel), ("cat", make_pipeline(*cat_steps), cat_sel)]
    if impute:
        # on the text values, as the encoder sees them: MissingIndicator refuses a bool column (True/False)
        parts.append(("catmiss", make_pipeline(FunctionTransformer(as_text, feature_names_out=_text_names),
                                               MissingIndicator(features="missing-only", error_on_new=False)),
                      cat_sel))
    return ColumnTransformer(parts, sparse_threshold=0.0, verbose_feature_names_out=True)


def make_tabular_pipeline(estimator, categorical="auto", *, impute=True, scale="standard",
                          min_frequency=DEFAULT_MIN_FREQUENCY):
    """``Pipeline([("encode", make_tabular_preprocessor(...)), ("model", estimator)])``.

    Fit it on a pandas DataFrame with text (or ``category``) columns and
    missing values; see :func:`make_tabular_preprocessor` for the options
    and the module docstring for the encoding and unseen levels.

    Examples
    --------
    >>> import pandas as pd
    >>> from lssvm import SparseLSSVC, make_tabular_pipeline
    >>> X = pd.DataFrame({"age": [25, 38, None, 52, 41, 30],
    ...                   "job": ["a", "b", "a", None, "b", "a"]})
    >>> y = [0, 1, 0, 1, 1, 0]
    >>> model = make_tabular_pipeline(SparseLSSVC(gamma=0.5, alpha=0.1, basis="random", n_basis=4,
    ...                                           random_state=0))
    >>> model.fit(X, y).predict(X).shape
    (6,)
    """
    return Pipeline([("encode", make_tabular_preprocessor(categorical, impute=impute, scale=scale,
                                                          min_frequency=min_frequency)),
                     ("model", estimator)])


@dataclass(eq=False)
class TabularEncoding:
    """A fitted tabular encoding as plain arrays, applied without scikit-learn.

    Attributes
    ----------
    numeric : list of str
        Numeric input columns, in output order.
    medians : ndarray of shape (len(numeric),)
        Imputation values (NaN where imputation is off).
    numeric_indicators : list of int
        Positions in ``numeric`` that get a missing-value indicator.
    center, scale : ndarray of shape (len(numeric) + len(numeric_indicators),)
        ``(value - center) / scale`` for the numeric block.
    categorical : list of str
    fill : list of str or None
        Most frequent level per categorical column (None: no imputation).
    levels : list of list of str
        The one-hot levels of each categorical column, in output order.
    rare_levels : list of list of str
        The training levels grouped into each column's infrequent column
        (last in its block; none when the list is empty).
    categorical_indicators : list of int
        Positions in ``categorical`` that get a missing-value indicator.
    feature_names : list of str
        Output column names (as ``get_feature_names_out``).
    categorical_encoding : {"one-hot", "ordinal"}, default="one-hot"
        "ordinal" (:meth:`to_ordinal`): one column per categorical column, the position of its level in
        ``levels`` (the infrequent group next, an unseen level at the training mean), scaled.
    ordinal_center, ordinal_scale : ndarray of shape (len(categorical),) or None
        ``(code - center) / scale`` of the ordinal columns.
    """

    numeric: list
    medians: np.ndarray
    numeric_indicators: list
    center: np.ndarray
    scale: np.ndarray
    categorical: list
    fill: list | None
    levels: list
    rare_levels: list
    categorical_indicators: list
    feature_names: list = field(default_factory=list)
    unseen: dict = field(default_factory=dict, compare=False)
    imputed: dict = field(default_factory=dict, compare=False)
    categorical_encoding: str = "one-hot"
    ordinal_center: np.ndarray | None = None
    ordinal_scale: np.ndarray | None = None

    def __eq__(self, other):
        """Same columns, levels and (bit for bit) the same arrays."""
        if not isinstance(other, TabularEncoding):
            return NotImplemented
        meta, arrays = self.to_stored()
        meta2, arrays2 = other.to_stored()
        return meta == meta2 and all(np.array_equal(arrays[k], arrays2[k], equal_nan=True) for k in arrays)

    @property
    def input_columns(self):
        return list(self.numeric) + list(self.categorical)

    @classmethod
    def from_fitted(cls, ct):
        """Read a fitted :func:`make_tabular_preprocessor` transformer."""
        named = {name: (trans, cols) for name, trans, cols in ct.transformers_}
        num_pipe, num_cols = named["num"]
        numeric = list(num_cols)
        medians, num_ind = np.full(len(numeric), np.nan), []
        center = np.zeros(0)
        scale = np.ones(0)
        if numeric and num_pipe != "drop":
            steps = dict(num_pipe.named_steps)
            imp = steps.get("simpleimputer")
            if imp is not None:
                medians = np.asarray(imp.statistics_, dtype=float)
                if imp.indicator_ is not None:
                    num_ind = [int(i) for i in imp.indicator_.features_]
            width = len(numeric) + len(num_ind)
            if "standardscaler" in steps:
                center, scale = steps["standardscaler"].mean_, steps["standardscaler"].scale_
            elif "minmaxscaler" in steps:
                mm = steps["minmaxscaler"]
                scale = 1.0 / mm.scale_
                center = -mm.min_ * scale
            else:
                center, scale = np.zeros(width), np.ones(width)
        cat_pipe, cat_cols = named["cat"]
        categorical = list(cat_cols)
        fill, levels, rare_levels, cat_ind = None, [], [], []
        if categorical and cat_pipe != "drop":
            steps = dict(cat_pipe.named_steps)
            if "simpleimputer" in steps:
                fill = [str(v) for v in steps["simpleimputer"].statistics_]
            enc = steps["onehotencoder"]
            infreq = enc.infrequent_categories_ if getattr(enc, "_infrequent_enabled", False) \
                else [None] * len(categorical)
            for cats, rare in zip(enc.categories_, infreq, strict=True):
                rare = [] if rare is None else [str(c) for c in rare]
                levels.append([str(c) for c in cats if c not in set(rare)])
                rare_levels.append(rare)
            if "catmiss" in named and named["catmiss"][0] != "drop":
                indicator = named["catmiss"][0]
                indicator = indicator[-1] if isinstance(indicator, Pipeline) else indicator
                cat_ind = [int(i) for i in indicator.features_]
        return cls(numeric, np.asarray(medians, float), num_ind, np.asarray(center, float),
                   np.asarray(scale, float), categorical, fill, levels, rare_levels, cat_ind,
                   [str(f) for f in ct.get_feature_names_out()])

    def transform(self, frame):
        """Encode the input columns of ``frame``, shape (m, n_features_out).

        Counts unseen levels per column in ``self.unseen`` and the missing
        values filled in per column in ``self.imputed`` (both reset on each
        call; :meth:`input_changes` words them).

        Raises
        ------
        ValueError
            A missing input column, a non-numeric value in a numeric column,
            infinite values, or missing values when imputation was off.
        """
        frame = frame.set_axis(list(map(str, frame.columns)), axis=1)
        absent = [c for c in self.input_columns if c not in frame.columns]
        if absent:
            raise ValueError(f"input column(s) not found: {', '.join(absent)}")
        blocks = []
        self.unseen, self.imputed = {}, {}
        if self.numeric:
            try:
                X = frame[self.numeric].apply(pd.to_numeric, errors="raise").to_numpy(dtype=float)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"numeric input column(s) hold text: {exc}") from None
            if np.isinf(X).any():
                raise ValueError("numeric input columns contain infinite values")
            miss = np.isnan(X)
            if miss.any() and np.all(np.isnan(self.medians)):
                bad = [c for c, m in zip(self.numeric, miss.any(axis=0), strict=True) if m]
                raise ValueError(f"missing values in input column(s) {', '.join(bad)}, and the model was "
                                 "trained without imputation")
            self.imputed.update({c: int(n) for c, n in zip(self.numeric, miss.sum(axis=0), strict=True) if n})
            X = np.where(miss, self.medians[None, :], X)
            Z = np.hstack([X, miss[:, self.numeric_indicators].astype(float)])
            blocks.append((Z - self.center) / self.scale)
        if self.categorical:
            T = as_text(frame[self.categorical])
            miss = pd.isna(pd.DataFrame(T)).to_numpy()
            if miss.any() and self.fill is None:
                bad = [c for c, m in zip(self.categorical, miss.any(axis=0), strict=True) if m]
                raise ValueError(f"missing values in input column(s) {', '.join(bad)}, and the model was "
                                 "trained without imputation")
            self.imputed.update({c: int(n) for c, n in zip(self.categorical, miss.sum(axis=0), strict=True)
                                 if n})
            for j, (col, lev, rare) in enumerate(zip(self.categorical, self.levels, self.rare_levels,
                                                     strict=True)):
                values = np.where(miss[:, j], self.fill[j] if self.fill else "", T[:, j]).astype(str)
                index = {v: i for i, v in enumerate(lev)}
                pos = np.array([index.get(v, -1) for v in values])
                if self.categorical_encoding == "ordinal":
                    blocks.append(self._ordinal_column(j, pos, values, rare, col))
                    continue
                B = np.zeros((len(values), len(lev) + int(bool(rare))))
                known = pos >= 0
                B[np.flatnonzero(known), pos[known]] = 1.0
                if rare:
                    B[~known, -1] = 1.0
                unseen = int((~known & ~np.isin(values, rare)).sum()) if rare else int((~known).sum())
                if unseen:
                    self.unseen[col] = unseen
                blocks.append(B)
            if self.categorical_indicators:
                blocks.append(miss[:, self.categorical_indicators].astype(float))
        return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))

    def _ordinal_column(self, j, pos, values, rare, col):
        """Column j's scaled ordinal codes (m, 1); counts its unseen levels."""
        code = pos.astype(float)
        unknown = pos < 0
        if rare:
            code[unknown & np.isin(values, rare)] = len(self.levels[j])
        unseen = unknown & ~np.isin(values, rare) if rare else unknown
        if unseen.any():
            self.unseen[col] = int(unseen.sum())
        center = 0.0 if self.ordinal_center is None else self.ordinal_center[j]
        scale = 1.0 if self.ordinal_scale is None else self.ordinal_scale[j]
        code[unseen] = center  # no level: the training mean, 0 after scaling
        return ((code - center) / scale)[:, None]

    def to_ordinal(self, frame, scale="standard"):
        """This encoding with one ordinal column per categorical column instead of its one-hot block.

        Parameters
        ----------
        frame : DataFrame
            The training rows (the codes' center and scale are theirs).
        scale : {"standard", "minmax", "none"}
            As the numeric columns: zero mean and unit variance, onto [0, 1], or the raw codes.

        Returns
        -------
        TabularEncoding
            ``categorical_encoding="ordinal"``; the numeric block and the missing-value indicators as here.
            Codes follow the order of ``levels`` (the text's sorted order), the infrequent group last.
        """
        if scale not in SCALERS:
            raise ValueError(f"scale must be one of {SCALERS}; got {scale!r}")
        k = len(self.categorical)
        out = TabularEncoding(self.numeric, self.medians, self.numeric_indicators, self.center, self.scale,
                              self.categorical, self.fill, self.levels, self.rare_levels,
                              self.categorical_indicators, [], categorical_encoding="ordinal",
                              ordinal_center=np.zeros(k), ordinal_scale=np.ones(k))
        width = len(self.numeric) + len(self.numeric_indicators) if self.numeric else 0
        n_onehot = sum(len(v) + int(bool(r)) for v, r in zip(self.levels, self.rare_levels, strict=True))
        names = list(self.feature_names)
        out.feature_names = names[:width] + [f"cat__{c}" for c in self.categorical] + names[width + n_onehot:]
        codes = out.transform(frame)[:, width:width + k]
        if scale == "standard":
            center, spread = codes.mean(axis=0), codes.std(axis=0)
        elif scale == "minmax":
            center, spread = codes.min(axis=0), np.ptp(codes, axis=0)
        else:
            center, spread = np.zeros(k), np.ones(k)
        out.ordinal_center, out.ordinal_scale = center, np.where(spread > 0, spread, 1.0)
        return out

    def input_changes(self):
        """What the last :meth:`transform` changed in its table, as sentences
        naming the columns and row counts (empty when nothing): missing
        values filled in, levels unseen in training.  ``lssvm predict``
        prints them and :class:`lssvm.io.SavedModel` warns them
        (:class:`lssvm.exceptions.InputWarning`)."""
        def listed(counts):
            return ", ".join(f"{c} ({n} row{'s' if n != 1 else ''})" for c, n in counts.items())

        out = []
        if self.imputed:
            out.append("missing values filled in as in training (numeric: the training median; categorical: the "
                       f"most frequent level): {listed(self.imputed)}")
        if self.unseen:
            out.append("levels absent from training (counted with the rare levels, or as no level): "
                       f"{listed(self.unseen)}")
        return out

    # ---------------------------------------------------------- model files
    def to_stored(self):
        """(JSON-able dict, dict of arrays named ``pre_*``) for a model file."""
        meta = {"numeric": self.numeric, "numeric_indicators": self.numeric_indicators,
                "categorical": self.categorical, "fill": self.fill, "levels": self.levels,
                "rare_levels": self.rare_levels, "categorical_indicators": self.categorical_indicators,
                "feature_names": self.feature_names}
        arrays = {"pre_medians": np.asarray(self.medians, float), "pre_center": np.asarray(self.center, float),
                  "pre_scale": np.asarray(self.scale, float)}
        if self.categorical_encoding == "ordinal":  # one-hot files stay as they were
            meta["categorical_encoding"] = "ordinal"
            arrays["pre_ordinal_center"] = np.asarray(self.ordinal_center, float)
            arrays["pre_ordinal_scale"] = np.asarray(self.ordinal_scale, float)
        return meta, arrays

    @classmethod
    def from_stored(cls, meta, arrays):
        """Rebuild from :meth:`to_stored`'s output, checking types and shapes.

        Raises
        ------
        ValueError
            Anything inconsistent.
        """
        def strings(x):
            return isinstance(x, list) and all(isinstance(s, str) for s in x)

        def ints(x, n):
            return isinstance(x, list) and all(isinstance(i, int) and 0 <= i < n for i in x)

        if not isinstance(meta, dict):
            raise ValueError("the preprocessing entry is not an object")
        num, cat = meta.get("numeric"), meta.get("categorical")
        if not (strings(num) and strings(cat) and strings(meta.get("feature_names"))):
            raise ValueError("the preprocessing column names are missing or not text")
        levels, rare, fill = meta.get("levels"), meta.get("rare_levels"), meta.get("fill")
        if not (isinstance(levels, list) and len(levels) == len(cat) and all(strings(v) for v in levels)
                and isinstance(rare, list) and len(rare) == len(cat) and all(strings(r) for r in rare)
                and (fill is None or (strings(fill) and len(fill) == len(cat)))):
            raise ValueError("the categorical levels are inconsistent")
        n_ind, c_ind = meta.get("numeric_indicators"), meta.get("categorical_indicators")
        if not (ints(n_ind, len(num)) and ints(c_ind, len(cat))):
            raise ValueError("the missing-value indicators are inconsistent")
        out = {}
        for name in ("pre_medians", "pre_center", "pre_scale"):
            a = arrays.get(name)
            if a is None or a.dtype.kind != "f" or a.ndim != 1:
                raise ValueError(f"array {name!r} is missing or not a 1-D float array")
            out[name] = a
        width = len(num) + len(n_ind) if num else 0
        if out["pre_medians"].shape != (len(num),) or out["pre_center"].shape != (width,) \
                or out["pre_scale"].shape != (width,):
            raise ValueError("the numeric scaling does not match the numeric columns")
        if not (np.all(np.isfinite(out["pre_center"])) and np.all(np.isfinite(out["pre_scale"]))
                and np.all(out["pre_scale"] != 0)) or np.any(np.isinf(out["pre_medians"])):
            raise ValueError("the numeric scaling holds NaN, infinity or a zero scale")
        encoding = meta.get("categorical_encoding", "one-hot")
        if encoding not in ("one-hot", "ordinal"):
            raise ValueError(f"categorical_encoding must be 'one-hot' or 'ordinal'; got {encoding!r}")
        ordinal = {}
        if encoding == "ordinal":
            for name in ("pre_ordinal_center", "pre_ordinal_scale"):
                a = arrays.get(name)
                if a is None or a.dtype.kind != "f" or a.shape != (len(cat),) or not np.all(np.isfinite(a)):
                    raise ValueError(f"array {name!r} must hold {len(cat)} finite floats, one per categorical column")
                ordinal[name] = a
            if np.any(ordinal["pre_ordinal_scale"] == 0):
                raise ValueError("the ordinal scaling holds a zero scale")
            n_cat = len(cat)
        else:
            n_cat = sum(len(v) + int(bool(r)) for v, r in zip(levels, rare, strict=True))
        n_out = width + n_cat + len(c_ind)
        if len(meta["feature_names"]) != n_out:
            raise ValueError(f"{len(meta['feature_names'])} encoded column names for {n_out} columns")
        return cls(list(num), out["pre_medians"], list(n_ind), out["pre_center"], out["pre_scale"], list(cat),
                   None if fill is None else list(fill), [list(v) for v in levels], [list(r) for r in rare],
                   list(c_ind),
                   list(meta["feature_names"]), categorical_encoding=encoding,
                   ordinal_center=ordinal.get("pre_ordinal_center"), ordinal_scale=ordinal.get("pre_ordinal_scale"))
