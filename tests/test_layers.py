"""The one kernel expansion every estimator predicts with,
and the one label coder every layer codes and decodes labels with.

Brute force here is a dense kernel matrix written out in NumPy and label
loops in plain Python, on fresh random data.
"""

from __future__ import annotations

import numpy as np
import pytest

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVR,
    NystromLSSVC,
    NystromLSSVR,
    SparseLSSVC,
    SparseLSSVR,
    SparseLSSVRCV,
)
from lssvm._labels import LabelCoder
from lssvm.kernels import KernelExpansion
from lssvm.solvers.row_blocks import code_targets, misclassified

GAMMA = 0.7


def _rbf(X, Z, gamma):
    d2 = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-gamma * d2)


def _data(rng, m=80, d=2, classes=None):
    X = rng.standard_normal((m, d))
    if classes is None:
        y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(m)
    else:
        y = np.asarray(classes)[np.digitize(X[:, 0] + 0.3 * rng.standard_normal(m), [-0.5, 0.5][: len(classes) - 1])]
    return X, y


# classifiers uncalibrated: their predict is then the sign (argmax) of the expansion's values, which
# these tests compare (a calibrated predict follows the probabilities, tests/test_default_probabilities.py)
MODELS = {
    "sparse-regression": lambda: SparseLSSVR(gamma=GAMMA, alpha=0.1, basis="random", n_basis=15, random_state=0),
    "sparse-classes": lambda: SparseLSSVC(gamma=GAMMA, alpha=0.1, basis="random", n_basis=15, random_state=0,
                                          calibration=None),
    "fixed-size-regression": lambda: FixedSizeLSSVR(gamma=GAMMA, alpha=0.1, basis="kcenter", n_basis=15,
                                                    cv=None, random_state=0),
    "fixed-size-classes": lambda: FixedSizeLSSVC(gamma=GAMMA, alpha=0.1, basis="kcenter", n_basis=15,
                                                 cv=None, random_state=0, calibration=None),
    "nystrom-low-rank": lambda: NystromLSSVR(gamma=GAMMA, alpha=0.1, n_basis=15, basis="random",
                                             predictor="low-rank", random_state=0),
    "nystrom-exact": lambda: NystromLSSVR(gamma=GAMMA, alpha=0.1, n_basis=15, basis="random",
                                          predictor="exact", random_state=0),
    "nystrom-classes": lambda: NystromLSSVC(gamma=GAMMA, alpha=0.1, n_basis=15, basis="random",
                                            random_state=0, calibration=None),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_expansion_is_what_predict_evaluates(rng, name, n_classes):
    """k(X, Z) W + b from a dense RBF matrix equals decision_function / predict."""
    classifier = name.endswith("classes")
    if not classifier and n_classes == 3:
        pytest.skip("regressors: one target")
    X, y = _data(rng, classes=["a", "b", "c"][:n_classes] if classifier else None)
    est = MODELS[name]().fit(X, y)
    e = est.kernel_expansion()
    assert isinstance(e, KernelExpansion)
    T = rng.standard_normal((30, 2)) * 1.5
    F = _rbf(T, np.asarray(e.centres), GAMMA) @ e.coef + e.intercept
    out = est.decision_function(T) if classifier else est.predict(T)
    np.testing.assert_allclose(np.reshape(out, F.shape), F, rtol=1e-10, atol=1e-10 * np.abs(F).max())
    assert e.single_output == (F.shape[1] == 1) == (np.ndim(out) == 1)
    if classifier:
        expect = np.asarray(est.classes_)[np.argmax(F, axis=1) if F.shape[1] > 1 else (F[:, 0] > 0).astype(int)]
        assert np.array_equal(est.predict(T), expect)


def test_expansion_parts_are_the_documented_attributes(rng):
    X, y = _data(rng)
    sparse = MODELS["sparse-regression"]().fit(X, y)
    e = sparse.kernel_expansion()
    assert e.centres is sparse.basis_vectors_ and np.array_equal(e.coef[:, 0], sparse.dual_coef_)
    assert e.intercept[0] == sparse.intercept_ and e.kernel is sparse.kernel_
    fixed = MODELS["fixed-size-regression"]().fit(X, y)
    assert fixed.kernel_expansion().centres is fixed.support_vectors_
    assert np.array_equal(fixed.kernel_expansion().coef[:, 0], fixed.dual_coef_)
    low = MODELS["nystrom-low-rank"]().fit(X, y)
    assert low.kernel_expansion().centres is low.basis_vectors_
    exact = MODELS["nystrom-exact"]().fit(X, y)
    assert exact.kernel_expansion().centres.shape == X.shape
    assert np.array_equal(exact.kernel_expansion().coef[:, 0], exact.dual_coef_)


def test_unfitted_estimators_have_no_expansion():
    for make in MODELS.values():
        with pytest.raises(ValueError, match="not fitted"):
            make().kernel_expansion()


def test_search_exposes_its_best_estimators_expansion(rng):
    X, y = _data(rng, m=60)
    search = SparseLSSVRCV(param_space={"gamma": [0.3, GAMMA]}, alphas=[0.01, 0.1], basis="random", n_basis=10,
                           random_state=0).fit(X, y)
    a, b = search.kernel_expansion(), search.best_estimator_.kernel_expansion()
    assert a.centres is b.centres and np.array_equal(a.coef, b.coef)


@pytest.mark.parametrize("name", ["fixed-size-regression", "nystrom-low-rank", "nystrom-exact", "nystrom-classes"])
def test_from_kernel_expansion_predicts_like_any_family(rng, name):
    """A sparse model built from another family's expansion predicts the same
    (what lssvm.io.load_model does)."""
    classifier = name.endswith("classes")
    X, y = _data(rng, classes=["a", "b", "c"] if classifier else None)
    est = MODELS[name]().fit(X, y)
    cls = SparseLSSVC if classifier else SparseLSSVR
    extra = {"classes": est.classes_} if classifier else {}
    loaded = cls.from_kernel_expansion(est.kernel_expansion(), gamma=GAMMA, alpha=0.1, **extra)
    T = rng.standard_normal((25, 2))
    if classifier:
        assert np.array_equal(loaded.predict(T), est.predict(T))
    np.testing.assert_allclose(loaded.decision_function(T) if classifier else loaded.predict(T),
                               est.decision_function(T) if classifier else est.predict(T), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="classes but"):
        SparseLSSVC.from_kernel_expansion(SparseLSSVR(gamma=GAMMA, alpha=0.1, basis="random", n_basis=8,
                                                      random_state=0).fit(X, rng.standard_normal((80, 2)))
                                          .kernel_expansion(), classes=np.array(["a", "b"]))


def test_expansion_refuses_inconsistent_shapes(rng):
    kernel = SparseLSSVR(gamma=GAMMA).fit(*_data(rng, m=20)).kernel_
    with pytest.raises(ValueError, match="centres"):
        KernelExpansion(np.zeros((3, 2)), np.zeros((4, 1)), np.zeros(1), kernel, True)
    with pytest.raises(ValueError, match="single-output"):
        KernelExpansion(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(2), kernel, True)


def test_fixed_size_and_nystrom_predict_on_dask_through_the_expansion(rng):
    da = pytest.importorskip("dask.array")
    X, y = _data(rng)
    T = rng.standard_normal((57, 2))
    for name in ("fixed-size-regression", "nystrom-exact", "fixed-size-classes"):
        labels = ["a", "b", "c"] if name.endswith("classes") else None
        est = MODELS[name]().fit(*_data(rng, classes=labels))
        lazy = est.predict(da.from_array(T, chunks=(20, 2)))
        got = lazy.compute(scheduler="threads")
        if labels:
            assert np.array_equal(got, est.predict(T))
        else:
            np.testing.assert_allclose(got, est.predict(T), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------ label coder
@pytest.mark.parametrize("labels", [np.array(["no", "yes"]), np.array([3, -1, 7]), np.array([0.0, 1.0, 2.0, 9.0])])
def test_label_coder_round_trip_and_brute_force_targets(rng, labels):
    y = rng.choice(labels, size=40)
    y[: labels.size] = labels  # every class present
    coder, codes = LabelCoder.fit(y, "test")
    assert list(coder.classes) == sorted(labels.tolist())
    Y = coder.encode(y)
    for i, label in enumerate(y):  # brute force: +1 in the label's column, -1 elsewhere
        if coder.classes.size == 2:
            assert Y[i, 0] == (1.0 if label == coder.classes[1] else -1.0)
        else:
            assert Y[i].tolist() == [1.0 if c == label else -1.0 for c in coder.classes]
    assert np.array_equal(coder.decode(Y), y)
    assert np.array_equal(coder.classes[codes], y)
    assert np.array_equal(code_targets(y, coder.classes), Y)


def test_label_coder_ties_and_unknown_labels():
    coder = LabelCoder(np.array(["a", "b", "c"]))
    assert coder.decode(np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0]])).tolist() == ["a", "b"]  # first of a tie
    assert LabelCoder(np.array([0, 1])).decode(np.array([[0.0], [1e-300], [-0.0]])).tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="unknown label 'd'"):
        coder.encode(np.array(["a", "d"]))
    with pytest.raises(ValueError, match="at least 2 classes"):
        LabelCoder.fit(np.array(["a", "a"]), "SparseLSSVC")


