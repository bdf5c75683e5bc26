"""Conformal prediction intervals for the sparse regressors, from the exact
leave-one-out and hold-out models (:mod:`lssvm.cv.conformal`)."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from sklearn.utils.metaestimators import available_if

from .._threads import single_threaded_blas
from ..cv.conformal import (
    INTERVAL_METHODS,
    SortedFoldScores,
    check_coverage,
    conformal_ranks,
    cv_plus_folds,
    interval_from_values,
    min_rows_for,
    sparse_full_conformal,
    sparse_jackknife,
    sparse_jackknife_plus,
)
from ..cv.fold_models import block_cv_plus, fold_threads
from ..cv.folds import contiguous_folds
from ..kernels import iter_row_blocks
from ..solvers import check_alphas
from ._base import BaseSparseLSSVM, per_target_alpha
from ._training_data import check_training_data
from ._validation import validate_input

__all__ = ["SearchIntervalMixin", "SparseIntervalMixin", "check_interval_request"]

#: test rows per block are chosen so a block's (t, m, v) values stay near this many floats
_BLOCK_FLOATS = 1 << 22
#: CV+ runs on one BLAS thread up to this rank and this much fold work (its products are r x r and t x n)
_SMALL_RANK = 256
_ONE_THREAD_FLOPS = 1e9


def check_interval_request(coverage, method, n_rows, methods=INTERVAL_METHODS):
    """Validate ``coverage``, ``method`` and whether ``n_rows`` calibration
    rows suffice for finite bounds; returns the coverage as float."""
    coverage = check_coverage(coverage)
    if method not in methods:
        raise ValueError(f"method must be one of {list(methods)} for this model; got {method!r}")
    k_lo, k_hi = conformal_ranks(coverage, n_rows)
    if k_lo < 1 or k_hi > n_rows:
        raise ValueError(
            f"{n_rows} training rows are too few for {coverage:g} coverage: the conformal bounds would be "
            f"infinite (they need ceil(coverage (m + 1)) <= m, i.e. m >= {min_rows_for(coverage)}); "
            "lower the coverage or train on more rows"
        )
    return coverage


def _new_points(estimator, X):
    """``X`` validated as ``validate_input(estimator, X, reset=False,
    dtype=float64, accept_sparse="csr")`` does.  A float64 ndarray of the
    fitted width, finite, for an estimator fitted without feature names, is
    returned as it is without scikit-learn's checks (~0.3 ms, a tenth of a
    CV+ call); anything else takes them (and their errors and warnings)."""
    if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and X.shape[0] > 0
            and X.shape[1] == getattr(estimator, "n_features_in_", -1)
            and not hasattr(estimator, "feature_names_in_") and np.logical_and.reduce(np.isfinite(X), axis=None)):
        return X
    return validate_input(estimator, X, reset=False, dtype=np.float64, accept_sparse="csr")


class SparseIntervalMixin:
    """``predict_interval`` for :class:`SparseLSSVR` (a mixin; needs the
    attributes of :class:`lssvm.estimators._base.BaseSparseLSSVM`)."""

    @per_target_alpha
    def predict_interval(self, X, coverage=0.9, method="jackknife+", alpha=None, cv=10, groups=None,
                         basis_in_holdout=None):
        """Conformal prediction intervals from the exact LOO or hold-out models.

        Parameters
        ----------
        X : array-like of shape (t, d)
        coverage : float in (0, 1), default=0.9
            Target coverage ``1 - alpha_c``.
        method : {"jackknife+", "jackknife", "cv+", "full"}, default="jackknife+"
            "jackknife+" (Barber, Candes, Ramdas & Tibshirani 2021, Ann.
            Statist. 49): lower bound the ``floor(alpha_c (m + 1))``-th
            smallest of ``f_{-i}(x) - |R_i|``, upper bound the ``ceil((1 -
            alpha_c)(m + 1))``-th smallest of ``f_{-i}(x) + |R_i|``, with
            ``f_{-i}`` the model trained without row i and ``R_i`` its exact
            LOO residual.  "jackknife": ``f(x) +- q``, ``q`` the ``ceil((1 -
            alpha_c)(m + 1))``-th smallest ``|R_i|``.  "cv+": as jackknife+
            with the k hold-out models of :meth:`cv_predict` and the
            out-of-fold residuals.  "full": the full (transductive)
            conformal set of the model refitted with the test point added
            (Lei et al. 2018, JASA 113, Algorithm 1, absolute residual
            scores), exact and in closed form at the fitted basis
            (:mod:`lssvm.cv.conformal.full`); no factor-two loss in its
            guarantee.  Where that set is not an interval (rare: it needs
            training rows of cross-leverage past 1), the bounds are its
            convex hull, which covers at least as often; they are infinite
            where the set is unbounded.  The guarantee needs a basis that
            treats the test point as the training rows: basis points drawn
            from the training rows are fitted better than a new point, so
            coverage falls as the basis grows towards m (Boston, fixed
            alpha, 60 splits: 0.893 with 50 basis points, 0.880 with 202 of
            405 rows; jackknife+ 0.899 and 0.892), and so it does when alpha
            is tuned on the same rows.
        alpha : float, optional
            Regularisation; default the fitted ``alpha``.
        cv, groups, basis_in_holdout
            Folds for "cv+" (ignored otherwise), as in :meth:`cv_predict`.

        Returns
        -------
        ndarray of shape (t, 2) or (t, 2, v)
            Lower and upper bounds (per output).

        Raises
        ------
        ValueError
            For a coverage outside (0, 1), an unknown method, or too few
            training rows for finite bounds (the message says how many
            are needed).

        Notes
        -----
        The LOO model at a new point is the full model minus a rank-one
        correction, ``f_{-i}(x) = f(x) - (1/m + m_x^T D m_i) R_i`` with
        ``m_x = (k(x, Z) - mu)^T Q`` and ``D = (Lambda + alpha)^-1``
        (Sherman-Morrison on the training factorisation; derivation in
        :mod:`lssvm.cv.conformal`).  Cost: O(n^2) per new point for
        ``m_x``, then O(m r v) per point for the m LOO values, and an
        O(m log m) selection.  "cv+" costs, once per call, the K fold
        models with their out-of-fold residuals, per fold the cheaper of
        O(h r^2 + r^3) (the fold's own moments) and O(h^2 r + h^3) (the h x h
        hold-out system) for h rows; then O(r K v) per new point and
        O(K log m) for its order statistics, read from the folds' sorted
        residuals (:mod:`lssvm.cv.conformal.shifted_blocks`), never an (t, m) array.
        "full": with the test point added every residual is affine in its
        candidate label (a Sherman-Morrison update of the factorisation);
        O(n^2 + m r) per point for its leverages, then O(m log m) per point
        and output to sort the 2m label values where a residual's rank
        changes.
        Nothing is refitted.  The basis is held fixed for "jackknife+";
        "cv+" follows ``basis_in_holdout``.  Fitted on Dask collections: the
        same bounds (all methods but "full"), streamed in passes over the training blocks
        (``docs/scaling.md``).
        """
        if getattr(self, "factorization_", 0) is None and getattr(self, "_saved_loo", None) is not None:
            return self._saved_interval(X, coverage, method, alpha)
        engine = getattr(self, "_engine", None)  # read without sklearn's check_is_fitted when plainly fitted
        fitted = getattr(self, "_dual_coef_2d", None) is not None and getattr(self, "factorization_", None) is not None
        if engine is None or not fitted:
            engine = self._fitted_engine()  # not fitted, or no factorisation: its errors
        else:
            check_training_data(self)
        if not engine.rows_in_memory:  # fitted on Dask: streamed in passes
            basis_in_holdout = self._holdout_mode(basis_in_holdout)
            return self._dask_interval(X, coverage, method, alpha, cv, groups, basis_in_holdout)
        engine = engine.in_memory(
            "predict_interval", "or use cv_predict/loo_residuals and the conformal ranks yourself")
        fac = engine.fac
        m = fac.n_samples
        coverage = check_interval_request(coverage, method, m)
        alpha = self.alpha if alpha is None else alpha
        if type(alpha) is float and 0.0 < alpha < np.inf:  # what check_alphas accepts, without its calls
            a = alpha
        else:
            if np.ndim(alpha) != 0:
                raise ValueError(f"predict_interval takes one alpha (a number > 0); got {alpha!r}")
            a = float(check_alphas(alpha)[0][0])
        X = _new_points(self, X)
        basis_in_holdout = self._holdout_mode(basis_in_holdout)
        if method == "cv+":
            out = self._cv_plus_interval(engine, X, coverage, a, cv, groups, basis_in_holdout)
            return out[:, :, 0] if self._single_output else out
        basis, kernel = engine.basis_vectors, engine.kernel  # the engine's model: the family's fitted basis
        if method == "full":
            out = sparse_full_conformal(fac, kernel, basis, X, coverage, a, self.block_size)
            return out[:, :, 0] if self._single_output else out
        jackknife = sparse_jackknife_plus if method == "jackknife+" else sparse_jackknife
        out = jackknife(fac, kernel, basis, X, coverage, a, self.block_size)
        return out[:, :, 0] if self._single_output else out

    def _dask_interval(self, X, coverage, method, alpha, cv, groups, basis_in_holdout):
        """``predict_interval`` of a model fitted on Dask collections: the same
        bounds, streamed in passes over the training blocks
        (:func:`lssvm.backends.dask.intervals.dask_interval`: usually one light
        and two full passes per 1024 test points, reported to
        :func:`lssvm.backends.dask.report_passes`; nothing of size m kept on
        the client)."""
        from ..backends.dask.intervals import dask_interval

        fit = self._fitted_engine()
        if method == "full":
            raise ValueError(
                "method='full' needs the training rows in memory (its sets are exact per test point, from the "
                "m training residuals); a model fitted on Dask collections offers 'jackknife+', 'jackknife' and "
                "'cv+'"
            )
        coverage = check_interval_request(coverage, method, fit.n_samples)
        alpha = self.alpha if alpha is None else alpha
        if np.ndim(alpha) != 0:
            raise ValueError(f"predict_interval takes one alpha (a number > 0); got {alpha!r}")
        a = float(check_alphas(alpha)[0][0])
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        out, _ = dask_interval(fit, X, coverage, method, a, cv, groups, basis_in_holdout)
        return out[:, :, 0] if self._single_output else out

    def _cv_plus_interval(self, engine, X, coverage, a, cv, groups, basis_in_holdout):
        """CV+ bounds (t, 2, v): the fold models and out-of-fold residuals in
        one pass (:func:`lssvm.cv.conformal.cv_plus_folds`), the order
        statistics from the folds' sorted scores
        (:class:`lssvm.cv.conformal.shifted_blocks.SortedFoldScores`), never a (t, m, v)
        array of candidate values.

        A small problem (rank <= 256 and about m r^2 <= 1e9 flops of fold
        moments) runs entirely on one BLAS thread, in one scope: toggling
        the BLAS thread count inside the call cost ~20 ms wall (5 ms CPU)
        per call with two OpenBLAS libraries loaded, more than the whole
        CV+ at m = 2,000.  A larger one lets the folds run one per core."""
        fac = engine.fac
        small = fac.rank <= _SMALL_RANK and fac.n_samples * fac.rank**2 <= _ONE_THREAD_FLOPS
        threads = fold_threads(getattr(engine, "n_jobs", None)) if small else 1  # before the scope: it counts
        with single_threaded_blas() if small else nullcontext():
            return self._cv_plus_bounds(engine, X, coverage, a, cv, groups, basis_in_holdout, threads)

    def _cv_plus_bounds(self, engine, X, coverage, a, cv, groups, basis_in_holdout, threads=1):
        fac = engine.fac
        m, v = fac.n_samples, fac.z.shape[1]
        folds = contiguous_folds(cv, m, groups)
        if folds is None:
            folds = engine.resolve_cv(cv, groups, classifier=False)
        got = None
        if basis_in_holdout == "remove" and getattr(engine, "fold_whitener", None) is not None:
            # a given map (Nyström): folds that remove basis points are refitted with the re-truncated map
            got = engine.mapped_cv_plus(folds, a) if engine.removes_basis_points(folds) else None
        # "keep" on the fit's blocks: straight from its block Grams (no engine, plans or checks)
        if got is None and basis_in_holdout == "keep":
            got = block_cv_plus(fac, folds, a)
        if got is None:  # "keep" never removes a basis point: no need to find the rows that hold them
            holdout = engine.holdout_engine(holders=basis_in_holdout != "keep")
            got = cv_plus_folds(holdout, folds, a, basis_in_holdout, threads)
        oof, models = got
        sorted_scores = SortedFoldScores(np.abs(fac.y_centered + fac.y_mean - oof), folds)
        ranks = conformal_ranks(coverage, m)
        out = np.empty((X.shape[0], 2, v))
        # a test row holds its kernel row (n), its fold models' values (K v) and both bounds' first windows (2 x 8
        # per fold); wider selections take rows in passes of bounded size (lssvm.cv.conformal.shifted_blocks).
        # Blocks of m-sized rows (209 test rows at m = 20,000) spent a third of the order statistics' time
        # rebuilding the count table and on per-block calls
        per_row = engine.basis_vectors.shape[0] + len(folds) * (v + 16)
        step = max(1, _BLOCK_FLOATS // per_row)
        for rows in iter_row_blocks(X.shape[0], min(step, self.block_size)):
            K_x = engine.kernel(X[rows], engine.basis_vectors)
            out[rows] = sorted_scores.bounds(models(K_x), ranks)
        return out

    def _saved_interval(self, X, coverage, method, alpha):
        """Jackknife(+) intervals of a model loaded from a file, from its stored
        LOO data (:mod:`lssvm.io.uncertainty`), at the fitted alpha."""
        G, R, mu = self._saved_loo
        m = R.shape[0]
        coverage = check_interval_request(coverage, method, m, methods=("jackknife+", "jackknife"))
        if alpha is not None and float(alpha) != float(self.alpha):
            raise ValueError(
                f"a model loaded from a file gives intervals at its fitted alpha={self.alpha:g} only; "
                "refit on the training data for other alphas"
            )
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        out = np.empty((X.shape[0], 2, R.shape[1]))
        scores = np.abs(R)
        step = max(1, _BLOCK_FLOATS // (m * R.shape[1]))
        for rows in iter_row_blocks(X.shape[0], min(step, self.block_size)):
            K_x = self.kernel_(X[rows], self.basis_vectors_)
            full = K_x @ self._dual_coef_2d + self._intercept_2d
            if method == "jackknife":
                out[rows] = interval_from_values(None, scores, coverage, symmetric_centre=full)
            else:
                U = (K_x - mu) @ G + 1.0 / m
                out[rows] = interval_from_values(full[:, None, :] - U[:, :, None] * R[None], scores, coverage)
        return out[:, :, 0] if self._single_output else out


class SearchIntervalMixin:
    """``predict_interval`` of the ``*CV`` regressors: their ``best_estimator_``'s.

    ``_path_scorings`` are the extra alpha-path criteria the search accepts
    (:mod:`lssvm.selection.evidence`; computed by the sparse criterion only).
    """

    @property
    def _path_scorings(self):
        # the sparse criterion's: the family searches score folds by their own criteria
        return ("gcv", "evidence") if issubclass(self._estimator_class, BaseSparseLSSVM) else ()

    @available_if(lambda self: hasattr(self._estimator_class, "predict_interval"))
    def predict_interval(self, X, coverage=0.9, method=None, **kwargs):
        """Prediction intervals of ``best_estimator_`` (see its ``predict_interval``;
        ``method=None``: its default, "jackknife+" in memory)."""
        if method is not None:
            kwargs["method"] = method
        return self._best().predict_interval(X, coverage, **kwargs)

    @available_if(lambda self: hasattr(self._estimator_class, "predict_std"))
    def predict_std(self, X, noise=True, basis_residual=True):
        """Posterior predictive standard deviation of ``best_estimator_`` (see its ``predict_std``)."""
        return self._best().predict_std(X, noise=noise, basis_residual=basis_residual)
