"""Bayesian error bars, evidence and GCV for every regressor (the model at its fitted basis)
(:mod:`lssvm.selection.evidence`)."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

from ..exceptions import warn_numerical
from ..kernels import iter_row_blocks
from ..selection.evidence import gcv_path, log_evidence_path, ridge_objective
from ..solvers import check_alphas
from ..solvers.whitening import whiten_rows
from ._base import per_target_alpha, squeeze_outputs
from ._validation import validate_input

__all__ = ["BayesMixin"]


class BayesMixin:
    """``predict_std``, ``log_evidence`` and ``gcv`` of the engine's model (``_fitted_engine()``)."""

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

    @staticmethod
    def _warn_alpha_below_rounding(fac, alpha, S, residual_err=0.0):
        """Warn when the variance has lost digits to rounding: each
        ``1 / (lambda_j + alpha)`` carries a relative error of about
        ``sqrt(r) eps lambda_max / (lambda_j + alpha)`` (the eigensolver's
        backward error), inherited in full along the directions the data
        leave undetermined (``lambda_j ~ 0``); and the noise variance
        ``S(alpha) = ||Yc||^2 - sum z_j^2 / (lambda_j + alpha)``, a difference,
        one of about ``r eps ||Yc||^2 / S`` (a model that nearly interpolates);
        and the basis residual ``k(x, x) - ||k_B(x) W||^2``, one of about
        ``n eps k(x, x)`` absolute, times ``1 / mu`` (``residual_err``: that
        relative to the variance, at its worst over the points)."""
        lam = np.asarray(fac.eigenvalues, dtype=float)
        if not lam.size:
            lam = np.zeros(1)
        eps = np.finfo(float).eps
        slack = np.sqrt(lam.size) * eps * max(float(lam.max()), 0.0)
        err = float(np.max(slack / (lam + alpha)))
        yy = (np.asarray(fac.y_centered, dtype=float) ** 2).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            err_S = np.where(yy > 0, (lam.size + 1) * eps * yy / S, 0.0)  # a constant output: S = 0 exactly
        err = min(max(err, float(np.max(err_S)), residual_err), 1.0)
        if err > 1e-6:
            warn_numerical(
                f"predict_std at alpha={alpha:g} is accurate to about {err:.0e} only: rounding (about eps "
                f"times the Gram matrix's largest eigenvalue, {lam.max():.3g}, the targets' sum of squares or "
                "k(x, x)) is that large against lambda + alpha, against the residual sum of squares of a model "
                "that nearly interpolates, or, magnified by 1 / alpha, against the variance; use a larger alpha", stacklevel=3)

    @per_target_alpha
    def predict_std(self, X, noise=True, basis_residual=True):
        """Posterior predictive standard deviation at the fitted alpha.

        Parameters
        ----------
        X : array-like of shape (t, d)
        noise : bool, default=True
            Include the noise variance ``1 / zeta`` (the spread of a new
            target); False gives the spread of the fitted function alone.
        basis_residual : bool, default=True
            Include the kernel's variance outside the span of the basis,
            ``(k(x, x) - k_B(x)^T K_BB^-1 k_B(x)) / mu`` (Nyström: the
            rank-k approximation ``k_S(x)^T W_k^+ k_S(x)`` in place of the
            second term; fixed size: the basis of its supported prototypes): the Gaussian-process
            posterior of the model's kernel (the deterministic training
            conditional, DTC), which grows back to the prior spread away from
            the data and, with every training row in the basis, equals the
            full Gaussian process with a flat prior on the intercept.  False
            gives the posterior of the finite weight vector alone (subset of
            regressors, SoR), which far from the data falls to the
            intercept's spread: overconfident there.

        Returns
        -------
        ndarray of shape (t,) or (t, v)

        Notes
        -----
        With noise precision ``zeta = (m - 1) / S(alpha)`` from the evidence
        and ``mu = alpha zeta``, the posterior covariance of the augmented
        weights ``[a, b]`` is ``P^-1 / zeta`` (``P`` as in
        :mod:`lssvm.cv.conformal`), so the subset-of-regressors variance is
        ``(1/m + m_x^T D m_x) / zeta`` with ``m_x = (k(x, Z) - mu)^T Q``; the
        basis residual adds ``(k(x, x) - ||k(x, Z) W||^2) / mu`` with
        ``W W^T = K_BB^-1`` (on the numerical range of ``K_BB`` where it is
        singular).  Quiñonero-Candela and Rasmussen (2005), §5 and §6; the
        documentation's Mathematics page, §6.  O(n^2) per point either way.
        """
        for name, value in (("noise", noise), ("basis_residual", basis_residual)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False; got {value!r}")
        fac = self._in_memory_factorization("predict_std")
        # the engine's basis: the family's fitted one (fixed size: its supported prototypes)
        basis = getattr(self._fitted_engine(), "basis_vectors", None)
        basis = self.basis_vectors_ if basis is None else basis
        alpha = float(self.alpha)
        # the noise variance 1 / zeta = S(alpha) / (m - 1): exactly 0 for a constant output
        S = ridge_objective(fac, alpha)[0]  # (v,)
        noise_var = S / (fac.n_samples - 1.0)
        d = 1.0 / (fac.eigenvalues + alpha)
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        mean_row = whiten_rows(np.asarray(fac.kernel_mean, dtype=float)[None, :], fac.whitener, fac.method)
        out = np.empty((X.shape[0], noise_var.size))
        n_basis, residual_err = basis.shape[0], 0.0
        for rows in iter_row_blocks(X.shape[0], self.block_size):
            Phi = whiten_rows(np.asarray(self.kernel_(X[rows], basis), dtype=float), fac.whitener,
                              fac.method)  # (t, r): k(x, Z) W
            Mx = (Phi - mean_row) @ fac.V
            h = 1.0 / fac.n_samples + (Mx * Mx) @ d
            var = (h[:, None] + (1.0 if noise else 0.0)) * noise_var[None, :]
            if basis_residual:
                # k(x, x) - k_B(x)^T K_BB^-1 k_B(x) >= 0; rounding can make it slightly negative
                kxx = np.asarray(self.kernel_.diag(X[rows]), dtype=float)
                residual = np.maximum(kxx - np.einsum("tr,tr->t", Phi, Phi), 0.0)
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # 1 / mu = (1 / zeta) / alpha
                    var = var + residual[:, None] * (noise_var[None, :] / alpha)
                    # the difference carries ~ n eps k(x, x) of rounding, which 1 / mu magnifies at a tiny alpha
                    lost = (n_basis * np.finfo(float).eps * np.abs(kxx))[:, None] * (noise_var[None, :] / alpha) / var
                residual_err = max(residual_err, float(np.max(np.where(var > 0, lost, 0.0), initial=0.0)))
            out[rows] = var
        out = np.sqrt(out)
        self._warn_alpha_below_rounding(fac, alpha, S, residual_err)
        if not np.all(np.isfinite(out)):
            warn_numerical(
                f"predict_std overflowed at alpha={alpha:g}: the prior variance 1 / (alpha zeta) of the kernel "
                "term is beyond floating point; use a larger alpha or scale the targets", stacklevel=2)
        return out[:, 0] if self._single_output else out
