"""The width scale of the searches: ``gamma="scale"`` and the default grid
(multiples of :func:`lssvm.kernels.gamma_scale`) resolved on the data."""

from __future__ import annotations

import numpy as np

from ..kernels import gamma_scale, resolve_gamma

__all__ = ["DEFAULT_CV_GAMMA_FACTORS", "is_scale", "search_scale"]

#: Kernel widths searched by default, as multiples of gamma="scale" (1 / (n_features X.var())):
#: 2^-6 ... 2^6, 13 widths.  The optimum of standardised data lies well inside (docs/benchmarks.md);
#: a best width on either edge raises a SearchEdgeWarning.
DEFAULT_CV_GAMMA_FACTORS = 2.0 ** np.arange(-6.0, 6.5)


def is_scale(gamma):
    """Whether ``gamma`` is the string "scale" (an ARD width vector is not:
    ``vector == "scale"`` compares element-wise and cannot be a condition)."""
    return isinstance(gamma, str) and gamma == "scale"


def search_scale(search, X, weights=None):
    """``gamma_scale(X)`` when the search ``search`` needs it (``gamma="scale"``
    or the default ``param_space`` of a kernel with a width), else 1.0; a clear
    error for a ``gamma`` string other than "scale".  O(m d)."""
    resolve_gamma(search.gamma)
    needed = is_scale(search.gamma) or (search.param_space is None and search.kernel != "linear")
    return gamma_scale(X, weights) if needed else 1.0
