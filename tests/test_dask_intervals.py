"""Intervals, probabilities and error bars of models fitted on Dask.

Every Dask result must equal the in-memory one on the same rows and basis:
``predict_interval`` ("jackknife+", "jackknife", "cv+"), ``predict_proba``,
``predict_std``, ``gcv`` and ``log_evidence``.  The intervals are order
statistics selected in passes (:mod:`lssvm.backends.dask.selection`); the
selection itself is also checked against ``np.partition`` on values with
ties and infinities, with its sample and thresholds made tiny so that every
branch (value-space splits, several counting passes, the pass limit) runs.
Tolerance 1e-10 relative, as in ``test_dask_backend.py``: both paths compute
the same numbers up to rounding.
"""

import contextlib

import numpy as np
import pytest
from sklearn.model_selection import GroupKFold

from conftest import rel_err

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import lssvm.backends.dask.selection as selection  # noqa: E402
from lssvm import SparseLSSVC, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV  # noqa: E402
from lssvm.backends.dask import as_row_data, report_passes  # noqa: E402
from lssvm.cv.conformal import kth_smallest  # noqa: E402
from lssvm.exceptions import NumericalWarning  # noqa: E402

TOL = 1e-10
METHODS = ("jackknife+", "jackknife", "cv+")


def _problem(rng, m=700, d=3, n=30, v=1):
    X = rng.normal(size=(m, d))
    Y = np.column_stack([np.sin(X @ rng.normal(size=d)) for _ in range(v)]) + 0.2 * rng.normal(size=(m, v))
    basis = np.sort(rng.choice(m, n, replace=False))
    return X, (Y[:, 0] if v == 1 else Y), basis, rng.normal(size=(25, d))


def _dask(a, chunks):
    return da.from_array(a, chunks=chunks if a.ndim == 1 else (chunks, a.shape[1]))


def _pair(X, y, basis, chunks, est=SparseLSSVR, **kw):
    ref = est(gamma=0.5, alpha=0.1, basis=basis, **kw).fit(X, y)
    fit = est(gamma=0.5, alpha=0.1, basis=basis, **kw).fit(_dask(X, chunks), _dask(y, chunks))
    return ref, fit


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.mark.parametrize("chunks", [700, 130, (300, 0, 250, 150)])
@pytest.mark.parametrize("v", [1, 2])
def test_intervals_equal_in_memory(rng, chunks, v):
    X, y, basis, Xt = _problem(rng, v=v)
    ref, est = _pair(X, y, basis, chunks)
    for method in METHODS:
        for coverage in (0.9, 0.5):
            got = est.predict_interval(Xt, coverage, method, cv=4)
            want = ref.predict_interval(Xt, coverage, method, cv=4)
            assert got.shape == want.shape == ((25, 2) if v == 1 else (25, 2, v))
            assert rel_err(got, want) < TOL, (method, coverage)
    # another alpha than the fitted one
    assert rel_err(est.predict_interval(Xt, alpha=3.0), ref.predict_interval(Xt, alpha=3.0)) < TOL


def test_every_selection_branch_gives_the_same_intervals(rng, monkeypatch):
    """A tiny sample, 2-3 thresholds and a budget of 1: several counting
    passes, value-space splits and, at 4 passes, the forced collection."""
    X, y, basis, Xt = _problem(rng, m=900)
    ref, est = _pair(X, y, basis, 200)
    for size, G, limit in ((5, 3, 20), (2, 2, 20), (5, 3, 4)):
        monkeypatch.setattr(selection, "SAMPLE_SIZE", size)
        monkeypatch.setattr(selection, "N_THRESHOLDS", G)
        monkeypatch.setattr(selection, "BUDGET", 1)
        real = selection.select_kth
        monkeypatch.setattr("lssvm.backends.dask.intervals.select_kth",
                            lambda *a, **k: real(*a, **k, max_passes=limit))
        for method in METHODS:
            labels = []
            with report_passes(lambda label: contextlib.nullcontext(labels.append(label))):
                got = est.predict_interval(Xt[:8], 0.8, method, cv=3)
            assert rel_err(got, ref.predict_interval(Xt[:8], 0.8, method, cv=3)) < TOL, (size, G, method)
            assert sum("counting" in lab for lab in labels) >= 2, labels


class _Table:
    """A valuer of fixed values (P, m) for :func:`select_kth`."""

    def __init__(self, V, offsets):
        self.V, self.offsets, self.n_problems = V, offsets, V.shape[0]

    def block_values(self, x, y, g, row0, rows=None):
        block = self.V[:, row0 : row0 + np.shape(x)[0]]
        block = block if rows is None else block[:, rows]
        for lo in range(0, block.shape[1], 7):  # sub-blocks, as the real valuers
            yield block[:, lo : lo + 7], 0


@pytest.mark.parametrize("sample, G, budget", [(2048, 255, 1 << 21), (3, 2, 1), (1, 1, 1)])
def test_select_kth_equals_partition_with_ties_and_infinities(rng, sample, G, budget):
    m, P = 311, 9
    V = rng.integers(-6, 7, size=(P, m)).astype(float)  # many ties
    V[1] = rng.normal(size=m) * 1e-12 + 5.0  # clustered
    V[2, :10] = np.inf
    V[3, :5] = -np.inf
    V[4] = 2.0  # all equal
    data = as_row_data(da.from_array(np.zeros((m, 1)), chunks=((100, 0, 150, 61), 1)))
    valuer = _Table(V, data.offsets)
    k = np.array([0, 1, 5, 150, 305, 311, 312, 40, 200])
    got, passes, _ = selection.select_kth(data, valuer, k, "test", sample_size=sample, n_thresholds=G,
                                          budget=budget)
    want = np.array([kth_smallest(V[p][None], k[p])[0] for p in range(P)])
    assert np.array_equal(got, want)
    assert passes >= 2


