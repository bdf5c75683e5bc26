"""The model-selection report of ``lssvm select``: an HTML page with PNG
figures (matplotlib, Agg backend) written into a folder.

Figures: the CV score along the alpha path for every kernel setting
evaluated, the best score per kernel setting against the width, the
out-of-fold (LOO or k-fold) predictions of the chosen model against the
targets (a confusion matrix for classifiers), the coverage and width of
its prediction intervals or the reliability of its calibrated class
probabilities (:mod:`lssvm.cli._report_uncertainty`), the model's basis
curve (FVS reconstruction error, fixed-size CV score per model size, or
the Nyström kernel's spectrum), the exact CV error of every basis size of a
basis grown with ``n_basis="auto"`` (:mod:`lssvm.cli._report_basis_size`);
for one-input data, the fitted function
over the data.  Captions say what to look for; test metrics, the lssvm
version, the date and the command line are shown when given.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from .._labels import LabelCoder
from ._report_basis_size import BASIS_SIZE_CAPTIONS, basis_size_figure
from ._report_uncertainty import UNCERTAINTY_CAPTIONS, uncertainty_figure

__all__ = ["out_of_fold", "write_report"]


def out_of_fold(search):
    """Out-of-fold outputs of the selected model on its own CV partition.

    Parameters
    ----------
    search : fitted ``*CV`` estimator with ``best_estimator_``

    Returns
    -------
    (targets, outputs, kind) or None
        Regression: targets and out-of-fold predictions, shape (n,) or
        (n, v); classification: class indices and out-of-fold decision
        values (n,) or (n, n_classes); kind is "LOO" or "k-fold".  None for
        fixed-size models, whose CV yields scores per size only, and for
        models trained on streamed (Dask) data, whose rows are not in memory.
    """
    best = search.best_estimator_
    alpha = search.alpha_
    folds = search.cv_folds_
    kind = "LOO" if folds is None else f"{len(folds)}-fold"
    n = None if folds is None else sum(t.size for t in folds)
    pairs = None if folds is None else [(np.setdiff1d(np.arange(n), t), t) for t in folds]
    classifier = hasattr(best, "classes_")
    if hasattr(best, "factorization_") and hasattr(best, "basis_vectors_"):  # sparse and Nyström
        fac = best.factorization_
        if getattr(fac, "M", None) is None:  # fitted on Dask: no per-row arrays
            return None
        Y = fac.y_centered + fac.y_mean
        if pairs is None:
            R = fac.loo_residuals(np.array([alpha]))[0]
            F = Y - R
        else:
            out_of_fold = best.cv_decision_function if classifier else best.cv_predict
            mode = getattr(search, "basis_in_holdout", None)  # None: the family's own (Nyström: "keep")
            F = np.reshape(out_of_fold(pairs, alpha=alpha, basis_in_holdout=mode), Y.shape)
    else:
        return None
    if classifier:
        return LabelCoder.index_of(Y), (F[:, 0] if F.shape[1] == 1 else F), kind
    return (Y[:, 0] if Y.shape[1] == 1 else Y), (F[:, 0] if F.shape[1] == 1 else F), kind


def _figure_cv_path(plt, res, names, score_name, path):
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    alphas = np.asarray(res["param_alpha"])
    score = -np.asarray(res["mean_test_score"]) if score_name == "MSE" else 1 - np.asarray(res["mean_test_score"])
    if names:
        keys = np.column_stack([np.asarray(res[f"param_{k}"]) for k in names])
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = np.ravel(inv)
        cmap = plt.get_cmap("viridis")
        lg = np.log2(uniq[:, 0])
        norm = plt.Normalize(lg.min(), lg.max() if lg.max() > lg.min() else lg.min() + 1)
        for u in np.argsort(lg):
            sel = inv == u
            ax.plot(alphas[sel], score[sel], color=cmap(norm(lg[u])), lw=1)
        fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label=f"log2 {names[0]}")
    else:
        ax.plot(alphas, score, "o-")
    best = int(np.argmax(res["mean_test_score"]))
    ax.plot(alphas[best], score[best], "r*", ms=14, label="selected")
    ax.set_xscale("log")
    if score_name == "MSE":
        ax.set_yscale("log")
    ax.set_xlabel("alpha (regularisation)")
    ax.set_ylabel(f"CV {score_name}")
    ax.set_title("CV score along the alpha path, per kernel setting")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _figure_width(plt, res, name, score_name, path):
    x = np.asarray(res[f"param_{name}"])
    score = -np.asarray(res["mean_test_score"]) if score_name == "MSE" else 1 - np.asarray(res["mean_test_score"])
    frame = pd.DataFrame({"x": x, "s": score}).groupby("x")["s"].min().sort_index()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(frame.index, frame.values, "o-")
    best = int(np.argmax(res["mean_test_score"]))
    ax.plot(x[best], score[best], "r*", ms=14)
    ax.set_xscale("log")
    if score_name == "MSE":
        ax.set_yscale("log")
    ax.set_xlabel(name)
    ax.set_ylabel(f"best CV {score_name} over alpha")
    ax.set_title(f"CV score against {name} (alpha profiled out)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _figure_oof(plt, oof, classes, path):
    targets, outputs, kind = oof
    fig, ax = plt.subplots(figsize=(5.4, 4.6))
    if classes is None:
        t = targets if targets.ndim == 1 else targets[:, 0]
        p = outputs if outputs.ndim == 1 else outputs[:, 0]
        ax.scatter(t, p, s=10, alpha=0.6)
        lo, hi = float(min(t.min(), p.min())), float(max(t.max(), p.max()))
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax.set_xlabel("target")
        ax.set_ylabel(f"{kind} prediction")
        ax.set_title(f"{kind} predictions against targets")
    else:
        pred = LabelCoder.index_of(outputs.reshape(outputs.shape[0], -1))
        k = len(classes)
        M = np.zeros((k, k), dtype=int)
        np.add.at(M, (targets, pred), 1)
        ax.imshow(M, cmap="Blues", vmin=0)
        for i in range(k):
            for j in range(k):  # white on the dark cells, near-black on the light ones
                dark = M[i, j] > 0.5 * M.max()
                ax.text(j, i, str(M[i, j]), ha="center", va="center", fontsize=12,
                        color="white" if dark else "#111111")
        labels = [str(c) for c in classes]
        ax.set_xticks(range(k), labels)
        ax.set_yticks(range(k), labels)
        ax.set_xlabel(f"{kind} predicted class")
        ax.set_ylabel("true class")
        ax.set_title(f"{kind} confusion matrix")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _figure_basis(plt, best, path):
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    curve = getattr(best, "reconstruction_error_curve_", None)
    if curve is not None:
        ax.semilogy(np.arange(curve.size), np.maximum(curve, 1e-16), "o-", ms=3)
        ax.set_xlabel("basis points")
        ax.set_ylabel("mean relative reconstruction error")
        ax.set_title(f"FVS basis: {best.n_basis_} points")
    elif getattr(best, "cv_curve_", None) is not None:
        c = np.atleast_2d(best.cv_curve_)
        for j in range(c.shape[0]):
            ax.plot(np.arange(1, c.shape[1] + 1), c[j], lw=1)
        sizes = np.atleast_1d(best.model_size_)
        ax.axvline(sizes[0], color="r", ls="--", lw=1, label=f"chosen size {sizes[0]}")
        ax.set_yscale("log")
        ax.set_xlabel("model size (prototypes with a weight)")
        ax.set_ylabel("CV score")
        ax.legend()
        ax.set_title(f"{type(best).__name__}: {best.n_support_} prototypes used")
    elif hasattr(best, "approximation_bound") and getattr(best, "factorization_", None) is not None:
        s2 = np.sort(best.factorization_.eigenvalues)[::-1]
        ax.semilogy(np.arange(1, s2.size + 1), s2, "o-", ms=3)
        ax.set_xlabel("index")
        ax.set_ylabel("eigenvalue of the centred Nyström Gram matrix")
        ax.set_title(f"Nyström kernel: rank {best.rank_} from {best.n_basis_} columns")
    else:
        plt.close(fig)
        return False
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _figure_curve(plt, curve, path):
    """The fitted function of a one-input model over its data."""
    x, y, predict, name, target = curve
    x = np.asarray(x, dtype=float).ravel()
    grid = np.linspace(x.min(), x.max(), 400)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter(x, y, s=10, alpha=0.5, color="#555555", label="training rows")
    ax.plot(grid, predict(grid[:, None]), color="#d62728", lw=2, label="fitted model")
    ax.set_xlabel(name)
    ax.set_ylabel(target)
    ax.legend()
    ax.set_title("Fitted function over the data")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: what each figure shows and what to look for
CAPTIONS = {
    "cv_alpha.png": "CV score along the alpha path, one line per kernel setting (colour: width); the red star is "
                    "the selected model. Look for a clear minimum inside the path: a minimum at either end means "
                    "the path (--alphas) should be widened.",
    "cv_width.png": "Best CV score over alpha for each kernel width. A minimum at the edge of the range means "
                    "the width range (--gammas) should be widened; a flat curve means the width matters little.",
    "out_of_fold.png": "Out-of-fold predictions of the selected model: each row predicted by a model that did not "
                       "see it. Regression: points near the dashed diagonal are well predicted; a tilt towards "
                       "flat means under-fitting. Classification: the diagonal holds the correct counts, the "
                       "off-diagonal cells the confusions.",
    "basis.png": "The model's basis: the reconstruction error of the FVS basis (it should fall steeply, then "
                 "flatten), the CV score per model size (prototypes with a weight), or the Nyström kernel's spectrum (a fast "
                 "decay means few columns suffice).",
    "curve.png": "The fitted function of this one-input model (red) over the training rows (grey). Look for a "
                 "curve that follows the trend without chasing single points (over-fitting) or missing the "
                 "shape (under-fitting).",
}
CAPTIONS.update(UNCERTAINTY_CAPTIONS)
CAPTIONS.update(BASIS_SIZE_CAPTIONS)


def write_report(folder, search, summary, table, test_values=None, curve=None, feature_names=None,
                 test_baseline=None):
    """Write ``index.html`` and its PNG figures into ``folder`` (which must exist).

    Parameters
    ----------
    folder : Path
    search : fitted ``*CV`` estimator
    summary : list of (str, str)
        Rows of the summary table (data, model, timing, ...).
    table : DataFrame
        The best candidates, as printed.
    test_values : list of (str, float), optional
        Test-set metrics, shown beside the CV estimate.
    curve : tuple, optional
        ``(x (n,), y (n,), predict, input name, target name)`` for a
        one-input model: ``predict`` maps raw inputs (m, 1) to outputs (m,).
    feature_names : list of str, optional
        Input names, for the relevance chart of a gradient search.
    test_baseline : list of (str, float), optional
        The trivial baseline's test metrics (majority class or mean), shown
        beside ``test_values`` under the same names.

    Returns
    -------
    list of Path
        Files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    res = search.cv_results_
    names = [k[len("param_"):] for k in res if k.startswith("param_") and k != "param_alpha"]
    score_name = "MSE" if search.scoring_ == "mse" else "error rate"
    figures = []
    _figure_cv_path(plt, res, names, score_name, folder / "cv_alpha.png")
    figures.append(("CV score over alpha", "cv_alpha.png"))
    if names:
        _figure_width(plt, res, names[0], score_name, folder / "cv_width.png")
        figures.append((f"CV score over {names[0]}", "cv_width.png"))
    if hasattr(search, "best_estimator_"):
        oof = out_of_fold(search)
        if oof is not None:
            _figure_oof(plt, oof, getattr(search, "classes_", None), folder / "out_of_fold.png")
            figures.append(("Out-of-fold predictions", "out_of_fold.png"))
        figures += uncertainty_figure(plt, search, folder, oof)
        if _figure_basis(plt, search.best_estimator_, folder / "basis.png"):
            figures.append(("Basis", "basis.png"))
        grown = getattr(search, "basis_curve_", None)
        if isinstance(grown, dict):
            folds = getattr(search, "cv_folds_", None)
            grown = {**grown, "cv": "LOO" if folds is None else f"{len(folds)}-fold"}
        figures += basis_size_figure(plt, grown, folder, getattr(search.best_estimator_, "n_basis_", None))
    figures += gradient_figures(plt, search, folder, feature_names)
    if curve is not None:
        _figure_curve(plt, curve, folder / "curve.png")
        figures.insert(0, ("Fitted function", "curve.png"))
    rows = "\n".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in summary)
    figs = "\n".join(f'<figure><img src="{f}" alt="{html.escape(t)}"><figcaption><b>{html.escape(t)}.</b> '
                     f"{html.escape(CAPTIONS.get(f, ''))}</figcaption></figure>" for t, f in figures)
    crit = "MSE" if search.scoring_ == "mse" else "error rate"
    cv_value = -search.best_score_ if search.scoring_ == "mse" else 1 - search.best_score_
    test_html = ""
    if test_values:
        base = dict(test_baseline or [])
        head = "<tr><th>metric</th><td>model</td>" + ("<td>baseline</td>" if base else "") + "</tr>"
        cells = head + "".join(
            f"<tr><th>{html.escape(n)}</th><td>{v:.4g}</td>"
            + (f"<td>{base[n]:.4g}</td>" if n in base else "<td></td>" if base else "") + "</tr>"
            for n, v in test_values)
        base_text = (" The baseline column is the trivial model scored on the same rows: the training targets' "
                     "mean (regression) or their class shares, with the majority class as the prediction "
                     "(classification); the model should be clearly better." if base else "")
        test_html = (f"<h2>Test metrics</h2>\n<p>On rows the search never saw, beside the CV estimate "
                     f"(CV {crit} {cv_value:.4g}). A test error far above the CV estimate means the test rows "
                     f"differ from the training rows, or the search over-fitted its CV.{base_text}</p>\n"
                     f"<table>{cells}</table>")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lssvm model selection</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:left}}
