"""The ``lssvm`` command line: ``fit``, ``select`` and ``predict``.

Holds no numerics: it reads tables, calls the estimators and prints.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
import numpy as np
import pandas as pd
from sklearn.base import clone

from .. import __version__
from ..estimators import SparseLSSVC, SparseLSSVR
from ..exceptions import InputWarning, NotFittedError
from ..io import SavedModel, load_model, save_model
from ..io.paths import atomic_write, check_output_file
from ._baseline import cv_baseline
from ._inputs import evaluate, format_metrics, prepare_table
from ._inputs import load_frame as _load_frame
from ._logging import collect_warnings, echo_warnings
from ._options import basis_options, check_normal, kernel_options, table_options, verbose_option
from ._options import parse_log_values as _parse_log_values
from .select import select as select_command

__all__ = ["main", "cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lssvm")
def cli():
    """Sparse LS-SVM models with exact, fast cross-validation."""


@cli.command()
@click.argument("data")
@table_options
@kernel_options
@click.option("--gamma", "gamma_text", default="scale", show_default=True,
              help="Kernel width (exp(-gamma |x-z|^2) for rbf): a number > 0, or scale = 1 / (inputs x variance).")
@click.option("--alpha", "alpha_text", default="best", show_default=True,
              help="Regularisation of the saved model: a number (used as given), or best (the lowest LOO error "
                   "on --alphas).")
@click.option("--alphas", default="1e-6:1e3:19", show_default=True, help="Alpha path for the LOO table: START:STOP:NUM (log) or a list.")
@basis_options
@click.option("--random-state", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Model file (default: NAME.lssvm.npz).")
@verbose_option
def fit(data, target, drop, task, categorical, impute, min_frequency, scale, kernel, degree, coef0, normalize_kernel,
        gamma_text, alpha_text, alphas, basis, n_basis, random_state, output, verbose):
    """Fit a sparse LS-SVM on DATA (CSV/Parquet path or bundled data set name),
    print the exact LOO error over an alpha path and save the model."""
    if output and not Path(output).parent.is_dir():
        raise click.BadParameter(f"folder {str(Path(output).parent)!r} does not exist", param_hint="--output")
    if isinstance(n_basis, float):
        raise click.BadParameter(f"{n_basis}: lssvm fit takes a whole number of basis points >= 1 (a fraction of "
                                 "the rows is for the models of lssvm select that take one: see lssvm select "
                                 "--help)", param_hint="--n-basis")
    frame, name = _load_frame(data)
    output = _output_file(Path(output) if output else Path(f"{name}.lssvm.npz"), "model")
    alpha_path = _parse_log_values(alphas, "--alphas")
    alpha = _parse_alpha(alpha_text)
    if alpha is not None:
        check_normal([alpha], "--alpha")
    gamma = _parse_gamma(gamma_text)
    try:
        with collect_warnings() as caught:
            t = prepare_table(frame, target, drop, task, scale, categorical, impute, min_frequency)
            Xs, y, features, task = t["X"], t["y"], t["features"], t["task"]
            cls = SparseLSSVR if task == "regression" else SparseLSSVC
            extra = {} if basis is None else {"basis": basis}
            est = cls(
                kernel=kernel, gamma=gamma, alpha=1.0 if alpha is None else alpha, n_basis=n_basis,
                random_state=random_state, degree=degree, coef0=coef0, normalize_kernel=normalize_kernel, **extra,
                **({"calibration": "sigmoid"} if task == "classification" else {}),  # saved for predict --proba
            )
            t0 = time.perf_counter()
            est.fit(Xs, y.to_numpy())
            t_fit = time.perf_counter() - t0
            t0 = time.perf_counter()
            table = _loo_table(est, alpha_path if alpha is None else np.append(alpha_path, alpha), task)
            t_loo = time.perf_counter() - t0
            crit = "loo_error_rate" if task == "classification" else "loo_mse"
            best = table.loc[table[crit].idxmin()]
            stop = f", stopped: {est.basis_stop_reason_}" if est.basis_stop_reason_ else ""
            basis_text = f"{est.basis}: {est.n_basis_} points (rank {est.rank_}{stop})"
            if alpha is None:  # refit at the best alpha on the same basis points: the model the table scored
                # n_basis=None: the points are the basis ("auto" would grow a new one and refuse given points)
                est = clone(est).set_params(alpha=float(best["alpha"]), basis=est.basis_vectors_, n_basis=None).fit(
                    Xs, y.to_numpy())
                table["fitted"] = np.where(np.isclose(table["alpha"], est.alpha, rtol=1e-12, atol=0.0), "*", "")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None

    click.echo(f"data       {data}: {Xs.shape[0]} rows, {len(frame.columns) - 1 - len(drop)} input columns "
               f"-> {Xs.shape[1]} model inputs, target {y.name!r}")
    for note in t["notes"]:
        click.echo(f"encoded    {note}")
    click.echo(f"task       {task} ({t['chosen']})")
    click.echo(f"model      {cls.__name__}, kernel {kernel}, gamma={_gamma_text(gamma, est)}, inputs scaled: {scale}")
    click.echo(f"basis      {basis_text}")
    click.echo(f"time       fit {t_fit:.3g} s; exact LOO for {len(table)} alphas {t_loo:.3g} s")
    click.echo("")
    click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    click.echo("")
    if not np.all(np.isfinite(table[crit])):
        raise click.ClickException(_not_finite_message(table, crit, y))
    click.echo(f"best alpha by LOO: {best['alpha']:.4g} ({crit} = {best[crit]:.4g})")
    base = cv_baseline(y.to_numpy(), None, "error_rate" if task == "classification" else "mse",
                       getattr(est, "classes_", None))
    verdict = base.verdict(float(best[crit]))
    click.echo(f"baseline   {base.what}: {crit} {base.value:.4g} (leave-one-out)")
    if verdict:
        click.echo(f"note       {verdict}")
    if alpha is None:
        click.echo(f"saved      alpha={est.alpha:.4g}, the best by LOO (--alpha best)")
    else:
        fitted = table.loc[np.isclose(table["alpha"], alpha, rtol=1e-12, atol=0.0), crit].iloc[0]
        hint = "" if np.isclose(best["alpha"], alpha, rtol=1e-12, atol=0.0) else "; --alpha best saves the best instead"
        click.echo(f"saved      alpha={alpha:.4g} as given by --alpha ({crit} = {fitted:.4g}){hint}")

    model = SavedModel(
        est, t["center"], t["scale"], features, str(y.name),
        metadata={"data": str(data), "task": task, "n_samples": int(Xs.shape[0]), "scale": scale,
                  "alpha": float(est.alpha), "alpha_chosen": "best by LOO" if alpha is None else "given"},
        preprocessing=t["encoding"],
    )
    saving = []
    try:
        with collect_warnings() as saving:  # the stored interval data: warned like the LOO table, in the summary
            save_model(output, model)
    except ValueError as exc:
        raise click.ClickException(f"{exc}; no model was saved") from None
    except OSError as exc:
        raise click.ClickException(f"cannot write model file {output}: {exc}") from None
    finally:
        echo_warnings(list(caught) + list(saving), verbose)
    click.echo(f"model saved to {output}")


def _not_finite_message(table, crit, y):
    """Why the LOO table has non-finite errors, naming the alphas: a target
    so large that its square overflows, or rows fitted exactly (leverage 1,
    so their leave-one-out residual divides by zero) at too small an alpha."""
    bad = table.loc[~np.isfinite(table[crit]), "alpha"].to_numpy()
    shown = ", ".join(f"{a:.3g}" for a in bad[:5]) + (f" and {bad.size - 5} more" if bad.size > 5 else "")
    where = f"the LOO {crit} is not finite at alpha = {shown}"
    values = pd.to_numeric(pd.Series(np.asarray(y).ravel()), errors="coerce").to_numpy(dtype=float)
    if np.nanmax(np.abs(values), initial=0.0) >= 1e150:
        return (f"{where}: the errors overflow float64 (a target of about 1e154 or more overflows when squared); "
                "divide the target by a large constant and refit; no model was saved")
    return (f"{where}: at such a small alpha some training rows are fitted exactly (leverage 1), so their "
            "leave-one-out residual is undefined; raise the smallest --alphas value (or --alpha); no model was saved")


def _output_file(path, what):
    """``path`` checked as a place to write ``what`` (a new path or a regular
    file, :func:`lssvm.io.paths.check_output_file`), before any work."""
    try:
        return check_output_file(path, what)
    except (ValueError, FileNotFoundError) as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None


def _parse_gamma(text):
    """``scale`` -> "scale", else a positive number."""
    if text.strip().lower() == "scale":
        return "scale"
    try:
        value = float(text)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give a number > 0 or scale", param_hint="--gamma") from None
    if not np.isfinite(value) or value <= 0:
        raise click.BadParameter(f"{text!r}: gamma must be a finite number > 0, or scale", param_hint="--gamma")
    return value


def _gamma_text(gamma, est):
    """The width as printed: the number used, and where it came from."""
    used = np.asarray(getattr(est, "gamma_", gamma), dtype=float)
    shown = f"{float(used):.4g}" if used.ndim == 0 else "[" + ", ".join(f"{g:.3g}" for g in used) + "]"
    return f"{shown} (scale)" if isinstance(gamma, str) else shown


def _parse_alpha(text):
    """``best`` -> None, else a positive number."""
    if text.strip().lower() == "best":
        return None
    try:
        value = float(text)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give a number > 0 or best", param_hint="--alpha") from None
    if not np.isfinite(value) or value <= 0:
        raise click.BadParameter(f"{text!r}: alpha must be finite and > 0", param_hint="--alpha")
    return value


def _loo_table(est, alphas, task) -> pd.DataFrame:
    alphas = np.unique(alphas)
    R = est.loo_residuals(alphas)
    R = R.reshape(R.shape[0], R.shape[1], -1)
    with np.errstate(over="ignore"):  # an overflowing LOO error is refused by the caller
        table = pd.DataFrame({"alpha": alphas, "loo_mse": np.square(R).mean(axis=(1, 2))})
    if task == "classification":
        table["loo_error_rate"] = est.loo_error_rate(alphas)
    table["fitted"] = np.where(np.isclose(alphas, est.alpha, rtol=1e-12, atol=0.0), "*", "")
    return table


@cli.command()
@click.argument("model_file", metavar="MODEL", type=click.Path(exists=True, dir_okay=False))
@click.argument("data")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="CSV file for the predictions (default: standard output).")
@click.option("--keep", multiple=True, help="Column of DATA to copy into the output, e.g. an ID (repeatable).")
@click.option("--interval", type=float, default=None, metavar="COVERAGE",
              help="Add lower/upper jackknife+ interval columns at this coverage, e.g. 0.9 (regression).")
@click.option("--proba", is_flag=True, help="Add calibrated class probability columns (classifiers).")
def predict(model_file, data, output, keep, interval, proba):
    """Predict DATA (CSV/Parquet path or bundled data set name) with a saved
    MODEL.  Classifiers add their decision values (and calibrated
    probabilities with --proba), regressors interval bounds with --interval;
    when DATA holds the target column, test metrics are printed (on stderr)."""
    if output:
        _output_file(Path(output), "predictions")
    try:
        model = load_model(model_file)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    frame, _ = _load_frame(data)
    frame.columns = [str(c) for c in frame.columns]
    keep = list(dict.fromkeys(keep))  # --keep ID --keep ID: one column
    absent = [c for c in keep if c not in frame.columns]
    if absent:
        raise click.BadParameter(f"column(s) {', '.join(absent)} not in DATA", param_hint="--keep")
    est = model.predictor()  # a transformed target mapped back to its scale
    try:
        with collect_warnings() as caught:  # what the encoding changed: one line each, below
            X = model.model_inputs(frame)  # the path of SavedModel.predict & co. in Python
        pred = np.asarray(est.predict(X))
    except ValueError as exc:
        raise click.ClickException(f"DATA: {exc}") from None
    col = f"predicted_{model.target_name}" if model.target_name else "prediction"
    out = pd.DataFrame(pred) if pred.ndim == 2 else pd.DataFrame({col: pred})
    if hasattr(est, "classes_"):
        F = np.asarray(est.decision_function(X))
        if F.ndim == 1:
            out[f"decision_{est.classes_[1]}"] = F
        else:
            for j, c in enumerate(est.classes_):
                out[f"decision_{c}"] = F[:, j]
    out = uncertainty_columns(out, model, X, interval, proba)
    clash = [c for c in keep if c in out.columns]
    if clash:
        raise click.BadParameter(f"column(s) {', '.join(clash)} would repeat an output column's name; rename them "
                                 "in DATA", param_hint="--keep")
    out = pd.concat([frame[keep].reset_index(drop=True), out], axis=1)
    for w in caught:
        text = str(w.message)
        label = "warning" if not issubclass(w.category, InputWarning) else (
            "unseen" if text.startswith("levels absent") else "imputed")
        click.echo(f"{label:<10} {text}", err=True)
    if output:
        try:
            atomic_write(output, lambda fh: out.to_csv(fh, index=False), "predictions", binary=False)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--output") from None
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc}") from None
        click.echo(f"{len(out)} predictions written to {output}", err=True)
    else:
        out.to_csv(sys.stdout, index=False)
    if model.target_name in frame.columns and pred.ndim == 1:
        task = "classification" if hasattr(est, "classes_") else "regression"
        y = frame[model.target_name]
        if y.isna().any():
            click.echo(f"metrics    skipped: the target column has {int(y.isna().sum())} missing value(s)", err=True)
        else:
            click.echo(f"metrics    on {len(y)} rows with the target: {format_metrics(evaluate(est, X, y, task))}",
                       err=True)


cli.add_command(select_command)


def main(argv=None):
    """Console-script entry point."""
    return cli.main(args=argv, prog_name="lssvm")


def uncertainty_columns(out, model, X, interval, proba):
    """Append interval bounds and/or class probabilities to the predictions table ``out``.

    ``X`` is DATA as the model's inputs (``SavedModel.encode``).

    Raises ``click.ClickException`` with the library's message when the model
    cannot serve them (a classifier asked for intervals, a model file
    without the stored data, a coverage outside (0, 1), too few rows).
    """
    if interval is None and not proba:
        return out
    est = model.predictor()
    try:
        if interval is not None:
            if not hasattr(est, "predict_interval") or hasattr(est, "classes_"):
                raise ValueError("--interval is for regression models; use --proba for classifiers")
            try:
                bounds = np.asarray(est.predict_interval(X, coverage=interval)).reshape(X.shape[0], 2, -1)
            except NotFittedError:  # a loaded model has no factorisation; the file holds no LOO data either
                raise ValueError(
                    "this model file holds no leave-one-out data for intervals (saved by an older lssvm, "
                    "from a Dask fit, or by a model that keeps no training factorisation); refit it with "
                    "'lssvm fit'"
                ) from None
            names = [model.target_name or "prediction"] if bounds.shape[2] == 1 else range(bounds.shape[2])
            for j, name in enumerate(names):
                out[f"lower_{name}"] = bounds[:, 0, j]
                out[f"upper_{name}"] = bounds[:, 1, j]
        if proba:
            if not hasattr(est, "classes_"):
                raise ValueError("--proba is for classifiers; use --interval for regression models")
            if not hasattr(est, "predict_proba"):
                raise ValueError("this classifier was saved without a calibration; refit it with 'lssvm fit' "
                                 "or 'lssvm select --calibration sigmoid'")
            P = est.predict_proba(X)
            for j, c in enumerate(est.classes_):
                out[f"proba_{c}"] = P[:, j]
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    return out
