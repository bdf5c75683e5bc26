"""The engine of every family fitted on Dask input is the sparse one.

For the sparse, Nyström and fixed-size models fitted on Dask arrays of a few
chunks, ``_fitted_engine()`` answers the engine protocol
(:class:`lssvm.cv.SparseEngine`) with the numbers of the in-memory sparse
engine (:class:`lssvm.cv.MemorySparseEngine` on
:func:`lssvm.solvers.factorize_sparse_rls`) built on the same basis:

* Nyström: the sampled columns with the rank-k map
  ``nystrom_projection(K_SS, k)`` as the given whitener;
* fixed size: the prototypes of the chosen support (the sparse model at the
  same alpha);

for exact LOO, k-fold, grouped and hold-out, in every ``basis_in_holdout``
mode, for a regressor and a classifier.  Fresh random data.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn.model_selection import GroupKFold  # noqa: E402

from lssvm import (  # noqa: E402
    FixedSizeLSSVC,
    FixedSizeLSSVR,
    NystromLSSVC,
    NystromLSSVR,
    SparseLSSVC,
    SparseLSSVR,
)
from lssvm._labels import LabelCoder  # noqa: E402
from lssvm.backends.dask import fit_sparse  # noqa: E402
from lssvm.cv import MemorySparseEngine  # noqa: E402
from lssvm.solvers import factorize_sparse_rls  # noqa: E402
from lssvm.solvers.nystrom import nystrom_projection  # noqa: E402
from lssvm.solvers.row_blocks import BlockContext  # noqa: E402

M, CHUNK = 230, 60
ALPHAS = np.array([0.02, 0.5, 7.0])
MODES = ("remove", "train", "keep")


def _data(seed, classification):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(M, 3))
    if classification:
        y = np.where(X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + 0.4 * rng.normal(size=M) > 0, "b", "a")
    else:
        y = np.column_stack([np.sin(X[:, 0]) + X[:, 1] ** 2, np.cos(X[:, 2])]) + 0.1 * rng.normal(size=(M, 2))
    # a training row repeated: the rows that hold a basis point are found by value too
    X[7] = X[3]
    groups = rng.integers(0, 9, size=M)
    return rng, X, y, groups


def _dask(a):
    return da.from_array(a, chunks=(CHUNK,) + a.shape[1:])


def _dask_engine(family, classification, X, y, basis, kw):
    if family == "fixed_size" and not classification:
        y = y[:, 0]  # one output: each output's SCDP run chooses its own prototypes
    est = _ESTIMATORS[family][classification](basis=basis, **kw)
    with dask.config.set(scheduler="threads"):
        est.fit(_dask(X), _dask(y))
    return est, est._fitted_engine()


def _memory_engine(est, X, y, family, classification):
    """The in-memory sparse engine on the Dask fit's basis and map."""
    kernel = est.kernel_
    classes = est.classes_ if classification else None
    Y = LabelCoder(classes).encode(y) if classification else y
    if family == "fixed_size" and not classification:
        Y = Y[:, :1]
    if family == "fixed_size":
        Z, rows = est.support_vectors_, est.basis_indices_[est.support_]
    else:
        Z, rows = est.basis_vectors_, est.basis_indices_
    K, K_BB = kernel(X, Z), kernel(Z, Z)
    whitener = nystrom_projection(K_BB, est.rank_) if family == "nystrom" else None
    fac = factorize_sparse_rls(K, K_BB, Y, whitener=whitener)
    return MemorySparseEngine(fac, X, Z, rows, kernel, classes=classes)


_ESTIMATORS = {
    "sparse": (SparseLSSVR, SparseLSSVC),
    "nystrom": (NystromLSSVR, NystromLSSVC),
    "fixed_size": (FixedSizeLSSVR, FixedSizeLSSVC),
}


def _params(family, rng):
    basis = np.sort(rng.choice(M, 24, replace=False))
    basis[0] = 3  # a basis row with a duplicate among the training rows
    kw = dict(gamma=0.35, alpha=0.1)
    if family == "nystrom":
        kw["rank"] = 15
    if family == "fixed_size":
        kw.update(solver="scdp", cv=4)
    return basis, kw


def _nystrom_refits(est, X, Y, test_sets, mode):
    """Brute force for the Nyström model's "remove": each hold-out refitted on its
    training rows at the kept columns, with the rank-k map of their kernel block."""
    from lssvm.basis import basis_holders
    from lssvm.estimators.nystrom import nystrom_map

    kernel, Z = est.kernel_, est.basis_vectors_
    rows, points = basis_holders(X, Z, est.basis_indices_)
    out = np.empty((ALPHAS.size, X.shape[0], Y.shape[1]))
    for H in test_sets:
        inside = np.isin(rows, H)
        gone = np.setdiff1d(points[inside], points[~inside]) if mode == "remove" else np.empty(0, int)
        keep = np.setdiff1d(np.arange(Z.shape[0]), gone)
        train = np.setdiff1d(np.arange(X.shape[0]), H)
        K_LL = kernel(Z[keep], Z[keep])
        fac = factorize_sparse_rls(kernel(X[train], Z[keep]), K_LL, Y[train],
                                   whitener=nystrom_map(K_LL, est.rank, est.rcond))
        for i, a in enumerate(ALPHAS):
            A, b = fac.coef(a)
            out[i, H] = kernel(X[H], Z[keep]) @ A + b
    return out


