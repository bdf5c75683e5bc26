"""The command's warning summary says what each warning is about without a second run: the first
sentence (what happened) and the last (what to do) of each distinct message, the estimator's
parameters named as the command's options; ``--verbose`` prints them in full."""

from __future__ import annotations

import warnings

from lssvm.cli._logging import GIST_LINES, echo_warnings, for_the_command_line, gist
from lssvm.exceptions import NumericalWarning

NOTE = ("1 numerical note(s) concern the fitted model at gamma=0.00625, alpha=0.0003162; the first: "
        "leave-one-out: the hat-matrix diagonal of training row(s) 1, 3 and 1508 more is within 1e-08 of 1. "
        "The search chose alpha=0.000316228, where this holds: pass alphas above it (the estimator's "
        "alphas=) to choose among reliable scores  [7 note(s) during the search and refit]")


def _caught(*messages):
    return [warnings.WarningMessage(text, NumericalWarning, "x.py", 1) for text in messages]


def test_parameters_are_named_as_options():
    assert for_the_command_line(NOTE).endswith("pass alphas above it (--alphas) to choose among reliable scores  "
                                               "[7 note(s) during the search and refit]")
    assert for_the_command_line("raise the estimator's n_basis=") == "raise --n-basis"
    assert for_the_command_line("the estimator's unknown_thing=") == "the estimator's unknown_thing="


def test_gist_keeps_what_happened_and_what_to_do():
    text = gist(for_the_command_line(NOTE))
    assert text.startswith("1 numerical note(s) concern the fitted model at gamma=0.00625")
    assert text.endswith("pass alphas above it (--alphas) to choose among reliable scores")
    assert "[7 note(s)" not in text
    assert gist("One short sentence.") == "One short sentence."
    assert len(gist("word " * 200)) <= 320


def test_summary_shows_each_distinct_warning_once(capsys):
    caught = _caught(NOTE, NOTE, "Second kind. Do this instead.", "Third.", "Fourth.")
    echo_warnings(caught)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "warnings   5 NumericalWarning (4 distinct); --verbose shows them in full"
    assert err[1].startswith("  NumericalWarning (x2): 1 numerical note(s)") and "(--alphas)" in err[1]
    assert len(err) == 1 + GIST_LINES + 1 and err[-1] == "  ... and 1 more"
    echo_warnings(caught, verbose=True)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 5 and "1508 more is within 1e-08 of 1" in err[1]
