"""``lssvm select --categorical-encoding``: one-hot or ordinal columns for
the categorical inputs, chosen by the exact CV error of the searched model
refitted on each encoding.

The search runs on the one-hot encoding.  Then its best model (kernel
parameters, basis rows) is refitted once on each encoding and scored along
the whole alpha path by its exact LOO error (or on the search's folds);
the encoding of lower error wins, one-hot on a tie.  A plain comparison is
conservative towards one-hot: the kernel width was searched on the one-hot
columns, so the ordinal refit is scored at a width chosen for the other
encoding.  The cost is two refits and their CV paths (O(m n^2) each), no
new search.
"""

from __future__ import annotations

import click
import numpy as np
from sklearn.base import clone

__all__ = ["categorical_encoding_option", "choose_cli_encoding", "encoding_cv_errors"]

categorical_encoding_option = click.option(
    "--categorical-encoding", type=click.Choice(["auto", "one-hot", "ordinal"]), default="auto",
    show_default=True,
    help="Categorical inputs: one 0/1 column per level (one-hot), or one scaled column of level codes in "
         "the levels' sorted order (ordinal).  auto: the search runs on one-hot, then its best model is refitted "
         "on each encoding and the one of lower exact CV error (along the alpha path) is kept.")


def _path_errors(model, path, scoring, folds, basis_in_holdout, m):
    """Exact CV error of a model fitted on m rows at every alpha of ``path`` (A,): LOO, or the search's folds."""
    if folds is None:
        if scoring == "error_rate":
            return np.asarray(model.loo_error_rate(path), dtype=float).reshape(path.size)
        press = np.asarray(model.press(path), dtype=float).reshape(path.size, -1)
        return press.mean(axis=1) / m
    every = np.arange(m)
    pairs = [(np.setdiff1d(every, f), np.asarray(f)) for f in folds]
    err = np.asarray(model.cv_error(pairs, alpha=path, scoring=scoring, basis_in_holdout=basis_in_holdout),
                     dtype=float)
    return err.reshape(path.size, -1).mean(axis=1)


def encoding_cv_errors(search, encodings, y, path):
    """``{name: (CV error per alpha (A,), refitted model)}``: the search's best model refitted on each
    encoded matrix of ``encodings`` (``{name: X}``), same kernel parameters and basis rows.

    The error is the search's criterion (``scoring_``): mean squared error, or the error rate.
    """
    best = search.best_estimator_
    rows = np.asarray(best.basis_indices_)
    out = {}
    for name, X in encodings.items():
        model = clone(best).set_params(basis=rows).fit(X, y)
        out[name] = (_path_errors(model, path, search.scoring_, search.cv_folds_,
                                  getattr(search, "basis_in_holdout", None), len(y)), model)
    return out


def choose_cli_encoding(search, encoding, frame, Xs, y, asked, scale, path, streaming):
    """``(encoding, X, text or None)`` after the search on the one-hot columns ``Xs``.

    With "auto" (or "ordinal") and categorical inputs, the ordinal encoding is built on the training rows and
    the search's best model refitted on it; "auto" keeps the encoding of lower exact CV error, "ordinal" the
    ordinal one.  When ordinal is kept, ``search.best_estimator_``, ``alpha_``, ``best_params_["alpha"]``
    and ``best_score_`` describe the ordinal refit.
    """
    if encoding is None or not encoding.categorical or asked == "one-hot":
        return encoding, Xs, None
    if streaming:
        if asked == "ordinal":
            raise ValueError("--categorical-encoding ordinal needs the rows in memory (leave out --chunk-rows)")
        return encoding, Xs, None
    if getattr(search, "best_estimator_", None) is None or getattr(search.best_estimator_, "basis_indices_",
                                                                     None) is None:
        return encoding, Xs, None
    if getattr(search.best_estimator_, "kernel", None) == "ard":  # widths per one-hot column: no ordinal refit
        return encoding, Xs, "one-hot (the model's widths are one per one-hot column: no ordinal refit)"
    ordinal = encoding.to_ordinal(frame, scale)
    X_ord = ordinal.transform(frame)
    path = np.asarray(path, dtype=float)
    errors = encoding_cv_errors(search, {"one-hot": Xs, "ordinal": X_ord}, y, path)
    best = {name: float(np.min(e)) for name, (e, _) in errors.items()}
    keep = "ordinal" if asked == "ordinal" or best["ordinal"] < best["one-hot"] else "one-hot"
    crit = "error rate" if search.scoring_ == "error_rate" else "MSE"
    cv = "LOO" if search.cv_folds_ is None else f"{len(search.cv_folds_)}-fold"
    text = (f"{keep}{' (as asked)' if asked == 'ordinal' else ''}; {cv} {crit} of the best model refitted on "
            f"each: one-hot {best['one-hot']:.4g}, ordinal {best['ordinal']:.4g}")
    if keep == "one-hot":
        return encoding, Xs, text
    e, model = errors["ordinal"]
    i = int(np.argmin(e))
    alpha = float(path[i])
    model.set_params(alpha=alpha).fit(X_ord, y)
    search.best_estimator_ = model
    search.alpha_ = alpha
    search.best_params_ = {**search.best_params_, "alpha": alpha}
    search.best_score_ = -float(e[i]) if search.scoring_ == "mse" else 1.0 - float(e[i])
    return ordinal, X_ord, text
