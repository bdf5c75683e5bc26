"""Options shared by ``lssvm fit`` and ``lssvm select``, defined once so
both commands take the same names and choices, and the checks of their
values (value lists of ``--alphas`` / ``--gammas``, subnormal numbers)."""

from __future__ import annotations

import click
import numpy as np

from ..basis import BASIS_METHODS
from ..estimators import MODELS
from ..io.tabular import DEFAULT_MIN_FREQUENCY

__all__ = ["table_options", "kernel_options", "basis_options", "verbose_option", "CATEGORICAL_HELP", "check_normal",
           "parse_log_values"]

CATEGORICAL_HELP = ("auto: one-hot encode the non-numeric columns; none: refuse them; COL,COL,...: encode these "
                    "columns (numeric or not).  Levels rarer than --min-frequency share one column; a level "
                    "unseen in training is counted with them, or encoded as no level when there are none.")


def _apply(options):
    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def _categorical(ctx, param, value):
    if value in ("auto", "none"):
        return value
    cols = [c.strip() for c in value.split(",") if c.strip()]
    if not cols:
        raise click.BadParameter("give auto, none, or a comma-separated list of columns")
    return cols


def _min_frequency(ctx, param, value):
    if not value > 0 or (value >= 1 and not float(value).is_integer()):
        raise click.BadParameter(f"give a fraction in (0, 1) or a whole count >= 1; got {value}")
    return float(value) if value < 1 else int(value)


#: Largest ``--degree``: ``(gamma x.z + coef0)^degree`` is finite and nonzero in float64 only for a base within
#: a factor exp(709 / degree) of 1 (1e3 at degree 100, 1.0007 at 1e6): beyond it the kernel is inf or 0.
MAX_DEGREE = 100


def _degree(ctx, param, value):
    if not 1 <= value <= MAX_DEGREE:
        raise click.BadParameter(
            f"{value}: the poly kernel's degree must be between 1 and {MAX_DEGREE}; (gamma x.z + coef0)^{value} "
            "overflows or underflows float64 for almost every input")
    return value


#: --target, --drop, --task, --categorical, --impute, --min-frequency, --scale
table_options = _apply([
    click.option("--target", "-t", default=None, help="Target column (default: the last column)."),
    click.option("--drop", multiple=True, help="Input column to ignore (repeatable)."),
    click.option("--task", type=click.Choice(["auto", "regression", "classification"]), default="auto",
                 show_default=True, help="auto: classification for non-numeric or two-valued targets."),
    click.option("--categorical", default="auto", show_default=True, callback=_categorical,
                 help=CATEGORICAL_HELP),
    click.option("--impute/--no-impute", default=True, show_default=True,
                 help="Fill missing inputs (median; most frequent level) and add a 0/1 missing indicator per "
                      "column that had any; --no-impute refuses missing values."),
    click.option("--min-frequency", type=float, default=DEFAULT_MIN_FREQUENCY, show_default=True,
                 callback=_min_frequency, help="Rarer levels (fraction of rows, or a count if >= 1) are grouped."),
    click.option("--scale", type=click.Choice(["standard", "minmax", "none"]), default="standard",
                 show_default=True, help="Input scaling, stored with the model."),
])

#: --kernel, --degree, --coef0, --normalize-kernel
kernel_options = _apply([
    click.option("--kernel", type=click.Choice(["rbf", "laplacian", "linear", "poly", "ard"]), default="rbf",
                 show_default=True),
    click.option("--degree", type=int, default=3, show_default=True, callback=_degree,
                 help=f"Degree of the poly kernel, 1 to {MAX_DEGREE}."),
    click.option("--coef0", type=float, default=1.0, show_default=True, help="Offset of the poly kernel."),
    click.option("--normalize-kernel", is_flag=True, help="Use k(x,z)/sqrt(k(x,x) k(z,z))."),
])

