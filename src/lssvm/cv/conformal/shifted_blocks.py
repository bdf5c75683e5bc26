"""The CV+ order statistics from sorted per-fold scores, without the (t x m)
matrix of candidate values.

CV+ (Barber, Candes, Ramdas & Tibshirani 2021) takes, at each new point x,
the k-th smallest of ``mu_k(i)(x) -+ R_i`` over the m training rows, where
``k(i)`` is row i's fold.  Done directly that is a (t x m) gather and
selection per bound.  But the values come in K blocks, one per fold, each a
single shift ``mu_j(x)`` of the fold's scores ``S_j``: with every fold's
scores sorted once, each block is sorted too (rounding ``fl(mu + s)`` is
monotone in ``s``), and the k-th smallest needs only a narrow window of each
block.

**Certificate.**  For any ``L <= U``, cut each block into the values
certainly ``< L``, a window, and the values certainly ``> U`` (binary search
on the sorted scores with thresholds widened by ``8 eps (|L| + |U| + max_j |mu_j|)``,
many times the rounding of ``fl(mu + s)`` and of the thresholds).  Let ``q``
be the ``(k - #below)``-th smallest of the window values, computed exactly
as the brute force computes them.  If ``L <= q <= U``, every value cut below
is smaller than ``q`` and every value cut above is larger, so ``q`` is the
k-th smallest of all m values, bit for bit.  The choice of ``L`` and ``U``
only decides how often this holds and how wide the windows are.

**Guess.**  ``q0 = P[k] + sum_j n_j mu_j / m`` (P the pooled sorted scores,
n_j the fold sizes), then two steps on the number of values below it, the
first with the pooled scores' local spacing as slope, the second with each
row's secant through its two guesses (counts read from a table,
:class:`CountGrid`).  First try: in each block, 8 positions
around the guess's position, certified by their neighbours instead of
thresholds (:meth:`ShiftedBlocks.select_at`: no slack to reason about, about
half the NumPy calls).  Rows it does not certify take windows of about 8
values' spacing either side of the guess (cut by the certificate above, from
the table or by binary search), then 8x wider windows, then the full
selection.

Cost: O(t K log m) plus a sort of about t x 16 values when the folds'
models agree closely (as CV+ fold models do); O(t m) at worst.  The result
is the same floating-point number as :func:`lssvm.cv.conformal.kth_smallest`
on the full matrix (``fl(mu - R) = fl(mu + (-R))`` exactly).  Hand-written:
NumPy selects along an axis, not across shifted sorted blocks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CountGrid", "SortedFoldScores", "ShiftedBlocks", "kth_of_shifted_blocks"]

_EPS = np.finfo(float).eps
_TINY = np.finfo(float).smallest_subnormal

#: use the windows when the folds are this many rows on average, at least
_MIN_FOLD_ROWS = 8
#: fall back to the full selection when the windows hold more than this share of the m values
_MAX_WINDOW_SHARE = 0.25
#: Newton steps on the count (the second a secant step), the half-width of the first window (in values'
#: spacing), and window tries (at m = 20,000 one step left 36 % of the rows to the wider windows)
_NEWTON_STEPS = 2
_WINDOW_VALUES = 8
_TRIES = 3
#: +inf values after each block in ShiftedBlocks.padded (windows up to this wide read no mask), and the
#: window of ShiftedBlocks.select_at (positions per block)
_PAD = 16
_AT = 8
#: most candidate values a window selection or a full selection holds at a time (rows taken in passes)
_SELECT_FLOATS = 1 << 22


class ShiftedBlocks:
    """K sorted blocks of scores and their pooled order, for counting and
    selecting among ``mu_j + S_j`` (module docstring).

    Parameters
    ----------
    S : ndarray of shape (m,)
        The K blocks, each sorted ascending.
    offsets : ndarray of shape (K + 1,)
        Block boundaries, ``offsets[0] = 0``, ``offsets[-1] = m``; no block
        empty.

    Notes
    -----
    O(m log m) once (the pooled sort).
    """

    def __init__(self, S, offsets):
        self.S = np.asarray(S, dtype=float)
        self.offsets = np.asarray(offsets, dtype=np.intp)
        self.starts = self.offsets[:-1]
        self.sizes = self.offsets[1:] - self.offsets[:-1]
        # (array methods and ufuncs, not np.sort / np.repeat / np.full: their Python wrappers are a good part
        # of a cold call's cost at these sizes)
        self.pooled = self.S.copy()
        self.pooled.sort()
        self.finite = bool(np.logical_and.reduce(np.isfinite(self.S)))
        self.block_of = np.arange(self.sizes.size).repeat(self.sizes)
        # the blocks each between one -inf and _PAD values +inf: a window of up to _PAD positions read from
        # here holds its block's values from lo on and nothing of the next block (see select, select_at)
        self.pad_starts = self.starts + (_PAD + 1) * np.arange(self.sizes.size) + 1
        self.padded = np.empty(self.S.size + (_PAD + 1) * self.sizes.size)
        self.padded.fill(np.inf)
        self.padded[self.pad_starts - 1] = -np.inf
        self.padded[(self.pad_starts - self.starts).repeat(self.sizes) + np.arange(self.S.size)] = self.S

    def count_below(self, x):
        """How many values of each block are ``< x`` (..., K), for thresholds
        ``x`` (..., K) on the scores: one binary search per block (in the
        block: timed 1.6x faster than one search over all m keys)."""
        out = np.empty(x.shape, dtype=np.intp)
        for j in range(self.sizes.size):
            out[..., j] = np.searchsorted(self.S[self.offsets[j] : self.offsets[j + 1]], x[..., j], side="left")
        return out

    def windows(self, mu, L, U):
        """Per block, the positions ``[lo, hi)`` whose shifted values may lie
        in ``[L, U]``: every value before ``lo`` is certainly ``< L``, every
        value from ``hi`` on certainly ``> U``."""
        both = self.count_below(np.stack(_thresholds(mu, L, U)))
        return both[0], both[1]

    def select(self, mu, k, L, U, cuts=None):
        """The k-th smallest where the windows of ``[L, U]`` certify it (t,),
        and which rows they certify (module docstring); ``(None, None)``
        when the windows are too wide to be worth it.  ``cuts``: a
        :class:`CountGrid` that finds the windows (else binary searches)."""
        t, K = mu.shape
        lo, hi = self.windows(mu, L, U) if cuts is None else cuts.windows(mu, L, U)
        width = hi - lo
        w = int(width.max(initial=0))
        if K * w > _MAX_WINDOW_SHARE * self.S.size:
            return None, None
        rank = k - lo.sum(axis=1)  # 1-based rank of the answer among the window values
        ok = (rank >= 1) & (rank <= width.sum(axis=1))
        out = np.full(t, np.nan)
        if w == 0 or not ok.any():
            return out, np.zeros(t, dtype=bool)
        pos = np.arange(w)
        q = np.empty(t)
        step = max(1, _SELECT_FLOATS // (K * w))  # rows per pass: the window values of a pass stay bounded
        for start in range(0, t, step):
            rows = slice(start, start + step)
            if w <= _PAD:
                # positions lo .. lo + w of each block, past hi too: those values are certainly > U (or +inf
                # padding), so they cannot be the rank-th smallest of a window whose rank-th value is <= U, and
                # a rank-th value above U is refused by the certificate below either way
                vals = mu[rows, :, None] + self.padded[(self.pad_starts + lo[rows])[:, :, None] + pos]
            else:
                vals = mu[rows, :, None] + self.S[np.minimum((self.starts + lo[rows])[:, :, None] + pos,
                                                             self.S.size - 1)]
                vals[pos >= width[rows, :, None]] = np.inf
            vals = vals.reshape(-1, K * w)
            vals.sort(axis=1)
            q[rows] = vals[np.arange(vals.shape[0]), np.clip(rank[rows], 1, K * w) - 1]
        ok &= (q >= L) & (q <= U)
        out[ok] = q[ok]
        return out, ok

    def select_at(self, mu, k, near):
        """The k-th smallest from windows of ``_AT`` positions per block
        around ``near`` (t, K), a guess of the answer's position in each
        block, and which rows it certifies; (t,), (t,).

        No thresholds: the windows' neighbours decide.  Every value cut
        below a window is ``<=`` its block's value just before the window,
        every value cut above ``>=`` the one just after (blocks sorted,
        ``fl(mu + s)`` monotone in ``s``).  With ``q`` the ``(k - #below)``-th
        smallest window value, ``max(before) <= q <= min(after)`` gives
        ``#(values < q) < k <= #(values <= q)``: ``q`` is the k-th smallest,
        bit for bit.  (A window running past its block reads +inf padding;
        a ``q`` of +inf would need nothing cut above, so it cannot pass.)"""
        t, K = mu.shape
        # (NumPy's ufuncs and methods here, not np.clip / np.take: their Python wrappers cost more than the
        # work at these sizes, the more so on a cold call)
        pos = np.minimum(np.maximum(near - _AT // 2, 0), self.sizes - 1)
        base = self.pad_starts + pos
        # the _AT values from each base: rows of a sliding-window view of the padded scores (a strided
        # ndarray over the same buffer), gathered whole (half the time of an element-wise fancy index),
        # then shifted in place
        pad = self.padded
        windows = np.ndarray((pad.size - _AT + 1, _AT), dtype=pad.dtype, buffer=pad, strides=(pad.itemsize,) * 2)
        vals = windows.take(base, axis=0)
        vals += mu[:, :, None]
        vals = vals.reshape(t, K * _AT)
        vals.sort(axis=1)
        rank = k - np.add.reduce(pos, axis=1)
        ok = (rank >= 1) & (rank <= K * _AT)
        q = vals[np.arange(t), np.minimum(np.maximum(rank, 1), K * _AT) - 1]
        ok &= np.maximum.reduce(mu + pad[base - 1], axis=1) <= q
        ok &= q <= np.minimum.reduce(mu + pad[base + _AT], axis=1)
        return q, ok

    def full_kth(self, mu, k):
        """The k-th smallest by a full selection over the t x m values: the
        reference the windows reproduce."""
        return _full_selection(mu, self.S, self.sizes, k)


def kth_of_shifted_blocks(mu, blocks, k):
    """The k-th smallest (1-based) of ``{fl(mu[i, j] + s) : s in block j}``
    for every row i.

    Parameters
    ----------
    mu : ndarray of shape (t, K)
        Shift of each block, per row.
    blocks : ShiftedBlocks
    k : int
        -inf for k < 1, +inf for k > m.

    Returns
    -------
    ndarray of shape (t,)
        Exactly the value a full sort of the t x m values would give.

    Notes
    -----
    O(t K log m) plus the window sort when the shifts agree closely, O(t m)
    at worst (module docstring).
    """
    t, K = mu.shape
    m = blocks.S.size
    if t == 0:
        return np.empty(0)
    if k < 1:
        return np.full(t, -np.inf)
    if k > m:
        return np.full(t, np.inf)
    if m < _MIN_FOLD_ROWS * K or not blocks.finite or not np.logical_and.reduce(np.isfinite(mu), axis=None):
        return blocks.full_kth(mu, k)
    P = blocks.pooled
    g = max(2, int(np.sqrt(m)) // 2)
    a, b = max(k - 1 - g, 0), min(k - 1 + g, m - 1)
    spacing = (P[b] - P[a]) / (b - a)  # of the pooled scores around rank k; 0 where they tie
    q = P[k - 1] + mu @ (blocks.sizes / m)
    grid = None
    if spacing > 0:
        grid = _count_grid(blocks, q[:, None] - mu, spacing)
        count = blocks.count_below if grid is None else grid.count_about
        # values per unit of count: first the pooled scores' spacing, then each row's secant through its last
        # two guesses (where the folds' shifts spread the blocks apart, the count rises more slowly than the
        # pooled scores do, and steps of the pooled spacing fall short)
        step, last = spacing, None
        for _ in range(_NEWTON_STEPS):
            below = np.add.reduce(count(q[:, None] - mu), axis=1)
            if last is not None:
                moved = below != last[1]  # the count is monotone in q: a move is the same sign as q's
                step = np.where(moved, (q - last[0]) / np.where(moved, below - last[1], 1), step)
            last = q, below
            q = q - (below - k + 0.5) * step
    out = np.empty(t)
    todo = np.arange(t)
    if grid is not None:  # first, windows around each block's guessed position, certified by their neighbours
        got, ok = blocks.select_at(mu, k, grid.count_about(q[:, None] - mu))
        if np.logical_and.reduce(ok):
            return got
        out[ok] = got[ok]
        todo = np.flatnonzero(~ok)
    half = np.full(t, _WINDOW_VALUES * spacing) if spacing > 0 else 64 * _EPS * np.abs(q) + 4 * _TINY
    for attempt in range(_TRIES):
        L, U = q[todo] - half[todo], q[todo] + half[todo]
        if not (np.isfinite(L).all() and np.isfinite(U).all()):
            break
        got, ok = _select_rows(blocks, mu[todo], k, L, U, grid if attempt == 0 else None)
        if got is None:
            break
        out[todo[ok]] = got[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return out
        half[todo] *= 8  # wider windows, by binary search (off the table's range)
    out[todo] = blocks.full_kth(mu[todo], k)
    return out


def _select_rows(blocks, mu, k, L, U, grid):
    """:meth:`ShiftedBlocks.select`, its windows read from ``grid`` for the
    rows whose thresholds it covers and found by binary search for the rest;
    ``(None, None)`` when the windows are too wide for all rows."""
    inside = np.zeros(L.size, dtype=bool) if grid is None else grid.covers(mu, L, U)
    if inside.all() or not inside.any():
        return blocks.select(mu, k, L, U, cuts=grid if inside.all() else None)
    out, ok, any_done = np.full(L.size, np.nan), np.zeros(L.size, dtype=bool), False
    for rows, cuts in ((inside, grid), (~inside, None)):
        got, good = blocks.select(mu[rows], k, L[rows], U[rows], cuts=cuts)
        if got is not None:
            out[rows], ok[rows], any_done = got, good, True
    return (out, ok) if any_done else (None, None)


#: the count table's cell, in the pooled scores' spacing, its margin around the guesses' thresholds (in
#: spacings), and its largest size (cells per score, and cells in all: memory K x cells) before binary
#: searches are the better deal
_GRID_CELL = 1.0
_GRID_MARGIN = 4 * _WINDOW_VALUES
_GRID_MAX_CELLS = 4
_GRID_MAX_TOTAL = 1 << 16


def _count_grid(blocks, x, spacing):
    """A :class:`CountGrid` over the thresholds ``x`` (t, K) of the first
    guess with a margin for the guess's steps and the first window, or None
    where it would need more than ``_GRID_MAX_CELLS`` cells per score or
    ``_GRID_MAX_TOTAL`` in all."""
    cell = _GRID_CELL * spacing
    lo = float(np.minimum.reduce(x, axis=None)) - _GRID_MARGIN * spacing
    span = float(np.maximum.reduce(x, axis=None)) + _GRID_MARGIN * spacing - lo
    if not (np.isfinite(span) and span / cell <= min(_GRID_MAX_CELLS * blocks.S.size, _GRID_MAX_TOTAL)):
        return None
    return CountGrid(blocks, lo, cell, int(np.ceil(span / cell)))


def _thresholds(mu, L, U):
    """Score thresholds (t, K) below which a block's shifted values are
    certainly ``< L``, and above which certainly ``> U``: ``L - mu`` and ``U -
    mu`` widened by ``8 eps (|L| + |U| + max_j |mu_j|)``, many times the
    rounding of ``fl(mu + s)`` and of the thresholds themselves."""
    # one slack per row, from the row's largest |mu|: at least each entry's own
    slack = (8 * _EPS * (np.abs(L) + np.abs(U) + np.abs(mu).max(axis=1)) + 4 * _TINY)[:, None]
    return (L[:, None] - mu) - slack, (U[:, None] - mu) + slack


class CountGrid:
    """How many scores of each block lie below grid points: the counts that
    :class:`ShiftedBlocks` finds by binary search, read from a table.

    The grid ``b_g = lo + g * cell`` (g = 0..G) covers the score thresholds
    a selection will ask about (they lie in a narrow range when the folds'
    models agree, as CV+'s do); ``counts[j, g + 1] = #{s in S_j : s < b_g}``,
    with ``counts[j, 0] = 0`` (below the grid) and ``counts[j, G + 2] =
    n_j`` (above it).  A threshold's cell is found by arithmetic and then
    checked against the stored ``b_g`` (so rounding in the arithmetic can
    only widen a window, never cut a value wrongly): a lower cut counts the
    scores below the last grid point ``<= x``, an upper cut those below the
    first grid point ``> x``; a window is at most one cell wider each side
    than the binary searches' window.

    Parameters
    ----------
    blocks : ShiftedBlocks
    lo, cell : float
        First grid point and spacing (> 0).
    G : int
        Number of cells.

    Notes
    -----
    O(m log G) to build (one binary search of every score among the grid
    points); then O(1) per count, vectorised over the (t, K) thresholds
    instead of one ``searchsorted`` call per block.  Hand-written: NumPy has
    no batched search over K arrays.
    """

    def __init__(self, blocks, lo, cell, G):
        self.b_pad = np.empty(G + 3)
        self.b_pad[0], self.b_pad[-1] = -np.inf, np.inf
        self.b = self.b_pad[1:-1]
        np.multiply(np.arange(G + 1), cell, out=self.b)
        self.b += lo
        self.lo, self.cell, self.G = lo, cell, G
        K = blocks.sizes.size
        pos = self.b.searchsorted(blocks.S, side="right")  # grid points <= s: s < b_g iff g >= pos
        table = np.zeros((K, G + 3), dtype=np.intp)
        table[:, 1:] = np.bincount(blocks.block_of * (G + 2) + pos, minlength=K * (G + 2)).reshape(K, G + 2).cumsum(1)
        self.flat = table.ravel()
        self.row = (np.arange(K) * (G + 3))[None, :]

    def _cell(self, x):
        """floor((x - lo) / cell), clipped to [-1, G + 1] (finite x)."""
        return np.minimum(np.maximum(np.floor((x - self.lo) / self.cell), -1), self.G + 1).astype(np.intp)

    def covers(self, mu, L, U):
        """Rows (t,) whose window thresholds for ``[L, U]`` lie inside the
        grid with a cell to spare (elsewhere its cuts would take a whole
        block: such rows are better searched)."""
        return (L - mu.max(axis=1) >= self.b[0] + self.cell) & (U - mu.min(axis=1) <= self.b[-1] - self.cell)

    def count_about(self, x):
        """Counts of scores ``< x`` per block (t, K), up to one cell inside
        the grid (and those below its ends outside it): for a guess, not
        for a cut."""
        return self.flat[self.row + np.minimum(self._cell(x), self.G) + 1]

    def windows(self, mu, L, U):
        """:meth:`ShiftedBlocks.windows` from the table (the positions
        ``[lo, hi)`` per block), possibly a cell wider each side."""
        x = np.stack(_thresholds(mu, L, U))  # (2, t, K): lower and upper cuts together
        # j - 1 = the last grid point <= x (-1 below the grid), found by arithmetic and checked against the
        # stored points, padded with -inf and +inf so that both checks stay in range
        j = np.clip(np.floor((x - self.lo) / self.cell), -1, self.G) + 1
        j = j.astype(np.intp)
        while True:
            down = self.b_pad[j] > x
            up = self.b_pad[j + 1] <= x
            if not (down.any() or up.any()):
                break
            j -= down
            j += up
        # lower cut: the scores below that point; upper cut: those below the next one (the first > x)
        return self.flat[self.row + j[0]], self.flat[self.row + j[1] + 1]


class SortedFoldScores:
    """Each fold's out-of-fold scores, sorted once per call, for the CV+
    bounds at any number of new points.

    Parameters
    ----------
    scores : ndarray of shape (m, v)
        ``|R_i|``, the out-of-fold absolute residuals.
    folds : list of ndarray
        Test rows of each fold (a partition of the m rows, none empty).

    Notes
    -----
    O(m log m) once.  Non-finite scores make :meth:`bounds` use the full
    selection.  Both bounds read the same sorted blocks: the ``k``-th
    smallest of ``mu - R`` is minus the ``(m + 1 - k)``-th smallest of ``-mu
    + R`` (rounding to nearest is symmetric, ``fl(-a) = -fl(a)``), and for
    CV+ ``m + 1 - k_lo = k_hi``, so the two bounds are one selection over
    2t rows.
    """

    def __init__(self, scores, folds):
        m, v = scores.shape
        sizes = np.array([f.size for f in folds], dtype=np.intp)
        offsets = np.zeros(sizes.size + 1, dtype=np.intp)
        sizes.cumsum(out=offsets[1:])
        by_fold = scores[np.concatenate(folds)]  # (m, v), fold blocks (a copy: sorted in place below)
        if np.logical_and.reduce(sizes == sizes[0]):  # equal folds: one sort of a (K, h, v) stack
            up = by_fold.reshape(sizes.size, sizes[0], v)
            up.sort(axis=1)
            up = up.reshape(m, v)
        else:
            up = np.empty_like(by_fold)
            for j in range(len(folds)):
                blk = slice(offsets[j], offsets[j + 1])
                up[blk] = np.sort(by_fold[blk], axis=0)
        self.n_rows = m
        self.blocks = [ShiftedBlocks(up[:, c], offsets) for c in range(v)]  # R_i ascending per fold

    def bounds(self, values, ranks):
        """CV+ bounds from the folds' models at new points.

        Parameters
        ----------
        values : ndarray of shape (t, K, v)
            ``mu_k(x)``, fold k's model at each new point.
        ranks : (int, int)
            ``(k_lo, k_hi)`` of :func:`lssvm.cv.conformal.conformal_ranks`.

        Returns
        -------
        ndarray of shape (t, 2, v)
            The ``k_lo``-th smallest of ``mu_k(i)(x) - R_i`` and the
            ``k_hi``-th smallest of ``mu_k(i)(x) + R_i``.
        """
        k_lo, k_hi = ranks
        k_mirror = self.n_rows + 1 - k_lo  # the lower bound as the k_mirror-th smallest of -mu + R, negated
        t, K, v = values.shape
        out = np.empty((t, 2, v))
        for c in range(v):
            mu = values[:, :, c]
            blocks = self.blocks[c]
            if not (blocks.finite and np.isfinite(mu).all()):  # NaN sorts last either sign: no mirror
                out[:, 0, c] = _full_selection(mu, -blocks.S, blocks.sizes, k_lo)
                out[:, 1, c] = _full_selection(mu, blocks.S, blocks.sizes, k_hi)
            elif k_mirror == k_hi:  # one selection over both bounds' rows
                both = kth_of_shifted_blocks(np.concatenate([-mu, mu]), blocks, k_hi)
                out[:, 0, c], out[:, 1, c] = -both[:t], both[t:]
            else:
                out[:, 0, c] = -kth_of_shifted_blocks(-mu, blocks, k_mirror)
                out[:, 1, c] = kth_of_shifted_blocks(mu, blocks, k_hi)
        return out


def _full_selection(mu, S, sizes, k):
    """The k-th smallest of ``mu[:, j] + S_j`` by a full selection (``S``
    need not be sorted): -inf for k < 1, +inf past the end."""
    if k < 1:
        return np.full(mu.shape[0], -np.inf)
    if k > S.size:
        return np.full(mu.shape[0], np.inf)
    out = np.empty(mu.shape[0])
    step = max(1, _SELECT_FLOATS // S.size)  # rows per pass: (step, m) values at a time
    for start in range(0, mu.shape[0], step):
        vals = np.repeat(mu[start:start + step], sizes, axis=1)
        vals += S
        out[start:start + step] = np.partition(vals, k - 1, axis=1)[:, k - 1]
    return out
