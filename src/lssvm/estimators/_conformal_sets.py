"""Conformal prediction sets for the calibrated classifiers, from the exact
held-out decision values their calibration was fitted on (leave-one-out, or
the k folds of ``calibration_cv``): no training beyond the fit.

Each training row's calibration score is its class's score under the
probabilities of its held-out decision value (the model trained without
it, or without its fold), mapped by the fitted calibration; a test point's
score for each class is under the fitted model's ``predict_proba``.  The
scores ("lac", "aps"), the thresholds and the Mondrian rule are those of
:mod:`lssvm.cv.conformal.sets`.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..cv.conformal import (
    SET_METHODS,
    calibration_scores,
    check_coverage,
    class_scores,
    set_membership,
    set_thresholds,
)

__all__ = ["ConformalSetMixin", "SET_METHODS", "calibration_scores", "class_scores"]

#: probabilities are compared to this many decimals (``predict_set``)
_DECIMALS = 12


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
                f"prediction sets need class probabilities: this {type(self).__name__} was built with "
                "calibration=None, which switches them off; leave calibration at its default 'sigmoid' (or set "
                "'isotonic') and refit"
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
        q = set_thresholds(cal, codes, coverage, self.classes_.size, mondrian)
        return set_membership(test, q, method)
