"""The uncertainty figure of the ``lssvm select`` report.

Regression: the coverage and mean width of conformal intervals at nominal
coverage 0.5 ... 0.99, measured on the training rows themselves from their
out-of-sample (LOO or k-fold) residuals.  Classification: a reliability
diagram of the calibrated probabilities (``--calibration``) of the
out-of-sample decision values, with a histogram of those probabilities.

Both are honest about the model because every residual and decision value
comes from a model that did not train on its row; the figure's numbers are
also written to ``uncertainty.csv`` beside the PNG.  Beside the jackknife
rule, the regression figure shows jackknife+ and full conformal intervals of
a sample of the training rows, each built from the other rows
(:func:`lssvm.cv.conformal.training_row_intervals`; numbers in
``interval_methods.csv``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..cv.conformal import conformal_ranks, training_row_intervals

__all__ = ["METHOD_ROWS", "NOMINAL_LEVELS", "UNCERTAINTY_CAPTIONS", "interval_calibration", "interval_methods",
           "reliability_table", "uncertainty_figure"]

#: nominal coverage levels of the regression figure
NOMINAL_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99)

#: training rows (drawn at random, seed 0) given jackknife+ and full conformal intervals in the report
METHOD_ROWS = 300

UNCERTAINTY_CAPTIONS = {
    "intervals.png": (
        "Prediction intervals checked on the training rows. Each row is predicted by the model trained without "
        "it (LOO, or the search's folds) and given the interval: that prediction ± q, with q the conformal "
        "quantile of the other rows' absolute out-of-sample residuals (the jackknife rule; 'lssvm predict "
        "--interval' gives jackknife+ intervals, close to these). Top: the share of rows inside their "
        "interval against the nominal coverage. Over all rows (black) it sits on the dashed diagonal by "
        "construction; read the thirds of the rows by predicted value: a line below the diagonal means "
        "intervals too narrow for those rows (their errors are larger: the noise varies with the target), "
        "above it too wide. The intervals have one width everywhere, so such gaps are theirs to show, not to "
        "fix. Bottom: the price of coverage in target units; a steep rise at the top means a few rows with "
        "large errors. Beside it, jackknife+ ('lssvm predict --interval') and full conformal intervals of up to "
        "300 training rows drawn at random, each built from the other rows exactly (no refit): full conformal is "
        "usually the narrower at the same coverage; a line left of another means narrower intervals for the "
        "same share of rows covered. Numbers: uncertainty.csv and interval_methods.csv."
    ),
    "reliability.png": (
        "Reliability of the class probabilities ('lssvm predict --proba'): the calibration map applied to the "
        "decision values of models that did not see each row (LOO, or the search's folds), in ten equal-width "
        "bins. Top: the observed share of positives (two classes: of the second class; more classes: of "
        "correct top-class predictions) against the mean predicted probability per bin, marker area growing "
        "with the bin's rows; points on the dashed diagonal mean calibrated probabilities, a point below it "
        "probabilities too high in its bin, above it too low. The map was fitted on these same values, so check held-out rows too (the "
        "log-loss of 'lssvm predict --proba' on a test table). Bottom: how many rows get each probability; "
        "mass near 0 and 1 means confident predictions. Numbers: uncertainty.csv."
    ),
}


def interval_calibration(residuals, predictions=None, levels=NOMINAL_LEVELS):
    """Coverage and mean width of leave-one-row-out jackknife intervals,
    overall and per third of the predictions.

    Parameters
    ----------
    residuals : ndarray of shape (m,)
        Out-of-sample residuals ``y_i - f_{-i}(x_i)`` (LOO, or k-fold).
    predictions : ndarray of shape (m,), optional
        The out-of-sample predictions ``f_{-i}(x_i)``: rows are also
        grouped into thirds by them (groups "low", "middle", "high").
    levels : sequence of float in (0, 1)

    Returns
    -------
    DataFrame
        One row per group and level with ``m - 1`` rows enough for a
        finite bound: ``group``, ``nominal``, ``coverage`` (share of the
        group's rows with ``|r_i| <= q_{-i}``), ``width`` (their mean ``2
        q_{-i}``) and ``rows``, where ``q_{-i}`` is the ``ceil(nominal
        m)``-th smallest of the other ``m - 1`` values ``|r_j|`` (the
        jackknife rank of :func:`lssvm.cv.conformal.conformal_ranks` for
        ``m - 1`` calibration rows).  Rows with a non-finite residual are
        left out.

    Notes
    -----
    Row i's interval is built without row i, so every row is scored as a
    new point would be.  Over all rows the coverage is ``ceil(nominal
    m) / m`` (plus ties) by construction: the rows are exchangeable.  The
    thirds are the informative part: a constant-width interval covers
    less where the errors are larger (heteroscedastic noise).  O(m log m)
    for the sort, then O(m) per level: with the sorted values ``s``, the
    k-th smallest of the others is ``s[k]`` if row i is among the k
    smallest, else ``s[k - 1]``.
    """
    r = np.asarray(residuals, dtype=float).ravel()
    ok = np.isfinite(r)
    a = np.abs(r[ok])
    m = a.size
    order = np.argsort(a, kind="stable")
    s = a[order]
    rank = np.empty(m, dtype=np.intp)
    rank[order] = np.arange(m)
    groups = [("all", np.ones(m, dtype=bool))]
    if predictions is not None:
        third = np.empty(m, dtype=np.intp)
        third[np.argsort(np.asarray(predictions, dtype=float).ravel()[ok], kind="stable")] = np.arange(m) * 3 // max(m, 1)
        groups += [(name, third == g) for g, name in enumerate(("low", "middle", "high"))]
    rows = []
    for level in levels:
        k = conformal_ranks(float(level), m - 1)[1]
        if m < 2 or k < 1 or k > m - 1:
            continue
        q = np.where(rank < k, s[min(k, m - 1)], s[k - 1])
        for name, sel in groups:
            if not sel.any():  # m = 2: a third holds no row (no NaN row, no empty-mean warning)
                continue
            rows.append({"group": name, "nominal": float(level), "coverage": float(np.mean(a[sel] <= q[sel])),
                         "width": float(np.mean(2 * q[sel])), "rows": int(sel.sum())})
    return pd.DataFrame(rows, columns=["group", "nominal", "coverage", "width", "rows"])


def interval_methods(fac, alpha, levels=NOMINAL_LEVELS, n_rows=METHOD_ROWS, seed=0):
    """Coverage and mean width of jackknife+ and full conformal intervals of
    training rows, each built from the other m - 1 rows.

    Parameters
    ----------
    fac : SparseRLSFactorization
        The fitted model's factorisation, rows in memory.
    alpha : float
    levels : sequence of float in (0, 1)
    n_rows : int
        Rows scored, drawn at random without replacement (all if fewer).
    seed : int

    Returns
    -------
    DataFrame
        One row per method, output and level: ``method`` ("jackknife+",
        "full"), ``output``, ``nominal``, ``coverage`` (share of the scored
        rows inside their interval), ``width`` (mean width) and ``rows``
        (rows scored; rows of leverage ~ 1 and levels needing more rows
        are left out).  O(s m r + s L m) for s rows and L levels
        (:func:`lssvm.cv.conformal.training_row_intervals`).
    """
    m = fac.n_samples
    rows = np.arange(m) if m <= n_rows else np.sort(np.random.default_rng(seed).choice(m, n_rows, replace=False))
    bounds, Y = training_row_intervals(fac, alpha, rows, levels)
    out = []
    for method, B in bounds.items():
        for level_index, level in enumerate(levels):
            lo, hi = B[level_index, :, 0], B[level_index, :, 1]  # (s, v)
            for j in range(Y.shape[1]):
                ok = np.isfinite(lo[:, j]) & np.isfinite(hi[:, j])
                if not ok.any():
                    continue
                inside = (Y[ok, j] >= lo[ok, j]) & (Y[ok, j] <= hi[ok, j])
                out.append({"method": method, "output": j, "nominal": float(level), "coverage": float(inside.mean()),
                            "width": float(np.mean(hi[ok, j] - lo[ok, j])), "rows": int(ok.sum())})
    return pd.DataFrame(out, columns=["method", "output", "nominal", "coverage", "width", "rows"])


def reliability_table(codes, decisions, calibrators, bins=10):
    """Reliability-diagram numbers of calibrated out-of-sample probabilities.

    Parameters
    ----------
    codes : ndarray of shape (m,) of int
        Class index of every row (``classes_`` order).
    decisions : ndarray of shape (m,) or (m, v)
        Out-of-sample decision values (v = 1 for two classes, else one
        column per class).
    calibrators : list of callables
        The fitted calibration maps (``calibrators_``), one per column.
    bins : int

    Returns
    -------
    DataFrame
        One row per bin of ``[0, 1]``: ``bin_lo``, ``bin_hi``, ``rows``,
        ``mean_predicted`` and ``observed`` (NaN for an empty bin).  Two
        classes: the probability of ``classes_[1]`` and whether the row is
        of that class; more: the top-class probability (the one-vs-rest
        maps normalised, as ``predict_proba``) and whether the top class is
        right.  O(m v).
    """
    F = np.asarray(decisions, dtype=float).reshape(len(codes), -1)
    ok = np.all(np.isfinite(F), axis=1)
    F, codes = F[ok], np.asarray(codes)[ok]
    if len(calibrators) == 1:
        p = np.asarray(calibrators[0](F[:, 0]), dtype=float)
        hit = codes == 1
    else:
        P = np.column_stack([cal(F[:, k]) for k, cal in enumerate(calibrators)])
        total = P.sum(axis=1, keepdims=True)
        P = np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])
        p = P.max(axis=1)
        hit = P.argmax(axis=1) == codes
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip((p * bins).astype(int), 0, bins - 1)  # bin b holds b/bins <= p < (b + 1)/bins; 1 in the last
    rows = []
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        rows.append({"bin_lo": edges[b], "bin_hi": edges[b + 1], "rows": n,
                     "mean_predicted": float(p[sel].mean()) if n else np.nan,
                     "observed": float(hit[sel].mean()) if n else np.nan})
    return pd.DataFrame(rows)


#: colour-blind safe (Okabe-Ito) colours of the thirds
_THIRDS = {"low": ("#0072B2", "lowest third of predictions"), "middle": ("#009E73", "middle third"),
           "high": ("#D55E00", "highest third of predictions")}


#: colours and markers of the interval methods beside the jackknife rule
_METHODS = {"jackknife+": ("#CC79A7", "s", "jackknife+"), "full": ("#D55E00", "D", "full conformal")}


def _plot_intervals(plt, table, kind, path, methods=None):
    fig, (left, right) = plt.subplots(2, 1, figsize=(6.4, 8.6))
    first = table[table["output"] == table["output"].iloc[0]]
    left.plot([0.45, 1.0], [0.45, 1.0], "--", color="#777777", lw=1, label="nominal")
    for name, (color, label) in _THIRDS.items():
        t = first[first["group"] == name]
        if len(t):
            left.plot(t["nominal"], t["coverage"], "o-", color=color, lw=1.5, ms=4, label=label)
    t = first[first["group"] == "all"]
    left.plot(t["nominal"], t["coverage"], "s-", color="#111111", lw=2, ms=4, label="all rows")
    several = table["output"].nunique() > 1
    left.set_xlabel("nominal coverage")
    left.set_ylabel(f"share of rows inside their {kind} interval")
    left.set_title("Coverage against nominal" + (" (output 0)" if several else ""))
    left.legend(loc="upper left", fontsize=8)
    left.grid(alpha=0.3)
    colors = plt.get_cmap("tab10").colors
    for j, (output, t) in enumerate(table[table["group"] == "all"].groupby("output", sort=False)):
        right.plot(t["width"], t["coverage"], "o-", color=colors[j % len(colors)], lw=2, ms=5,
                   label=(f"output {output}" if several else "all rows")
                   + (", jackknife rule" if methods is not None and len(methods) else ""))
        for _, r in t.iterrows():
            if r["nominal"] in (0.5, 0.8, 0.9, 0.95, 0.99):
                right.annotate(f"{r['nominal']:g}", (r["width"], r["coverage"]), textcoords="offset points",
                               xytext=(6, -10), fontsize=8, color="#333333")
    if methods is not None and len(methods):
        first = methods[methods["output"] == methods["output"].iloc[0]]
        for method, (color, marker, label) in _METHODS.items():
            t = first[first["method"] == method]
            if len(t):
                right.plot(t["width"], t["coverage"], marker + "--", color=color, lw=1.3, ms=4,
                           label=f"{label}, {int(t['rows'].max())} rows" + (" (output 0)" if several else ""))
    right.set_xlabel("mean interval width (target units)")
    right.set_ylabel("share of rows inside their interval")
    right.set_title("Coverage against width (labels: nominal)")
    right.legend(loc="lower right", fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_reliability(plt, table, positive, path):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.8, 6.2), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.2]})
    top.plot([0, 1], [0, 1], "--", color="#777777", lw=1, label="perfectly calibrated")
    t = table[table["rows"] > 0]
    area = 20 + 180 * t["rows"] / max(int(t["rows"].max()), 1)
    top.plot(t["mean_predicted"], t["observed"], "-", color="#1f77b4", lw=1.5)
    top.scatter(t["mean_predicted"], t["observed"], s=area, color="#1f77b4", zorder=3, label="bins")
    top.set_xlim(0, 1)
    top.set_ylim(-0.02, 1.02)
    top.set_ylabel(f"observed share {positive}")
    top.set_title("Reliability of the calibrated probabilities")
    top.legend(loc="upper left")
    top.grid(alpha=0.3)
    width = table["bin_hi"] - table["bin_lo"]
    bottom.bar(table["bin_lo"], table["rows"], width=width, align="edge", color="#7f7f7f", edgecolor="white")
    bottom.set_xlabel("predicted probability" if positive.startswith("of class") else "top-class probability")
    bottom.set_ylabel("rows")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def uncertainty_figure(plt, search, folder, oof):
    """Write ``intervals.png`` (regression) or ``reliability.png`` (a
    classifier with a calibration map), and ``uncertainty.csv``, into
    ``folder``.

    Parameters
    ----------
    plt : matplotlib.pyplot
    search : fitted ``*CV`` estimator
    folder : Path
    oof : tuple or None
        :func:`lssvm.cli.report.out_of_fold` of ``search``: (targets,
        out-of-sample outputs, kind); None (fixed-size, Dask) writes nothing.

    Returns
    -------
    list of (title, file name)
    """
    if oof is None:
        return []
    targets, outputs, kind = oof
    classes = getattr(search, "classes_", None)
    if classes is None:
        F = np.reshape(outputs, (len(targets), -1))
        R = np.reshape(targets, (len(targets), -1)) - F
        parts = []
        for j in range(R.shape[1]):
            t = interval_calibration(R[:, j], F[:, j])
            t.insert(0, "output", j)
            parts.append(t)
        table = pd.concat(parts, ignore_index=True)
        if table.empty:  # too few rows for any level
            return []
        table.to_csv(folder / "uncertainty.csv", index=False)
        methods = _interval_methods_of(search)
        if methods is not None:
            methods.to_csv(folder / "interval_methods.csv", index=False)
        _plot_intervals(plt, table, kind, folder / "intervals.png", methods)
        at = table[(table["output"] == 0) & (table["group"] == "all") & np.isclose(table["nominal"], 0.9)]
        note = f": mean width {at['width'].iloc[0]:.4g} at nominal 0.9" if len(at) else ""
        if note and methods is not None:
            at = methods[(methods["output"] == 0) & np.isclose(methods["nominal"], 0.9)].set_index("method")
            if {"jackknife+", "full"} <= set(at.index):
                note += (f"; on {int(at.loc['full', 'rows'])} training rows: jackknife+ {at.loc['jackknife+', 'width']:.4g}"
                         f" (coverage {at.loc['jackknife+', 'coverage']:.3f}), full conformal "
                         f"{at.loc['full', 'width']:.4g} (coverage {at.loc['full', 'coverage']:.3f})")
        return [(f"Prediction intervals{note}", "intervals.png")]
    cals = getattr(search.best_estimator_, "calibrators_", None)
    if not cals:
        return []
    table = reliability_table(targets, outputs, cals)
    table.to_csv(folder / "uncertainty.csv", index=False)
    positive = f"of class {classes[1]}" if len(cals) == 1 else "of correct top-class predictions"
    _plot_reliability(plt, table, positive, folder / "reliability.png")
    n = table["rows"].to_numpy()
    gap = np.abs(table["mean_predicted"] - table["observed"]).to_numpy()
    ece = float(np.sum(np.where(n > 0, gap, 0.0) * n) / max(n.sum(), 1))
    return [(f"Probability calibration: {kind} expected calibration error {ece:.3f}", "reliability.png")]


def _interval_methods_of(search):
    """:func:`interval_methods` of the selected model (unweighted, as ``lssvm
    select`` fits it), or None where its rows are not in memory (Dask)."""
    fac = getattr(search.best_estimator_, "factorization_", None)
    if getattr(fac, "M", None) is None or not hasattr(fac, "hat_diag"):
        return None
    methods = interval_methods(fac, float(search.alpha_))
    return methods if len(methods) else None
