"""One warning per search, and only when the fitted model is affected.

A search evaluates many candidates; a numerical safeguard may fire at many
of them (a hat-matrix diagonal within 1e-8 of 1 at the smallest alphas, a
numerically singular ``K_BB`` at the widest kernels) although the model
chosen and refitted is untouched: on the bundled and benchmark tables the
default fits issued 0-7 such warnings each, all on candidates that lost or
at alphas that were not chosen.  So :meth:`fit` of the search estimators
collects every :class:`~lssvm.exceptions.NumericalWarning` (a context-local
handler, :func:`lssvm.exceptions.numerical_warnings_collect`) and afterwards
issues at most one: when some note concerns the chosen model.  A note
concerns it when

* it says so (``affects_result=True``, e.g. the refit on ``K_BB``'s range
  scoring worse than the searched point, or a gradient search that
  evaluated no point);
* it carries the alphas it concerns (``alphas``, the leave-one-out
  leverage guard) and was raised at the chosen kernel parameters (or
  outside any candidate) at an alpha equal to the chosen one;
* it carries neither and was not raised at another candidate, except the
  note that ``K_BB`` is singular, which changes nothing the search did not
  score (the refit is the model scored, on the same range).

Every note is kept in ``numerical_notes_`` (its text), and the warning
counts them by kind.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..exceptions import numerical_warnings_collect, warn_numerical

__all__ = ["report_numerical_notes", "fit_reporting_notes"]

_KINDS = (("K_BB is numerically singular", "singular K_BB"),
          ("the basis kernel matrix K_BB is numerically singular", "singular K_BB"),
          ("leave-one-out: the hat-matrix diagonal", "leverage near 1"),
          ("search='gradient' stopped early", "gradient start stopped early"))


def _kind(text):
    for prefix, kind in _KINDS:
        if text.startswith(prefix):
            return kind
    return text.split(":")[0][:60]


def _same_params(tag, chosen):
    try:
        return set(tag) <= set(chosen) and all(
            np.array_equal(np.asarray(v, dtype=float), np.asarray(chosen[k], dtype=float)) for k, v in tag.items())
    except (TypeError, ValueError):
        return False


def _shown(value):
    v = np.asarray(value, dtype=float)
    return f"{float(v):.4g}" if v.ndim == 0 else "[" + ", ".join(f"{x:.3g}" for x in v.ravel()) + "]"


def concerns_chosen(note, chosen):
    """Whether ``note`` (a NumericalWarning) concerns the model at ``chosen`` (kernel parameters and alpha)."""
    flag = getattr(note, "affects_result", None)
    if flag is not None:
        return bool(flag)
    tag = getattr(note, "params", None)
    if tag is not None and not _same_params(tag, chosen):
        return False
    alphas = getattr(note, "alphas", None)
    if alphas is not None:
        alpha = chosen.get("alpha")
        return alpha is None or bool(np.any(np.isclose(np.asarray(alphas, dtype=float), alpha, rtol=1e-12)))
    return _kind(str(note)) != "singular K_BB"


def report_numerical_notes(est, notes, chosen, stacklevel=3):
    """Keep ``notes`` in ``est.numerical_notes_`` and issue one NumericalWarning
    if any concerns the model at ``chosen`` (dict of kernel parameters and
    ``alpha``; None: every note counts)."""
    est.numerical_notes_ = [str(w) for w in notes]
    affecting = [w for w in notes if chosen is None or concerns_chosen(w, chosen)]
    if not affecting:
        return
    counts = Counter(_kind(str(w)) for w in notes)
    shown = ", ".join(f"{n} x {k}" for k, n in counts.most_common())
    where = "" if not chosen else " at " + ", ".join(f"{k}={_shown(v)}" for k, v in chosen.items())
    first = affecting[0]
    text = str(first)
    if _kind(text) == "leverage near 1" and chosen and "alpha" in chosen:
        text += (f".  The search chose alpha={chosen['alpha']:g}, where this holds: pass alphas above it (the "
                 "estimator's alphas=) to choose among reliable scores")
    warn_numerical(
        f"{len(affecting)} numerical note(s) concern the fitted model{where}; the first: {text}  "
        f"[{len(notes)} note(s) during the search and refit: {shown}; numerical_notes_ lists them]",
        stacklevel=stacklevel + 1, affects_result=True)


def fit_reporting_notes(est, fit, *args):
    """``fit(*args)`` (a search and its refit) with every NumericalWarning collected, then reported by
    :func:`report_numerical_notes` at the chosen ``est.best_params_``; returns ``est``."""
    with numerical_warnings_collect() as notes:
        fit(*args)
    # stacklevel: warn_numerical, report, this, the search's fit stages, its fit, the fit's two decorators,
    # the caller
    report_numerical_notes(est, notes, dict(getattr(est, "best_params_", None) or {}) or None, stacklevel=6)
    return est
