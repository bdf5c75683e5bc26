"""What ``lssvm select`` will cost, said before it starts.

A flop count of the search (basis selection, kernel columns, one
factorisation per evaluation, the alpha path, the refit), divided by the
rate of a small matrix product and eigendecomposition measured on this
machine when the command starts (about 0.05 s).  Rough by design: it names
the order of magnitude and the dominant sizes, and the progress bar then
shows the elapsed time and the ETA measured on the evaluations themselves.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..basis import default_n_basis

__all__ = ["SearchCost", "estimate_cost", "machine_rate"]


def machine_rate():
    """Float64 flops per second now: the mean of a 384 x 384 GEMM and an
    ``eigh`` of 192 x 192 (the factorisation's two kernels), best of 3."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((384, 384))
    S = A[:192, :192] @ A[:192, :192].T
    rates = []
    for flops, work in ((2 * 384**3, lambda: A @ A), (9 * 192**3, lambda: np.linalg.eigh(S))):
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - t0)
        rates.append(flops / max(best, 1e-9))
    return float(np.mean(rates))


class SearchCost:
    """Sizes, flops, bytes and the estimated seconds of one search."""

    def __init__(self, rows, size, evaluations, n_alphas, flops, nbytes, rate):
        self.rows, self.size, self.evaluations, self.n_alphas = rows, size, evaluations, n_alphas
        self.flops, self.nbytes, self.rate = flops, nbytes, rate

    @property
    def seconds(self):
        return self.flops / self.rate

    def too_large(self, available=None):
        """Whether the working set would exceed about half the memory."""
        if available is None:
            try:
                available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
                return False
        return self.nbytes > 0.5 * available

    def lines(self):
        out = [f"cost       {self.rows} rows, model size {self.size}, {self.evaluations} evaluations x "
               f"{self.n_alphas} alphas: about {_duration(self.seconds)} (estimated from "
               f"{self.flops / 1e9:.3g} GFLOP at {self.rate / 1e9:.3g} GFLOP/s measured now), "
               f"{self.nbytes / 2**30:.2g} GiB"]
        if self.too_large():
            out.append("memory     this looks too large for memory: stream the data in blocks with "
                       "--chunk-rows N (random basis, prototypes or columns)")
        return out


def _duration(seconds):
    if seconds < 1:
        return "1 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def estimate_cost(model, rows, features, evaluations, n_alphas, *, cv="loo", basis="pchol", n_basis=None,
                  rate=None):
    """Estimate the cost of a search of ``evaluations`` kernel parameter values.

    Parameters
    ----------
    model : {"sparse", "fixed-size", "nystrom"}
    rows, features : int
    evaluations, n_alphas : int
        Criterion calls and alphas per call.
    cv : "loo" or int or other
        Folds (anything but "loo" counts as 10).
    basis, n_basis
        As given to the estimator (None: its default).
    rate : float, optional
        Flops per second (default :func:`machine_rate`).

    Returns
    -------
    SearchCost
    """
    m, d = int(rows), int(features)
    folds = 0 if cv == "loo" else (cv if isinstance(cv, int) else 10)

    def size(value):
        if value is None:
            return default_n_basis(m)
        return int(round(value * m)) if value < 1 else int(value)

    if model == "sparse":
        n = size(n_basis)
        select = {"pchol": m * n * (d + 2 * n), "fvs": m * m * n, "kcenter": m * n * d}.get(basis, 0)
        # the factorisation: whitening TRSM (m n^2), Gram SYRK (m n^2), M = Phi V GEMM (2 m n^2), eigh
        per_eval = 2 * m * n * d + 20 * m * n + 4 * m * n * n + 10 * n**3 + 2 * n_alphas * m * n
        if folds:
            h = m / folds
            per_eval += n_alphas * folds * (h * h * n + h**3 / 3)
        nbytes = 8 * (3 * m * n + m * d)
    elif model == "nystrom":
        n = size(n_basis)
        k = n // 2
        select = 0
        per_eval = 2 * m * n * d + 20 * m * n + 2 * m * n * k + 10 * n**3 + 2 * n_alphas * m * k
        nbytes = 8 * (3 * m * n + m * d)
    else:
        n = size(n_basis)
        select = m * n * d
        per_eval = 2 * m * n * d + 20 * m * n + 2 * m * n * n + max(folds, 10) * (2 * m / 10 * n * n + n**3)
        per_eval += n_alphas * 10 * n * n * min(n, 200)
        nbytes = 8 * (3 * m * n + m * d + 10 * n * n)
    flops = float(select + (evaluations + 1) * per_eval)  # + 1: the refit
    return SearchCost(m, n, evaluations, n_alphas, flops, nbytes, machine_rate() if rate is None else rate)