class _CountOrFraction(click.ParamType):
    """A whole count >= 1 (int), a fraction in (0, 1) (float) or "auto"."""

    name = "count-or-fraction"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"must be a whole count or a fraction in (0, 1); got {value!r}", param, ctx)
        if not np.isfinite(number) or number <= 0 or (number >= 1 and not number.is_integer()):
            self.fail(f"must be a whole count or a fraction in (0, 1); got {value}", param, ctx)
        return number if number < 1 else int(number)


def _models_help(describe):
    """``"name: describe(regressor preset); ..."`` over the model families of ``lssvm select --model``."""
    return "; ".join(f"{name}: {describe(regressor)}" for name, (regressor, _) in MODELS.items())


def _bases_help(search):
    default = search().get_params()["basis"]
    return ", ".join([f"{default} (default)", *(b for b in search.string_options("basis") if b != default)])


def dask_bases_help():
    """The bases each model family draws on Dask input, its default there first."""
    return _models_help(lambda search: " or ".join(search.search_family().dask_bases))


#: --basis, --n-basis (every model family: prototype pools and sampled columns are bases too)
basis_options = _apply([
    click.option("--basis", type=click.Choice([*BASIS_METHODS, "all"]), default=None,
                 help=f"Basis method of each --model: {_models_help(_bases_help)}.  pchol: pivoted Cholesky (auto: "
                      "pchol, or the gradient search's random basis); fvs: exact greedy, O(rows^2) per point.  With "
                      f"--chunk-rows: {dask_bases_help()}."),
    click.option("--n-basis", type=_CountOrFraction(), default=None,
                 help="Basis size (pchol, fvs: at most); --model "
                      + " and ".join(name for name, (search, _) in MODELS.items() if search.accepts(n_basis=0.5))
                      + " also take a fraction of the rows "
                      "(< 1).  Default: auto for --model sparse in memory (not --search gradient); otherwise "
                      "min(700, 10 sqrt(rows)), sparse regression min(500, 10 sqrt(rows)).  "
                      "auto (sparse, pchol): after the search, the basis grows by doublings while the exact CV "
                      "error of every size drops; the size of lowest CV error is kept (--time-budget)."),
])

verbose_option = click.option("--verbose", "-v", is_flag=True,
                              help="Print every distinct warning in full (default: a one-line summary).")


#: Most values ``--alphas`` / ``--gammas`` may give (``NUM`` or list length).
MAX_GRID_VALUES = {"--alphas": 10_000, "--gammas": 1_000}


def parse_log_values(text: str, option: str) -> np.ndarray:
    """``START:STOP:NUM`` (log-spaced, inclusive) or a comma list of positive
    numbers; at most ``MAX_GRID_VALUES[option]`` of them (default 10,000)."""
    limit = MAX_GRID_VALUES.get(option, 10_000)
    try:
        if ":" in text:
            start, stop, num = text.split(":")
            num = int(num)
            if not 1 <= num <= limit:
                raise click.BadParameter(
                    f"{text!r}: NUM must be between 1 and {limit} (each value is scored); got {num}",
                    param_hint=option)
            values = np.geomspace(float(start), float(stop), num)
        else:
            values = np.array([float(t) for t in text.split(",")])
    except ValueError:
        raise click.BadParameter(
            f"{text!r}: give START:STOP:NUM (log grid) or a comma-separated list", param_hint=option
        ) from None
    if values.size > limit:
        raise click.BadParameter(f"{values.size} values: give at most {limit}", param_hint=option)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise click.BadParameter(f"{text!r}: values must be finite and > 0", param_hint=option)
    check_normal(values, option)
    return values


def check_normal(values, option):
    """Refuse subnormal numbers (below 2.2e-308, the smallest normal
    float64): they carry fewer significant digits, and 1 / value overflows,
    so results computed from them are not to be trusted."""
    tiny = np.finfo(float).tiny
    small = np.asarray(values, dtype=float)
    small = small[(small > 0) & (small < tiny)]
    if small.size:
        raise click.BadParameter(
            f"{small[0]:.3g} is subnormal (below {tiny:.3g}, the smallest normal float64): such a value has few "
            "significant digits and its inverse overflows; give values of 1e-300 or more", param_hint=option)
