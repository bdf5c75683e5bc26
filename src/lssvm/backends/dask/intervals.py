"""Conformal intervals, calibration data and evidence for a sparse model
fitted on Dask rows, streamed in passes (:func:`dask_interval`,
:func:`evidence_factorization`).

The in-memory formulas (:mod:`lssvm.cv.conformal`) need, per test point
x and training row i, the leave-one-out model ``f_{-i}(x) = f(x) - u_i(x)
R_i`` with ``u_i(x) = 1/m + m_x^T D m_i`` (Sherman-Morrison on the
training factorisation) and the exact LOO residual ``R_i``, or for CV+ the
fold model ``f_{-k(i)}(x)`` and the out-of-fold residual.  Row i's part,
``m_i`` and ``R_i``, is computed from its block in the task (kernel row,
the eigenbasis product, :meth:`lssvm.solvers.PathSolution.loo_rows`): the
same numbers as the LOO pass.  The order statistics over the m rows are
taken by :func:`.selection.select_kth` without holding the t x m values.

Passes per call (test points in groups of :data:`TEST_GROUP`, each group
its own passes), and what each costs:

* "jackknife+": one light sample pass, then usually two full passes, each
  O(m (n d + 2 n r + 2 t r v)) flops (kernel rows, eigenbasis rows, the
  t x m products ``u_i(x)``) plus O(m t v log G) comparisons;
* "jackknife": one problem per output (the quantile of ``|R_i|``): the
  sample pass and, while m fits the budget, one collecting pass, O(m (n d
  + 2 n r)) each, independent of t;
* "cv+": one pass solving the fold models (as ``cv_predict``), then the
  sample and usually two full passes of O(m (n d + 2 n r + t v)): a row's
  value is its fold model at x, computed once per fold on the client, plus or
  minus its out-of-fold residual.

Nothing of size m stays on the client: it holds O(t v (sample_size +
n_thresholds)) values and the collected candidates (a few hundred per
test point and bound; the jackknife's m residuals while they fit the
collecting budget of :data:`.selection.BUDGET` values).
"""

from __future__ import annotations

import numpy as np

from ..._threads import serial_region
from ...cv.conformal import conformal_ranks, eigen_rows
from ...cv.row_blocks import block_fold_outputs
from ...exceptions import warn_numerical
from ...solvers.row_blocks import SUB_ROWS, block_rows_in_eigenbasis, check_block, code_targets, whitened_rows
from .passes import run_pass
from .selection import select_kth

__all__ = ["dask_interval", "evidence_factorization", "TEST_GROUP"]

#: Test points whose bounds are selected in the same passes.
TEST_GROUP = 1024
#: Values (problems x rows) a task forms at once.
_TASK_FLOATS = 1 << 21


