"""The sparse LS-SVM's exact CV criterion on Dask data (:class:`DaskSparseCV`)."""

from __future__ import annotations

from ...basis import near_duplicate_free
from ...selection.criteria import CVPath
from ...solvers import check_alphas
from .folds import fold_spec
from .rows import as_row_data, count_classes
from .sparse import check_mode, draw_basis, fit_sparse

__all__ = ["DaskSparseCV"]


class DaskSparseCV:
    """The sparse LS-SVM's exact CV criterion over an alpha path on Dask data
    (the interface of :class:`lssvm.selection.SparseLSSVMCV`).

    Parameters
    ----------
    X, y : Dask collections
    kernel : str
    cv : "loo", int, splitter or iterable of (train, test)
        See :func:`lssvm.backends.dask.fold_spec` for how folds are assigned.
    alphas : array-like
    classification : bool
    groups : array-like, optional
    random_state : int, RandomState or None
    kernel_params : dict, optional
    basis : "random", row indices or points
    n_basis : int, optional
    basis_in_holdout : {"remove", "keep", "train"}
    rcond : float

    Notes
    -----
    The basis is drawn once.  Per call: one training pass and one LOO (or
    two CV) passes over the data; the per-row results are reduced to sums
    in the tasks, so nothing of size m is held.
    """

    def __init__(self, X, y, *, kernel="rbf", cv="loo", alphas=None, classification=False, groups=None,
                 random_state=None, kernel_params=None, basis="random", n_basis=None, basis_in_holdout="remove",
                 rcond=1e-10):
        from ...kernels import make_kernel

        self._make_kernel = make_kernel
        self.data = as_row_data(X, y, groups, numeric_y=not classification)
        self.classification = bool(classification)
        self.classes = count_classes(self.data) if self.classification else None
        self.alphas, _ = check_alphas(alphas)
        self.kernel = kernel
        self.kernel_params = dict(kernel_params or {})
        check_mode(basis_in_holdout)
        self.basis_in_holdout = basis_in_holdout
        self.rcond = rcond
        self.loo = isinstance(cv, str) and cv == "loo"
        if isinstance(cv, str) and not self.loo:
            raise ValueError(f"cv must be 'loo', an int, a splitter or (train, test) pairs; got {cv!r}")
        self.spec = None if self.loo else fold_spec(cv, self.data, self._labels)
        self.folds = None
        self.draw_seed = None
        self._basis = draw_basis(self.data, basis, n_basis, random_state)
        self.n_evaluations = 0

    def _labels(self):
        return self.data.y.compute()

    def rows_for(self, **params):
        """Training rows of the basis at ``params`` (near-duplicates at that
        kernel dropped, as the refit does), or None for explicit points (see
        :meth:`basis_points`)."""
        Z, idx = self._basis
        if idx is None:
            return None
        kern = self._make_kernel(self.kernel, **{**self.kernel_params, **params})
        return idx[near_duplicate_free(Z, kern)]

    def basis_points(self):
        """The basis points (n, d) every candidate used."""
        return self._basis[0]

    def __call__(self, **params):
        kern = self._make_kernel(self.kernel, **{**self.kernel_params, **params})
        fit = fit_sparse(self.data, kern, None, None, None, self.rcond, self.classes, basis_rows=self._basis)
        if self.loo:
            sums = fit.loo_sums(self.alphas)
        else:
            sums = fit.cv_sums(self.spec, self.alphas, self.basis_in_holdout)
        m, v = self.data.n_samples, sums["sse"].shape[1]
        mse = sums["sse"].sum(axis=1) / (m * v)
        err = sums["wrong"] / m if self.classification else None
        self.n_evaluations += 1
        return CVPath(self.alphas, mse, err, {"n_basis": fit.ctx.basis.shape[0]})
