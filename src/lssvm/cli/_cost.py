"""What ``lssvm select`` will cost, said before it starts.

The work of the search is counted in three kinds, each divided by its own
rate measured on this machine when the command starts (0.1-0.4 s):

* matrix products (GEMM, SYRK, TRSM; the whitening solve is blocked, mostly
  GEMM: counted once), at the rate of a 384 x 384 GEMM;
* dense eigendecompositions (``eigh`` of the n x n Gram matrix, the basis
  kernel's Cholesky or ``eigh``, the pivoted Cholesky's condition
  bounds and estimates), at the rate of a 384 x 384 ``eigh``, counted as 9 n^3:
  these are memory-bound and run several times slower per flop than GEMM
  (the single GEMM rate made the estimate half the measured time on
  MAGIC);
* element-wise passes over m x n arrays (the kernel's ``exp``, centring,
  copies, the pivoted Cholesky's residual updates), at the rate of
  ``exp`` over 2^20 values.

Rough by design: it names the order of magnitude and the dominant sizes,
and the progress bar then shows the elapsed time and the ETA measured on
the evaluations themselves.

The whole command's wall time
-----------------------------
The estimate is the sum of

* what has been spent already, measured: the interpreter's start and
  imports, reading and encoding the table, the rate probes (the process's
  age, from ``/proc``; the command's own time elsewhere);
* the search and refit (:func:`estimate_cost`);
* for ``--search gradient``, the L-BFGS-B stage (:func:`gradient_stage_seconds`);
* the test rows' metrics, the report's figures and the model file
  (:func:`after_search_seconds`).

Rough by design, like the search's cost line: its purpose is to say
whether to wait a minute or an hour, and the final line shows how far off
it was.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from .._threads import other_runnable, thread_scope
from ..basis import default_basis_size, default_n_basis
from ..basis.random import DEFAULT_N_BASIS

__all__ = ["CommandClock", "MachineRates", "SearchCost", "after_search_seconds", "estimate_cost", "gradient_stage_seconds",
           "machine_rate", "machine_rates", "process_seconds"]


@dataclass(frozen=True)
class MachineRates:
    """Operations per second of the three kinds of work (see the module notes)."""

    gemm: float
    eigh: float
    stream: float
    #: The share of its threads' cores the search gets from the scheduler: ``usable / (threads + other
    #: runnable tasks)`` at most 1 (on a machine shared with other work the search's wall time is its
    #: CPU time over this share; the short probes themselves run at full speed between preemptions).
    share: float = 1.0

    @classmethod
    def single(cls, rate):
        """One rate for all three kinds (a flop count divided by ``rate``)."""
        return cls(float(rate), float(rate), float(rate))


class _Probe:
    """Times a probe's repeats by wall clock and by this process's CPU clock."""

    def __init__(self, one_thread):
        self.one_thread = one_thread
        self.wall = self.cpu = 0.0

    def best_time(self, work, repeats=5):
        """The probe's fastest repeat.  On one thread a repeat's time is its CPU time where that is
        shorter than its wall time (the repeat was preempted: its wall time measures the other work
        on the machine, which :attr:`share` counts once)."""
        best = np.inf
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            work()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            self.wall, self.cpu = self.wall + wall, self.cpu + cpu
            best = min(best, min(wall, cpu) if self.one_thread and cpu > 0 else wall)
        return max(best, 1e-9)

    def share(self):
        """The CPU time the probes got over their wall time (one thread), or None."""
        if not self.one_thread or self.wall <= 0 or self.cpu <= 0:
            return None
        return min(1.0, self.cpu / self.wall)


def machine_rates():
    """The three rates now: a 384 x 384 GEMM (2 n^3 flops), an ``eigh`` of
    384 x 384 (counted as 9 n^3) and ``exp`` over 2^20 values (one operation
    each), best of 5, on the BLAS threads the search will use (lssvm's
    thread rule: the free cores; on a loaded machine two threads probed
    while the search ran on one made the estimate 9x too long); about
    0.1-0.4 s in all.

    The share of the cores the search will get: on one thread, the probes'
    CPU time over their wall time (the scheduler's share measured over the
    probes' 0.1-0.4 s), and each repeat timed by its CPU time where it was
    preempted, so that the other work on the machine is counted once.  A
    count of runnable tasks read at one instant, with repeats timed by the
    wall clock, counted it twice whenever every repeat of a probe was
    preempted: on the 2-core machine at load 11-13, GEMM read 4.0 GFLOP/s on
    puma32H and 44 on MAGIC, and the whole command's estimate was 3.3x the
    actual time on puma32H and 3.1x on adult.  Several threads: the runnable
    count (a thread's CPU time does not separate the threads' waits)."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((384, 384))
    S = A @ A.T
    v = rng.standard_normal(1 << 20)
    out = np.empty_like(v)
    with thread_scope(None) as plan:
        probe = _Probe(plan.threads == 1)
        rates = dict(gemm=2 * 384**3 / probe.best_time(lambda: A @ A),
                     eigh=9 * 384**3 / probe.best_time(lambda: np.linalg.eigh(S)),
                     stream=v.size / probe.best_time(lambda: np.exp(v, out=out)))
    share = probe.share()
    if share is None:
        share = min(1.0, plan.usable / (plan.threads + other_runnable()))
    return MachineRates(**rates, share=max(share, 0.01))


def machine_rate():
    """Float64 GEMM flops per second now (a 384 x 384 product, best of 3)."""
    return machine_rates().gemm


class SearchCost:
    """Sizes, work, bytes and the estimated seconds of one search.

    Attributes
    ----------
    rows, size, evaluations, n_alphas : int
    work : dict of str to (float, float, float)
        Per part of the search (``"basis"``, ``"evaluations"``, ``"refit"``):
        its matrix-product flops, ``eigh`` flops and element-wise operations.
    flops : float
        All of it summed.
    nbytes : int
        The working set.
    rates : MachineRates
    """

    def __init__(self, rows, size, evaluations, n_alphas, work, nbytes, rates):
        self.rows, self.size, self.evaluations, self.n_alphas = rows, size, evaluations, n_alphas
        self.work, self.nbytes = dict(work), nbytes
        self.rates = rates if isinstance(rates, MachineRates) else MachineRates.single(rates)
        self.flops = float(sum(sum(w) for w in self.work.values()))

    @property
    def rate(self):
        """The effective rate: all the work over the estimated seconds."""
        return self.flops / self.seconds if self.seconds > 0 else self.rates.gemm

    def part_seconds(self, part):
        """Estimated seconds of one part of the search."""
        gemm, eigh, stream = self.work[part]
        r = self.rates
        return (gemm / r.gemm + eigh / r.eigh + stream / r.stream) / r.share

    @property
    def seconds(self):
        return sum(self.part_seconds(p) for p in self.work)

    def too_large(self, available=None):
        """Whether the working set would exceed about half the memory."""
        if available is None:
            try:
                available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
                return False
        return self.nbytes > 0.5 * available

    def lines(self):
        r = self.rates
        out = [f"cost       {self.rows} rows, model size {self.size}, {self.evaluations} evaluations x "
               f"{self.n_alphas} alphas: about {_duration(self.seconds)} (estimated from "
               f"{self.flops / 1e9:.3g} GFLOP: GEMM at {r.gemm / 1e9:.3g}, eigh at {r.eigh / 1e9:.3g} "
               f"GFLOP/s measured now{'' if r.share >= 1 else f', {r.share:.0%} of the cores free'}), "
               f"{self.nbytes / 2**30:.2g} GiB"]
        if self.too_large():
            out.append("memory     this looks too large for memory: stream the data in blocks with "
                       "--chunk-rows N (random basis, prototypes or columns)")
        return out


def _duration(seconds):
    # tenths below 10 s: "1 s" for a 0.05 s search read as a 20x overestimate on small tables
    if seconds < 10:
        return f"{max(seconds, 0.1):.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def estimate_cost(kind, rows, features, evaluations, n_alphas, *, cv="loo", basis="pchol", n_basis=None,
                  rate=None, classification=True):
    """Estimate the cost of a search of ``evaluations`` kernel parameter values.

    Parameters
    ----------
    kind : {"sparse", "pool", "low-rank"}
        The cost model of the search's family (``cost_kind`` of :class:`lssvm.estimators.search_cv.SearchFamily`):
        the exact path on a basis, a prototype pool with SCDP's curves on folds, or columns cut to rank k.
    rows, features : int
    evaluations, n_alphas : int
        Criterion calls and alphas per call.
    cv : "loo" or int or other
        Folds (anything but "loo" counts as 10).
    basis, n_basis
        As given to the estimator (None: its default, "pchol" of
        :func:`lssvm.basis.default_basis_size` points).
    rate : float or MachineRates, optional
        Operations per second: one number for all kinds of work, or the
        three rates (default :func:`machine_rates`).
    classification : bool, default=True
        The task; the sparse regressors' default basis is smaller
        (:func:`lssvm.basis.default_basis_size`).

    Returns
    -------
    SearchCost

    Notes
    -----
    Sparse model, m rows, n basis points, d inputs, A alphas, per
    evaluation: 6 m n^2 product flops (the blocked whitening solve, SYRK,
    ``M = Phi V``, and the whitening GEMM of the singular path), 2 m n d
    for the kernel, 4 A m n for the alpha path; 18 n^3 at the ``eigh`` rate
    (the Gram matrix's ``eigh``, and the basis kernel's Cholesky or, at the
    wide widths, its ``eigh``); 20 element-wise passes over m x n.
    Pivoted Cholesky: 2 m n^2 product flops (its blocked updates, half of
    them for candidates not chosen), 3 m n d for kernel columns, 4 n^3 at
    the ``eigh`` rate for the condition bounds (one packed triangular solve
    per point; LAPACK's estimate only where the bound fails), 30 passes over m
    and 10^5 operations of interpreter overhead per point.  The constants
    were fitted to single-thread CPU times of friedman1 (m = 5,000) and
    MAGIC (12,680 rows), n = 700 (the whitening and the pivoted Cholesky's
    condition estimates included).  The search's
    refit reuses the factorisation of the chosen candidate (no cost); the
    fixed-size and Nyström refits cost one evaluation.
    """
    m, d = int(rows), int(features)
    folds = 0 if cv == "loo" else (cv if isinstance(cv, int) else 10)

    def size(value):
        if value is None:
            return default_n_basis(m)
        return int(round(value * m)) if value < 1 else int(value)

    basis = "pchol" if basis is None else basis  # the estimators' default
    # the fixed-size search scores the whole-pool model as the sparse one (exact LOO for an int cv), then
    # runs SCDP's fold curves once, in the refit (size_search="refit")
    full_pool = kind == "pool" and basis == "pchol"
    if full_pool and isinstance(cv, int):
        folds = 0
    n = size(default_basis_size(basis, n_basis, m, classification) if kind == "sparse" or full_pool
             else n_basis)
    if kind == "sparse" and n_basis is None and basis in ("random", "kcenter"):  # as select_basis draws them
        n = min(DEFAULT_N_BASIS, m)
    if kind == "sparse" or full_pool:
        select = {"pchol": (2 * m * n * n + 3 * m * n * d, 4 * n**3, 30 * m * n + 1e5 * n),
                  "fvs": (m * m * n, 0, 0), "kcenter": (m * n * d, 0, 0)}.get(basis, (0, 0, 0))
        gemm = 6 * m * n * n + 2 * m * n * d + 4 * n_alphas * m * n
        if folds:
            h = m / folds
            gemm += n_alphas * folds * (h * h * n + h**3 / 3)
        per_eval = (gemm, 18 * n**3, 20 * m * n)
        refit = (0, 0, 0)
        if full_pool:  # SCDP's curves on 10 folds at one alpha, and the pool's system
            refit = (2 * m * n * d + 2 * m * n * n + 10 * (2 * m / 10 * n * n) + 10 * n * n * min(n, 200),
                     10 * n**3, 12 * m * n)
        nbytes = 8 * (3 * m * n + m * d)
    elif kind == "low-rank":
        k = n // 2
        select = (0, 0, 0)
        per_eval = (2 * m * n * d + 2 * m * n * k + 2 * n_alphas * m * k, 10 * n**3, 12 * m * n)
        refit = per_eval
        nbytes = 8 * (3 * m * n + m * d)
    else:
        select = (m * n * d, 0, 0)
        per_eval = (2 * m * n * d + 2 * m * n * n + max(folds, 10) * (2 * m / 10 * n * n)
                    + n_alphas * 10 * n * n * min(n, 200), max(folds, 10) * n**3, 12 * m * n)
        refit = per_eval
        nbytes = 8 * (3 * m * n + m * d + 10 * n * n)
    work = {"basis": tuple(float(x) for x in select),
            "evaluations": tuple(float(evaluations * x) for x in per_eval),
            "refit": tuple(float(x) for x in refit)}
    return SearchCost(m, n, evaluations, n_alphas, work, nbytes, machine_rates() if rate is None else rate)


