"""CV+ intervals of the fixed-size and Nyström regressors fitted on Dask rows
: the k folds refitted on the Dask rows of their training parts,
the CV+ order statistics streamed in passes (:func:`refit_cv_plus`).

In memory these families refit each fold (their exact CV models are not
cheap to evaluate at new points:
:class:`lssvm.estimators._intervals.RefitIntervalMixin`).  On Dask the same
refits run on the same rows, never gathered:

1. **fold sizes** (one light pass reading only the group labels, or none
   for ``KFold``): how many training rows of fold f each row chunk holds;
2. **the k refits**: fold f's training rows are a Dask collection whose
   chunks select, from each original chunk, the rows outside fold f (sizes
   known from step 1, so no pass counts them); the family's own Dask fit
   runs on it (its own passes, the pool / columns drawn as the in-memory
   refit draws them from the training subset) and gives a kernel expansion
   ``k(x, Z_f) W_f + b_f`` (a few hundred centres);
3. **selection**: row i's CV+ values ``f_{-k(i)}(x) -+ |y_i - f_{-k(i)}(x_i)|``
   are formed in the tasks (each row's out-of-fold residual from its fold's
   expansion, the test points' fold values computed once on the client) and
   the order statistics taken by :func:`.selection.select_kth`: a light
   sample pass and usually two full passes per 1024 test points, O(m (n_f d
   + t v)) per pass for expansions of n_f centres.

Nothing of size m is held on the client: the fold values at the test
points (t x k x v), the fold expansions, and the selection's candidates.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np

from ..._threads import serial_region
from ...cv.conformal import conformal_ranks
from .intervals import TEST_GROUP, _bounds, block_sub_rows
from .passes import run_pass
from .selection import select_kth

__all__ = ["fold_block_counts", "fold_training_rows", "refit_cv_plus", "training_positions"]


def _task_counts(x, g, row0, spec, n_folds):
    f = np.asarray(spec.block_folds(row0, np.shape(x)[0], g), dtype=np.int64).ravel()
    return np.bincount(f + 1, minlength=n_folds + 1)  # column 0: rows in no test set


def fold_block_counts(folds):
    """Rows of every fold in every chunk, shape (n_chunks, n_folds): one pass
    reading the labels the assignment needs (none for ``KFold``).

    Raises
    ------
    ValueError
        When some rows are in no fold's test set (CV+ scores every row).
    """
    spec = folds.spec
    parts = [dask.delayed(_task_counts, pure=True)(x, g, r0, spec, spec.n_folds) for x, _, g, r0 in folds.data.blocks()]
    counts = np.asarray(run_pass("fold sizes per block", parts)).reshape(len(parts), spec.n_folds + 1)
    if counts[:, 0].any():
        raise ValueError(f"CV+ needs folds whose test sets cover every training row; {int(counts[:, 0].sum())} rows "
                         "are in none: use a splitter that partitions the rows (KFold, GroupKFold, ...)")
    return counts[:, 1:]


def _select(block, g, row0, n_rows, spec, fold):
    return np.asarray(block)[np.asarray(spec.block_folds(row0, n_rows, g)).ravel() != fold]


def fold_training_rows(folds, counts, fold):
    """The rows outside ``fold`` as Dask arrays ``(X, y, groups or None)``
    with known chunk sizes (``counts`` from :func:`fold_block_counts`);
    lazy: each chunk filters its original chunk when a pass reads it."""
    data, spec = folds.data, folds.spec
    sizes = np.diff(data.offsets)
    out = {"X": [], "y": [], "g": []}
    arrays = {"X": data.X, "y": data.y, "g": data.groups}
    delayed = {k: (None if a is None else a.to_delayed(optimize_graph=False).ravel()) for k, a in arrays.items()}
    gs = delayed["g"] if delayed["g"] is not None else [None] * sizes.size
    for b in range(sizes.size):
        n = int(sizes[b] - counts[b, fold])
        if n == 0:
            continue
        r0, nb = int(data.offsets[b]), int(sizes[b])
        for key, a in arrays.items():
            if a is None:
                continue
            part = dask.delayed(_select, pure=True)(delayed[key][b], gs[b], r0, nb, spec, fold)
            out[key].append(da.from_delayed(part, shape=(n, *a.shape[1:]), dtype=a.dtype))
    return tuple(None if arrays[k] is None else da.concatenate(out[k], axis=0) for k in ("X", "y", "g"))


def training_positions(folds, counts, fold, rows):
    """Where given rows sit among fold ``fold``'s training rows.

    Parameters
    ----------
    folds : DaskFolds
    counts : ndarray of shape (n_chunks, n_folds)
        From :func:`fold_block_counts`.
    fold : int
    rows : ndarray of int
        Global row indices (a few: the basis rows of a refit).

    Returns
    -------
    kept : ndarray of bool
        Whether each row is a training row of the fold (not in its test set).
    positions : ndarray of int
        The kept rows' indices in the fold's training collection
        (:func:`fold_training_rows`).

    Notes
    -----
    Reads the fold labels of the chunks holding ``rows`` only (their group
    labels, where the assignment needs them).
    """
    data, spec = folds.data, folds.spec
    rows = np.asarray(rows, dtype=np.int64)
    chunk = np.searchsorted(data.offsets, rows, side="right") - 1
    before = np.concatenate([[0], np.cumsum(counts[:, fold])])  # test rows of the fold before each chunk
    kept = np.zeros(rows.size, dtype=bool)
    positions = np.zeros(rows.size, dtype=np.int64)
    for b in np.unique(chunk):
        lo, hi = int(data.offsets[b]), int(data.offsets[b + 1])
        g = None if data.groups is None else np.asarray(data.groups[lo:hi].compute())
        labels = np.asarray(spec.block_folds(lo, hi - lo, g)).ravel()
        in_test = np.concatenate([[0], np.cumsum(labels == fold)])  # test rows of the fold before each row
        sel = chunk == b
        local = rows[sel] - lo
        kept[sel] = labels[local] != fold
        positions[sel] = rows[sel] - before[b] - in_test[local]
    return kept, positions[kept]


class _RefitValues:
    """Row i's CV+ values ``f_{-k(i)}(x) -+ |y_i - f_{-k(i)}(x_i)|`` from the
    fold expansions ``(kernel, centres, coef, intercept)``; ``centres_at``
    the fold values at the test points (t, v, K).  Lower bounds first."""

    def __init__(self, spec, expansions, centres_at):
        self.spec, self.expansions, self.centres_at = spec, expansions, centres_at
        t, v, _ = centres_at.shape
        self.n_problems = 2 * t * v

    def block_values(self, x, y, g, row0, rows=None):
        with serial_region():  # the sub-blocks of the sparse CV+ values
            for X, Y, fs in block_sub_rows(self.spec, x, y, g, row0, rows, None, self.n_problems):
                F = np.empty(Y.shape)
                for f in np.unique(fs):
                    sel = fs == f
                    kernel, Z, W, b = self.expansions[f]
                    F[sel] = kernel(X[sel], Z) @ W + b
                S = np.abs(Y - F)
                yield _bounds(self.centres_at[:, :, fs], S.T[None]), 0


def refit_cv_plus(folds, refit, X, coverage):
    """CV+ bounds of a family refitted per fold on Dask rows.

    Parameters
    ----------
    folds : DaskFolds
        The folds, on the training rows (with the groups the assignment reads).
    refit : callable
        ``refit(X_train, y_train, groups_train, to_train)`` (Dask arrays;
        groups None without groups; ``to_train(rows)`` gives
        :func:`training_positions` of global rows in this fold) returns the
        fitted fold model: an estimator with ``kernel_expansion()`` and
        ``_decision_2d``.
    X : ndarray of shape (t, d)
        New points (validated).
    coverage : float
        Validated, with enough rows.

    Returns
    -------
    bounds : ndarray of shape (t, 2, v)
    passes : int
        Passes over the training rows outside the refits (fold sizes and
        selection); each refit adds its own fit's passes.

    Notes
    -----
    Ranks as :func:`lssvm.cv.conformal.conformal_ranks` (Barber et al. 2021):
    lower the ``floor(alpha_c (m + 1))``-th smallest of the lower values,
    upper the ``ceil((1 - alpha_c)(m + 1))``-th smallest of the upper ones.
    Cost: the module docstring.
    """
    m = folds.data.n_samples
    counts = fold_block_counts(folds)
    K = folds.spec.n_folds
    expansions, at = {}, []
    for f in range(K):
        if not counts[:, f].any():  # an empty fold (a group-fold label nobody holds)
            continue
        model = refit(*fold_training_rows(folds, counts, f),
                      lambda rows, f=f: training_positions(folds, counts, f, rows))
        e = model.kernel_expansion()
        expansions[f] = (e.kernel, e.centres, e.coef, e.intercept)
        at.append((f, model._decision_2d(X)))
    v = at[0][1].shape[1]
    t = X.shape[0]
    centres = np.full((t, v, K), np.nan)
    for f, F in at:
        centres[:, :, f] = F
    k_lo, k_hi = conformal_ranks(coverage, m)
    out = np.empty((t, 2, v))
    passes = 1
    for lo in range(0, t, TEST_GROUP):
        c = centres[lo : lo + TEST_GROUP]
        tg = c.shape[0]
        valuer = _RefitValues(folds.spec, expansions, c)
        k = np.concatenate([np.full(tg * v, k_lo), np.full(tg * v, k_hi)])
        vals, n, _ = select_kth(folds.data, valuer, k, "cv+")
        passes += n
        out[lo : lo + tg, 0] = vals[: tg * v].reshape(tg, v)
        out[lo : lo + tg, 1] = vals[tg * v :].reshape(tg, v)
    return out, passes
