"""The engine protocol: the in-memory engine (``cv.MemorySparseEngine``)
and the Dask engine (``backends.dask.DaskSparseFit``) return the same values
and the same dataclasses for fit, LOO, k-fold CV and hold-out, and the
in-memory engine equals explicit retraining."""

import numpy as np
import pytest

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cv import ErrorSums, MemorySparseEngine, explicit_holdout_predict

from conftest import rel_err

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

TOL = 1e-10
ALPHAS = np.array([0.02, 0.5, 4.0])


def _problem(rng, m=420, classes=None):
    X = rng.normal(size=(m, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m)
    if classes is not None:
        y = np.asarray(classes)[np.digitize(y, np.quantile(y, np.linspace(0, 1, len(classes) + 1)[1:-1]))]
    basis = np.sort(rng.choice(m, 25, replace=False))
    return X, y, basis


def _pair(rng, est_type, classes=None):
    X, y, basis = _problem(rng, classes=classes)
    kw = dict(gamma=0.7, alpha=0.2, basis=basis)
    mem = est_type(**kw).fit(X, y)
    chunks = (90, 130, 70, 130)
    dsk = est_type(**kw).fit(da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=(chunks,)))
    return mem, dsk, X, y, basis


def _equal_sums(a, b):
    assert type(a) is ErrorSums and type(b) is ErrorSums
    assert a.count == b.count
    assert rel_err(a.sse, b.sse) < TOL
    if a.wrong is None:
        assert b.wrong is None
    else:
        assert np.array_equal(a.wrong, b.wrong)


@pytest.mark.parametrize("est_type, classes", [(SparseLSSVR, None), (SparseLSSVC, ["x", "y"]),
                                               (SparseLSSVC, [3, 1, 2])])
def test_memory_and_dask_engines_agree(rng, est_type, classes):
    with dask.config.set(scheduler="threads"):
        mem, dsk, X, y, basis = _pair(rng, est_type, classes)
        em, ed = mem._engine, dsk._engine
        assert isinstance(em, MemorySparseEngine) and em.rows_in_memory and not ed.rows_in_memory
        assert em.n_samples == ed.n_samples and em.n_basis == ed.n_basis == basis.size
        # fit
        assert rel_err(dsk._dual_coef_2d, mem._dual_coef_2d) < TOL
        assert rel_err(ed.targets().compute(), em.targets()) < TOL
        # LOO: rows and sums
        assert rel_err(ed.loo_residuals(ALPHAS).compute(), em.loo_residuals(ALPHAS)) < TOL
        _equal_sums(em.loo_sums(ALPHAS), ed.loo_sums(ALPHAS))
        # k-fold: the same folds from the same cv, outputs and sums
        clf = classes is not None
        for mode in ("remove", "keep", "train"):
            fm, fd = em.resolve_cv(5, classifier=clf), ed.resolve_cv(5, classifier=clf)
            assert rel_err(ed.cv_outputs(fd, ALPHAS, mode).compute(), em.cv_outputs(fm, ALPHAS, mode)) < TOL
            _equal_sums(em.cv_sums(fm, ALPHAS, mode), ed.cv_sums(fd, ALPHAS, mode))
        # hold-out with a basis row held out
        test = np.append(rng.choice(X.shape[0], 20, replace=False), basis[2])
        test = np.unique(test)
        got = ed.holdout_outputs(test, ALPHAS, "remove").compute()
        assert rel_err(got, em.holdout_outputs(test, ALPHAS, "remove")) < TOL


