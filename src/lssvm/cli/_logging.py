"""Log-friendly output for the commands: progress that works without a
terminal, and warnings collected and summarised once."""

from __future__ import annotations

import re
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


#: Python parameters a warning may name, as the command's options (the warnings are the library's).
_OPTION_OF_PARAMETER = {"alphas": "--alphas", "gamma": "--gammas", "n_basis": "--n-basis", "basis": "--basis",
                        "kernel": "--kernel", "max_evaluations": "--max-evaluations"}
#: Characters of a warning shown without --verbose (its first sentence, cut here).
GIST_CHARS = 320
#: Distinct warnings shown without --verbose (the rest are counted).
GIST_LINES = 3


def for_the_command_line(text):
    """A library warning's text with the estimator's parameters named as this command's options:
    "(the estimator's alphas=)" reads "(--alphas)"."""
    return re.sub(r"the estimator's (\w+)=", lambda m: _OPTION_OF_PARAMETER.get(m.group(1), m.group(0)), text)


def gist(text, limit=GIST_CHARS):
    """A warning in at most about ``limit`` characters: its first sentence (what happened) and, where
    there are more, its last (the library's warnings end with what to do), each cut to half; a
    trailing bracketed tally is left out."""
    text = re.sub(r"\s*\[[^\]]*\]\s*$", "", text.strip())
    sentences = re.split(r"(?<=[.])\s+(?=[A-Z(])", text)

    def cut(part, n):
        return part if len(part) <= n else part[: n - 3].rstrip() + "..."

    if len(sentences) == 1:
        return cut(text, limit)
    return cut(sentences[0], limit // 2) + " ... " + cut(sentences[-1], limit // 2)


def echo_warnings(caught, verbose=False):
    """One summary line on stderr for the recorded warnings (count per
    category and how many distinct messages), then the first sentence of
    each distinct message (at most :data:`GIST_LINES`), so that what it is
    about shows without running the command again; with ``verbose``, each
    distinct message in full once with its count -- never file paths or
    source.  The estimator's parameters are named as the command's options."""
    if not caught:
        return
    messages = Counter((w.category.__name__, for_the_command_line(str(w.message))) for w in caught)
    kinds = Counter()
    for (cat, _), n in messages.items():
        kinds[cat] += n
    summary = ", ".join(f"{n} {cat}" for cat, n in kinds.most_common())
    click.echo(f"warnings   {summary} ({len(messages)} distinct)"
               + ("" if verbose else "; --verbose shows them in full"), err=True)
    shown = messages.most_common() if verbose else messages.most_common(GIST_LINES)
    for (cat, text), n in shown:
        click.echo(f"  {cat} (x{n}): {text if verbose else gist(text)}", err=True)
    if len(shown) < len(messages):
        click.echo(f"  ... and {len(messages) - len(shown)} more", err=True)


def command_line():
    """The command as typed (program name and arguments, shell-quoted)."""
    import os
    import shlex

    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "lssvm"
    if prog in ("__main__.py", "-m", "-c", "python"):
        prog = "lssvm"
    return " ".join(shlex.quote(a) for a in ["lssvm" if prog.endswith(".py") else prog, *sys.argv[1:]])