figure{{display:inline-block;margin:1em;max-width:42em;vertical-align:top}}img{{max-width:100%}}
figcaption{{font-size:.92em;color:#333}}</style>
</head><body>
<h1>lssvm model selection</h1>
<table>{rows}</table>
{test_html}
<h2>Best candidates</h2>
<p>The best kernel and alpha settings by CV score (rank 1 is the saved model).</p>
{table.to_html(index=False, float_format=lambda v: f"{v:.4g}")}
<h2>Figures</h2>
{figs}
</body></html>
"""
    (folder / "index.html").write_text(page, encoding="utf-8")
    return [folder / "index.html"] + [folder / f for _, f in figures]


def gradient_figures(plt, search, folder, feature_names=None):
    """Write ``relevance.png`` (ARD only) and ``trace.png`` into ``folder``
    for a search fitted with ``search="gradient"``; returns the list of
    (title, file name) written (empty for other searches)."""
    trace = getattr(search, "gradient_trace_", None)
    if trace is None:
        return []
    figures = []
    rel = getattr(search, "feature_relevance_", None)
    if rel is not None:
        names = list(feature_names) if feature_names is not None and len(feature_names) == rel.size else [
            f"x{j}" for j in range(rel.size)]
        order = np.argsort(rel)
        fig, ax = plt.subplots(figsize=(6.4, max(2.5, 0.25 * rel.size + 1)))
        ax.barh([names[j] for j in order], rel[order])
        ax.set_xlabel("relevance (RMS df/dx_j x sd_j, normalised)")
        ax.set_title("Input relevance")
        fig.tight_layout()
        fig.savefig(folder / "relevance.png", dpi=110)
        plt.close(fig)
        figures.append(("Input relevance (model sensitivity)", "relevance.png"))
    if trace["mse"].size:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        kind = trace.get("search", np.full(trace["mse"].size, "loo"))
        for k in np.unique(trace["start"]):
            idx = np.flatnonzero(trace["start"] == k)
            label = f"start {int(k)}" if kind[idx[0]] == "loo" or search.scoring_ == "evidence" else \
                "evidence search (its LOO MSE)"
            ax.plot(idx, trace["mse"][idx], ".-", label=label)
        chosen = getattr(search, "gradient_selection_", None)
        if chosen is not None:  # the one-standard-error band and the point kept in it
            ax.axhline(chosen["threshold"], color="0.5", lw=0.8, ls="--", label="lowest LOO + min(1 se, 2 %)")
            ax.plot([chosen["chosen_index"]], [chosen["chosen_loo"]], "k*", ms=10, label="kept (highest evidence)")
        evidence = getattr(search, "scoring_", "mse") == "evidence"  # -log evidence per value: may be < 0
        if not evidence:
            ax.set_yscale("log")
        ax.set_xlabel("evaluation (criterion + gradient)")
        ax.set_ylabel("-log evidence per target value" if evidence else "CV MSE")
        ax.set_title("Gradient search trace (L-BFGS-B)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(folder / "trace.png", dpi=110)
        plt.close(fig)
        figures.append(("Gradient search trace", "trace.png"))
    return figures
