"""Conformal prediction sets for classification from held-out class
probabilities: the calibration scores, the test points' class scores and
the thresholds (plain or Mondrian).

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

A class joins the set when its score is at most the ``ceil(coverage (m +
1))``-th smallest calibration score (Mondrian: among the rows of that class
only, so the coverage holds per class; Vovk, Gammerman & Shafer 2005, §4.5).
"""

from __future__ import annotations

import numpy as np

from .ranks import conformal_ranks, kth_smallest, min_rows_for

__all__ = ["SET_METHODS", "calibration_scores", "class_scores", "set_membership", "set_thresholds"]

SET_METHODS = ("lac", "aps")


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


def set_thresholds(scores, codes, coverage, n_classes, mondrian=False):
    """Each class's threshold on the test scores, (C,).

    Parameters
    ----------
    scores : ndarray of shape (m,)
        The calibration rows' scores (:func:`calibration_scores`).
    codes : ndarray of int, shape (m,)
        Their classes, 0..C-1.
    coverage : float in (0, 1)
    n_classes : int
    mondrian : bool, default=False
        Each class's threshold from its own rows' scores; a class with too
        few rows for the coverage gets +inf (it is in every set).

    Returns
    -------
    ndarray of shape (C,)
        The ``ceil(coverage (m + 1))``-th smallest score (per class with
        ``mondrian``); O(m).

    Raises
    ------
    ValueError
        Without ``mondrian``, when the m rows are too few for the coverage.
    """
    if not mondrian:
        m = scores.size
        k = conformal_ranks(coverage, m)[1]
        if k > m:
            raise ValueError(
                f"{m} calibration rows are too few for {coverage:g} coverage: every set would hold every "
                f"class (it needs ceil(coverage (m + 1)) <= m, i.e. m >= {min_rows_for(coverage)}); lower "
                "the coverage or train on more rows"
            )
        return np.full(n_classes, kth_smallest(scores, k, axis=0))
    q = np.empty(n_classes)
    for c in range(n_classes):
        own = scores[codes == c]
        q[c] = kth_smallest(own, conformal_ranks(coverage, own.size)[1], axis=0)
    return q


def set_membership(test_scores, thresholds, method):
    """Whether each class is in each test point's set, (t, C) bool: "lac"
    scores ``<=`` the class's threshold, "aps" ``<`` it (module docstring)."""
    within = np.less_equal if method == "lac" else np.less
    return within(test_scores, thresholds[None, :])