def test_memory_engine_equals_explicit_retraining(rng):
    X, y, basis = _problem(rng, m=120)
    est = SparseLSSVR(gamma=0.7, alpha=0.2, basis=basis).fit(X, y)
    engine = est._engine
    test = np.array([3, 17, int(basis[0]), 88])
    for mode in ("remove", "keep", "train"):
        ref = explicit_holdout_predict(est, X, test, ALPHAS, basis_in_holdout=mode)
        assert rel_err(engine.holdout_outputs(test, ALPHAS, mode), ref) < 1e-8
    folds = engine.resolve_cv(4)
    sums = engine.cv_sums(folds, ALPHAS, "remove")
    F = engine.cv_outputs(folds, ALPHAS, "remove")
    assert rel_err(sums.sse, ((F - y[None, :, None]) ** 2).sum(axis=1)) < 1e-12
    assert sums.count == X.shape[0] and sums.wrong is None


def test_dask_engine_refuses_in_memory_features(rng):
    _, dsk, *_ = _pair(rng, SparseLSSVR)
    with pytest.raises(ValueError, match="not available for a model fitted on Dask"):
        dsk._engine.in_memory("the hold-out engine")
    # gcv, the evidence, predict_std and predict_interval are served on Dask
    # (tests/test_dask_intervals.py)


@pytest.mark.slow
def test_engines_agree_on_a_local_cluster(rng, cluster):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(cluster):
        mem, dsk, *_ = _pair(rng, SparseLSSVC, ["a", "b", "c"])
        em, ed = mem._engine, dsk._engine
        _equal_sums(em.loo_sums(ALPHAS), ed.loo_sums(ALPHAS))
        fm, fd = em.resolve_cv(7, classifier=True), ed.resolve_cv(7, classifier=True)
        _equal_sums(em.cv_sums(fm, ALPHAS, "remove"), ed.cv_sums(fd, ALPHAS, "remove"))
        assert rel_err(ed.cv_outputs(fd, ALPHAS, "train").compute(), em.cv_outputs(fm, ALPHAS, "train")) < TOL


def test_memory_engine_runs_in_the_estimators_thread_plan(rng, monkeypatch):
    from lssvm import _threads
    from lssvm.cv import engine as engine_module

    X, y, basis = _problem(rng, m=60)
    est = SparseLSSVR(gamma=0.7, alpha=0.2, basis=basis, n_jobs=1).fit(X, y)
    assert est._engine.n_jobs == 1
    seen = []

    def spy(orig):
        def call(*args, **kwargs):
            seen.append(_threads._active.get())
            return orig(*args, **kwargs)
        return call

    for name in ("loo_sums_by_targets", "parallel_map"):  # the work of loo_sums and of a regressor's cv_sums
        monkeypatch.setattr(engine_module, name, spy(getattr(engine_module, name)))
    # called directly, outside any estimator method: the engine enters the plan of its n_jobs itself
    est._engine.loo_sums(ALPHAS)
    est._engine.cv_sums(est._engine.resolve_cv(3), ALPHAS)
    assert len(seen) == 2 and all(plan is not None and plan.threads == 1 for plan in seen)


@pytest.mark.parametrize("mode", ["remove", "train"])
def test_dask_basis_holders_follow_the_in_memory_rule(rng, mode):
    # duplicate rows hold one basis point together, and points given as values are matched to rows
    X, y, basis = _problem(rng, m=150)
    X[100] = X[basis[0]]  # a second holder of basis point 0
    X[7] = X[basis[3]]
    for given in (basis, X[basis]):
        kw = dict(gamma=0.7, alpha=0.2, basis=given)
        mem = SparseLSSVR(**kw).fit(X, y)
        with dask.config.set(scheduler="threads"):
            dsk = SparseLSSVR(**kw).fit(da.from_array(X, chunks=(40, 2)), da.from_array(y, chunks=40))
            for cv in (5, [(None, np.array([3, 100, int(basis[0])])), (None, np.setdiff1d(np.arange(150), [3, 100, int(basis[0])]))]):
                pairs = cv if isinstance(cv, int) else [(np.setdiff1d(np.arange(150), t), t) for _, t in cv]
                got = dsk.cv_predict(pairs, ALPHAS, basis_in_holdout=mode).compute()
                assert rel_err(got, mem.cv_predict(pairs, ALPHAS, basis_in_holdout=mode)) < TOL
