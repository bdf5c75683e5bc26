"""Figures of a gradient search for the ``lssvm select`` report:
the relevance of each input (RMS derivative of the fitted model) and the optimisation
trace."""

from __future__ import annotations

import numpy as np

__all__ = ["gradient_figures"]


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
