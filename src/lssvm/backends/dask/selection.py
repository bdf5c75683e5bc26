"""Exact order statistics of values spread over Dask row blocks, in a few
passes, without holding all of them (:func:`select_kth`).

The conformal bounds need, per test point, the k-th smallest of m values
(one per training row) that are produced block by block
(:mod:`.intervals`).  Holding the t x m matrix is what an out-of-core
model must avoid, so each of the P "problems" (test point x output x
bound) is solved by refining a bracket with exact counts:

1. **sample pass** (light): the values at every s-th training row
   (``s = m // sample_size``), about ``sample_size`` per problem; they only
   place thresholds, so their accuracy does not matter;
2. **counting pass**: per problem up to ``n_thresholds`` thresholds around the
   sample quantile of the target rank (+-5 binomial standard deviations);
   every row's value is compared with them, giving the exact counts
   ``#{value <= T}`` and ``#{value < T}`` (a value equal to a threshold
   with ``#{< T} < k <= #{<= T}`` is the answer: ties are exact).  The
   bracket ``(a, b)``, ``#{<= a} < k <= #{< b}``, then holds a few hundred
   values per problem;
3. **collecting pass**: the values strictly inside the bracket are sent
   back and the ``(k - #{<= a})``-th smallest of them selected; if there are
   fewer, the answer is ``b`` itself.

The brackets are collected together while their values fit ``budget``
(the emptiest first); the others (a sample that missed: probability about
1e-6 per problem; clustered values) get another counting pass in the same
pass as the collection, with thresholds from the sample values inside
their bracket, evenly spaced in value inside it, or in geometric steps
past an infinite edge.  Usually: one light pass and two full passes.

Client memory: O(P (sample_size + n_thresholds)) plus the collected
candidates (at most ``budget`` values); the workers hold one block and
O(P x sub-block) values.  Hand-written: NumPy and Dask have no exact
streaming selection (``dask.array.percentile`` is approximate).
"""

from __future__ import annotations

import dask
import numpy as np

from .passes import run_pass, shared, tree_reduce

__all__ = ["select_kth"]

#: Rows sampled per problem to place the first thresholds.
SAMPLE_SIZE = 2048
#: Thresholds per problem in a counting pass.
N_THRESHOLDS = 255
#: Candidate values collected in one pass, all problems together, at most.
BUDGET = 1 << 22
#: Bracket half-width in binomial standard deviations of the sample rank.
_WIDTH = 5.0


# ------------------------------------------------------------ tasks
def _task_sample(x, y, g, row0, valuer, stride):
    rows = np.arange((-row0) % stride, np.shape(x)[0], stride)
    parts = [V for V, _ in valuer.block_values(x, y, g, row0, rows)] if rows.size else []
    return np.concatenate(parts, axis=1) if parts else np.empty((valuer.n_problems, 0))


