"""Fold definitions and out-of-fold predictions from a hold-out engine.

:class:`FoldSpec` is the fold of every row as a rule computable block by
block (contiguous ranges, a table from group to fold, or one label per
row): the Dask engine assigns folds with it without holding the rows.

:func:`contiguous_folds` gives the folds of an int ``cv`` or an unshuffled
``KFold`` in closed form.  Going through scikit-learn's ``split`` and
validating each fold (a sort for duplicates, a bincount for the partition)
costs about 0.3-0.5 ms for ten folds, which is a tenth of a CV+ call at
m = 2,000.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold, check_cv

from .._threads import parallel_map
from ..solvers import check_alphas
from ..solvers.sparse_rls import warn_tiny_leverage
from .holdout import BASIS_IN_HOLDOUT, HoldoutEngine, check_indices

__all__ = ["resolve_folds", "same_folds_every_time", "contiguous_folds", "cross_val_predictions", "FoldSpec", "stratifiable"]


def resolve_folds(cv, n_samples, y=None, groups=None, classifier=False):
    """Turn ``cv`` into a list of test-index arrays that partition the rows.

    Parameters
    ----------
    cv : "loo", int, scikit-learn splitter, or iterable of (train, test) pairs
        "loo" means leave-one-out (m folds of one row, as ``LeaveOneOut``).
        An int k is scikit-learn's ``check_cv(k, y, classifier)``: unshuffled
        ``KFold(k)`` (contiguous row ranges), or unshuffled
        ``StratifiedKFold(k)`` for a classifier.  This is the one fold rule
        of an int ``cv`` in lssvm: the estimators' CV methods, the
        criteria and searches of every family, the command
        line and the Dask engine (:func:`lssvm.backends.dask.fold_spec`)
        all give the same folds.  Pass a splitter to shuffle.  Where no
        class has k rows (``StratifiedKFold`` cannot split: tiny data) a
        classifier's int falls back to ``KFold(k)``, with a warning.  A
        splitter gets ``split(X, y, groups)``.
    n_samples : int
    y : array-like, optional
        Passed to splitters that stratify; needed with an int ``cv`` and
        ``classifier=True``.
    groups : array-like of shape (m,), optional
        Passed to group splitters (``GroupKFold``, ``LeaveOneGroupOut``, ...).
    classifier : bool
        Stratify integer ``cv`` on ``y``.

    Returns
    -------
    list of ndarray
        Test indices of each fold.

    Raises
    ------
    ValueError
        If the test sets do not cover every row exactly once (out-of-fold
        predictions need a partition), ``cv`` is not understood, a
        classifier's int ``cv`` comes without ``y``, or a group splitter
        without ``groups``.
    """
    dummy = np.zeros((n_samples, 1))
    if groups is not None:
        groups = np.asarray(groups)
        if groups.ndim != 1 or groups.shape[0] != n_samples:
            raise ValueError(f"groups must be a 1-D array with one label per sample ({n_samples}); got shape {groups.shape}")
    if isinstance(cv, str):  # before the splitter test: str has a .split method
        if cv != "loo":
            raise ValueError(
                f"cv must be 'loo', an int, a scikit-learn splitter or an iterable of (train, test) pairs; got {cv!r}"
            )
        if n_samples < 2:
            raise ValueError(f"cv='loo' needs at least 2 samples; got {n_samples}")
        return [np.array([i], dtype=np.intp) for i in range(n_samples)]
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if cv < 2 or cv > n_samples:
            raise ValueError(f"cv={cv} folds needs 2 <= cv <= n_samples={n_samples}")
        if groups is not None:
            warnings.warn(
                "groups is ignored by an integer cv (KFold); pass GroupKFold or LeaveOneGroupOut to use it",
                UserWarning,
                stacklevel=3,
            )
        if classifier and y is None:
            raise ValueError(f"cv={cv} for a classifier stratifies on the labels: pass y (the class labels)")
        # the one fold rule of an int (everywhere in lssvm, in memory and on Dask)
        splits = check_cv(int(cv), y, classifier=classifier and stratifiable(y, int(cv))).split(dummy, y)
    elif hasattr(cv, "split"):
        try:
            splits = cv.split(dummy, y, groups)
        except TypeError as exc:
            if y is not None:
                raise
            # a splitter that reads the targets (StratifiedKFold) and got none: a regression's search
            raise ValueError(f"{type(cv).__name__} splits by class labels and a regression has none: pass KFold, "
                             "an int or a group splitter") from exc
    else:
        try:
            splits = iter(cv)
        except TypeError:
            raise ValueError(
                f"cv must be an int, a scikit-learn splitter or an iterable of (train, test) pairs; got {cv!r}"
            ) from None
    tests = []
    try:
        for i, split in enumerate(splits):
            try:
                train, test = split
            except (TypeError, ValueError):
                raise ValueError(f"fold {i} is not a (train, test) pair") from None
            tests.append(check_indices(test, n_samples, name=f"fold {i} test indices"))
            check_train_complement(train, tests[-1], n_samples, i)
    except ValueError as exc:
        if groups is None and "groups" in str(exc):  # GroupKFold, LeaveOneGroupOut, ... without groups
            raise ValueError(
                f"{type(cv).__name__} splits by group: pass groups= (one group label per row, "
                f"length {n_samples})"
            ) from exc
        raise
    return _check_partition(tests, n_samples)


def contiguous_folds(cv, n_samples, groups=None):
    """The test folds of ``cv`` when they are contiguous ranges, else None.

    Parameters
    ----------
    cv : object
        Recognised: an int k (not bool) without ``groups``, and an instance
        of exactly ``sklearn.model_selection.KFold`` with ``shuffle=False``
        (a subclass may split otherwise).  Anything else returns None.
    n_samples : int
    groups : array-like, optional
        With an int ``cv``, :func:`resolve_folds` warns that it is
        ignored: that case is left to it (None here).

    Returns
    -------
    list of ndarray or None
        The same arrays as ``resolve_folds(cv, n_samples)`` would give
        (scikit-learn's ``KFold``: the first ``n_samples % k`` folds one row
        longer), or None where ``resolve_folds`` must decide (other
        splitters, and every case it refuses with an error, so the errors
        stay its own).

    Notes
    -----
    O(m) for the index arrays.
    """
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if groups is not None:
            return None
        k = int(cv)
    elif type(cv) is KFold and not cv.shuffle:
        k = cv.n_splits
    else:
        return None
    if not 2 <= k <= n_samples:
        return None
    rows = np.arange(n_samples, dtype=np.intp)
    q, extra = divmod(n_samples, k)
    return [rows[j * q + min(j, extra) : (j + 1) * q + min(j + 1, extra)] for j in range(k)]


def stratifiable(y, k):
    """Whether ``StratifiedKFold(k)`` can split labels ``y`` (some class has
    at least k rows); warns that an int ``cv`` falls back to ``KFold(k)`` if not."""
    counts = np.unique(np.asarray(y), return_counts=True)[1]
    if counts.max() >= k:
        return True
    warnings.warn(
        f"cv={k} cannot stratify: no class has {k} rows (the largest has {counts.max()}); using unshuffled "
        f"KFold({k}) instead",
        UserWarning,
        stacklevel=4,
    )
    return False


def check_train_complement(train, test, n_samples, i):
    """``ValueError`` unless fold ``i``'s training rows are all rows outside
    its test rows: the exact hold-out models are trained on the complement,
    so other training sets would be silently ignored.  The count is checked
    always (O(1)); the rows themselves when the fold is small enough
    (O(m) per fold, skipped for folds of one or two rows, e.g. LeaveOneOut).
    ``train=None`` stands for the complement."""
    if train is None:
        return
    train = np.asarray(train)
    if train.dtype == bool:
        train = np.flatnonzero(train)
    if train.ndim != 1 or train.shape[0] != n_samples - test.shape[0] or (
            test.shape[0] > 2 and np.any(np.isin(train, test))):
        raise ValueError(
            f"fold {i}: its training rows must be all rows outside its test rows ({n_samples - test.shape[0]} "
            f"rows); got {train.size}. The exact CV trains each fold's model on the complement of its test "
            "fold: pass folds whose train indices are that complement (any KFold-like splitter does)"
        )


def _check_partition(tests, n_samples):
    """``tests`` (validated index arrays) unchanged if they cover every row
    exactly once; ``ValueError`` otherwise."""
    if not tests:
        raise ValueError("cv produced no folds")
    counts = np.bincount(np.concatenate(tests), minlength=n_samples)
    if np.any(counts != 1):
        bad = int(np.flatnonzero(counts != 1)[0])
        raise ValueError(
            f"the test folds must partition the rows (each row in exactly one test fold); "
            f"row {bad} appears {int(counts[bad])} times"
        )
    return tests


def cross_val_predictions(engine: HoldoutEngine, folds, alpha, basis_in_holdout="remove", sink=None):
    """Out-of-fold predictions, shape (m, v) or (A, m, v).

    With ``sink``, nothing is stored: ``sink(rows, F)`` receives each
    fold's predictions ``F`` (A, h, v) for training rows ``rows`` (from
    several threads; single rows left out in closed form come in blocks of
    at most 4096), and None is returned, so a reduction over the rows
    never holds all A x m x v predictions.

    Folds of one row whose row is not removed from the basis use the
    closed-form LOO (O(m r) for all of them together); the rest go through
    the hold-out engine fold by fold.

    Raises
    ------
    ValueError
        If ``folds`` (test-index arrays, as from :func:`resolve_folds`) do
        not partition the training rows, or ``basis_in_holdout`` is unknown.
    """
    alphas, scalar = check_alphas(alpha)
    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    fac = engine.fac
    m, v = fac.n_samples, fac.z.shape[1]  # not y_centered.shape: that property forms the m x v centred targets
    if isinstance(folds, (str, bytes)) or not hasattr(folds, "__iter__"):
        raise ValueError(f"folds must be a list of test-index arrays (see resolve_folds); got {folds!r}")
    folds = _check_partition(
        [check_indices(f, m, name=f"fold {i} test indices") for i, f in enumerate(folds)], m
    )
    store = sink is None
    if store:
        out = np.empty((alphas.size, m, v))

        def sink(rows, F):
            out[:, rows] = F
    singles = np.array([f[0] for f in folds if f.size == 1], dtype=np.intp)
    is_basis = engine.row_to_basis[singles] >= 0
    # a single row removes its basis point only if it is the point's only holder
    removes = is_basis & (engine.n_holders[np.maximum(engine.row_to_basis[singles], 0)] == 1)
    closed = (singles if basis_in_holdout == "keep" else singles[~removes] if basis_in_holdout == "remove"
              else singles[~is_basis])
    kept_in_training = singles[is_basis] if basis_in_holdout == "train" else singles[:0]
    tiny, bad = [], np.zeros(np.size(alphas), dtype=bool)
    for lo in range(0, closed.size, 4096):
        rows = closed[lo : lo + 4096]
        R, t, b = fac.loo_rows(fac.M[rows], fac.y_centered[rows], alphas, per_alpha=True)  # only these rows
        tiny.append(rows[t])
        bad |= b
        sink(rows, engine.Y[None, rows] - R)
    if tiny:
        warn_tiny_leverage(np.concatenate(tiny), alphas=np.asarray(alphas)[bad])
    if kept_in_training.size:
        sink(kept_in_training, engine.Y[None, kept_in_training] - fac.residuals(alphas)[:, kept_in_training])
    done = set(closed.tolist()) | set(kept_in_training.tolist())
    todo = [test for test in folds if not (test.size == 1 and int(test[0]) in done)]

    def work(test):
        sink(test, engine.predict(test, alphas, basis_in_holdout))

    _map_folds(work, todo)
    if not store:
        return None
    return out[0] if scalar else out


def _map_folds(func, folds):
    """Run ``func`` on every fold, one fold per core.

    The per-fold linear algebra is mid-sized (h x h and r x r matrices), where
    OpenBLAS's own threads cost more in synchronisation than they gain
    (measured: one fold at r = 2000 runs 2x faster on one BLAS thread), so
    folds run side by side with single-threaded BLAS instead.  Folds write
    disjoint rows of the output.
    """
    parallel_map(func, folds)


@dataclass(frozen=True)
class FoldSpec:
    """Fold of every row, computable block by block.

    Attributes
    ----------
    kind : {"kfold", "groups", "labels", "stratified"}
        "kfold": contiguous ranges with boundaries ``bounds``; "groups":
        group value ``keys[i]`` goes to fold ``values[i]``; "labels": one
        fold label per row in ``values`` (-1: never held out);
        "stratified": unshuffled ``StratifiedKFold`` on the class labels
        (passed as the rows' ``groups``), from per-block class counts.
    n_folds : int
    bounds, keys, values : ndarray or None
    block_starts : ndarray of shape (n_blocks,), "stratified" only
        First row of each block the labels come in.
    before : ndarray of shape (n_blocks, n_classes), "stratified" only
        Rows of each class (``keys`` order) before each block.
    cum : ndarray of shape (n_folds + 1, n_classes), "stratified" only
        The j-th row of class c (in row order) goes to fold f where
        ``cum[f, c] <= j < cum[f + 1, c]``.
    """

    kind: str
    n_folds: int
    bounds: np.ndarray | None = None
    keys: np.ndarray | None = None
    values: np.ndarray | None = None
    block_starts: np.ndarray | None = None
    before: np.ndarray | None = None
    cum: np.ndarray | None = None

    def block_folds(self, row0, n_rows, groups=None):
        """Fold of rows ``row0 .. row0 + n_rows - 1`` (their ``groups`` for
        "groups", their class labels for "stratified", where ``row0`` must
        be a block start)."""
        if self.kind == "kfold":
            rows = np.arange(row0, row0 + n_rows)
            return np.searchsorted(self.bounds, rows, side="right") - 1
        if self.kind == "labels":
            return self.values[row0 : row0 + n_rows]
        if self.kind == "stratified":
            return self._stratified_block(row0, np.asarray(groups).ravel())
        g = np.asarray(groups).ravel()
        idx = np.minimum(np.searchsorted(self.keys, g), self.keys.size - 1)
        return self.values[idx]

    def folds_of(self, rows, groups_of=None, labels_between=None):
        """Fold of the given global rows; ``groups_of(rows)`` returns their
        groups (kind "groups"), ``labels_between(lo, hi)`` the class labels
        of rows ``lo .. hi - 1`` (kind "stratified": the blocks holding
        ``rows`` are read whole, a row's fold depends on its rank in its class)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.kind == "kfold":
            return np.searchsorted(self.bounds, rows, side="right") - 1
        if self.kind == "labels":
            return self.values[rows]
        if self.kind == "stratified":
            out = np.empty(rows.size, dtype=np.int64)
            blocks = np.searchsorted(self.block_starts, rows, side="right") - 1
            ends = np.append(self.block_starts[1:], np.iinfo(np.int64).max)
            for b in np.unique(blocks):
                lo = int(self.block_starts[b])
                labels = np.asarray(labels_between(lo, int(min(ends[b], lo + 2**62))))
                pick = blocks == b
                out[pick] = self._stratified_block(lo, labels)[rows[pick] - lo]
            return out
        return self.block_folds(0, rows.size, groups_of(rows))

    def _stratified_block(self, row0, labels):
        b = int(np.searchsorted(self.block_starts, row0))
        if b >= self.block_starts.size or self.block_starts[b] != row0:
            raise ValueError(f"row {row0} is not the first row of a block of this fold assignment")
        c = np.searchsorted(self.keys, labels)
        # rank of each row among the block's rows of its class, then among all rows
        order = np.argsort(c, kind="stable")
        sc = c[order]
        local = np.empty(c.size, dtype=np.int64)
        local[order] = np.arange(c.size) - np.searchsorted(sc, sc, side="left")
        rank = self.before[b, c] + local
        return (self.cum[1:, c] <= rank[None]).sum(axis=0)

    @classmethod
    def stratified_kfold(cls, keys, first_rows, block_counts, block_starts, k):
        """scikit-learn's unshuffled ``StratifiedKFold(k)`` from per-block
        class counts (reproduces its ``_make_test_folds`` exactly).

        Parameters
        ----------
        keys : ndarray of shape (c,)
            Sorted class labels.
        first_rows : ndarray of shape (c,)
            First row of each class (classes are ranked by first appearance).
        block_counts : ndarray of shape (n_blocks, c)
            Rows of each class in each block.
        block_starts : ndarray of shape (n_blocks,)
        k : int

        Notes
        -----
        scikit-learn deals the classes' rows, sorted by class in order of
        first appearance, round robin to the folds (``y_order[i::k]``) to
        get each fold's share of each class, then gives each class's rows,
        in row order, to fold 0 first, then fold 1, ...  The shares come
        here from the counts in O(k c), without the m sorted labels.
        """
        block_counts = np.asarray(block_counts, dtype=np.int64)
        counts = block_counts.sum(axis=0)
        perm = np.argsort(np.argsort(first_rows, kind="stable"), kind="stable")  # key -> appearance rank
        enc_counts = np.zeros_like(counts)
        enc_counts[perm] = counts
        lo = np.concatenate([[0], np.cumsum(enc_counts)[:-1]])
        hi = lo + enc_counts

        def below(n, i):  # how many p in [0, n) have p % k == i
            return np.maximum(0, (n - i + k - 1) // k)

        alloc = np.array([below(hi, i) - below(lo, i) for i in range(k)])  # (k, c) in appearance order
        cum_enc = np.vstack([np.zeros((1, counts.size), dtype=np.int64), np.cumsum(alloc, axis=0)])
        before = np.vstack([np.zeros((1, counts.size), dtype=np.int64), np.cumsum(block_counts, axis=0)[:-1]])
        return cls("stratified", int(k), keys=np.asarray(keys), block_starts=np.asarray(block_starts, dtype=np.int64),
                   before=before, cum=cum_enc[:, perm])

    @classmethod
    def kfold(cls, n_samples, k):
        """Unshuffled ``KFold(k)``: contiguous ranges, the first
        ``n_samples % k`` folds one row longer (scikit-learn's sizes)."""
        m, k = int(n_samples), int(k)
        if not 2 <= k <= m:
            raise ValueError(f"cv={k} folds needs 2 <= k <= {m} (the number of rows)")
        sizes = np.full(k, m // k, dtype=np.int64)
        sizes[: m % k] += 1
        return cls("kfold", k, bounds=np.concatenate([[0], np.cumsum(sizes)]))

    @classmethod
    def group_kfold(cls, keys, counts, k):
        """scikit-learn's unshuffled ``GroupKFold(k)`` from the sorted group
        values and their row counts: largest groups first, each to the
        lightest fold."""
        if k > keys.size:
            raise ValueError(f"cv={k} folds needs at least {k} groups; got {keys.size}")
        order = np.argsort(counts, kind="stable")[::-1]
        load = np.zeros(k)
        fold = np.zeros(keys.size, dtype=np.int64)
        for i in order:
            j = int(np.argmin(load))
            load[j] += counts[i]
            fold[i] = j
        return cls("groups", k, keys=keys, values=fold)

    @classmethod
    def leave_one_group_out(cls, keys):
        """One fold per group (sorted group values ``keys``)."""
        return cls("groups", keys.size, keys=keys, values=np.arange(keys.size))

    @classmethod
    def from_test_sets(cls, tests, n_samples):
        """One label per row from the test sets of (train, test) pairs or
        bare test sets (index arrays or boolean masks).

        Raises
        ------
        ValueError
            If the test sets overlap, or do not cover every row in at least
            2 folds.
        """
        labels = np.full(n_samples, -1, dtype=np.int64)
        n = 0
        for n, test in enumerate(tests, 1):
            test = np.asarray(test)
            test = np.flatnonzero(test) if test.dtype == bool else test.astype(np.int64)
            if np.any(labels[test] >= 0):
                raise ValueError("the test sets of cv overlap: each row must be held out exactly once")
            labels[test] = n - 1
        if n < 2 or np.any(labels < 0):
            raise ValueError("the test sets of cv must cover every row, in at least 2 folds")
        return cls("labels", n, values=labels)


def same_folds_every_time(cv):
    """Whether ``cv`` splits the same rows into the same folds at every call
    (an int, or an unshuffled or seeded KFold / StratifiedKFold: no groups)."""
    if isinstance(cv, Integral):
        return True
    if type(cv) not in (KFold, StratifiedKFold):
        return False
    return not cv.shuffle or isinstance(cv.random_state, Integral)