def _sub_rows(n_problems):
    """Rows per sub-block: at most ``_TASK_FLOATS`` values, and at most
    ``SUB_ROWS`` kernel rows (as the LOO pass)."""
    return max(64, min(SUB_ROWS, _TASK_FLOATS // max(n_problems, 1)))


class _LooValues:
    """Row i's jackknife+ values ``f_{-i}(x) -+ |R_i|`` for t test points:
    problems ``(bound, test point, output)``, lower bounds first."""

    def __init__(self, fit, alpha, Mx, symmetric=False):
        sol = fit.solution
        self.ctx, self.sol, self.alphas = fit.ctx, sol, np.array([float(alpha)])
        self.Q = fit.ctx.W @ sol.V
        self.offset = fit.psi_mean @ sol.V
        d = 1.0 / (sol.eigenvalues + float(alpha))
        self.Mxd = Mx * d
        self.full = sol.y_mean + Mx @ (d[:, None] * sol.z)  # (t, v), as lssvm.cv.conformal.loo_values
        self.m = sol.n_samples
        self.symmetric = symmetric
        t, v = self.full.shape
        self.n_problems = v if symmetric else 2 * t * v

    def block_values(self, x, y, g, row0, rows=None):
        with serial_region():
            X = check_block(x, self.ctx, row0)
            Y = code_targets(y, self.ctx.classes, row0)
            if rows is not None:
                X, Y = X[rows], Y[rows]
            step = _sub_rows(self.n_problems)
            for lo in range(0, X.shape[0], step):
                sl = slice(lo, lo + step)
                M = block_rows_in_eigenbasis(X[sl], self.ctx, self.Q, self.offset)
                R, tiny = self.sol.loo_rows(M, Y[sl] - self.sol.y_mean, self.alphas)
                S = np.abs(R[0])  # (b, v)
                if self.symmetric:
                    yield S.T, tiny.size
                    continue
                U = self.Mxd @ M.T + 1.0 / self.m  # (t, b), as lssvm.cv.conformal.loo_values
                # f(x) - u_i(x) R_i, then -+ |R_i|: the in-memory operations, laid out (t, v, b)
                vals = self.full[:, :, None] - U[:, None, :] * R[0].T[None]
                yield _bounds(vals, S.T[None]), tiny.size


class _CvPlusValues:
    """Row i's CV+ values ``f_{-k(i)}(x) -+ |R_i|`` (fold models at the test
    points ``centres`` (t, v, K), indexed by fold), lower bounds first."""

    def __init__(self, fit, spec, models, centres):
        self.ctx, self.spec, self.models, self.centres = fit.ctx, spec, models, centres
        t, v, _ = centres.shape
        self.n_problems = 2 * t * v

    def block_values(self, x, y, g, row0, rows=None):
        with serial_region():
            for X, Y, folds in block_sub_rows(self.spec, x, y, g, row0, rows, self.ctx.classes, self.n_problems):
                F = block_fold_outputs(X, None, folds, row0, self.ctx, self.models, 1)[0]  # (b, v)
                S = np.abs(Y - F)
                c = self.centres[:, :, np.clip(folds, 0, self.centres.shape[2] - 1)]  # (t, v, b)
                yield _bounds(c, S.T[None]), 0


def block_sub_rows(spec, x, y, g, row0, rows, classes, n_problems):
    """A block's inputs, coded targets and fold numbers (the rows ``rows``
    of it when given), in sub-blocks of :func:`_sub_rows` rows: yields
    ``(X (b, d), Y (b, v), folds (b,))`` for the CV+ values of one block."""
    X = np.asarray(x, dtype=float)
    folds = np.asarray(spec.block_folds(row0, X.shape[0], g), dtype=np.int64).ravel()
    Y = code_targets(y, classes, row0)
    if rows is not None:
        X, Y, folds = X[rows], Y[rows], folds[rows]
    step = _sub_rows(n_problems)
    for lo in range(0, X.shape[0], step):
        sl = slice(lo, lo + step)
        yield X[sl], Y[sl], folds[sl]


def _bounds(centres, scores):
    """Lower then upper values ``centres -+ scores`` (t, v, b) as (2 t v, b)."""
    t, v, b = centres.shape
    out = np.empty((2, t, v, b))
    np.subtract(centres, scores, out=out[0])
    np.add(centres, scores, out=out[1])
    return out.reshape(2 * t * v, b)


def _fold_centres(fit, models, X):
    """Every fold model at the test points, (t, v, K), K = largest fold + 1
    (as :func:`lssvm.cv.row_blocks.block_fold_outputs`, on the client)."""
    K = max(models) + 1
    v = next(iter(models.values())).y_mean.size
    out = np.full((X.shape[0], v, K), np.nan)
    _, psi = whitened_rows(X, fit.ctx)
    for f, mod in models.items():
        if mod.B.shape[0] == 0:
            p = np.zeros((X.shape[0], 0))
        elif mod.ctx is None:
            p = psi
        else:
            p = whitened_rows(X, mod.ctx)[1]
        out[:, :, f] = (p - mod.psi_mean) @ mod.B + mod.y_mean
    return out


def dask_interval(fit, X, coverage, method, alpha, cv=10, groups=None, basis_in_holdout="remove"):
    """Conformal intervals of a Dask-fitted sparse model at new points.

    Parameters
    ----------
    fit : DaskSparseFit
    X : ndarray or sparse matrix of shape (t, d)
        New points (validated).
    coverage : float
        Validated, with enough rows (:func:`lssvm.estimators._intervals.check_interval_request`).
    method : {"jackknife+", "jackknife", "cv+"}
    alpha : float
    cv, groups, basis_in_holdout
        Folds of "cv+", as :meth:`lssvm.SparseLSSVR.cv_predict`.

    Returns
    -------
    bounds : ndarray of shape (t, 2, v)
    passes : int
        Passes over the training rows.

    Notes
    -----
    The quantile conventions are those of :func:`lssvm.cv.conformal.interval_from_values`:
    lower the ``floor(alpha_c (m + 1))``-th smallest of the lower values,
    upper the ``ceil((1 - alpha_c)(m + 1))``-th smallest of the upper
    ones; the plain jackknife is ``f(x) +- q`` with ``q`` that upper rank
    of ``|R_i|``.  The passes and their cost are in the module docstring.
    """
    m = fit.n_samples
    k_lo, k_hi = conformal_ranks(coverage, m)
    sol = fit.solution
    v = sol.z.shape[1]
    t = X.shape[0]
    out = np.empty((t, 2, v))
    passes = 0
    data, spec, models = fit.data, None, None
    if method == "cv+":
        folds = fit.resolve_cv(cv, groups, classifier=False)
        on = fit._on(folds)
        data, spec = on.data, folds.spec
        models = on._fold_models(spec, np.array([float(alpha)]), basis_in_holdout, "CV+ folds pass")
        passes += 1
    tiny = 0
    if method == "jackknife":  # one quantile of |R_i| per output, for every test point
        valuer = _LooValues(fit, alpha, np.zeros((0, sol.rank)), symmetric=True)
        q, passes, tiny = select_kth(data, valuer, k_hi, "jackknife quantile")
        for lo in range(0, t, TEST_GROUP):
            Mx = eigen_rows(sol, fit.ctx.kernel(X[lo : lo + TEST_GROUP], fit.ctx.basis))
            full = sol.y_mean + Mx @ (sol.z / (sol.eigenvalues + float(alpha))[:, None])
            out[lo : lo + TEST_GROUP] = np.stack([full - q, full + q], axis=1)
    for lo in range(0, t if method != "jackknife" else 0, TEST_GROUP):
        Xg = X[lo : lo + TEST_GROUP]
        tg = Xg.shape[0]
        if method == "cv+":
            valuer = _CvPlusValues(fit, spec, models, _fold_centres(fit, models, Xg))
        else:
            valuer = _LooValues(fit, alpha, eigen_rows(sol, fit.ctx.kernel(Xg, fit.ctx.basis)))
        k = np.concatenate([np.full(tg * v, k_lo), np.full(tg * v, k_hi)])
        vals, n, tn = select_kth(data, valuer, k, method)
        passes += n
        tiny = max(tiny, tn)
        out[lo : lo + tg, 0] = vals[: tg * v].reshape(tg, v)
        out[lo : lo + tg, 1] = vals[tg * v :].reshape(tg, v)
    if tiny:
        warn_numerical(f"leave-one-out: {tiny} training row(s) have a hat-matrix diagonal within 1e-8 of 1 (or an unreliable "
            "residual): their LOO residuals, and so the interval bounds, may be inaccurate; increase alpha", stacklevel=4)
    return out, passes


class _EvidenceView:
    """A Dask fit's :class:`lssvm.solvers.PathSolution` plus the sum of
    squared centred targets ``||Yc||^2`` (one pass), read by
    :mod:`lssvm.selection.evidence` through ``y_centered``: a one-row
    stand-in whose squares sum to ``||Yc||^2`` (the only use it makes of it)."""

    def __init__(self, solution, yy):
        self._solution = solution
        self.y_centered = np.sqrt(yy)[None, :]

    def __getattr__(self, name):
        return getattr(self._solution, name)


def evidence_factorization(fit):
    """The factorisation that :mod:`lssvm.selection.evidence` and
    ``predict_std`` read, for a Dask fit: the path solution plus
    ``||Yc||^2`` from one pass over the targets (O(m v), kept with the fit).

    Returns
    -------
    object
        ``eigenvalues``, ``z``, ``n_samples``, ``y_mean``, ``kernel_mean``,
        ``whitener``, ``V``, ``method`` of the solution and ``y_centered``.
    """
    if "yy" not in fit.cache:
        T = fit.targets()
        fit.cache["yy"] = np.asarray(run_pass("sum of squared targets pass",
                                              ((T - fit.solution.y_mean) ** 2).sum(axis=0)), dtype=float)
    return _EvidenceView(fit.solution, fit.cache["yy"])
