"""The K fold models of CV+ at new points: one product of the
new points' kernel rows with the folds' dual coefficients."""

from __future__ import annotations

from scipy.linalg import lapack

__all__ = ["FoldValues"]


class FoldValues:
    """The K fold models of CV+ at new points, from their raw kernel rows:
    one product with the folds' dual coefficients (a refitted fold, on a
    reduced basis, evaluates itself).

    Parameters
    ----------
    fac : PathSolution
        The training factorisation (``V``, whitener, ``kernel_mean``).
    B : ndarray of shape (r, K, v)
        Eigenbasis coefficients of each fold (zero for refitted folds).
    b0 : ndarray of shape (K, v)
    refits : dict of int to callable
        Folds refitted on a reduced basis, evaluated on raw kernel rows.

    Notes
    -----
    The dual coefficients ``a_k = W V beta_k`` and intercepts ``b0_k - mu^T
    a_k`` are formed once, O(n r K v), as :meth:`PathSolution.coef` forms a
    model's; then O(t n K v) per call, with no eigenbasis rows of the points.
    """

    def __init__(self, fac, B, b0, refits=None):
        r, K, v = B.shape
        self.shape = (K, v)
        self.A = _whiten_back(fac, fac.V @ B.reshape(r, K * v))  # (n, K v)
        self.c0 = b0.reshape(K * v) - fac.kernel_mean @ self.A
        self.refits = refits or {}

    def __call__(self, K_x):
        """Fold values (t, K, v) at points with kernel rows ``K_x`` (t, n)."""
        out = (K_x @ self.A + self.c0).reshape(-1, *self.shape)
        for k, model in self.refits.items():
            out[:, k] = model(None, K_x)
        return out


def _whiten_back(fac, B):
    """``fac.whiten_back(B)`` (``W B``); on the Cholesky path by LAPACK's
    ``dtrtrs`` directly (``solve_triangular``'s checks cost ~0.1 ms, more
    than the solve for CV+'s few columns)."""
    if fac.method == "cholesky":
        X, info = lapack.dtrtrs(fac.whitener, B, lower=1, trans=1)
        if info == 0:
            return X
    return fac.whiten_back(B)
