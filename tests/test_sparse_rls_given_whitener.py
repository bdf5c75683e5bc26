"""A given feature map in the sparse factorisation: with the rank-k Nyström map it is the
Nyström LS-SVM (the documentation's Mathematics page, §6), checked against the Woodbury
factorisation and a dense ridge solve on the k features."""

import numpy as np
import pytest

from lssvm.kernels import make_kernel
from lssvm.solvers import factorize_sparse_rls
from lssvm.solvers.nystrom import nystrom_factorize, nystrom_projection


@pytest.mark.parametrize("rank", [5, 15, 40])
def test_sparse_factorisation_on_the_nystrom_map_is_the_nystrom_model(rank):
    rng = np.random.default_rng(rank)
    X = rng.normal(size=(200, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2]) + 0.1 * rng.normal(size=(200, 2))
    kernel = make_kernel("rbf", gamma=0.3)
    S = rng.choice(200, 40, replace=False)
    C = kernel(X, X[S])
    proj = nystrom_projection(C[S], rank)
    sparse = factorize_sparse_rls(C, C[S], Y, whitener=proj)
    woodbury = nystrom_factorize(C, C[S], Y, rank=rank)
    alphas = np.array([1e-2, 1.0, 10.0])
    R = sparse.loo_residuals(alphas)
    assert np.allclose(R, woodbury.loo_residuals(alphas), rtol=1e-8, atol=1e-10)
    # brute force: drop each row, ridge with an unpenalised intercept on the k features
    F = C @ proj
    for i in (0, 77, 199):
        keep = np.arange(200) != i
        Fk, Yk = F[keep], Y[keep]
        mu, ym = Fk.mean(0), Yk.mean(0)
        w = np.linalg.solve((Fk - mu).T @ (Fk - mu) + alphas[1] * np.eye(F.shape[1]), (Fk - mu).T @ (Yk - ym))
        pred = (F[i] - mu) @ w + ym
        assert np.allclose(Y[i] - pred, R[1, i], rtol=1e-7, atol=1e-9)


def test_given_whitener_of_the_wrong_shape_is_refused():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    K = make_kernel("rbf", gamma=1.0)(X, X[:5])
    with pytest.raises(ValueError, match="whitener of shape"):
        factorize_sparse_rls(K, K[:5], X[:, :1], whitener=np.ones((4, 2)))
