"""Parameter validation of every estimator, by scikit-learn's
``_parameter_constraints``: one declarative table per family
instead of three hand-written validators, plus one hook,
:meth:`ValidatedParamsMixin._check_param_rules`, for the rules that span
parameters.

scikit-learn's :class:`~sklearn.utils._param_validation.Interval` takes
``True`` for the integer 1 and ``inf`` for a number; :class:`Number`
refuses both (``block_size=True`` is an error in every family, as is
``nu=inf``).  The error is scikit-learn's ``InvalidParameterError`` (a
``ValueError``): "The 'rcond' parameter of SparseLSSVR must be a float in
the range (0.0, 1.0). Got 0.0 instead."
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from ..basis import BASIS_METHODS
from ..cv import BASIS_IN_HOLDOUT
from ..kernels import KERNELS, Kernel, make_kernel, resolve_gamma
from ..selection import MAX_EVALUATIONS

__all__ = [
    "check_target_alphas",
    "COUNT",
    "KERNEL_PARAMS",
    "KernelParamsMixin",
    "Number",
    "POSITIVE",
    "SEARCHES",
    "SEARCH_PARAMS",
    "SIZE",
    "SPARSE_PARAMS",
    "SPARSE_SEARCH_PARAMS",
    "UNIT_OPEN",
    "ValidatedParamsMixin",
]

SEARCHES = ("grid", "nelder-mead", "csa", "gradient")


class Number(Interval):
    """:class:`~sklearn.utils._param_validation.Interval` without booleans and
    non-finite values."""

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)) or not super().is_satisfied_by(val):
            return False
        return bool(np.isfinite(val))


#: An integer >= 1 (not a bool).
COUNT = Number(Integral, 1, None, closed="left")
#: A finite number > 0.
POSITIVE = Number(Real, 0, None, closed="neither")
#: A number in (0, 1).
UNIT_OPEN = Number(Real, 0, 1, closed="neither")
#: A size: a count, a fraction in (0, 1] of the rows, or None (the family's default).
SIZE = [COUNT, Number(RealNotInt, 0, 1, closed="right"), None]

#: The kernel and model parameters every estimator shares.
KERNEL_PARAMS = {
    "kernel": [StrOptions(set(KERNELS)), Kernel],
    "gamma": [StrOptions({"scale"}), POSITIVE, "array-like"],
    "degree": [COUNT],
    "coef0": [Number(Real, None, None, closed="neither")],
    "normalize_kernel": ["boolean"],
    "random_state": ["random_state"],
    "block_size": [COUNT],
    # not 0 (as check_n_jobs): the table catches it before any fit path, Dask's included
    "n_jobs": [Number(Integral, None, -1, closed="right"), COUNT, None],
}

#: The sparse LS-SVMs' own (``SparseLSSVR``, ``SparseLSSVC``).
SPARSE_PARAMS = {
    **KERNEL_PARAMS,
    "alpha": [POSITIVE, "array-like"],  # an array (one per target) only where _alpha_per_target
    "basis": [StrOptions(set(BASIS_METHODS)), "array-like", "sparse matrix"],
    "n_basis": [COUNT, StrOptions({"auto"}), None],  # auto: grown until the exact CV error stops improving
    "basis_tol": [Number(Real, 0, 1, closed="left")],
    "pivot_tol": [UNIT_OPEN],
    "n_candidates": [COUNT, None],
    "rcond": [UNIT_OPEN],
}

#: What every ``*CV`` search takes (each family adds its model's parameters).
SEARCH_PARAMS = {
    **KERNEL_PARAMS,
    "alphas": ["array-like", None],
    "param_space": [dict, None],
    "cv": [StrOptions({"loo"}), "cv_object"],
    "search": [StrOptions(set(SEARCHES))],
    "scoring": [StrOptions({"mse", "error_rate", "gcv", "evidence"}), None],
    "max_evaluations": [Number(Integral, 2, MAX_EVALUATIONS, closed="both"), None],
    "refit": ["boolean"],
}

SPARSE_SEARCH_PARAMS = {
    **SEARCH_PARAMS,
    **{k: SPARSE_PARAMS[k] for k in ("basis", "n_basis", "alpha", "basis_tol", "pivot_tol", "n_candidates", "rcond")},
    "basis": [StrOptions(set(BASIS_METHODS) | {"auto"}), "array-like", "sparse matrix"],  # auto: by search
    "basis_in_holdout": [StrOptions(set(BASIS_IN_HOLDOUT))],
    "n_restarts": [Number(Integral, 0, None, closed="left")],
    "hyper_penalty": ["boolean"],
    "selection_rule": [StrOptions({"one-se", "min"})],
    "alpha_per_target": ["boolean"],
    "store_cv_results": ["boolean"],
    "n_targets_batch": [StrOptions({"auto"}), COUNT],
    "time_budget": [POSITIVE, None],
}


def check_target_alphas(alpha, n_targets=None):
    """Validate one alpha per target.

    Parameters
    ----------
    alpha : array-like of shape (v,)
    n_targets : int, optional
        The number of targets it must match.

    Returns
    -------
    ndarray of shape (v,)

    Raises
    ------
    ValueError
        If it is not a 1-D array of finite numbers > 0, or its length is not ``n_targets``.
    """
    raw = np.asarray(alpha)
    if raw.ndim != 1 or raw.size == 0 or raw.dtype.kind not in "iuf":
        raise ValueError(f"alpha must be a number > 0 or a 1-D array of them, one per target; got {alpha!r}")
    alphas = raw.astype(float)
    if not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError(f"alpha must hold finite values > 0 (one ridge penalty per target); got {alpha!r}")
    if n_targets is not None and alphas.size != n_targets:
        raise ValueError(f"alpha holds {alphas.size} values but y has {n_targets} target(s): give one alpha "
                         "per target (column of y), or a single number")
    return alphas


class ValidatedParamsMixin:
    """``_validate_params`` = a scalar ``alpha``, then scikit-learn's
    ``_parameter_constraints``, then :meth:`_check_param_rules`; ``fit``
    calls it first."""

    def _validate_params(self):
        alpha = getattr(self, "alpha", 1.0)
        if np.ndim(alpha) == 1 and getattr(self, "_alpha_per_target", False):
            check_target_alphas(alpha)
        elif np.ndim(alpha) != 0:
            raise ValueError(
                f"alpha must be a single number > 0 for fit; got {self.alpha!r} (an array of alphas goes to the "
                "cross-validation methods, e.g. loo_residuals / cv_error, or to the *CV searches' alphas)"
            )
        super()._validate_params()
        self._check_param_rules()

    def _check_param_rules(self):
        """The one hook for rules that span parameters (none by default)."""


class KernelParamsMixin:
    """The kernel of an estimator's ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``normalize_kernel``
    (:data:`KERNEL_PARAMS`)."""

    def _check_params(self, X=None):
        """Validate the parameters (:meth:`_validate_params`); returns the kernel."""
        self._validate_params()
        return self._kernel_for(X)

    def _fitted_kernel(self, X, weights=None):
        """:meth:`_kernel_for` at fit: sets ``gamma_``, the width used."""
        self.gamma_ = resolve_gamma(self.gamma, X, weights)
        return self._kernel_for(X, weights)

    def _kernel_for(self, X, weights=None):
        """The kernel of validated parameters, ``gamma="scale"`` resolved on ``X`` (weighted rows with
        ``weights``; 1.0 without ``X``)."""
        return make_kernel(self.kernel, gamma=resolve_gamma(self.gamma, X, weights), degree=self.degree,
                           coef0=self.coef0, normalize=self.normalize_kernel)
