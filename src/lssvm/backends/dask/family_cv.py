"""The fixed-size and Nyström search criteria on Dask data: the
interface of :class:`lssvm.selection.FixedSizeCV` and
:class:`lssvm.selection.nystrom.NystromCV`, computed by the passes of
:mod:`lssvm.backends.dask.families` (fixed size) and the sparse fit with the
Nyström map (:func:`lssvm.backends.dask.fit_sparse`).

The rows are drawn as those criteria draw them from the same
``random_state`` (the refit seed first for fixed size, then the pool; the
columns for Nyström), so that a search on Dask scores and refits the model
the in-memory search would, on the same folds.  Per candidate: one pass
(fixed size: the folds' sums; the CV curves, SCDP runs and size rule are
then in memory; with the error rate one more pass counts the
misclassified rows of every fold's SCDP path) or two to three (Nyström: the training pass, then LOO or
the two k-fold passes), each reduced to sums in the tasks.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ...basis import near_duplicate_free
from ...cv.fixed_size import chosen_sizes, scdp_seed
from ...kernels import gamma_scale
from ...selection.criteria import CVPath
from ...solvers import check_alphas
from .families import prototype_pool, summed_rows
from .rows import as_row_data, count_classes
from .sparse import resolve_dask_cv

__all__ = ["DaskFixedSizeCV"]


class _DaskRowsCV:
    """Common part: data, classes, alphas, folds and kernels from parameters."""

    def __init__(self, X, y, *, kernel="rbf", cv=10, alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None):
        from ...kernels import make_kernel

        self._make_kernel = make_kernel
        self.data = as_row_data(X, y, groups, numeric_y=not classification)
        self.classification = bool(classification)
        self.classes = count_classes(self.data) if self.classification else None
        self.alphas, _ = check_alphas(alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        self.random_state = check_random_state(random_state)
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        self.cv = cv
        self.spec = None if self.loo else resolve_dask_cv(cv, self.data, self.classification)
        self.folds = None  # the fold of every row is not kept in memory
        self.draw_seed = None
        self.n_evaluations = 0

    def _kernel(self, params):
        params = {**self.kernel_params, **params}
        d = params.get("degree")
        if isinstance(d, (float, np.floating)) and float(d).is_integer():  # grids hold floats
            params["degree"] = int(d)
        return self._make_kernel(self.kernel, **params)

    def _rows(self, kern):
        """The drawn rows kept at ``kern`` (near-duplicates dropped, as the refit does)."""
        keep = near_duplicate_free(self._Z, kern)
        return self._Z[keep], self._idx[keep]

    def rows_for(self, **params):
        """Training rows of the model at ``params``."""
        return self._rows(self._kernel(params))[1]

    def _finish(self, sse, wrong, info):
        m, v = self.data.n_samples, sse.shape[1]
        err = wrong / m if (self.classification and wrong is not None) else None
        self.n_evaluations += 1
        return CVPath(self.alphas, sse.sum(axis=1) / (m * v), err, info)


class DaskFixedSizeCV(_DaskRowsCV):
    """:class:`lssvm.selection.FixedSizeCV` on Dask data: each alpha scored at
    the model size the size rule picks on the fast v-fold curves.

    The search checks the model parameters first (the estimator's own
    checks); this criterion checks only what Dask input adds.

    Attributes
    ----------
    refit_random_state : int
        As for :class:`lssvm.selection.FixedSizeCV`.
    """

    def __init__(self, X, y, *, cv=10, basis="pchol", n_basis=None, solver="scdp", max_size=None,
                 n_candidates=59, nu=1e-8, stop_window=10, stop_tol=1e-4, size_rule=0.1, size_scoring="mse", **kw):
        if isinstance(cv, str):
            raise ValueError(f"fixed-size models are cross-validated on folds: cv must be an int, a splitter or "
                             f"(train, test) pairs; got cv={cv!r}")
        # the model's parameters (solver, nu, max_size, ...) are checked by the search beforehand,
        # with the checks of the estimator it refits
        super().__init__(X, y, cv=cv, **kw)
        self.solver, self.max_size, self.nu = solver, max_size, float(nu)
        self.n_candidates = n_candidates if solver == "scdpp" else None
        self.stop = (stop_window, stop_tol)
        self.size_rule, self.size_scoring = size_rule, size_scoring
        if size_scoring == "error_rate" and (not self.classification or self.classes.size != 2):
            raise ValueError("size_scoring='error_rate' is for two-class problems; use 'mse'")
        self.refit_random_state = int(self.random_state.randint(2**31 - 1))
        self.scdp_seed = scdp_seed(np.random.RandomState(self.refit_random_state))
        self._method, self._n = basis, n_basis
        self._renyi = isinstance(basis, str) and basis == "renyi"
        if self._renyi:  # kernel-dependent: redrawn per candidate from one seed
            self._seed = self.random_state.randint(2**31 - 1)
            self._drawn = {}
        else:
            # "pchol": at the fixed width, or at the sample's "scale" width when the width is searched
            self._Z, self._idx = prototype_pool(
                self.data, self._kernel({}), basis, n_basis, self.random_state,
                kernel_for=lambda sample: self._kernel({} if "gamma" in self.kernel_params
                                                       else {"gamma": gamma_scale(sample)}))
            if self._idx is None:
                raise ValueError("the prototypes must come from the training rows: a method name or row indices "
                                 "(a search scores every candidate on its own rows)")

    def _rows(self, kern):
        if not self._renyi:
            return super()._rows(kern)
        key = repr(kern)
        if key not in self._drawn:
            self._drawn[key] = prototype_pool(self.data, kern, "renyi", self._n, np.random.RandomState(self._seed))
        return self._drawn[key]

    def __call__(self, **params):
        kern = self._kernel(params)
        Z, _ = self._rows(kern)
        rows = summed_rows(self.data, Z, kern, self.classes, self.spec, label="cross-validation pass")
        system = rows.system()
        D = system.n_coef
        if self.max_size is not None and self.max_size > D:
            raise ValueError(f"max_size={self.max_size} exceeds the {D} coefficients (M={D - 1} prototypes + "
                             "intercept)")
        A, v = self.alphas.size, system.rhs.shape[1]
        count = self.size_scoring == "error_rate"
        if self.solver == "direct":
            out = [rows.direct_cv(system, float(a), self.nu, "fixed-size direct CV", count_wrong=count)
                   for a in self.alphas]
            wrong = np.array([w[0] for _, w in out]) if count else None
            return self._finish(np.array([s for s, _ in out]), wrong, {"model_size": D})
        curves = rows.curves(system, self.alphas, nu=self.nu, max_size=self.max_size, n_candidates=self.n_candidates,
                             seed=self.scdp_seed, stop_window=self.stop[0], stop_tol=self.stop[1],
                             stop_scoring=self.size_scoring)
        sizes = chosen_sizes(curves, self.size_scoring, self.size_rule)
        pick = (np.arange(A)[:, None], np.arange(v)[None], sizes - 1)
        mse = curves.curve("mse")[0][pick]  # (A, v)
        err = curves.curve("error_rate")[0][pick][:, 0] if count else None
        self.n_evaluations += 1
        return CVPath(self.alphas, mse.mean(axis=1), err, {"model_size": sizes.mean(axis=1)})
