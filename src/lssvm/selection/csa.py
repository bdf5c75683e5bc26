"""Coupled simulated annealing with variance control (CSA-MwVC).

Xavier-de-Souza, Suykens, Vandewalle & Bollé, *Coupled simulated annealing*,
IEEE Trans. SMC-B 40(2), 2010; used by Karsmakers et al. 2011 and LS-SVMlab to seed
Nelder-Mead.  No maintained Python library provides it, so it is written
here: m optimisers take Cauchy steps whose scale (the generation
temperature) falls as T0 / k; a worse probe is accepted with a probability
coupled across the optimisers, ``exp((E_i - max E) / T_ac) / sum_j
exp((E_j - max E) / T_ac)``, and the acceptance temperature T_ac is steered
so that the variance of these probabilities stays near its target
``0.99 (m - 1) / m^2`` (the variance control that makes T_ac need no
schedule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["CSAResult", "coupled_simulated_annealing"]


@dataclass
class CSAResult:
    """Best point found, its value, and the bookkeeping of the run.

    Attributes
    ----------
    x : ndarray of shape (d,)
    fun : float
    n_evaluations : int
    history : ndarray of shape (n_evaluations, d + 1)
        Every evaluated point and its value, in order.
    """

    x: np.ndarray
    fun: float
    n_evaluations: int
    history: np.ndarray


def coupled_simulated_annealing(func, bounds, *, n_optimizers=5, max_evaluations=100, steps_per_temperature=4,
                                T0=1.0, Tac0=1.0, rate=0.05, random_state=None, x0=None, tol=-np.inf):
    """Minimise ``func`` over a box by coupled simulated annealing.

    Parameters
    ----------
    func : callable
        ``func(x) -> float`` for x of shape (d,).
    bounds : array-like of shape (d, 2)
        Lower and upper bound per coordinate; probes outside are redrawn.
    n_optimizers : int, default=5
        m, coupled annealers (LS-SVMlab uses 5).
    max_evaluations : int, default=100
        Budget of ``func`` calls, the m starting points included.
    steps_per_temperature : int, default=4
        Probes per optimiser between two generation-temperature steps.
    T0, Tac0 : float, default=1.0
        Initial generation temperature (in units of the box size: steps are
        ``T * (upper - lower) * tan(pi (u - 1/2))``) and acceptance temperature.
    rate : float, default=0.05
        Relative change of T_ac per temperature step (variance control).
    random_state : int, RandomState or None
        Makes the run reproducible.
    x0 : array-like of shape (m, d), optional
        Starting points; default uniform in the box.
    tol : float, default=-inf
        Stop as soon as a value at or below ``tol`` is found.

    Returns
    -------
    CSAResult

    Notes
    -----
    Cost: ``max_evaluations`` calls of ``func`` plus O(m d) per step.
    """
    rng = check_random_state(random_state)
    bounds = np.asarray(bounds, dtype=float)
    if bounds.ndim != 2 or bounds.shape[1] != 2 or np.any(~np.isfinite(bounds)) or np.any(bounds[:, 1] <= bounds[:, 0]):
        raise ValueError("bounds must be finite (lower, upper) pairs with lower < upper, shape (d, 2)")
    m = int(n_optimizers)
    if m < 2:
        raise ValueError(f"n_optimizers must be >= 2 (the optimisers are coupled); got {n_optimizers!r}")
    if max_evaluations < m:
        raise ValueError(f"max_evaluations={max_evaluations} must cover the {m} starting points")
    lo, hi = bounds[:, 0], bounds[:, 1]
    width = hi - lo
    d = lo.size
    X = lo + rng.random_sample((m, d)) * width if x0 is None else np.array(x0, dtype=float).reshape(m, d)
    history = []

    def evaluate(x):
        v = float(func(x))
        if not np.isfinite(v):
            v = np.inf
        history.append(np.append(x, v))
        return v

    E = np.array([evaluate(x) for x in X])
    target_var = 0.99 * (m - 1) / m**2
    Tac, k = float(Tac0), 0
    while len(history) < max_evaluations and E.min() > tol:
        k += 1
        T = T0 / k
        for _ in range(steps_per_temperature):
            if len(history) >= max_evaluations or E.min() <= tol:
                break
            finite = np.isfinite(E)
            Emax = E[finite].max() if finite.any() else 0.0
            w = np.where(finite, np.exp((np.where(finite, E, Emax) - Emax) / Tac), 0.0)
            prob = w / w.sum() if w.sum() > 0 else np.full(m, 1.0 / m)
            for i in range(m):
                if len(history) >= max_evaluations:
                    break
                probe = X[i] + T * width * np.tan(np.pi * (rng.random_sample(d) - 0.5))
                for _ in range(100):  # redraw coordinates that leave the box
                    out = (probe < lo) | (probe > hi)
                    if not out.any():
                        break
                    probe[out] = X[i, out] + T * width[out] * np.tan(np.pi * (rng.random_sample(out.sum()) - 0.5))
                probe = np.clip(probe, lo, hi)
                e = evaluate(probe)
                if e < E[i] or rng.random_sample() < prob[i]:
                    X[i], E[i] = probe, e
            # variance control of the acceptance temperature
            Tac *= (1 + rate) if prob.var() > target_var else (1 - rate)
    H = np.asarray(history)
    best = int(np.argmin(H[:, -1]))
    return CSAResult(H[best, :-1].copy(), float(H[best, -1]), len(H), H)