@pytest.mark.parametrize("v", [1, 4])
def test_misclassified_counts_like_a_loop(rng, v):
    classes = np.arange(2 if v == 1 else v)
    coder = LabelCoder(classes)
    F = rng.standard_normal((3, 50, v))
    codes = rng.integers(0, classes.size, 50)
    brute = [sum(coder.decode(F[a, i][None])[0] != classes[codes[i]] for i in range(50)) for a in range(3)]
    assert LabelCoder.misclassified(F, codes).tolist() == brute
    assert misclassified(F, coder.targets(codes)).tolist() == brute


def test_decode_on_dask_equals_numpy(rng):
    da = pytest.importorskip("dask.array")
    coder = LabelCoder(np.array(["x", "y", "z"]))
    F = rng.standard_normal((45, 3))
    got = coder.decode(da.from_array(F, chunks=(10, 3))).compute(scheduler="threads")
    assert np.array_equal(got, coder.decode(F))


def test_every_classifier_error_rate_is_the_coders_count(rng):
    """LOO / CV error rates of the sparse and Nyström classifiers equal counting
    the coder's decoded out-of-sample outputs against the labels."""
    X, y = _data(rng, m=90, classes=["a", "b", "c"])
    sparse = MODELS["sparse-classes"]().fit(X, y)
    loo = sparse.loo_decision_function()
    assert sparse.loo_error_rate() == np.mean(LabelCoder(sparse.classes_).decode(loo) != y)
    nys = MODELS["nystrom-classes"]().fit(X, y)
    F = nys.loo_decision_function()
    assert nys.loo_error_rate() == np.mean(LabelCoder(nys.classes_).decode(F) != y)
    assert nys.cv_error("loo", scoring="error_rate") == nys.loo_error_rate()
