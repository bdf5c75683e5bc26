"""Log-friendly output for the commands: progress that works without a
terminal, and warnings collected and summarised once."""

from __future__ import annotations

import sys
import time
import warnings
from collections import Counter
from contextlib import contextmanager

import click

__all__ = ["Progress", "collect_warnings", "command_line", "echo_warnings"]


class Progress:
    """Progress of a search: a bar on a terminal; otherwise (logs, pipes,
    CI) one line per evaluation with the elapsed time, on stderr.

    Use as a context manager; call ``update(params, path)`` per evaluation.
    """

    def __init__(self, expected, label="evaluating", stream=None):
        self.expected, self.label = expected, label
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.count, self._bar, self._t0 = 0, None, None

    def __enter__(self):
        self._t0 = time.perf_counter()
        if self.tty:
            self._bar = click.progressbar(
                length=self.expected, label=self.label, file=self.stream, show_pos=True, show_eta=True,
                item_show_func=lambda _: f"{time.perf_counter() - self._t0:.0f} s elapsed")
            self._bar.__enter__()
        else:
            click.echo(f"{self.label} (about {self.expected} evaluation(s))", file=self.stream)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False

    def update(self, params=None, path=None):
        self.count += 1
        if self._bar is not None:
            self._bar.update(1)
            return
        elapsed = time.perf_counter() - self._t0
        shown = ", ".join(f"{k}={v:.4g}" for k, v in (params or {}).items()) or "the kernel"
        best = ""
        if path is not None:
            import numpy as np

            scores = path.mse if path.error_rate is None else path.error_rate
            i = int(np.argmin(scores))
            what = "MSE" if path.error_rate is None else "error rate"
            best = f": best alpha {path.alphas[i]:.4g}, CV {what} {scores[i]:.4g}"
        left = self.expected - self.count
        eta = f", ETA {elapsed / self.count * left:.0f} s" if left > 0 else ""
        click.echo(f"[{self.count}/{self.expected} {elapsed:.1f} s{eta}] {shown}{best}", file=self.stream)


@contextmanager
def collect_warnings():
    """Record every warning raised inside (as a list of WarningMessage)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def echo_warnings(caught, verbose=False):
    """One summary line on stderr for the recorded warnings (count per
    category and how many distinct messages); with ``verbose``, each
    distinct message once with its count -- never file paths or source."""
    if not caught:
        return
    messages = Counter((w.category.__name__, str(w.message)) for w in caught)
    kinds = Counter()
    for (cat, _), n in messages.items():
        kinds[cat] += n
    summary = ", ".join(f"{n} {cat}" for cat, n in kinds.most_common())
    click.echo(f"warnings   {summary} ({len(messages)} distinct)"
               + ("" if verbose else "; --verbose shows them"), err=True)
    if verbose:
        for (cat, text), n in messages.most_common():
            click.echo(f"  {cat} (x{n}): {text}", err=True)


def command_line():
    """The command as typed (program name and arguments, shell-quoted)."""
    import os
    import shlex

    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "lssvm"
    if prog in ("__main__.py", "-m", "-c", "python"):
        prog = "lssvm"
    return " ".join(shlex.quote(a) for a in ["lssvm" if prog.endswith(".py") else prog, *sys.argv[1:]])
