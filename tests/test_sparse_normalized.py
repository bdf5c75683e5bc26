"""Sparse (CSR) input with dot-product kernels, and the normalised kernel (paper 001 §6.4)."""

import numpy as np
import pytest
import scipy.sparse as sp

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cv import explicit_holdout_predict, explicit_loo_residuals
from lssvm.io import SavedModel, load_model, save_model
from lssvm.kernels import RBF, Linear, Normalized, Polynomial

from conftest import rel_err


def sparse_data(rng, m=60, d=400, density=0.03):
    X = sp.random(m, d, density=density, format="csr", random_state=np.random.RandomState(rng.integers(1e9)))
    X.data = rng.standard_normal(X.data.size)
    w = rng.standard_normal(d)
    y = X @ w + 0.1 * rng.standard_normal(m)
    return X, y


@pytest.mark.parametrize("basis", ["random", "fvs", "greedy"])
def test_sparse_linear_equals_dense(rng, basis):
    X, y = sparse_data(rng)
    kw = dict(kernel="linear", alpha=0.1, basis=basis, n_basis=20, random_state=0)
    a = SparseLSSVR(**kw).fit(X, y)
    b = SparseLSSVR(**kw).fit(X.toarray(), y)
    np.testing.assert_array_equal(a.basis_indices_, b.basis_indices_)
    assert sp.issparse(a.basis_vectors_)
    assert rel_err(a.predict(X), b.predict(X.toarray())) < 1e-10
    assert rel_err(a.loo_residuals(), b.loo_residuals()) < 1e-10
    assert rel_err(a.loo_residuals(), explicit_loo_residuals(a, X, y)) < 1e-8
    H = np.arange(0, 60, 4)
    for mode in ("remove", "keep", "train"):
        assert rel_err(a.holdout_predict(H, basis_in_holdout=mode)[:, None], explicit_holdout_predict(a, X, H, None, mode)) < 1e-8


def test_sparse_rejected_for_distance_kernels(rng):
    X, y = sparse_data(rng)
    with pytest.raises(ValueError, match="sparse input is supported only"):
        SparseLSSVR(kernel="rbf").fit(X, y)


def test_sparse_model_round_trip(rng, tmp_path):
    X, y = sparse_data(rng)
    est = SparseLSSVC(kernel="linear", alpha=0.1, basis="random", n_basis=15, random_state=0, normalize_kernel=True)
    est.fit(X, y > 0)
    path = save_model(tmp_path / "s.npz", SavedModel(est, np.zeros(400), np.ones(400), [f"f{i}" for i in range(400)]))
    loaded = load_model(path)
    assert sp.issparse(loaded.estimator.basis_vectors_)
    np.testing.assert_allclose(loaded.estimator.decision_function(X), est.decision_function(X), rtol=1e-12)


@pytest.mark.parametrize("base", [Linear(), Polynomial(gamma=0.5, degree=2, coef0=1.0), RBF(0.3)])
def test_normalized_kernel(rng, base):
    X = rng.standard_normal((20, 3)) + 1.0
    Z = X[:5]
    K = Normalized(base)(X, Z)
    B = base(X, Z)
    dx, dz = np.sqrt(base.diag(X)), np.sqrt(base.diag(Z))
    np.testing.assert_allclose(K, B / np.outer(dx, dz), rtol=1e-13)
    np.testing.assert_allclose(np.diag(Normalized(base)(X, X)), 1.0, rtol=1e-13)
    with pytest.raises(ValueError, match="cannot be normalised"):
        Normalized(Linear())(np.zeros((2, 3)), Z)


def test_normalized_kernel_in_estimator(rng):
    X, y = sparse_data(rng)
    est = SparseLSSVR(kernel="linear", normalize_kernel=True, alpha=0.05, basis="random", n_basis=20, random_state=0).fit(X, y)
    Xn = sp.diags(1 / np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())) @ X  # rows scaled to unit norm
    ref = SparseLSSVR(kernel="linear", alpha=0.05, basis="random", n_basis=20, random_state=0).fit(Xn, y)
    assert rel_err(est.predict(X), ref.predict(Xn)) < 1e-10
    assert rel_err(est.cv_predict(5), ref.cv_predict(5)) < 1e-10
