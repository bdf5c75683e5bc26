"""Bayesian error bars, evidence and GCV for the sparse regressor
(:mod:`lssvm.selection.evidence`)."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

from ..cv.conformal import eigen_rows
from ..kernels import iter_row_blocks
from ..selection.evidence import gcv_path, log_evidence_path, noise_precision
from ..solvers import check_alphas
from ._base import per_target_alpha, squeeze_outputs
from ._validation import validate_input

__all__ = ["BayesMixin"]


class BayesMixin:
    """``predict_std``, ``log_evidence`` and ``gcv`` for :class:`SparseLSSVR`."""

    def _in_memory_factorization(self, what):
        if getattr(self, "factorization_", 0) is None and getattr(self, "_saved_loo", None) is not None:
            raise NotFittedError(
                f"{what} needs the training factorisation, which a model loaded from a file does not keep; fit "
                "it on the training data (predict_interval works on a loaded model at its fitted alpha)"
            )
        engine = self._fitted_engine()
        if not engine.rows_in_memory:  # fitted on Dask: the path solution plus ||Yc||^2 (one pass, once)
            from ..backends.dask.intervals import evidence_factorization

            return evidence_factorization(engine)
        return engine.in_memory(what).fac

    @per_target_alpha
    def gcv(self, alpha=None):
        """Generalised cross-validation score ``(||e||^2 / m) / (1 - tr H / m)^2``.

        Returns
        -------
        float, ndarray of shape (v,), (A,) or (A, v)

        Notes
        -----
        O(r) per alpha and output from the eigendecomposition; derivation in
        :mod:`lssvm.selection.evidence`.
        """
        fac = self._in_memory_factorization("gcv")
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        return squeeze_outputs(gcv_path(fac, alphas), scalar, self._single_output)

    @per_target_alpha
    def log_evidence(self, alpha=None):
        """Log marginal likelihood of the equivalent Gaussian process (subset-of-
        regressors kernel, intercept integrated out under a flat prior), with
        the noise precision at its evidence maximiser.

        Returns
        -------
        float, ndarray of shape (v,), (A,) or (A, v)

        Notes
        -----
        O(r) per alpha and output; derivation in
        :mod:`lssvm.selection.evidence`.
        """
        fac = self._in_memory_factorization("log_evidence")
        alphas, scalar = check_alphas(self.alpha if alpha is None else alpha)
        return squeeze_outputs(log_evidence_path(fac, alphas), scalar, self._single_output)

    @per_target_alpha
    def predict_std(self, X, noise=True):
        """Posterior predictive standard deviation at the fitted alpha.

        Parameters
        ----------
        X : array-like of shape (t, d)
        noise : bool, default=True
            Include the noise variance ``1 / zeta`` (the spread of a new
            target); False gives the spread of the fitted function alone.

        Returns
        -------
        ndarray of shape (t,) or (t, v)

        Notes
        -----
        With noise precision ``zeta = (m - 1) / S(alpha)`` from the evidence
        and ``mu = alpha zeta``, the posterior covariance of the augmented
        weights ``[a, b]`` is ``P^-1 / zeta`` (``P`` as in
        :mod:`lssvm.cv.conformal`), so ``var f(x) = (1/m + m_x^T D m_x) /
        zeta`` with ``m_x = (k(x, Z) - mu)^T Q``; O(n^2) per point.
        """
        if not isinstance(noise, (bool, np.bool_)):
            raise TypeError(f"noise must be True or False; got {noise!r}")
        fac = self._in_memory_factorization("predict_std")
        zeta = noise_precision(fac, self.alpha)[0]  # (v,)
        d = 1.0 / (fac.eigenvalues + float(self.alpha))
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        out = np.empty((X.shape[0], zeta.size))
        for rows in iter_row_blocks(X.shape[0], self.block_size):
            Mx = eigen_rows(fac, self.kernel_(X[rows], self.basis_vectors_))
            h = 1.0 / fac.n_samples + (Mx * Mx) @ d
            out[rows] = (h[:, None] + (1.0 if noise else 0.0)) / zeta[None, :]
        out = np.sqrt(out)
        return out[:, 0] if self._single_output else out
