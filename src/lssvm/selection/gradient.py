"""The exact cross-validation error of a sparse LS-SVM and its gradient with
respect to the kernel parameters and alpha (Cawley & Talbot, JMLR
8, 2007, did this for the full LS-SVM's LOO error).

Everything is an adjoint (reverse-mode) pass written out by hand through
the whitened factorisation of :func:`lssvm.solvers.factorize_sparse_rls`:
no autodiff library works on LAPACK factorisations in float64 without
re-implementing them, and the closed forms below cost a few m x n products.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.linalg import blas

from .._labels import encode_classes
from .._targets import check_numeric_targets
from ..cv import BASIS_IN_HOLDOUT, resolve_folds
from ..exceptions import numerical_warnings_ignore, warn_numerical
from ..kernels import ARD, RBF
from ..kernels.ard import resolve_ard_gamma
from ..solvers import check_alphas, factorize_sparse_rls
from ..solvers.sparse_rls import warn_tiny_leverage
from .evidence import log_evidence_path

__all__ = ["cv_error_and_gradient", "evidence_and_gradient", "GRADIENT_KERNELS", "search_objective"]

#: Kernels whose parameters the gradient covers: each is ``exp(-sum_j gamma_j (x_j - z_j)^2)``.
GRADIENT_KERNELS = ("rbf", "ard")


def cv_error_and_gradient(X, y, basis, kernel, params, alpha, cv="loo", *, basis_in_holdout="remove",
                          classification=False, groups=None, rcond=1e-10, return_details=False):
    r"""Mean squared CV residual of a sparse LS-SVM and its gradient.

    Parameters
    ----------
    X : array-like of shape (m, d)
    y : array-like of shape (m,) or (m, v)
        Targets, or class labels with ``classification=True`` (coded +1/-1,
        one-vs-rest for more classes, and scored by MSE on those codes).
    basis : 1-D int array of shape (n,)
        Training rows that are the basis points (drawn independently of the
        kernel: random or k-center, so that the criterion is smooth).
    kernel : {"rbf", "ard"} or RBF / ARD
    params : dict
        ``{"gamma": ...}``: a number for "rbf"; a number or one width per
        feature for "ard" (a number is broadcast to all d features).  Empty
        to take ``gamma`` from a kernel object.
    alpha : float > 0
    cv : "loo", int, splitter or iterable of (train, test), default="loo"
        "loo" is the closed-form leave-one-out of
        :meth:`lssvm.solvers.SparseRLSFactorization.loo_residuals` (a
        left-out basis point stays a basis function); anything else as
        :func:`lssvm.cv.resolve_folds` (an int is ``KFold(k)`` unshuffled),
        the hold-out models treating basis rows by ``basis_in_holdout``.
    basis_in_holdout : {"remove", "keep", "train"}, default="remove"
        As for :func:`lssvm.cv.cross_val_predictions`.
    classification : bool, default=False
    groups : array-like of shape (m,), optional
        For group splitters.
    rcond : float, default=1e-10
        As for :func:`lssvm.solvers.factorize_sparse_rls`.
    return_details : bool, default=False
        Also return ``details`` (below), at O(m v) more (LOO: plus O(r v)
        for the evidence).

    Returns
    -------
    value : float
        ``sum of squared CV residuals / (m v)``: the mean of
        ``loo_residuals(alpha) ** 2`` (LOO), or of ``(y - cv_predict) ** 2``
        (k-fold, :func:`lssvm.cv.cross_val_predictions`).
    grad : ndarray of shape (p + 1,)
        Partial derivatives with respect to ``log gamma`` ("rbf", p = 1) or
        ``log gamma_1 ... log gamma_d`` ("ard", p = d, feature order), then
        ``log alpha``.
    details : dict, only with ``return_details``
        ``"residuals"``: ndarray of shape (m, v), the CV residuals whose
        squares ``value`` averages (LOO: ``loo_residuals(alpha)``; k-fold:
        ``y - cv_predict``); ``"log_evidence"``: the full model's log
        evidence summed over outputs (LOO; None for k-fold, which has no
        full-model factorisation), as :func:`evidence_and_gradient`.

    Raises
    ------
    ValueError
        For another kernel, invalid widths, alpha, basis rows or folds.

    Warns
    -----
    NumericalWarning
        When ``K_BB`` (or a fold's) is numerically singular: the model then
        lives on its range, whose truncation the gradient does not
        differentiate, so the gradient is approximate there; and for rows
        whose leverage is within 1e-12 of 1 (non-finite LOO residuals).

    Notes
    -----
    **Model.** ``C = K_mn - 1 mu^T`` (centred kernel columns), ``P = C^T C +
    alpha K_BB = K_BB^{1/2}``-whitened as ``Q (Lambda + alpha)^{-1} Q^T =
    P^{-1}`` with ``Q^T K_BB Q = I`` and ``M = C Q`` (the documentation's Mathematics page, §2); ``D =
    (Lambda + alpha)^{-1}``, coefficients ``beta = Q D z`` (``z = M^T Yc``),
    training residuals ``e = Yc - M D z``.

    **LOO.** ``R = e / (1 - h)``, ``h = 1/m + (M o M) D``,
    ``J = ||R||^2 / (m v)``.  With ``G = dJ/de = 2 R / (m v (1 - h))`` and
    ``q = dJ/dh = rowsum(G o R)``, the perturbation ``dP = dC^T C + C^T dC
    + alpha dK_BB + dalpha K_BB``, ``dP^{-1} = -P^{-1} dP P^{-1}`` gives, in
    the eigenbasis (``b = D z``, ``u = D M^T G``, ``T = M D``,
    ``S = T^T diag(q) T``)::

        dJ/dC     = [-G b^T - e u^T + 2 diag(q) T + M u b^T - 2 M S] Q^T
        dJ/dK_mn  = dJ/dC minus its column means (the centring)
        dJ/dK_BB  = alpha Q B Q^T,   B = sym(b u^T) - S
        dJ/dalpha = tr(B)             (Q^T K_BB Q = I)

    **Hold-out folds.** For a fold F with training rows T and basis columns
    L (``basis_in_holdout``: "keep" L = all; "remove" drops F's basis rows
    from L; "train" keeps F's basis rows in T), the fold model is
    factorised on ``K_TL``, ``K_LL`` and predicts ``f_F = mean(y_T) +
    (K_FL - 1 mu_T^T) beta``.  With ``G_F = 2 (y_F - f_F) / (m v)``,
    ``u = D M_F^T G_F`` (``M_F`` the centred rows of F in the fold's
    eigenbasis) and ``g = G_F^T 1``::

        dJ/dK_FL  = -G_F beta^T
        dJ/dK_TL  = centred([-e u^T + M u b^T] Q^T) + 1 (beta g)^T / |T|
        dJ/dK_LL  = alpha Q sym(b u^T) Q^T,   dJ/dalpha = tr(sym(b u^T))

    **Kernel parameters.** For ``k = exp(-sum_j gamma_j (x_j - z_j)^2)``,
    ``dk / dlog gamma_j = -gamma_j (x_j - z_j)^2 k``, so with ``A =
    dJ/dK o K``: ``dJ/dlog gamma_j = -gamma_j (rowsum(A)^T X_j^2 +
    colsum(A)^T Z_j^2 - 2 X_j^T A Z_j)``, for all j in one product
    ``A Z`` (m n d); the same for ``K_BB``.  "rbf" sums over j.

    **Cost.** LOO: the factorisation (m n^2 whitening, m n^2 Gram matrix,
    ~4 n^3 eigh, 2 m n^2 for M), then ``Q`` (n^3), ``S`` and ``M S`` (3 m
    r^2), ``[...] Q^T`` (2 m n r) and the kernel contraction (~2 m n d + 2
    n^2 d), besides the kernel itself (m n d): O(m n^2 + n^3 + m n d), about
    twice a fit's flops.  k-fold: one such pass per fold, O(k (m n^2 + n^3)
    + m n d).  Memory: a few m x n arrays.
    """
    kern, gamma, n_params, X, Y, basis, alpha = _prepare(X, y, basis, kernel, params, alpha, classification)
    if basis_in_holdout not in BASIS_IN_HOLDOUT:
        raise ValueError(f"basis_in_holdout must be one of {list(BASIS_IN_HOLDOUT)}; got {basis_in_holdout!r}")
    Z = X[basis]
    K_mn = kern(X, Z)
    K_BB = K_mn[basis]
    m, v = Y.shape
    scale = 1.0 / (m * v)
    loo = isinstance(cv, str) and cv == "loo"
    details = {}
    if loo:
        value, G_K, G_BB, d_alpha = _loo_adjoint(K_mn, K_BB, Y, alpha, scale, rcond, details)
    else:
        folds = resolve_folds(cv, m, y=None, groups=groups)
        value, G_K, G_BB, d_alpha = _folds_adjoint(K_mn, K_BB, Y, basis, folds, alpha, scale, basis_in_holdout,
                                                   rcond, details)
    grad_gamma = _width_gradient(G_K * K_mn, X, Z, gamma) + _width_gradient(G_BB * K_BB, Z, Z, gamma)
    if n_params == 1:
        grad_gamma = np.array([grad_gamma.sum()])
    grad = np.append(grad_gamma, alpha * d_alpha)
    return (float(value), grad, details) if return_details else (float(value), grad)


def evidence_and_gradient(X, y, basis, kernel, params, alpha, *, classification=False, rcond=1e-10,
                          return_details=False):
    r"""Minus the log evidence of a sparse LS-SVM, per target value, and its
    gradient in the log kernel parameters and log alpha.

    The evidence is that of :func:`lssvm.selection.evidence.log_evidence_path`
    (the subset-of-regressors Gaussian process with the intercept integrated
    out and the noise precision at its maximiser ``(m - 1) / S``, MacKay 1992;
    Van Gestel, Suykens et al. 2002): ``value = -sum_v log p(y_v) / (m v)``.

    Parameters
    ----------
    X, y, basis, kernel, params, alpha, classification, rcond, return_details
        As for :func:`cv_error_and_gradient`.

    Returns
    -------
    value : float
    grad : ndarray of shape (p + 1,)
        As for :func:`cv_error_and_gradient`: log widths, then log alpha.
    details : dict, only with ``return_details``
        ``"residuals"``: the exact LOO residuals at this point, ndarray of
        shape (m, v) (O(m r) more); ``"log_evidence"``: ``-value m v``.

    Warns
    -----
    NumericalWarning
        When ``K_BB`` is numerically singular (the gradient then ignores the
        truncation of its range, as for the CV error).

    Notes
    -----
    Per output, with ``P = C^T C + alpha K_BB`` (``C`` the centred kernel
    columns), ``beta = P^-1 C^T Yc`` and ``S = ||Yc||^2 - Yc^T C beta``,
    ``-log p(y) = 1/2 [log det P - log det K_BB - r log alpha + (m - 1) log S]``
    plus a constant.  Its differential: ``d log det P = tr(P^-1 dP)``, ``d log
    det K_BB = tr(K_BB^-1 dK_BB)``, ``dS = beta^T dP beta - 2 Yc^T dC beta``
    and ``dP = dC^T C + C^T dC + alpha dK_BB + dalpha K_BB``.  In the whitened
    eigenbasis (``P^-1 = Q D Q^T``, ``K_BB^-1 = Q Q^T``, ``beta = Q b``,
    ``M = C Q``; ``w_v = (m - 1) / (2 S_v)``, ``W = diag(w)``), summed over
    the v outputs::

        dE/dC     = [v M D + 2 M b W b^T - 2 Yc W b^T] Q^T
        dE/dK_mn  = dE/dC     (the centring drops out: M and Yc have zero column sums)
        dE/dK_BB  = Q [alpha (v/2 D + b W b^T) - v/2 I] Q^T
        dE/dalpha = v/2 tr(D) + sum_v w_v ||b_v||^2 - v r / (2 alpha)

    then the kernel contraction of :func:`cv_error_and_gradient`.  Cost: one
    factorisation, ``M D``, ``[...] Q^T`` (2 m n r) and the contraction:
    O(m n^2 + n^3 + m n d), less than the LOO gradient.
    """
    kern, gamma, n_params, X, Y, basis, alpha = _prepare(X, y, basis, kernel, params, alpha, classification)
    Z = X[basis]
    K_mn = kern(X, Z)
    K_BB = K_mn[basis]
    m, v = Y.shape
    fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=rcond, warn=False)
    _warn_singular(fac)
    value = -float(log_evidence_path(fac, alpha).sum()) / (m * v)
    M, Q, r = fac.M, fac.Q, fac.eigenvalues.size
    D = 1.0 / (fac.eigenvalues + alpha)
    b = D[:, None] * fac.z  # (r, v)
    # floor m * tiny: w stays finite for a constant output (S = 0, b = 0: its terms vanish, not inf * 0)
    S = np.maximum((fac.y_centered**2).sum(axis=0) - (fac.z * b).sum(axis=0), m * np.finfo(float).tiny)
    w = (m - 1.0) / (2.0 * S)  # (v,)
    bW = b * w  # (r, v)
    G_C = (v * M * D + 2.0 * (M @ b) @ bW.T - 2.0 * fac.y_centered @ bW.T) @ Q.T
    inner = alpha * (0.5 * v * np.diag(D) + b @ bW.T) - 0.5 * v * np.eye(r)
    G_BB = Q @ inner @ Q.T
    d_alpha = 0.5 * v * D.sum() + float((w * (b * b).sum(axis=0)).sum()) - 0.5 * v * r / alpha
    scale = 1.0 / (m * v)
    grad_gamma = _width_gradient(G_C * K_mn, X, Z, gamma) + _width_gradient(G_BB * K_BB, Z, Z, gamma)
    if n_params == 1:
        grad_gamma = np.array([grad_gamma.sum()])
    grad = scale * np.append(grad_gamma, alpha * d_alpha)
    if not return_details:
        return value, grad
    with numerical_warnings_ignore():  # rows of leverage ~1 (non-finite residuals): the evidence is still exact
        residuals = np.asarray(fac.loo_residuals(alpha)).reshape(m, v)
    return value, grad, {"residuals": residuals, "log_evidence": -value * m * v}



def search_objective(value, grad, gamma, n_residuals, hyper_penalty=False):
    """The function L-BFGS-B minimises, and its gradient, from the CV MSE
    ``value`` and its gradient ``grad`` (log widths, then log alpha, as
    :func:`lssvm.selection.cv_error_and_gradient` returns them).

    ``log MSE``: the same minimiser as the MSE, with gradients independent
    of the targets' scale (L-BFGS-B's projected-gradient tolerance is
    absolute).  With ``hyper_penalty``, Cawley & Talbot's ``(N/2) log PRESS
    + (p/2) log Omega``, ``Omega = sum(gamma^2) / 2`` over the p widths,
    divided by ``N / 2`` (N = ``n_residuals``): ``log MSE + (p/N) log Omega``
    plus a constant, so that the stopping tolerances act as without it.

    Notes
    -----
    Cawley & Talbot's (JMLR 8, 2007, §4) Bayesian
    regularisation of the hyper-parameters: ``zeta Q + xi Omega`` with ``Q`` the
    PRESS, a Gaussian prior on the kernel parameters, ``Omega = sum_j gamma_j^2
    / 2``, and both scale parameters ``zeta``, ``xi`` integrated out under
    uninformative (Jeffreys) priors, which leaves ``(N / 2) log Q + (p / 2) log
    Omega`` (N residuals, p kernel parameters; alpha is not penalised) and no
    strength to tune.  It is minimised divided by ``N / 2``: ``log MSE + (p / N)
    log Omega``.  The paper's body is not in the reference corpora available
    here (only its abstract), so its equation numbers are not cited; instead a
    test computes minus the log of the double integral over ``zeta`` and ``xi``
    by quadrature and checks that it changes exactly as ``(N / 2)`` times this
    objective.  A common rescaling of the inputs multiplies every width by one
    factor, which shifts ``log Omega`` by a constant: the penalised optimum
    follows the units of the inputs.  The integrated prior is improper: ``(p /
    2) log Omega`` falls without bound as every width shrinks, while the CV
    error levels off at that of a nearly linear model, so with few residuals
    per width the criterion's minimum is at the lower width bound.  On puma32H
    at 200 rows 26 to 31 of the 32 widths ended at the bound (test MSE 0.107
    without, 0.741 with).  It helped where many inputs matter a little
    (docs/benchmarks.md).

    O(p) on top of the criterion.
    """
    obj, gobj = np.log(value), grad / value
    if hyper_penalty:
        gamma = np.atleast_1d(gamma)
        p = gamma.size
        omega = 0.5 * np.sum(gamma**2)
        obj = obj + (p / n_residuals) * np.log(omega)
        gobj = gobj.copy()
        gobj[:p] += (p / n_residuals) * gamma**2 / omega
    return obj, gobj


def _prepare(X, y, basis, kernel, params, alpha, classification):
    """The checked inputs of both gradients: the kernel, its widths and their
    count, X, the targets, the basis rows and the one alpha."""
    kern, gamma, n_params = _resolve_kernel(kernel, params, X)
    X, Y, basis = _check_inputs(X, y, basis, classification)
    alphas, scalar = check_alphas(alpha)
    if not scalar:
        raise ValueError(f"alpha must be a single number > 0; got {alpha!r}")
    return kern, gamma, n_params, X, Y, basis, float(alphas[0])

def _resolve_kernel(kernel, params, X):
    """``(kernel object, width vector of length d, number of kernel parameters)``."""
    params = dict(params or {})
    unknown = set(params) - {"gamma"}
    if unknown:
        raise ValueError(f"params may only hold 'gamma' (the widths); got {sorted(unknown)}")
    if isinstance(kernel, (RBF, ARD)):
        params.setdefault("gamma", kernel.gamma)
        kernel = kernel.name
    if kernel not in GRADIENT_KERNELS:
        raise ValueError(
            f"the gradient covers the kernels {list(GRADIENT_KERNELS)}; got {kernel!r}"
        )
    if "gamma" not in params:
        raise ValueError("params must give the widths: {'gamma': ...}")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
    d = X.shape[1]
    g = params["gamma"]
    if kernel == "rbf":
        if not isinstance(g, Real) or isinstance(g, bool) or not np.isfinite(g) or g <= 0:
            raise ValueError(f"gamma of the 'rbf' kernel must be a finite number > 0; got {g!r}")
        return RBF(float(g)), np.full(d, float(g)), 1
    gamma = resolve_ard_gamma(g, X)
    return ARD(gamma), gamma, d


def _check_inputs(X, y, basis, classification):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError("X must be a 2-D array of at least 2 rows (the CV error leaves rows out); "
                         f"got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; remove or impute those values")
    if classification:
        _, _, Y = encode_classes(np.asarray(y), "cv_error_and_gradient")
    else:
        Y = check_numeric_targets(np.asarray(y, dtype=float))
        Y = Y[:, None] if Y.ndim == 1 else Y
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one row per row of X ({X.shape[0]}); got shape {np.shape(y)}")
    basis = np.asarray(basis)
    if basis.ndim != 1 or basis.size == 0 or basis.dtype.kind not in "iu":
        raise ValueError("basis must be a non-empty 1-D array of training row indices (e.g. from basis='random' "
                         f"or 'kcenter'); got {basis!r}")
    if basis.min() < 0 or basis.max() >= X.shape[0] or np.unique(basis).size != basis.size:
        raise ValueError(f"basis must hold distinct row indices in [0, {X.shape[0]})")
    return X, Y, basis.astype(np.intp)


def _warn_singular(fac):
    if fac.method != "cholesky":
        warn_numerical("K_BB is numerically singular: the model lives on its range, whose truncation the gradient "
            "does not follow, so the gradient is approximate; use fewer basis points or smaller widths", stacklevel=4)


def _loo_adjoint(K_mn, K_BB, Y, alpha, scale, rcond, details=None):
    """LOO value and ``dJ/dK_mn``, ``dJ/dK_BB``, ``dJ/dalpha`` (see the Notes above); fills ``details`` (a dict)
    with the LOO residuals and the log evidence."""
    fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=rcond, warn=False)
    _warn_singular(fac)
    M, Q, m = fac.M, fac.Q, fac.n_samples
    D = 1.0 / (fac.eigenvalues + alpha)
    b = D[:, None] * fac.z  # (r, v)
    e = fac.y_centered - M @ b
    den = (1.0 - 1.0 / m) - (M * M) @ D
    warn_tiny_leverage(np.flatnonzero(den <= 1e-12))
    with np.errstate(divide="ignore", invalid="ignore"):
        R = e / den[:, None]
        G = (2.0 * scale) * R / den[:, None]
    value = scale * float(np.sum(R * R))
    if details is not None:
        details.update(residuals=R, log_evidence=float(log_evidence_path(fac, alpha).sum()))
    q = np.sum(G * R, axis=1)
    T = M * D
    S = _gram(np.sqrt(q)[:, None] * T)  # q >= 0: a SYRK, half the flops of T^T diag(q) T
    u = D[:, None] * (M.T @ G)
    Rm = 2.0 * q[:, None] * T - G @ b.T - e @ u.T + M @ (u @ b.T - 2.0 * S)
    Rm -= Rm.mean(axis=0)
    B = 0.5 * (b @ u.T + u @ b.T) - S
    return value, Rm @ Q.T, alpha * (Q @ B @ Q.T), float(np.trace(B))


def _folds_adjoint(K_mn, K_BB, Y, basis, folds, alpha, scale, basis_in_holdout, rcond, details=None):
    """Hold-out value and gradients: one factorisation of each fold's model; fills ``details`` (a dict) with
    the hold-out residuals."""
    m, n = K_mn.shape
    row_to_basis = np.full(m, -1, dtype=np.intp)
    row_to_basis[basis] = np.arange(n)
    G_K = np.zeros_like(K_mn)
    G_BB = np.zeros_like(K_BB)
    value, d_alpha = 0.0, 0.0
    residuals = np.full(Y.shape, np.nan)
    for F in folds:
        in_F = np.zeros(m, dtype=bool)
        in_F[F] = True
        held_basis = row_to_basis[F][row_to_basis[F] >= 0]
        if basis_in_holdout == "train":
            in_F[basis] = False  # F's basis rows stay in training
        T = np.flatnonzero(~in_F)
        L = np.arange(n)
        if basis_in_holdout == "remove" and held_basis.size:
            L = np.setdiff1d(L, held_basis)
            if L.size == 0:
                raise ValueError(f"a fold holds every basis point ({n}): with basis_in_holdout='remove' its model "
                                 "would have no basis; use 'keep', more basis points or smaller folds")
        fac = factorize_sparse_rls(K_mn[np.ix_(T, L)], K_BB[np.ix_(L, L)], Y[T], rcond=rcond, warn=False)
        _warn_singular(fac)
        Q, M = fac.Q, fac.M
        D = 1.0 / (fac.eigenvalues + alpha)
        b = D[:, None] * fac.z
        beta = Q @ b
        C_F = K_mn[np.ix_(F, L)] - fac.kernel_mean
        res = Y[F] - fac.y_mean - C_F @ beta
        value += scale * float(np.sum(res * res))
        residuals[F] = res
        G_F = (2.0 * scale) * res
        u = D[:, None] * ((C_F @ Q).T @ G_F)
        e = fac.y_centered - M @ b
        Rm = M @ (u @ b.T) - e @ u.T
        Rm -= Rm.mean(axis=0)
        G_TL = Rm @ Q.T + (beta @ G_F.sum(axis=0))[None, :] / T.size
        G_K[np.ix_(T, L)] += G_TL
        G_K[np.ix_(F, L)] -= G_F @ beta.T
        B = 0.5 * (b @ u.T + u @ b.T)
        G_BB[np.ix_(L, L)] += alpha * (Q @ B @ Q.T)
        d_alpha += float(np.trace(B))
    if details is not None:
        details.update(residuals=residuals, log_evidence=None)
    return value, G_K, G_BB, d_alpha


def _gram(A):
    """``A^T A`` by BLAS SYRK (m r^2 flops instead of 2 m r^2), both triangles filled.  A C-ordered ``A`` is
    passed as its transpose, which is Fortran-ordered: no m x r copy (0.50 -> 0.38 s CPU per call at m = 19,000,
    r = 300)."""
    if A.flags.c_contiguous and not A.flags.f_contiguous:
        C = blas.dsyrk(1.0, A.T, trans=0, lower=0)
    else:
        C = blas.dsyrk(1.0, np.asfortranarray(A), trans=1, lower=0)
    return np.triu(C) + np.triu(C, 1).T


def _width_gradient(A, X, Z, gamma):
    """``dJ / dlog gamma_j`` from ``A = dJ/dK o K`` (m, n) for ``K = k(X, Z)``:
    ``-gamma_j sum_il A_il (X_ij - Z_lj)^2``, O(m n d)."""
    rows, cols = A.sum(axis=1), A.sum(axis=0)
    quad = rows @ (X * X) + cols @ (Z * Z) - 2.0 * np.einsum("ij,ij->j", X, A @ Z)
    return -gamma * quad
