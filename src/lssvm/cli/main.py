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

from .. import __version__
from ..estimators import SparseLSSVC, SparseLSSVR
from ..io import SavedModel, input_matrix, load_model, save_model
from ._common import load_frame as _load_frame
from ._common import parse_log_values as _parse_log_values
from ._common import prepare_xy
from ._uncertainty import uncertainty_columns
from .select import select as select_command

__all__ = ["main", "cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lssvm")
def cli():
    """Sparse LS-SVM models with exact, fast cross-validation."""


@cli.command()
@click.argument("data")
@click.option("--target", "-t", default=None, help="Target column (default: the last column).")
@click.option("--drop", multiple=True, help="Input column to ignore (repeatable).")
@click.option(
    "--task",
    type=click.Choice(["auto", "regression", "classification"]),
    default="auto",
    show_default=True,
    help="auto: classification for non-numeric or two-valued targets.",
)
@click.option("--kernel", type=click.Choice(["rbf", "laplacian", "linear", "poly"]), default="rbf", show_default=True)
@click.option("--gamma", type=float, default=1.0, show_default=True, help="Kernel width (exp(-gamma |x-z|^2) for rbf).")
@click.option("--degree", type=int, default=3, show_default=True, help="Degree of the poly kernel.")
@click.option("--coef0", type=float, default=1.0, show_default=True, help="Offset of the poly kernel.")
@click.option("--alpha", type=float, default=1.0, show_default=True, help="Regularisation of the saved model.")
@click.option("--alphas", default="1e-6:1e3:19", show_default=True, help="Alpha path for the LOO table: START:STOP:NUM (log) or a list.")
@click.option("--basis", type=click.Choice(["fvs", "random", "greedy"]), default="fvs", show_default=True)
@click.option("--normalize-kernel", is_flag=True, help="Use k(x,z)/sqrt(k(x,x) k(z,z)).")
@click.option("--n-basis", type=int, default=None, help="Number (fvs: at most) of basis points.")
@click.option("--scale", type=click.Choice(["standard", "minmax", "none"]), default="standard", show_default=True, help="Input scaling, stored with the model.")
@click.option("--random-state", type=int, default=0, show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Model file (default: NAME.lssvm.npz).")
def fit(data, target, drop, task, kernel, gamma, degree, coef0, alpha, alphas, basis, normalize_kernel, n_basis, scale,
        random_state, output):
    """Fit a sparse LS-SVM on DATA (CSV/Parquet path or bundled data set name),
    print the exact LOO error over an alpha path and save the model."""
    if output and not Path(output).parent.is_dir():
        raise click.BadParameter(f"folder {str(Path(output).parent)!r} does not exist", param_hint="--output")
    frame, name = _load_frame(data)
    alpha_path = _parse_log_values(alphas, "--alphas")
    try:
        Xs, y, features, task, chosen, center, scale_ = prepare_xy(frame, target, drop, task, scale)
        cls = SparseLSSVR if task == "regression" else SparseLSSVC
        est = cls(
            kernel=kernel, gamma=gamma, alpha=alpha, basis=basis, n_basis=n_basis,
            random_state=random_state, degree=degree, coef0=coef0, normalize_kernel=normalize_kernel,
            **({"calibration": "sigmoid"} if task == "classification" else {}),  # saved for predict --proba
        )
        t0 = time.perf_counter()
        est.fit(Xs, y.to_numpy())
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = _loo_table(est, np.append(alpha_path, alpha), task)
        t_loo = time.perf_counter() - t0
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None

    click.echo(f"data       {data}: {Xs.shape[0]} rows, {Xs.shape[1]} inputs ({', '.join(features)}), target {y.name!r}")
    click.echo(f"task       {task} ({chosen})")
    click.echo(f"model      {cls.__name__}, kernel {kernel}, gamma={gamma:g}, alpha={alpha:g}, inputs scaled: {scale}")
    stop = f", stopped: {est.basis_stop_reason_}" if est.basis_stop_reason_ else ""
    click.echo(f"basis      {basis}: {est.n_basis_} points (rank {est.rank_}{stop})")
    click.echo(f"time       fit {t_fit:.3f} s; exact LOO for {len(table)} alphas {t_loo:.3f} s")
    click.echo("")
    click.echo(table.to_string(index=False))
    click.echo("")
    crit = "loo_error_rate" if task == "classification" else "loo_mse"
    best = table.loc[table[crit].idxmin()]
    click.echo(f"best alpha by LOO: {best['alpha']:.4g} ({crit} = {best[crit]:.6g})")

    output = Path(output) if output else Path(f"{name}.lssvm.npz")
    model = SavedModel(
        est, center, scale_, features, str(y.name),
        metadata={"data": str(data), "task": task, "n_samples": int(Xs.shape[0]), "scale": scale},
    )
    try:
        save_model(output, model)
    except OSError as exc:
        raise click.ClickException(f"cannot write model file {output}: {exc}") from None
    click.echo(f"model saved to {output}")


def _loo_table(est, alphas, task) -> pd.DataFrame:
    alphas = np.unique(alphas)
    R = est.loo_residuals(alphas)
    R = R.reshape(R.shape[0], R.shape[1], -1)
    table = pd.DataFrame({"alpha": alphas, "loo_mse": (R**2).mean(axis=(1, 2))})
    if task == "classification":
        table["loo_error_rate"] = est.loo_error_rate(alphas)
    table["fitted"] = np.where(np.isclose(alphas, est.alpha, rtol=1e-12), "*", "")
    return table


@cli.command()
@click.argument("model_file", metavar="MODEL", type=click.Path(exists=True, dir_okay=False))
@click.argument("data")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="CSV file for the predictions (default: standard output).")
@click.option("--interval", type=float, default=None, metavar="COVERAGE", help="Add lower/upper jackknife+ interval columns at this coverage, e.g. 0.9 (regression).")
@click.option("--proba", is_flag=True, help="Add calibrated class probability columns (classifiers).")
def predict(model_file, data, output, interval, proba):
    """Predict DATA (CSV/Parquet path or bundled data set name) with a saved MODEL."""
    try:
        model = load_model(model_file)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    frame, _ = _load_frame(data)
    frame.columns = [str(c) for c in frame.columns]
    try:
        pred = model.predict(input_matrix(frame, model.feature_names))
    except ValueError as exc:
        raise click.ClickException(f"DATA: {exc}") from None
    col = f"predicted_{model.target_name}" if model.target_name else "prediction"
    pred = np.asarray(pred)
    out = uncertainty_columns(pd.DataFrame(pred if pred.ndim == 2 else {col: pred}), model, frame, interval, proba)
    if output:
        try:
            out.to_csv(output, index=False)
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc}") from None
        click.echo(f"{len(out)} predictions written to {output}", err=True)
    else:
        out.to_csv(sys.stdout, index=False)


cli.add_command(select_command)


def main(argv=None):
    """Console-script entry point."""
    return cli.main(args=argv, prog_name="lssvm")