def _close(a, b, tol=1e-8):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(np.abs(b).max(), 1.0)
    assert np.abs(a - b).max() <= tol * scale, np.abs(a - b).max() / scale


CASES = [(f, c) for f in _ESTIMATORS for c in (False, True)]
SEEDS = {case: i for i, case in enumerate(CASES)}
# the Nyström and fixed-size regressors run by default; the sparse engine (checked against memory
# elsewhere too) and the classifiers take a few seconds more
QUICK = {("nystrom", False), ("fixed_size", False)}


@pytest.mark.parametrize("family,classification",
                         [c if c in QUICK else pytest.param(*c, marks=pytest.mark.slow) for c in CASES])
def test_dask_engine_equals_the_memory_engine_on_its_basis(family, classification):
    rng, X, y, groups = _data(SEEDS[family, classification], classification)
    basis, kw = _params(family, rng)
    est, engine = _dask_engine(family, classification, X, y, basis, kw)
    ref = _memory_engine(est, X, y, family, classification)
    assert engine.rows_in_memory is False and ref.rows_in_memory is True
    assert (engine.n_samples, engine.n_basis) == (ref.n_samples, ref.n_basis)
    with dask.config.set(scheduler="threads"):
        _close(engine.targets().compute(), ref.targets())
        # exact LOO: per row and reduced in the pass
        _close(engine.loo_residuals(ALPHAS).compute(), ref.loo_residuals(ALPHAS))
        got, want = engine.loo_sums(ALPHAS), ref.loo_sums(ALPHAS)
        _close(got.sse, want.sse)
        assert got.count == want.count
        if classification:
            np.testing.assert_array_equal(got.wrong, want.wrong)
        test = np.sort(rng.choice(M, 17, replace=False))
        test[0] = 3  # holds a basis point (as its row and by value, with row 7)
        for mode in MODES:
            # k-fold (an int: the one fold rule) and grouped
            for cv, g in ((5, None), (GroupKFold(4), groups)):
                folds_d = engine.resolve_cv(cv, g, classifier=classification)
                folds_m = ref.resolve_cv(cv, g, classifier=classification)
                F = engine.cv_outputs(folds_d, ALPHAS, mode).compute()
                got = engine.cv_sums(folds_d, ALPHAS, mode)
                if family == "nystrom" and mode == "remove":  # the map re-truncated on the kept columns
                    want_F = _nystrom_refits(est, X, ref.targets(), folds_m, mode)
                    _close(F, want_F)
                    _close(got.sse, ((want_F - ref.targets()[None]) ** 2).sum(axis=1))
                    continue
                _close(F, ref.cv_outputs(folds_m, ALPHAS, mode))
                want = ref.cv_sums(folds_m, ALPHAS, mode)
                _close(got.sse, want.sse)
                if classification:
                    np.testing.assert_array_equal(got.wrong, want.wrong)
            F = engine.holdout_outputs(test, ALPHAS, mode).compute()
            if family == "nystrom" and mode == "remove":
                _close(F, _nystrom_refits(est, X, ref.targets(), [test], mode)[:, test])
            else:
                _close(F, ref.holdout_outputs(test, ALPHAS, mode))


def test_nystrom_dask_engine_is_the_sparse_fit_with_the_rank_k_map():
    rng, X, y, _ = _data(11, False)
    basis, kw = _params("nystrom", rng)
    est, engine = _dask_engine("nystrom", False, X, y, basis, kw)
    Z = est.basis_vectors_
    proj = nystrom_projection(est.kernel_(Z, Z), kw["rank"])
    np.testing.assert_allclose(engine.ctx.W, proj)
    assert est.rank_ == kw["rank"] == engine.solution.z.shape[0]
    # its coefficients are the fitted predictor's
    beta, b = engine.solution.coef(kw["alpha"])
    np.testing.assert_allclose(est.kernel_expansion().coef, beta)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_allclose(est.predict(X[:20]), est.kernel_(X[:20], Z) @ beta + b, rtol=1e-12)


