"""Parameter checks shared by several layers."""

from __future__ import annotations

from numbers import Integral, Real

__all__ = ["check_int", "count_or_fraction"]


def count_or_fraction(name, value, default, total):
    """Resolve a size given as a count in [1, total] or a fraction in (0, 1]
    of ``total`` (None: ``default``, itself a count or a fraction).

    Returns
    -------
    int
        At least 1.
    """
    if value is None:
        value = default
    if isinstance(value, Integral) and not isinstance(value, bool):
        if not 1 <= value <= total:
            raise ValueError(f"{name}={value} must be in [1, {total}]")
        return int(value)
    if isinstance(value, Real) and not isinstance(value, bool) and 0 < value <= 1:
        return max(1, int(round(value * total)))
    raise ValueError(f"{name} must be an int in [1, {total}], a fraction in (0, 1] or None; got {value!r}")


def check_int(name, value, low=1):
    """Raise ``ValueError`` unless ``value`` is an integer (not a bool) >= ``low``."""
    if not (isinstance(value, Integral) and not isinstance(value, bool) and value >= low):
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
