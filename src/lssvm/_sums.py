"""Sums of squared residuals that say when they overflow.

Squaring residuals of about 1e154 or more overflows float64; NumPy then
returns inf with only a ``RuntimeWarning``.  These helpers compute the sums
with that warning silenced and raise a :class:`NumericalWarning` instead,
saying how large the true value is, so an infinite PRESS or MSE never comes
without an lssvm warning.
"""

from __future__ import annotations

import numpy as np

from .exceptions import warn_numerical

__all__ = ["sum_squares", "warn_if_overflow"]


def sum_squares(R, axis):
    """``(R**2).sum(axis)`` without NumPy's overflow warning (inf where the
    sum exceeds float64; see :func:`warn_if_overflow`); O(R.size)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.square(R).sum(axis=axis)


def warn_if_overflow(S, what, stacklevel=3):
    """Issue a NumericalWarning if the sums ``S`` hold inf or NaN."""
    S = np.asarray(S)
    bad = ~np.isfinite(S)
    if not bad.any():
        return
    warn_numerical(f"{what}: {int(bad.sum())} of {S.size} value(s) are inf or NaN because the squared residuals "
        "overflow float64 (residuals of about 1e154 or more), or residuals are themselves infinite "
        "(see any leverage warning); divide the target by a large constant and refit to compare them", stacklevel=stacklevel)
