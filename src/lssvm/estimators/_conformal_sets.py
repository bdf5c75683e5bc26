"""Conformal prediction sets for the calibrated classifiers, from the exact
held-out decision values their calibration was fitted on (leave-one-out, or
the k folds of ``calibration_cv``): no training beyond the fit.

Scores (Sadinle, Lei & Wasserman 2019 for LAC; Romano, Sesia & Candes 2020
for APS).  For class probabilities ``p`` at a point and a class ``y``:

- ``"lac"``: ``s = 1 - p_y``, MAPIE's: given the same probabilities, the
  sets equal MAPIE's ``SplitConformalClassifier(conformity_score="lac")``;
- ``"aps"``: MAPIE's randomised score, ``s = sum of p_j over the classes
  ranked at or above y - U p_y`` with ``U`` uniform on (0, 1) (drawn once
  per calibration row from ``random_state``), the classes ranked by
  decreasing probability, ties by ``classes_`` order; a test point's set
  holds the classes ranked above the first whose cumulative mass reaches
  the threshold, and that one (MAPIE's ``include_last_label=True``): class
  c joins when the mass ranked strictly above it is below the threshold.
  Without ``U``, every row whose class is not the most probable would score
  the same (1 for two classes), and the sets would jump to every class.

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

__all__ = ["ConformalSetMixin", "SET_METHODS", "calibration_scores", "class_scores"]

SET_METHODS = ("lac", "aps")

#: probabilities are compared to this many decimals (``predict_set``)
_DECIMALS = 12


def _sorted_cumsum(P):
    """Each row's probabilities ranked (stable sort of ``-P``: ties in
    ``classes_`` order) and summed: ``(order, inclusive sums)``."""
    order = np.argsort(-P, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(P, order, axis=1), axis=1)
    # the whole mass is 1 exactly: rounded, its last bit would decide ties with a threshold of 1 (a calibration
    # row whose class has probability 0, common with isotonic maps) by the last bit of a decision value
    cum[:, -1] = 1.0
    return order, cum


def class_scores(P, method):
    """A test point's value for each class, (t, C), compared with the
    threshold: "lac" ``1 - p_c`` (in the set when ``<= q``); "aps" the mass
    ranked strictly above c (in the set when ``< q``); O(t C log C)."""
    if method == "lac":
        return 1.0 - P
    order, cum = _sorted_cumsum(P)
    above = np.empty_like(P)
    np.put_along_axis(above, order, np.hstack([np.zeros((P.shape[0], 1)), cum[:, :-1]]), axis=1)
    return above


def calibration_scores(P, codes, method, random_state=0):
    """The calibration rows' scores (m,) for their classes ``codes``
    (module docstring; "aps": one uniform draw per row from
    ``np.random.default_rng(random_state)``)."""
    rows = np.arange(codes.size)
    p_true = P[rows, codes]
    if method == "lac":
        return 1.0 - p_true
    order, cum = _sorted_cumsum(P)
    incl = np.empty_like(P)
    np.put_along_axis(incl, order, cum, axis=1)
    U = np.random.default_rng(random_state).uniform(size=codes.size)
    return incl[rows, codes] - U * p_true


class ConformalSetMixin:
    """``predict_set`` for the calibrated classifiers (needs ``calibrators_``,
    ``_held_out`` from :meth:`ProbaMixin._fit_calibration` and
    ``_proba_from_decisions``)."""

    def predict_set(self, X, coverage=0.9, method="lac", mondrian=False, random_state=0):
        """Conformal prediction sets from the exact held-out decision values.

        Parameters
        ----------
        X : array-like of shape (t, d)
        coverage : float in (0, 1), default=0.9
            Target coverage ``1 - alpha_c``.
        method : {"lac", "aps"}, default="lac"
            Score: "lac" ``1 - p_y`` (smallest sets on average; MAPIE's
            convention); "aps" the probability mass of the classes ranked at
            or above ``y``, randomised as MAPIE's (sets that adapt to how
            ambiguous the point is; module docstring).
        mondrian : bool, default=False
            Class-conditional (Mondrian) quantiles: each class's threshold
            from its own rows' scores, so the coverage holds for every
            class, not only on average over them.
        random_state : int, Generator or None, default=0
            Seed of the uniform draws of "aps" (one per calibration row);
            unused by "lac".

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
        rule).  Fitted on Dask collections: the held-out values of the
        calibration passes, kept on the client (O(m v) floats), give the
        same sets.  A Mondrian class with too few rows for the
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
        if getattr(self, "_fit_weights", None) is not None:
            raise ValueError("prediction sets are not available for a model fitted with sample_weight (the "
                             "conformal calibration here is unweighted); fit without weights for predict_set")
        held = getattr(self, "_held_out", None)
        if held is None or getattr(self, "calibrators_", None) is None:
            raise ValueError(
                "this model keeps no held-out decision values (it was loaded from a file): refit it on the training "
                "data to get prediction sets"
            )
        F, codes = held
        ok = np.all(np.isfinite(F), axis=1)  # as the calibration: rows of leverage ~1 carry no value
        F, codes = F[ok], codes[ok]
        # probabilities equal to 12 decimals count as equal: an isotonic map's plateaus give exact ties (0.5 and
        # 0.5, or a test point's value on a calibration row's plateau) that rounding would settle by a last bit
        cal = calibration_scores(np.round(self._proba_from_decisions(F), _DECIMALS), codes, method, random_state)
        test = class_scores(np.round(self.predict_proba(X), _DECIMALS), method)
        within = np.less_equal if method == "lac" else np.less
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
            return within(test, kth_smallest(cal, k, axis=0))
        q = np.empty(C)
        for c in range(C):
            own = cal[codes == c]
            q[c] = kth_smallest(own, conformal_ranks(coverage, own.size)[1], axis=0)
        return within(test, q[None, :])