def _positions(th, p, v, strict):
    """Per value ``v[i]`` of problem ``p[i]``: how many thresholds ``th[p[i]]``
    (sorted) are ``< v[i]`` (``strict``) or ``<= v[i]``; vectorised binary search."""
    G = th.shape[1]
    lo = np.zeros(v.size, dtype=np.intp)
    hi = np.full(v.size, G, dtype=np.intp)
    while True:
        act = lo < hi
        if not act.any():
            return lo
        mid = np.minimum((lo + hi) // 2, G - 1)
        t = th[p, mid]
        go = act & ((t < v) if strict else (t <= v))
        lo = np.where(go, mid + 1, lo)
        hi = np.where(act & ~go, mid, hi)


def _task_pass(x, y, g, row0, valuer, count_idx, th, collect_idx, a, b):
    Pc, G = th.shape
    P = valuer.n_problems
    hist_lt = np.zeros(Pc * (G + 1), dtype=np.int64)  # histograms of #{T < v} and #{T <= v}
    hist_le = np.zeros(Pc * (G + 1), dtype=np.int64)
    below = np.zeros(Pc, dtype=np.int64)
    cand_p, cand_v, tiny = [], [], 0
    for V, n_tiny in valuer.block_values(x, y, g, row0):
        tiny += n_tiny
        if Pc and V.shape[1]:
            Vc = V if Pc == P else V[count_idx]
            below += (Vc < th[:, :1]).sum(axis=1)
            p, j = np.nonzero((Vc >= th[:, :1]) & (Vc <= th[:, -1:]))
            v = Vc[p, j]
            lt = _positions(th, p, v, strict=True)
            # #{T <= v} differs only where v equals a threshold (rare): search those again
            eq = np.flatnonzero(th[p, np.minimum(lt, G - 1)] == v)
            le = lt.copy()
            le[eq] = _positions(th, p[eq], v[eq], strict=False)
            hist_lt += np.bincount(p * (G + 1) + lt, minlength=Pc * (G + 1))
            hist_le += np.bincount(p * (G + 1) + le, minlength=Pc * (G + 1))
        if collect_idx.size and V.shape[1]:
            Vk = V if collect_idx.size == P else V[collect_idx]
            # a = -inf stands for "below every value" (-inf values included)
            p, j = np.nonzero(((Vk > a[:, None]) | np.isneginf(a)[:, None]) & (Vk < b[:, None]))
            cand_p.append(p)
            cand_v.append(Vk[p, j])
    # v <= T_g  <=>  g >= #{T < v};   v < T_g  <=>  g >= #{T <= v}
    le = np.cumsum(hist_lt.reshape(Pc, G + 1)[:, :G], axis=1) + below[:, None]
    lt = np.cumsum(hist_le.reshape(Pc, G + 1)[:, :G], axis=1) + below[:, None]
    return {"le": le, "lt": lt, "p": _cat(cand_p, np.intp), "v": _cat(cand_v, float), "tiny": tiny}


def _merge_pass(*parts):
    out = dict(parts[0])
    for q in parts[1:]:
        out["le"] = out["le"] + q["le"]
        out["lt"] = out["lt"] + q["lt"]
        out["p"] = np.concatenate([out["p"], q["p"]])
        out["v"] = np.concatenate([out["v"], q["v"]])
        out["tiny"] = out["tiny"] + q["tiny"]
    return out


def _cat(parts, dtype):
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


# ------------------------------------------------------------ client side
def _thresholds(sample, a, b, ca, cb, k, G):
    """Up to G sorted thresholds strictly inside ``(a, b)`` for one problem,
    padded to G by repeating the last; None if there is nothing to split."""
    inside = sample[(sample > a) & (sample < b)]
    if inside.size:
        n = inside.size
        q = min(max((k - ca) / max(cb - ca, 1), 0.0), 1.0)
        c, sd = q * n, np.sqrt(n * q * (1.0 - q)) + 1.0
        lo, hi = int(max(np.floor(c - _WIDTH * sd - 1), 0)), int(min(np.ceil(c + _WIDTH * sd + 1), n - 1))
        t = np.unique(inside[np.unique(np.linspace(lo, hi, G).round().astype(np.intp))])
    elif np.isfinite(a) and np.isfinite(b):  # no sample value inside: split the bracket evenly in value
        t = np.linspace(a, b, G + 2)[1:-1]
    elif np.isfinite(a) or np.isfinite(b):  # one infinite edge: geometric steps away from the finite one
        edge = a if np.isfinite(a) else b
        steps = (abs(edge) + 1.0) * 2.0 ** np.arange(G, dtype=float)
        t = edge + steps if np.isfinite(a) else edge - steps
    else:
        return None
    t = np.unique(t[(t > a) & (t < b) & np.isfinite(t)])
    if t.size == 0:
        return None
    return np.concatenate([t, np.full(G - t.size, t[-1])])


def select_kth(data, valuer, k, label, *, sample_size=None, n_thresholds=None, budget=None, max_passes=20):
    """The ``k[p]``-th smallest (1-based) of problem p's m values, exactly.

    Parameters
    ----------
    data : RowData
        The training rows (m of them).
    valuer : object
        ``n_problems`` (P) and ``block_values(x, y, g, row0, rows=None)``,
        yielding ``(values (P, b'), n_tiny)`` over a block's rows (or its
        local ``rows``) in sub-blocks: the same numbers in every pass.
    k : array-like of int, shape (P,)
        Ranks; below 1 gives -inf and above m gives +inf (the conformal
        conventions).
    label : str
        Names the passes (progress bars).
    sample_size, n_thresholds, budget : int, optional
        Default :data:`SAMPLE_SIZE`, :data:`N_THRESHOLDS`, :data:`BUDGET`
        (read at the call).
    max_passes : int, default=20
        Counting passes at most; the last collects whatever its brackets hold.

    Returns
    -------
    values : ndarray of shape (P,)
    passes : int
        Passes over the data, the sample pass included.
    tiny : int
        Rows flagged by the valuer in the first full pass (e.g. leverage ~ 1).

    Notes
    -----
    See the module docstring: a light sample pass, then usually one
    counting and one collecting pass, each costing the valuer's work on
    every row plus O(P b log G) per block of b rows for the counts (only
    values inside the thresholds' range are located by binary search).
    """
    sample_size = SAMPLE_SIZE if sample_size is None else sample_size
    n_thresholds = N_THRESHOLDS if n_thresholds is None else n_thresholds
    budget = BUDGET if budget is None else budget
    m = data.n_samples
    P = valuer.n_problems
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (P,)).copy()
    out = np.full(P, np.nan)
    out[k < 1], out[k > m] = -np.inf, np.inf
    todo = (k >= 1) & (k <= m)
    if not todo.any():
        return out, 0, 0
    vs = shared(valuer)
    stride = max(1, m // sample_size)
    parts = [dask.delayed(_task_sample, pure=True)(x, y, g, r0, vs, stride) for x, y, g, r0 in data.blocks()]
    sample = np.sort(np.concatenate(run_pass(f"{label}: sampling rows", parts), axis=1), axis=1)
    a, b = np.full(P, -np.inf), np.full(P, np.inf)
    ca, cb = np.zeros(P, dtype=np.int64), np.full(P, m, dtype=np.int64)
    passes, tiny = 1, None
    for it in range(max_passes):
        idx = np.flatnonzero(todo)
        # collect the fullest brackets that fit the budget together (the emptiest first)
        n_in = cb[idx] - ca[idx]
        order = np.argsort(n_in, kind="stable")
        fits = np.cumsum(n_in[order]) <= budget
        if it == 0:  # nothing counted yet: collect whole problems only when every one fits
            fits &= n_in[order] <= budget // idx.size
        collect = idx if it == max_passes - 1 else np.sort(idx[order[fits]])
        count, th = [], []
        for p in np.setdiff1d(idx, collect):
            t = _thresholds(sample[p], a[p], b[p], ca[p], cb[p], k[p], n_thresholds)
            if t is None:
                collect = np.append(collect, p)
            else:
                count.append(p)
                th.append(t)
        count = np.asarray(count, dtype=np.intp)
        collect = np.sort(collect)
        th = np.asarray(th).reshape(count.size, n_thresholds)
        c = [shared(z) for z in (count, th, collect, a[collect], b[collect])]
        parts = [dask.delayed(_task_pass, pure=True)(x, y, g, r0, vs, *c) for x, y, g, r0 in data.blocks()]
        what = "counting" if count.size else "collecting"
        res = run_pass(f"{label}: {what} pass {it + 1}", tree_reduce(parts, _merge_pass))
        passes += 1
        tiny = res["tiny"] if tiny is None else tiny
        if collect.size:  # the (k - #{<= a})-th smallest inside (a, b), else b itself
            order = np.lexsort((res["v"], res["p"]))
            pp, vv = res["p"][order], res["v"][order]
            n_in = np.bincount(pp, minlength=collect.size)
            start = np.concatenate([[0], np.cumsum(n_in)[:-1]])
            j = k[collect] - ca[collect]
            inside = j <= n_in
            out[collect] = np.where(inside, vv[np.minimum(start + j - 1, max(vv.size - 1, 0))] if vv.size else 0.0,
                                    b[collect])
            todo[collect] = False
        if count.size:
            le, lt, kc = res["le"], res["lt"], k[count][:, None]
            n_a = (le < kc).sum(axis=1)  # thresholds T with #{<= T} < k: a prefix
            has_a = n_a > 0
            ia = np.maximum(n_a - 1, 0)
            ta = th[np.arange(count.size), ia]
            up = has_a & (ta > a[count])
            a[count] = np.where(up, ta, a[count])
            ca[count] = np.where(up, le[np.arange(count.size), ia], ca[count])
            n_b = (lt >= kc).sum(axis=1)  # thresholds T with #{< T} >= k: a suffix
            ib = np.minimum(n_thresholds - n_b, n_thresholds - 1)
            tb = th[np.arange(count.size), ib]
            down = (n_b > 0) & (tb < b[count])
            b[count] = np.where(down, tb, b[count])
            cb[count] = np.where(down, lt[np.arange(count.size), ib], cb[count])
            ih = np.minimum(n_a, n_thresholds - 1)  # the first T with #{<= T} >= k ...
            hit = (n_a < n_thresholds) & (lt[np.arange(count.size), ih] < kc[:, 0])  # ... and #{< T} < k
            out[count[hit]] = th[np.arange(count.size), ih][hit]
            todo[count[hit]] = False
        if not todo.any():
            break
    return out, passes, int(tiny or 0)
