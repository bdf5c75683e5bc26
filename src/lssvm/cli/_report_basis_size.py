"""The report's figure of a basis grown by exact CV (``n_basis="auto"``):
the CV error of every basis size (``basis_curve_``, :mod:`lssvm.cv.basis_size`),
with the chosen size and the saved model's size marked.

It takes the curve as the fitted estimator keeps it (``basis_curve_``) or
as a model file stores it (``SavedModel.basis_curve``): the same keys.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BASIS_SIZE_CAPTIONS", "basis_size_figure"]

#: what the figure shows and what to look for
BASIS_SIZE_CAPTIONS = {
    "basis_size.png": "Exact CV error (mean squared error of the targets, or of the +/-1 class codes for a "
                      "classifier) of every basis size grown, one factorisation for all sizes; the band is one "
                      "standard error. The red star is the size chosen from the curve (lowest CV error), the dashed line the saved "
                      "model's size (they differ when the grown model did not beat the search's own). A curve "
                      "still falling at its right end means a larger basis (or a larger --time-budget) would "
                      "help; a flat tail means the basis is large enough.",
}


def basis_size_figure(plt, curve, folder, saved_size=None):
    """Write ``basis_size.png`` into ``folder`` for a grown basis.

    Parameters
    ----------
    plt : matplotlib.pyplot
    curve : dict or None
        ``n_basis`` (N,), ``cv_error`` (N,), ``cv_error_se`` (N,),
        ``n_chosen``, ``stop_reason``, optionally ``cv`` ("LOO", "k-fold") and ``replaced``.
    folder : Path
    saved_size : int, optional
        Basis points of the saved model.

    Returns
    -------
    list of (title, file name)
        Empty when there is no curve (or no size was grown).
    """
    if not isinstance(curve, dict) or np.size(curve.get("n_basis", ())) == 0:
        return []
    sizes = np.asarray(curve["n_basis"])
    err = np.asarray(curve["cv_error"], dtype=float)
    se = np.asarray(curve.get("cv_error_se", np.zeros_like(err)), dtype=float)
    ok = np.isfinite(err)  # +inf: every alpha failed at that size; not drawn
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(sizes[ok], err[ok], "-", lw=1.2, color="#1f77b4", label="CV error per size")
    band = ok & np.isfinite(se)
    ax.fill_between(sizes[band], (err - se)[band], (err + se)[band], color="#1f77b4", alpha=0.2, lw=0)
    chosen = curve.get("n_chosen")
    i = None if chosen is None else int(np.searchsorted(sizes, int(chosen)))
    if i is not None and i < sizes.size and sizes[i] == int(chosen) and ok[i]:
        ax.plot([sizes[i]], [err[i]], "r*", ms=14, label=f"chosen size: {int(chosen)} points")
    if saved_size is not None:
        ax.axvline(int(saved_size), color="0.3", ls="--", lw=1, label=f"saved model: {int(saved_size)} points")
    if ok.any() and np.all(err[ok] > 0):
        ax.set_yscale("log")
    ax.set_xlabel("basis size (first pivots of one pivoted Cholesky run)")
    cv = curve.get("cv") or "CV"
    ax.set_ylabel(f"{cv} mean squared error")
    ax.set_title(f"Basis grown to {int(sizes[-1])} points ({curve.get('stop_reason', '')})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "basis_size.png", dpi=110)
    plt.close(fig)
    return [("Basis size by exact CV", "basis_size.png")]