def test_fixed_size_dask_engine_runs_its_pass_at_first_use_only():
    rng, X, y, _ = _data(12, False)
    basis, kw = _params("fixed_size", rng)
    est, engine = _dask_engine("fixed_size", False, X, y, basis, kw)
    assert "training" not in engine.cache  # fitting the fixed-size model costs no pass more
    assert engine.n_basis == est.n_support_
    np.testing.assert_array_equal(engine.ctx.basis, est.support_vectors_)
    with dask.config.set(scheduler="threads"):
        engine.loo_sums(ALPHAS)
        first = engine.cache["training"]
        engine.cv_sums(engine.resolve_cv(GroupKFold(3), np.arange(M) % 5), ALPHAS, "keep")
    assert engine.cache["training"] is first  # once, also for folds that read groups


def test_a_refit_in_memory_drops_the_dask_engine():
    rng, X, y, _ = _data(13, False)
    basis, kw = _params("fixed_size", rng)
    est, engine = _dask_engine("fixed_size", False, X, y, basis, kw)
    assert est._fitted_engine() is engine
    est.fit(X, y)
    try:
        other = est._fitted_engine()
    except ValueError:  # no in-memory engine here
        return
    assert other is not engine


def test_the_fixed_size_default_basis_fits_dask_input():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=400)
    with dask.config.set(scheduler="threads"):
        est = FixedSizeLSSVR().fit(_dask(X), _dask(y))
        pred = est.predict(X[:50])
        engine = est._fitted_engine()
        R = engine.loo_residuals(np.array([est.alpha])).compute()
    assert est.basis == "pchol" and np.isfinite(pred).all()
    assert R.shape == (1, 400, 1) and np.isfinite(R).all()


def test_a_given_whitener_of_the_wrong_shape_is_refused_on_row_blocks():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = X[:, 0]
    from lssvm.backends.dask import as_row_data
    from lssvm.kernels import make_kernel

    kern = make_kernel("rbf", gamma=1.0)
    with pytest.raises(ValueError, match="whitener of shape"):
        BlockContext.of_basis(X[:5], kern, whitener=np.ones((4, 2)))
    data = as_row_data(_dask(X), _dask(y))
    with pytest.raises(ValueError, match="pass basis_rows"):
        fit_sparse(data, kern, "random", 5, 0, 1e-10, whitener=np.ones((5, 2)))


@pytest.mark.slow
@pytest.mark.parametrize("method,mode", [("jackknife+", "remove"), ("cv+", "remove"), ("cv+", "keep")])
def test_fixed_size_dask_engine_streams_the_sparse_intervals_of_its_support(method, mode):
    # the streamed conformal intervals take the engine: those of the sparse model on the support
    from lssvm.backends.dask.intervals import dask_interval

    rng, X, y, _ = _data(21, False)
    basis, kw = _params("fixed_size", rng)
    est, engine = _dask_engine("fixed_size", False, X, y, basis, kw)  # on the first output
    rows = est.basis_indices_[est.support_]
    ref = SparseLSSVR(gamma=est.gamma_, alpha=kw["alpha"], basis=rows).fit(X, y[:, 0])
    Xt = rng.normal(size=(9, 3))
    with dask.config.set(scheduler="threads"):
        got, _ = dask_interval(engine, Xt, 0.8, method, kw["alpha"], 5, None, mode)
    want = ref.predict_interval(Xt, 0.8, method=method, cv=5, basis_in_holdout=mode)
    _close(got[:, :, 0], want)


def test_the_deferred_pass_does_not_repeat_the_fits_constant_target_warning():
    # a deferred engine belongs to a fit that has read (and warned about) the targets already
    import warnings

    from lssvm import ConstantTargetWarning
    from lssvm.backends.dask import as_row_data
    from lssvm.kernels import make_kernel

    rng, X, y, _ = _data(14, False)
    y[:, 1] = 2.5
    data, kern, rows = as_row_data(_dask(X), _dask(y)), make_kernel("rbf", gamma=0.3), np.arange(0, M, 10)
    with dask.config.set(scheduler="threads"):
        with pytest.warns(ConstantTargetWarning):
            fit_sparse(data, kern, None, None, None, 1e-10, basis_rows=(X[rows], rows))
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConstantTargetWarning)
            fit_sparse(data, kern, None, None, None, 1e-10, basis_rows=(X[rows], rows), deferred=True).loo_sums(ALPHAS)


def test_a_fixed_size_engine_exists_only_where_one_sparse_model_is_the_fitted_one():
    rng, X, y, _ = _data(15, False)
    y = np.column_stack([y[:, 0], rng.normal(size=M)])  # a signal and noise: different SCDP supports
    basis, kw = _params("fixed_size", rng)
    est = FixedSizeLSSVR(basis=basis, **kw)
    with dask.config.set(scheduler="threads"):
        est.fit(_dask(X), _dask(y))
    chosen = est.coef_full_[: est.n_basis_] != 0
    assert not np.all(chosen == chosen[:, :1])
    with pytest.raises(ValueError):  # no one sparse model is the fitted one
        est._fitted_engine()
    assert est._engine is None and "use different prototypes" in est._dask_engine[0]
