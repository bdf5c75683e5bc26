"""Conformal prediction sets for the calibrated classifiers, from the exact
held-out decision values their calibration was fitted on (leave-one-out, or
the k folds of ``calibration_cv``): no training beyond the fit.

Scores (Sadinle, Lei & Wasserman 2019 for LAC; Romano, Sesia & Candes 2020
for APS).  For class probabilities ``p`` at a point and a class ``y``:

- ``"lac"``: ``s = 1 - p_y``, MAPIE's: given the same probabilities, the
  sets equal MAPIE's ``SplitConformalClassifier(conformity_score="lac")``;
- ``"aps"``: ``s = sum of p_j over the classes ranked at or above y``, the
  classes ranked by decreasing probability, ties by ``classes_`` order:
  the non-randomised score, each set exactly the classes whose score is
  within the threshold.  MAPIE's APS differs on purpose: it randomises the
  calibration scores (``s - U p_y``) and adds the class that crosses the
  threshold (``include_last_label=True``), so its sets are random and
  larger.

Each training row's calibration score is its class's score under the
probabilities of its held-out decision value (the model trained without
it, or without its fold), mapped by the fitted calibration; a test point's
score for each class is under the fitted model's ``predict_proba``.  A class
joins the set when its score is at most the ``ceil(coverage (m + 1))``-th
smallest calibration score (Mondrian: among the rows of that class only, so
the coverage holds per class; Vovk, Gammerman & Shafer 2005, §4.5).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..cv.conformal import check_coverage, conformal_ranks, kth_smallest, min_rows_for

__all__ = ["ConformalSetMixin", "SET_METHODS", "class_scores"]

SET_METHODS = ("lac", "aps")


def class_scores(P, method):
    """Non-conformity score of every class at every row, (t, C), for class
    probabilities ``P`` (t, C) (module docstring); O(t C log C) for "aps".

    "aps" sums each row's sorted probabilities cumulatively (a stable sort of
    ``-P``: ties in ``classes_`` order), as MAPIE does, the rows of ``P``
    summing to 1."""
    if method == "lac":
        return 1.0 - P
    order = np.argsort(-P, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(P, order, axis=1), axis=1)
    # the least likely class's score is the whole mass, 1 exactly: rounded sums would let the last bit of
    # a decision value decide whether a threshold at 1 (common: any row of a least likely true class) admits it
    cum[:, -1] = 1.0
    S = np.empty_like(P)
    np.put_along_axis(S, order, cum, axis=1)
    return S


class ConformalSetMixin:
    """``predict_set`` for the calibrated classifiers (needs ``calibrators_``,
    ``_held_out`` from :meth:`ProbaMixin._fit_calibration` and
    ``_proba_from_decisions``)."""

    def predict_set(self, X, coverage=0.9, method="lac", mondrian=False):
        """Conformal prediction sets from the exact held-out decision values.

        Parameters
        ----------
        X : array-like of shape (t, d)
        coverage : float in (0, 1), default=0.9
            Target coverage ``1 - alpha_c``.
        method : {"lac", "aps"}, default="lac"
            Score: "lac" ``1 - p_y`` (smallest sets on average; MAPIE's
            convention); "aps" the probability mass of the classes ranked at
            or above ``y`` (sets that adapt to how ambiguous the point is;
            not randomised, unlike MAPIE's: module docstring).
        mondrian : bool, default=False
            Class-conditional (Mondrian) quantiles: each class's threshold
            from its own rows' scores, so the coverage holds for every
            class, not only on average over them.

        Returns
        -------
        ndarray of bool, shape (t, n_classes)
            ``out[s, c]``: whether ``classes_[c]`` is in the set of row s.

        Raises
        ------
        ValueError
            Without ``calibration`` (the scores need probabilities), for a
            model loaded from a file (it keeps no held-out values), an
            unknown method, or too few rows for the coverage.

        Notes
        -----
        The calibration rows' scores come from the decision values the
        calibration was fitted on: exact leave-one-out values, or the
        out-of-fold values of ``calibration_cv`` (the fixed-size family:
        v-fold), each mapped by the fitted calibration; the test points'
        from ``predict_proba`` (as a jackknife / cross-conformal set with
        the full model at the test point; the module docstring has the
        rule).  A Mondrian class with fewer than ``min`` rows for the
        coverage gets an infinite threshold: it is in every set.  Cost:
        O(m C) for the calibration scores plus ``predict_proba``, O(m) for
        the order statistics; no refit.
        """
        check_is_fitted(self, "classes_")
        coverage = check_coverage(coverage)
        if method not in SET_METHODS:
            raise ValueError(f"method must be one of {list(SET_METHODS)}; got {method!r}")
        if not isinstance(mondrian, (bool, np.bool_)):
            raise ValueError(f"mondrian must be True or False; got {mondrian!r}")
        if getattr(self, "calibration", None) is None:
            raise ValueError(
                f"prediction sets need class probabilities: this {type(self).__name__} has calibration=None; "
                "fit it with calibration='sigmoid' or 'isotonic'"
            )
        held = getattr(self, "_held_out", None)
        if held is None or getattr(self, "calibrators_", None) is None:
            raise ValueError(
                "this model keeps no held-out decision values (it was loaded from a file, or fitted on Dask "
                "collections without calibration values): refit it on the training data to get prediction sets"
            )
        F, codes = held
        ok = np.all(np.isfinite(F), axis=1)  # as the calibration: rows of leverage ~1 carry no value
        F, codes = F[ok], codes[ok]
        cal = class_scores(self._proba_from_decisions(F), method)[np.arange(codes.size), codes]
        test = class_scores(self.predict_proba(X), method)
        C = self.classes_.size
        if not mondrian:
            m = cal.size
            k = conformal_ranks(coverage, m)[1]
            if k > m:
                raise ValueError(
                    f"{m} calibration rows are too few for {coverage:g} coverage: every set would hold every "
                    f"class (it needs ceil(coverage (m + 1)) <= m, i.e. m >= {min_rows_for(coverage)}); lower "
                    "the coverage or train on more rows"
                )
            return test <= kth_smallest(cal, k, axis=0)
        q = np.empty(C)
        for c in range(C):
            own = cal[codes == c]
            q[c] = kth_smallest(own, conformal_ranks(coverage, own.size)[1], axis=0)
        return test <= q[None, :]
