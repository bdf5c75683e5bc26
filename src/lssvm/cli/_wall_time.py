"""The whole ``lssvm select`` command's wall time: estimated before the
search starts, measured at the end, and printed side by side.

The estimate is the sum of

* what has been spent already, measured: the interpreter's start and
  imports, reading and encoding the table, the rate probes (the process's
  age, from ``/proc``; the command's own time elsewhere);
* the search and refit (:func:`lssvm.cli._cost.estimate_cost`);
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

from ._cost import _duration, estimate_cost

__all__ = ["CommandClock", "after_search_seconds", "gradient_stage_seconds", "process_seconds"]

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
    from ..basis import default_n_basis
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