def test_cv_plus_holdout_modes_groups_and_singular_basis(rng):
    X, y, basis, Xt = _problem(rng, m=600)
    ref, est = _pair(X, y, basis, 170)
    groups = rng.integers(0, 10, 600)
    for mode in ("remove", "keep", "train"):
        for cv, g in ((5, None), (GroupKFold(4), groups)):
            got = est.predict_interval(Xt, 0.9, "cv+", cv=cv, groups=g, basis_in_holdout=mode)
            want = ref.predict_interval(Xt, 0.9, "cv+", cv=cv, groups=g, basis_in_holdout=mode)
            assert rel_err(got, want) < TOL, (mode, cv)
    # singular K_BB: folds that remove basis points are refitted on their remaining basis
    X1 = rng.uniform(-1, 1, (500, 1))
    y1 = np.sin(3 * X1[:, 0]) + 0.1 * rng.standard_normal(500)
    b1 = np.sort(rng.choice(500, 30, replace=False))
    with pytest.warns(Warning):
        ref, est = _pair(X1, y1, b1, 120)
    assert est.rank_ < b1.size
    with pytest.warns(NumericalWarning, match="refits the fold"):  # the in-memory engine says so
        for method in METHODS:
            got = est.predict_interval(X1[:10], 0.9, method, cv=5)
            assert rel_err(got, ref.predict_interval(X1[:10], 0.9, method, cv=5)) < TOL, method


def test_search_refit_intervals_and_std(rng):
    X, y, basis, Xt = _problem(rng, m=400, v=2)
    kw = dict(gamma=0.5, param_space={}, basis=basis, alphas=[0.01, 0.1, 1.0, 10.0, 100.0])
    ref = SparseLSSVRCV(**kw).fit(X, y)
    est = SparseLSSVRCV(**kw).fit(_dask(X, 130), _dask(y, 130))
    assert est.alpha_ == ref.alpha_
    for method in METHODS:
        assert rel_err(est.predict_interval(Xt, 0.8, method), ref.predict_interval(Xt, 0.8, method)) < TOL
    assert rel_err(est.predict_std(Xt), ref.predict_std(Xt)) < TOL


def test_bad_interval_requests_give_the_in_memory_errors(rng):
    X, y, basis, Xt = _problem(rng, m=300)
    ref, est = _pair(X, y, basis, 100)
    for kw in (dict(coverage=1.0), dict(coverage=-0.1), dict(coverage=0.999), dict(method="bootstrap"),
               dict(alpha=[0.1, 1.0])):
        with pytest.raises(ValueError) as want:
            ref.predict_interval(Xt, **kw)
        with pytest.raises(ValueError) as got:
            est.predict_interval(Xt, **kw)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="features"):
        est.predict_interval(Xt[:, :2])


def test_evidence_std_and_gcv_equal_in_memory(rng):
    X, y, basis, Xt = _problem(rng, v=2)
    ref, est = _pair(X, y, basis, 160)
    for noise in (True, False):
        assert rel_err(est.predict_std(Xt, noise=noise), ref.predict_std(Xt, noise=noise)) < TOL
    alphas = [0.01, 0.1, 10.0]
    assert rel_err(est.gcv(alphas), ref.gcv(alphas)) < TOL
    assert rel_err(est.log_evidence(alphas), ref.log_evidence(alphas)) < TOL


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_predict_proba_equals_in_memory(rng, n_classes, calibration):
    X, _, basis, Xt = _problem(rng, m=500)
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.4, 0.4][: n_classes - 1])]
    for ccv in (None, 4):
        ref, est = _pair(X, labels, basis, 150, est=SparseLSSVC, calibration=calibration, calibration_cv=ccv)
        P = est.predict_proba(Xt)
        assert P.shape == (25, n_classes)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        assert rel_err(P, ref.predict_proba(Xt)) < 1e-9, ccv  # isotonic: interpolation knots to rounding


def test_classifier_search_refit_is_calibrated_like_in_memory(rng):
    X, _, basis, Xt = _problem(rng, m=300)
    labels = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    kw = dict(gamma=0.5, param_space={}, basis=basis, alphas=[0.01, 0.1, 1.0, 10.0, 100.0], calibration="sigmoid")
    ref = SparseLSSVCCV(**kw).fit(X, labels)
    est = SparseLSSVCCV(**kw).fit(_dask(X, 100), _dask(labels, 100))
    assert est.alpha_ == ref.alpha_
    assert rel_err(est.predict_proba(Xt), ref.predict_proba(Xt)) < TOL


@pytest.mark.slow
def test_two_process_cluster(rng, cluster):
    distributed = pytest.importorskip("distributed")
    X, y, basis, Xt = _problem(rng, m=400)
    ref, est = _pair(X, y, basis, 100)
    with distributed.Client(cluster):
        for method in METHODS:
            assert rel_err(est.predict_interval(Xt, 0.9, method), ref.predict_interval(Xt, 0.9, method)) < TOL
