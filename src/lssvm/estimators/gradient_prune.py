"""Inputs switched off after the ARD gradient search (issue 20, session 27).

With one width per input, the exact LOO error is minimised over d + 1
hyper-parameters on m residuals, and it over-fits: on puma32H (m = 4000,
d = 32) and Friedman #1 (m = 2000, d = 20) the search found points whose
LOO error is 0.2-1.2 % below that of the Gaussian process's optimum on the
same basis, on 9 splits of 10, yet which predict worse on 8 of those 9
(Cawley & Talbot, JMLR 8, 2007, describe this over-fitting of the
selection criterion).  The over-fitted point gives small but non-zero
widths to noise inputs (Friedman: four noise widths between 1e-5 and 7e-4,
where the GP's are all below 1e-7).

So after the search, inputs are switched off one at a time (width
``GAMMA_OFF``), in order of rising ``feature_relevance_``, and each switch
is kept unless it raises the LOO error *significantly*: the mean rise of the
per-row squared LOO residuals, paired against the search's optimum, must
stay within ``PRUNE_Z`` standard errors (the "one standard error" rule
applied to inputs) and within ``PRUNE_RTOL`` of the optimum's LOO error.  The criterion is still the exact LOO error; the rule
only refuses hyper-parameters whose gain in it is within its own noise.
Widths that stay on, and alpha, keep their searched values.

Hand-written: scikit-learn's ``SequentialFeatureSelector`` refits an
estimator per candidate and compares scores, with no paired test on the
exact LOO residuals, which here cost one factorisation each.

Cost: d + 1 factorisations of the sparse model, O(d (m n d + m n^2)).
Measured (docs/benchmarks.md, issue 20, session 27): 0.7 s at m = 2000,
n = 300, d = 20; 1.8 s at m = 4000, d = 32.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import NumericalWarning
from ..kernels import ARD
from ..solvers import factorize_sparse_rls

__all__ = ["prune_inputs", "PRUNE_Z", "PRUNE_RTOL", "GAMMA_OFF"]

#: A switched-off input's width (the search's lower bound, ``GAMMA_BOUNDS[0]``).
GAMMA_OFF = 1e-9
#: An input stays on if switching it off raises the LOO error by more than this many standard errors ...
PRUNE_Z = 1.0
#: ... or by more than this fraction of the searched point's LOO error (a few rows with large LOO residuals
#: make the standard error large: on elevators the z rule alone let the LOO error double).
PRUNE_RTOL = 0.01


def loo_squared_residuals(X, Y, rows, gamma, alpha, rcond):
    """Per row, the sum over outputs of the squared exact LOO residuals of the
    sparse ARD model on basis ``rows``: ndarray of shape (m,).

    Raises ``NumericalWarning`` (as an error) where ``K_BB`` is singular at ``rcond``."""
    K_mn = ARD(gamma)(X, X[rows])
    K_BB = K_mn[rows]
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=rcond, overwrite_k=True)
        r = fac.loo_residuals(alpha)
    return (np.asarray(r) ** 2).reshape(X.shape[0], -1).sum(axis=1)


def prune_inputs(X, Y, rows, gamma, alpha, order, rcond=1e-14, z=PRUNE_Z, rtol=PRUNE_RTOL, alphas=None):
    """Switch inputs off while the exact LOO error does not rise significantly.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    Y : ndarray of shape (m, v)
        The (coded) targets the search scored.
    rows : 1-D int array of shape (n,)
        Basis rows.
    gamma : ndarray of shape (d,)
        The searched widths.
    alpha : float
    order : sequence of int
        The inputs in the order they are tried (least relevant first).
    rcond : float
        As for :func:`lssvm.solvers.factorize_sparse_rls`; an input whose
        switch makes ``K_BB`` singular there stays on.
    z : float
        Allowed rise, in standard errors of the mean paired difference
        of the per-row squared LOO residuals, against the searched point.
    rtol : float
        Allowed rise as a fraction of the searched point's LOO error.
    alphas : array-like, optional
        Where inputs were switched off, alpha is then re-chosen from these
        and ``alpha`` by the exact LOO error at the new widths (one
        factorisation).

    Returns
    -------
    gamma : ndarray of shape (d,)
        The widths, ``GAMMA_OFF`` where switched off.
    off : list of int
        The inputs switched off, in the order tried.
    mse : float
        The LOO MSE (sum of squared residuals / (m v)) at the returned widths.
    alpha : float
        ``alpha``, or the better one of ``alphas``.
    """
    gamma = np.array(gamma, dtype=float)
    m, v = X.shape[0], Y.reshape(X.shape[0], -1).shape[1]
    r0 = loo_squared_residuals(X, Y, rows, gamma, alpha, rcond)
    r_cur, off = r0, []
    for j in order:
        trial = gamma.copy()
        trial[j] = GAMMA_OFF
        try:
            r = loo_squared_residuals(X, Y, rows, trial, alpha, rcond)
        except (NumericalWarning, np.linalg.LinAlgError):
            continue
        d = r - r0
        if np.isfinite(d).all() and d.mean() <= min(z * d.std(ddof=1) / np.sqrt(m), rtol * r0.mean()):
            gamma, r_cur = trial, r
            off.append(int(j))
    mse = float(r_cur.sum() / (m * v))
    if off and alphas is not None:
        try:
            path = _loo_path(X, Y, rows, gamma, np.append(np.asarray(alphas, dtype=float), alpha), rcond)
        except (NumericalWarning, np.linalg.LinAlgError):
            path = None
        if path is not None and np.isfinite(path).any() and np.nanmin(path) < mse:
            k = int(np.nanargmin(path))
            alpha, mse = float(np.append(alphas, alpha)[k]), float(path[k])
    return gamma, off, mse, alpha


def _loo_path(X, Y, rows, gamma, alphas, rcond):
    """LOO MSE per alpha at ``gamma``: one factorisation, O(m n) per alpha."""
    K_mn = ARD(gamma)(X, X[rows])
    K_BB = K_mn[rows]
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        fac = factorize_sparse_rls(K_mn, K_BB, Y, rcond=rcond, overwrite_k=True)
        r = np.asarray(fac.loo_residuals(alphas)).reshape(len(alphas), -1)
    return (r**2).mean(axis=1)
