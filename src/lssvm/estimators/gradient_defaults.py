"""The defaults of ``search="gradient"`` : what ``basis="auto"`` and
``basis="pchol"`` mean there, and the evaluation budget per L-BFGS-B start that ``max_evaluations=None``
gives.  Measured in docs/benchmarks.md; the decision in docs/notes.md.
"""

from __future__ import annotations

import numpy as np

from ..basis import default_basis_size, default_n_basis, select_basis
from ..kernels import make_kernel

__all__ = ["AUTO_BASIS", "AUTO_BASIS_CAP", "FIXED_AFTER_GRID", "auto_basis", "GRADIENT_MIN_EVALUATIONS", "GRADIENT_EVALUATIONS_PER_PARAMETER",
           "gradient_evaluations", "pchol_rows"]

#: basis="auto" (the default) means this for search="gradient" (docs/notes.md).
AUTO_BASIS = "random"
#: ... of at most this many rows for n_basis=None: ``lssvm.basis.default_n_basis(m, AUTO_BASIS_CAP)``, 300 from
#: m = 900 (the random basis's own default, 200, lost 11-31 % on pol; docs/notes.md).
AUTO_BASIS_CAP = 300
#: basis="pchol": the pivoted-Cholesky rows of the best isotropic grid point, drawn once after the
#: grid and then kept fixed, so the criterion stays a smooth function of the widths.
FIXED_AFTER_GRID = ("pchol",)
#: max_evaluations=None: L-BFGS-B's cap per start (and of the evidence search) for p widths + log alpha,
#: ``max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (p + 1))`` (docs/notes.md).
GRADIENT_MIN_EVALUATIONS = 60
GRADIENT_EVALUATIONS_PER_PARAMETER = 3


def auto_basis(basis, n_basis, m, n_distinct=None):
    """``(basis, n_basis)`` the gradient search draws for the estimator's ``basis`` and ``n_basis`` on m rows:
    "auto" is ``AUTO_BASIS`` ("random") of ``n_basis`` rows, by default ``default_n_basis(m, AUTO_BASIS_CAP)``
    (``min(300, ceil(10 sqrt(m)), m)``: 300 at m = 2000 and 4000), at most the ``n_distinct`` distinct rows
    (a random basis draws distinct rows: the motorcycle data's 133 rows hold 94); anything else as given."""
    if isinstance(basis, str) and basis == "auto":
        if n_basis is not None:
            return AUTO_BASIS, n_basis
        return AUTO_BASIS, min(default_n_basis(m, AUTO_BASIS_CAP), m if n_distinct is None else n_distinct)
    return basis, n_basis


def gradient_evaluations(max_evaluations, n_parameters):
    """L-BFGS-B's evaluation cap per start: ``max_evaluations`` as given, or for None
    ``max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (n_parameters + 1))``
    (``n_parameters``: the widths searched, d for "ard", 1 for "rbf"; + 1 for log alpha)."""
    if max_evaluations is not None:
        return int(max_evaluations)
    return max(GRADIENT_MIN_EVALUATIONS, GRADIENT_EVALUATIONS_PER_PARAMETER * (n_parameters + 1))


def pchol_rows(est, X, gamma, classification, seed):
    """The pivoted-Cholesky rows of the isotropic RBF kernel at ``gamma`` (the best grid width), at the
    estimator's basis size rule (``n_basis=None``: ``lssvm.basis.default_basis_size``) and tolerances
    (``seed`` breaks ties between pivots)."""
    n = default_basis_size("pchol", est.n_basis, X.shape[0], classification)
    sel = select_basis(X, make_kernel("rbf", gamma=gamma), "pchol", n, tol=est.basis_tol, pivot_tol=est.pivot_tol,
                       rcond=est.rcond, random_state=seed)
    return np.asarray(sel.indices)