#: L-BFGS-B evaluations actually spent per start (and by the evidence search): about this many per parameter
#: searched (the widths + log alpha), at most the cap; and the work of one evaluation (criterion and
#: gradient) in criterion calls at one alpha.  Measured with the defaults (actual seconds per evaluation
#: over one call's estimate): boston, ARD, 13 widths: 239 evaluations (the caps, 4 x 60), 1.55; MAGIC, rbf:
#: 38 evaluations, 2.0; puma32H, ARD, 32 widths: 460 evaluations (caps 4 x 99 and alpha restarts), 1.95.
GRADIENT_EVALUATIONS_PER_PARAMETER = 5
GRADIENT_CALLS_PER_EVALUATION = 2.0
#: the report: importing matplotlib and drawing its figures (s), plus the out-of-fold pass per row
REPORT_SECONDS = 2.5
REPORT_SECONDS_PER_ROW = 2e-5


def process_seconds():
    """Seconds since this process started (Linux ``/proc``), or None
    elsewhere."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def gradient_stage_seconds(model, rows, features, n_widths, starts, cap, rates, classification):
    """Estimated seconds of the L-BFGS-B stage of ``--search gradient``.

    Parameters
    ----------
    model : str
        The model family (the gradient search is the sparse models').
    rows, features : int
    n_widths : int
        Widths searched (d for "ard", 1 for "rbf").
    starts : int
        L-BFGS-B starts (``n_restarts + 1``).
    cap : int
        Evaluations allowed per start (and to the evidence search).
    rates : MachineRates
    classification : bool

    Returns
    -------
    float

    Notes
    -----
    ``min(cap, GRADIENT_EVALUATIONS_PER_PARAMETER (n_widths + 1))`` evaluations
    per start and for the evidence search (L-BFGS-B stops well before the
    cap with one width; with many it spends the cap), each
    ``GRADIENT_CALLS_PER_EVALUATION`` criterion calls at one alpha on
    the default basis of the gradient search (``min(300, 10 sqrt(m))``
    random rows); the widths' kernel derivatives are within that factor
    (measured up to 32 widths).
    """
    from ..estimators.gradient_search import AUTO_BASIS_CAP

    n = default_n_basis(int(rows), AUTO_BASIS_CAP)
    evaluations = (starts + 1) * min(cap, GRADIENT_EVALUATIONS_PER_PARAMETER * (n_widths + 1))
    one = estimate_cost("sparse", rows, features, 1, 1, basis="random", n_basis=n, rate=rates,
                        classification=classification)
    return evaluations * GRADIENT_CALLS_PER_EVALUATION * one.part_seconds("evaluations")


def after_search_seconds(rows, report, test_rows=0):
    """Estimated seconds after the search: the test rows' metrics, the
    report (matplotlib's import and the figures, an out-of-fold pass) and
    the model file."""
    seconds = 0.2 + 1e-5 * test_rows
    if report:
        seconds += REPORT_SECONDS + REPORT_SECONDS_PER_ROW * rows
    return seconds


class CommandClock:
    """The command's elapsed time: from the process's start where known and
    the process is this command (``lssvm select ...``, not a test runner or
    a notebook calling it), else from the command's own start."""

    def __init__(self):
        self._t0 = time.perf_counter()
        own = len(sys.argv) > 1 and sys.argv[1] == "select"
        self._before = (process_seconds() or 0.0) if own else 0.0

    def elapsed(self):
        return self._before + time.perf_counter() - self._t0

    def estimate_line(self, search_seconds, after_seconds):
        """The whole command's estimate; returns (seconds, line)."""
        done = self.elapsed()
        total = done + search_seconds + after_seconds
        return total, (f"total      about {_duration(total)} for the whole command: {done:.1f} s so far (start, "
                       f"reading, encoding), search and refit about {_duration(search_seconds)}, then about "
                       f"{_duration(after_seconds)} for test metrics, report and model file")

    def final_line(self, estimate):
        actual = self.elapsed()
        ratio = f", {actual / estimate:.2g}x the estimate" if estimate > 0 else ""
        return f"wall time  {actual:.1f} s for the whole command (estimated {estimate:.1f} s{ratio})"
