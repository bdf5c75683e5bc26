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

from ..estimators.input_transform import InputTransform

__all__ = ["categorical_encoding_option", "choose_cli_encoding", "encoding_cv_errors", "ordinal_columns"]

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


def ordinal_columns(encoding):
    """The one-hot column positions each ordinal column stands for: a list, per column of
    ``encoding.to_ordinal(...)``, of arrays of positions in ``encoding``'s one-hot columns (the numeric
    block and the missing-value indicators map to themselves, a categorical column to its level block)."""
    width = len(encoding.numeric) + len(encoding.numeric_indicators) if encoding.numeric else 0
    blocks = [len(v) + int(bool(r)) for v, r in zip(encoding.levels, encoding.rare_levels, strict=True)]
    out = [np.array([j]) for j in range(width)]
    start = width
    for size in blocks:
        out.append(np.arange(start, start + size))
        start += size
    out += [np.array([j]) for j in range(start, len(encoding.feature_names))]
    return out


def _per_input_gamma(gamma, columns):
    """One width per encoded column (an ARD kernel's ``gamma``) moved to another encoding: each new column
    gets the mean width of the columns it stands for (``columns``, from :func:`ordinal_columns`)."""
    gamma = np.asarray(gamma, dtype=float)
    return np.array([gamma[c].mean() for c in columns])


def encoding_cv_errors(search, encodings, y, path, gammas=None):
    """``{name: (CV error per alpha (A,), refitted model)}``: the search's best model refitted on each
    encoded matrix of ``encodings`` (``{name: X}``), same kernel parameters and basis rows.

    The error is the search's criterion (``scoring_``): mean squared error, or the error rate.
    ``gammas`` (``{name: widths}``) replaces the best model's per-column widths (an ARD kernel's)
    on an encoding of another column count.
    """
    best = search.best_estimator_
    rows = np.asarray(best.basis_indices_)
    out = {}
    for name, X in encodings.items():
        model = clone(best).set_params(basis=rows)
        if gammas is not None and name in gammas:
            model.set_params(gamma=gammas[name])
        model.fit(X, y)
        out[name] = (_path_errors(model, path, search.scoring_, search.cv_folds_,
                                  getattr(search, "basis_in_holdout", None), len(y)), model)
    return out


def choose_cli_encoding(search, encoding, frame, Xs, y, asked, scale, path, streaming, input_transform=None):
    """``(encoding, X, text or None, input transform)`` after the search on the one-hot columns ``Xs``.

    With "auto" (or "ordinal") and categorical inputs, the ordinal encoding is built on the training rows and
    the search's best model refitted on it; "auto" keeps the encoding of lower exact CV error, "ordinal" the
    ordinal one.  When ordinal is kept, ``search.best_estimator_``, ``alpha_``, ``best_params_["alpha"]``
    and ``best_score_`` describe the ordinal refit.

    ``input_transform`` (a fitted :class:`lssvm.estimators.input_transform.InputTransform` or None): the
    per-column transform ``Xs`` went through; the ordinal columns get the same method fitted on them, returned
    in its place when ordinal is kept.
    """
    if encoding is None or not encoding.categorical or asked == "one-hot":
        return encoding, Xs, None, input_transform
    if streaming:
        if asked == "ordinal":
            raise ValueError("--categorical-encoding ordinal needs the rows in memory (leave out --chunk-rows)")
        return encoding, Xs, None, input_transform
    if getattr(search, "best_estimator_", None) is None or getattr(search.best_estimator_, "basis_indices_",
                                                                     None) is None:
        return encoding, Xs, None, input_transform
    ordinal = encoding.to_ordinal(frame, scale)
    X_ord = ordinal.transform(frame)
    ordinal_inputs = None if input_transform is None else InputTransform(input_transform.method).fit(X_ord)
    X_ord = X_ord if ordinal_inputs is None else ordinal_inputs.transform(X_ord)
    path = np.asarray(path, dtype=float)
    # an ARD winner has one width per one-hot column: the ordinal column of a categorical input gets the mean
    # width of its level block, the other columns keep theirs (as the widths, a comparison towards one-hot)
    columns = ordinal_columns(encoding)
    gamma = np.asarray(search.best_estimator_.get_params().get("gamma"), dtype=object)
    per_column = gamma.ndim == 1 and gamma.size == Xs.shape[1] != X_ord.shape[1]
    gammas = {"ordinal": _per_input_gamma(gamma.astype(float), columns)} if per_column else None
    errors = encoding_cv_errors(search, {"one-hot": Xs, "ordinal": X_ord}, y, path, gammas)
    best = {name: float(np.min(e)) for name, (e, _) in errors.items()}
    keep = "ordinal" if asked == "ordinal" or best["ordinal"] < best["one-hot"] else "one-hot"
    crit = "error rate" if search.scoring_ == "error_rate" else "MSE"
    cv = "LOO" if search.cv_folds_ is None else f"{len(search.cv_folds_)}-fold"
    text = (f"{keep}{' (as asked)' if asked == 'ordinal' else ''}; {cv} {crit} of the best model refitted on "
            f"each: one-hot {best['one-hot']:.4g}, ordinal {best['ordinal']:.4g}")
    if keep == "one-hot":
        return encoding, Xs, text, input_transform
    e, model = errors["ordinal"]
    i = int(np.argmin(e))
    alpha = float(path[i])
    model.set_params(alpha=alpha).fit(X_ord, y)
    search.best_estimator_ = model
    search.alpha_ = alpha
    search.best_params_ = {**search.best_params_, "alpha": alpha}
    if per_column:
        search.best_params_["gamma"] = search.gamma_ = gammas["ordinal"]
        relevance = getattr(search, "feature_relevance_", None)
        if relevance is not None and np.size(relevance) == Xs.shape[1]:
            search.feature_relevance_ = np.array([np.asarray(relevance, dtype=float)[c].sum() for c in columns])
    search.best_score_ = -float(e[i]) if search.scoring_ == "mse" else 1.0 - float(e[i])
    return ordinal, X_ord, text, ordinal_inputs
