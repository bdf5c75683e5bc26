"""Cross-validation (layer 4): brute-force references and CV helpers.

The exact fast LOO itself lives with the training factorisation
(:class:`lssvm.solvers.SparseRLSFactorization`) and is exposed by the
estimators' ``loo_residuals``; :func:`explicit_loo_residuals` is the slow
reference it is tested against.
"""

from .explicit import explicit_loo_residuals

__all__ = ["explicit_loo_residuals"]
