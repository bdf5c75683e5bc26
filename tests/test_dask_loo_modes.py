"""Leave-one-out through ``cv="loo"`` on a Dask fit: the closed form with the basis kept; a mode that
removes basis points (one refit per row that holds one) is refused with what to use instead."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from lssvm import NystromLSSVR, SparseLSSVR  # noqa: E402


@pytest.mark.parametrize("make", [lambda: SparseLSSVR(basis="random", n_basis=10, random_state=0),
                                  lambda: NystromLSSVR(n_basis=10, rank=6, random_state=0)], ids=["sparse", "nystrom"])
def test_loo_on_dask_keeps_the_basis_or_says_what_to_use(make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=90)
    with dask.config.set(scheduler="synchronous"):
        est = make().fit(da.from_array(X, chunks=(30, 2)), da.from_array(y, chunks=30))
        ref = make().fit(X, y)
        modes = ("remove", "train") if make().__class__.__name__.startswith("Nystr") else (None, "remove", "train")
        for mode in modes:  # None: the family's default ("keep" for Nyström, which the closed form serves)
            with pytest.raises(ValueError, match=r"basis_in_holdout='keep' \(the closed-form leave-one-out"):
                est.cv_error("loo", basis_in_holdout=mode)
        got = est.cv_error("loo", basis_in_holdout="keep")
    assert got == pytest.approx(ref.cv_error("loo", basis_in_holdout="keep"), rel=1e-9)
    assert got == pytest.approx(ref.press() / len(y), rel=1e-9)
