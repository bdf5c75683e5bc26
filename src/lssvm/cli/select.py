"""``lssvm select``: automatic model selection from the shell.

Reads a table, runs a ``*CV`` estimator's search with a progress bar,
prints the best parameters and the best candidates, then saves the refitted
model and an HTML report.  Nothing is written until the search and the
report have succeeded: the report is built in a temporary folder and both
files are moved into place at the end.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold, LeaveOneGroupOut

from .. import __version__
from .._labels import LabelCoder
from ..cv import resolve_folds
from ..estimators import MODELS
from ..estimators.ard_stage import ard_summary
from ..estimators.search_cv import DEFAULT_CV_GAMMA_FACTORS
from ..exceptions import SearchEdgeWarning
from ..io import SavedModel
from ..selection import MAX_EVALUATIONS, coarse_to_fine_evaluations
from ._ard_cost import ard_stage_cost
from ._baseline import cv_baseline, heldout_baseline
from ._cost import CommandClock, _duration, after_search_seconds, estimate_cost, gradient_stage_seconds
from ._encoding_choice import categorical_encoding_option, choose_cli_encoding
from ._input_transform_choice import (
    check_cli_input_transform,
    fit_with_input_transform,
    input_transform_candidates,
    input_transform_option,
    input_transform_text,
    plan_input_transform,
)
from ._inputs import evaluate, expand_data, format_metrics, load_frame, prepare_table, split_test
from ._logging import Progress, collect_warnings, command_line, echo_warnings
from ._options import (
    basis_options,
    dask_bases_help,
    kernel_options,
    parse_log_values,
    table_options,
    verbose_option,
)
from ._outputs import check_outputs as _check_outputs
from ._outputs import write_outputs as _write_outputs
from ._stream import expand_paths, pass_progress, stream_xy
from ._target_choice import (
    check_cli_target_transform,
    choose_cli_target_transform,
    target_transform_option,
    target_transform_text,
)

__all__ = ["select"]

#: groups up to this many are left out one at a time; more go into 10 group folds
MAX_LEAVE_ONE_GROUP_OUT = 20


def _models_that(takes):
    """The --model names whose regressor preset ``takes(preset)``, as "a, b or c"."""
    names = [name for name, (regressor, _) in MODELS.items() if takes(regressor)]
    return " or ".join(", ".join(names[:-1]), names[-1]) if len(names) > 2 else " or ".join(names)


def _model_help():
    """--model's help: each family as its docstring names it (the text before the first colon)."""
    return "; ".join(f"{name}: {' '.join(regressor.search_family().__doc__.split(':')[0].split())}"
                     for name, (regressor, _) in MODELS.items()) + "."


def _cv_default_help():
    return ", ".join(f"{regressor.search_family().default_cv} for {name}" for name, (regressor, _) in MODELS.items())


def _parse_cv(text, model):
    """``loo``, ``K`` or ``group:COL`` -> (cv for the estimator, group column or None)."""
    search = MODELS[model][0]
    if text is None:
        return search.search_family().default_cv, None
    if text == "loo":
        if not search.accepts(cv="loo"):
            raise click.BadParameter(f"{model} models need folds: give K or group:COL", param_hint="--cv")
        return "loo", None
    if text.startswith("group:"):
        col = text[len("group:"):]
        if not col:
            raise click.BadParameter("group:COL needs a column name", param_hint="--cv")
        return None, col
    try:
        k = int(text)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give loo, a number of folds K >= 2, or group:COL",
                                 param_hint="--cv") from None
    if k < 2:
        raise click.BadParameter(f"{text!r}: K must be at least 2", param_hint="--cv")
    return k, None


def _results_table(search, top):
    res = search.cv_results_
    cols = [k for k in res if k.startswith("param_")]
    cols += ["mean_test_mse"] + (["mean_test_error_rate"] if "mean_test_error_rate" in res else [])
    cols += [k for k in ("n_basis", "model_size") if k in res]
    frame = pd.DataFrame({c: np.asarray(res[c]) for c in cols + ["rank_test_score"]})
    frame = frame.sort_values("rank_test_score").head(top)
    for c in ("n_basis", "model_size"):  # sizes are counts (model_size: mean over outputs)
        if c in frame and np.all(frame[c] == np.round(frame[c])):
            frame[c] = frame[c].astype(int)
    return frame.rename(columns=lambda c: c.removeprefix("param_").removeprefix("mean_test_").replace(
        "rank_test_score", "rank"))


@click.command("select")
@click.argument("data", nargs=-1, required=True)
@table_options
@kernel_options
@click.option("--model", "model_kind", type=click.Choice(list(MODELS)), default="sparse", show_default=True,
              help=_model_help())
@click.option("--cv", "cv_text", default=None,
              help="loo, K (folds) or group:COL (leave one group out; GroupKFold(10) beyond "
                   f"{MAX_LEAVE_ONE_GROUP_OUT} groups).  Default: {_cv_default_help()}.")
@click.option("--search", type=click.Choice(["grid", "nelder-mead", "csa", "gradient"]), default="grid",
              show_default=True, help="gradient: L-BFGS-B on the exact CV error (--kernel ard: one width per input).")
@click.option("--gammas", default=None,
              help="Widths: START:STOP:NUM (log) or a list; the range for nelder-mead/csa.  Default "
                   "s 2^-6 .. s 2^6, s = 1 / (inputs x variance) (gamma='scale').")
@click.option("--alphas", default="1e-6:1e4:21", show_default=True, help="Alpha path scored at every width.")
@click.option("--scoring", type=click.Choice(["mse", "error_rate"]), default=None,
              help="Criterion; default error_rate for classification, mse for regression.")
@click.option("--calibration", type=click.Choice(["sigmoid", "isotonic", "none"]), default=None,
              help="Classification: the map that calibrates class probabilities on the best model's exact "
                   "out-of-sample decision values (no extra training), so that the saved model serves 'lssvm "
                   "predict --proba'; default sigmoid, 'none' switches class probabilities off.")
@click.option("--max-evaluations", type=int, default=None,
              help="Criterion calls of nelder-mead (and of each csa stage), default 30; gradient: per L-BFGS-B "
                   "start, default max(60, 3 (inputs + 1)).")
@basis_options
@click.option("--time-budget", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds for the whole search (--model sparse; default 60, the estimator's): the ARD stage "
                   "runs where its predicted time fits what is left, and the basis growth stops before a doubling "
                   "that would not fit; inf: no limit.")
@target_transform_option
@categorical_encoding_option
@input_transform_option
@click.option("--random-state", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True)
@click.option("--test", "test_data", default=None,
              help="Table of test rows (same columns): test metrics are printed beside the CV estimate.")
@click.option("--test-size", type=float, default=None,
              help="Hold out this fraction of DATA (stratified for classification) as test rows instead.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Rows of the results table.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Model file (default: NAME.lssvm.npz).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Report folder (default: NAME-report).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
@click.option("--chunk-rows", type=int, default=None,
              help="Stream the files in blocks of this many rows with Dask instead of loading them (the basis "
                   f"by the --basis each model draws on streamed rows: {dask_bases_help()}; pchol is pivoted "
                   "Cholesky among a row sample; categorical columns and missing values encoded from a first "
                   "pass; K folds are the same as in memory).  Needs lssvm[dask].")
@verbose_option
def select(data, target, drop, task, categorical, impute, min_frequency, scale, kernel, degree, coef0,
           normalize_kernel, model_kind, cv_text, search, gammas, alphas, scoring, calibration, max_evaluations, basis,
           n_basis, time_budget,
           random_state, test_data, test_size, top, output, report_dir, no_report,
           chunk_rows, verbose, target_transform="auto", categorical_encoding="auto", input_transform="auto"):
    """Select kernel parameters and alpha by exact CV on DATA (CSV/Parquet
    paths, several files or a quoted glob pattern, or a bundled data set
    name), save the best model and write a report."""
    clock = CommandClock()
    streaming = chunk_rows is not None
    test_frame = None
    if test_data is not None and test_size is not None:
        raise click.BadParameter("give --test or --test-size, not both", param_hint="--test")
    if streaming:
        if test_size is not None:
            raise click.BadParameter("--chunk-rows cannot hold out rows of a streamed table; give the test "
                                     "rows as a table of their own with --test", param_hint="--test-size")
        if n_basis == "auto":  # the growth scores prefixes of the pivots on every row: rows in memory
            raise click.BadParameter("auto grows the basis on the rows in memory; --chunk-rows takes a whole "
                                     "number of basis points", param_hint="--n-basis")
        paths, name, basis = _check_streaming(data, chunk_rows, model_kind, basis)
        frame = None
        if test_data is not None:
            test_frame = load_frame(test_data)[0]
    else:
        frame, name = _load_frames(data)
        if test_data is not None:
            test_frame = load_frame(test_data)[0]
        elif test_size is not None:
            try:
                frame, test_frame = split_test(frame, target, test_size, task, random_state)
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
    alpha_path = parse_log_values(alphas, "--alphas")
    gamma_values = None if gammas is None else parse_log_values(gammas, "--gammas")
    cv, group_col = _parse_cv(cv_text, model_kind)
    if isinstance(n_basis, float) and not MODELS[model_kind][0].accepts(n_basis=n_basis):
        raise click.BadParameter(f"{n_basis}: the {model_kind} model takes a whole number of basis points >= 1 (a "
                                 f"fraction of the rows is for --model {_models_that(lambda c: c.accepts(n_basis=0.5))})",
                                 param_hint="--n-basis")
    if max_evaluations is not None and not 2 <= max_evaluations <= MAX_EVALUATIONS:
        raise click.BadParameter(f"must be between 2 and {MAX_EVALUATIONS}; got {max_evaluations}",
                                 param_hint="--max-evaluations")
    output = Path(output) if output else Path(f"{name}.lssvm.npz")
    report_dir = None if no_report else Path(report_dir) if report_dir else Path(f"{name}-report")
    for path in (output.parent, None if report_dir is None else report_dir.parent):
        if path is not None and not path.is_dir():
            raise click.BadParameter(f"folder {str(path)!r} does not exist", param_hint="--output/--report")
    output, report_dir = _check_outputs(output, report_dir)
    caught = []
    try:
        groups, encoding, notes = None, None, []
        if streaming:
            st = _stream_inputs(paths, target, drop, task, scale, group_col, chunk_rows, categorical, impute,
                                min_frequency)
            Xs, y, groups, features, task, chosen, center, scale_ = (
                st["X"], st["y"], st["groups"], st["features"], st["task"], st["chosen"], st["center"], st["scale"])
            encoding, notes = st["encoding"], st["notes"]
            n_rows, target_name = st["n_rows"], st["target"]
            if group_col is not None:
                cv = _group_cv(st["n_groups"], group_col)
        elif group_col is not None:
            if group_col not in map(str, frame.columns):
                raise ValueError(f"group column {group_col!r} (from --cv group:{group_col}) not found")
            groups = frame[group_col].to_numpy()
            cv = _group_cv(np.unique(groups.astype(str)).size, group_col)
            drop = tuple(drop) + (group_col,)
        if not streaming:
            t = prepare_table(frame, target, drop, task, scale, categorical, impute, min_frequency)
            Xs, y, features, task, chosen, center, scale_ = (t["X"], t["y"], t["features"], t["task"], t["chosen"],
                                                             t["center"], t["scale"])
            encoding, notes = t["encoding"], t["notes"]
            n_rows, target_name = Xs.shape[0], y.name
            y = y.to_numpy()
        cls = MODELS[model_kind][task == "classification"]
        check_cli_target_transform(y, target_transform, task, streaming)  # before the search's time is spent
        use_inputs = check_cli_input_transform(input_transform, streaming)
        input_names = input_transform_candidates(input_transform, Xs) if use_inputs else ["none"]
        if calibration is not None and task != "classification":
            raise ValueError("--calibration is for classification (class probabilities); this task is "
                             f"{task}: leave it out (prediction intervals: 'lssvm predict --interval')")
        params = dict(kernel=kernel, alphas=alpha_path, cv=cv, search=search, scoring=scoring,
                      max_evaluations=max_evaluations, random_state=random_state, degree=degree, coef0=coef0,
                      normalize_kernel=normalize_kernel,
                      param_space={} if kernel == "linear" else None if gamma_values is None else {"gamma": gamma_values})
        if n_basis is None and cls.accepts(n_basis="auto"):  # the sparse searches' default: grown by exact CV
            n_basis = "auto" if search != "gradient" and not streaming and basis in (None, "auto", "pchol") else None
        params.update(n_basis=n_basis, **({} if basis is None else {"basis": basis}))
        if (n_basis == "auto" or time_budget is not None) and not cls.accepts(n_basis="auto"):
            raise ValueError("--n-basis auto and --time-budget are for --model "
                             + _models_that(lambda c: c.accepts(n_basis="auto")))
        if search == "gradient" and not cls.search_family().has_gradient_search:
            raise ValueError(f"--search gradient is for --model {_models_that(lambda c: c.search_family().has_gradient_search)} "
                             "(L-BFGS-B on the model's exact CV error); use --search grid, nelder-mead or csa")
        if time_budget is not None:
            params["time_budget"] = None if np.isinf(time_budget) else time_budget  # the estimator's "no limit"
        if calibration is not None:
            params["calibration"] = None if calibration == "none" else calibration  # saved for 'predict --proba'
        est = cls(**params)
        n_gammas = DEFAULT_CV_GAMMA_FACTORS.size if gamma_values is None else gamma_values.size
        n_grid = coarse_to_fine_evaluations(n_gammas) if gamma_values is None else n_gammas  # default: coarse-to-fine
        n_eval = 30 if max_evaluations is None else max_evaluations
        expected = {"grid": 1 if kernel == "linear" else n_grid, "nelder-mead": n_eval,
                    "csa": 2 * n_eval, "gradient": n_gammas}[search]
        data_text = " ".join(data) if len(data) <= 3 else f"{data[0]} ... ({len(data)} files)"
        click.echo(f"data       {data_text}: {n_rows} rows, {len(features)} inputs, target {target_name!r}")
        for note in notes:
            click.echo(f"encoded    {note}")
        if test_frame is not None:
            click.echo(f"test       {len(test_frame)} rows "
                       + (f"from {test_data}" if test_data else f"held out ({test_size:.4g} of the table)"))
        click.echo(f"task       {task} ({chosen})")
        click.echo(f"search     {cls.__name__}, {search}, cv={cv_text or cv}, kernel {kernel}, "
                   f"{alpha_path.size} alphas per evaluation")
        cost_basis = "random" if basis is None and search == "gradient" else basis  # basis="auto" (gradient_search)
        cost = estimate_cost(cls.search_family().cost_kind, n_rows, len(features), expected, alpha_path.size, cv=cv, basis=cost_basis,
                             n_basis=None if n_basis == "auto" else n_basis,
                             classification=task == "classification")
        for line in cost.lines():
            click.echo(line)
        search_seconds = cost.seconds
        ard_line, ard_seconds = ard_stage_cost(est, Xs, cost)
        if ard_line is not None:  # the ARD stage runs after the search, in what is left of the budget
            click.echo(ard_line)
            search_seconds += ard_seconds
        if n_basis == "auto":  # the growth after the search: up to the budget, left out of the estimate without one
            budget = est.time_budget
            click.echo("basis      auto: grown after the search" + (f" within {budget:g} s" if budget else ""))
            search_seconds = max(search_seconds, budget or 0.0)
        input_names, input_line, input_seconds = plan_input_transform(input_transform, input_names, est, cost.seconds,
                                                                      search_seconds)
        if input_line is not None:
            click.echo(input_line)
            search_seconds += input_seconds
        if search == "gradient":  # the cost line counts the isotropic grid; the L-BFGS-B stage comes on top
            line, gradient_seconds = _gradient_budget(est, Xs, kernel, n_rows, cost.rates, task == "classification")
            click.echo(line)
            search_seconds += gradient_seconds
        estimate, line = clock.estimate_line(search_seconds, after_search_seconds(
            n_rows, report_dir is not None, 0 if test_frame is None else len(test_frame)))
        click.echo(line)
        X_test = y_test = None
        if test_frame is not None:  # checked and encoded before the search, not after it
            with collect_warnings() as caught_test:
                test_frame = test_frame.set_axis([str(c) for c in test_frame.columns], axis=1)
                if str(target_name) not in test_frame.columns:
                    raise ValueError(f"the test table has no target column {str(target_name)!r}")
                y_test = test_frame[str(target_name)]
                if y_test.isna().any():
                    raise ValueError(f"the test table's target has {int(y_test.isna().sum())} missing value(s)")
                X_test = SavedModel(None, center, scale_, features, str(target_name),
                                    preprocessing=encoding).encode(test_frame)
        t0 = time.perf_counter()
        with collect_warnings() as caught:
            if streaming:
                from ..backends.dask import report_passes

                with report_passes(pass_progress):
                    est.fit(Xs, y, groups=groups, callback=_echo_evaluation)
            else:
                with Progress(expected * len(input_names)) as progress:
                    if use_inputs:
                        est, input_tr, input_chosen, input_scores = fit_with_input_transform(
                            est, Xs, y, input_names, groups=groups, callback=progress.update)
                    else:
                        est.fit(Xs, y, groups=groups, callback=progress.update)
        elapsed = time.perf_counter() - t0
        input_text = None
        Xs_in = Xs  # the estimator's inputs (Xs: the scaled or encoded ones, for the report's curve)
        if use_inputs:
            input_text = input_transform_text(input_chosen, input_scores, input_transform, est.scoring_,
                                              "LOO" if est.cv_folds_ is None else f"{len(est.cv_folds_)}-fold",
                                              input_line)
            if input_tr is not None:
                Xs_in = input_tr.transform(Xs)
                if X_test is not None:
                    X_test = input_tr.transform(X_test)
        else:
            input_tr = None
        caught[:] = _echo_edge_warnings(caught)
        with collect_warnings() as caught_transform:
            encoding_text = None
            if not streaming:
                chosen_encoding, Xs_in, encoding_text, input_tr = choose_cli_encoding(
                    est, encoding, frame, Xs_in, y, categorical_encoding, scale, alpha_path, streaming, input_tr)
                if chosen_encoding is not encoding:  # ordinal kept: the inputs and test rows re-encoded
                    encoding, features = chosen_encoding, list(chosen_encoding.feature_names)
                    center, scale_ = np.zeros(len(features)), np.ones(len(features))  # identity when encoded
                    if X_test is not None:
                        X_test = encoding.transform(test_frame)
                        X_test = X_test if input_tr is None else input_tr.transform(X_test)
            elif categorical_encoding == "ordinal":
                raise ValueError("--categorical-encoding ordinal needs the rows in memory (leave out --chunk-rows)")
            est, transform_choice = choose_cli_target_transform(est, Xs_in, y, target_transform, task, streaming)
        caught.extend(caught_transform)
        transform_text = target_transform_text(transform_choice)
        model = SavedModel(est, center, scale_, features, str(target_name), preprocessing=encoding,
                           target_transform=None if transform_choice is None else transform_choice.transform,
                           input_transform=input_tr)
        test_values = None
        if test_frame is not None:
            with collect_warnings() as caught_eval:
                test_values = evaluate(model.predictor(), X_test, y_test.to_numpy(), task)
            caught.extend(caught_test + caught_eval)
    except ValueError as exc:
        echo_warnings(caught, verbose)
        raise click.ClickException(str(exc)) from None

    if not np.isfinite(est.best_score_):
        raise click.ClickException(
            f"the best CV score is not finite ({est.best_score_}): the errors overflow float64 (target "
            "values too large?); divide the target by a large constant (or rescale the inputs) and "
            "run again; nothing was saved"
        )
    table = _results_table(est, top)
    best = ", ".join(f"{k}={_fmt(v)}" for k, v in est.best_params_.items())
    crit = "MSE" if est.scoring_ == "mse" else "error rate"
    value = -est.best_score_ if est.scoring_ == "mse" else 1 - est.best_score_
    baseline = _baseline(est, y, groups, cv, streaming, task)  # on the same folds as the score
    base_test = None if test_values is None else heldout_baseline(y, y_test.to_numpy(), task)
    click.echo(f"time       {elapsed:.2f} s for {est.n_evaluations_} evaluations "
               f"({est.search_time_:.2f} s search, {est.refit_time_:.2f} s refit)")
    grown = getattr(est, "basis_curve_", None)
    if grown is not None:
        click.echo(f"basis      {est.best_estimator_.n_basis_} points; " + (
                   f"fixed size rule (auto {grown['stop_reason']})" if grown["stop_reason"].startswith("not applicable")
                   else "not grown: the search took the budget" if grown["n_chosen"] is None else f"{grown['n_basis'][-1]} grown ({grown['stop_reason']}), lowest CV "
                   f"error at {grown['n_chosen']}, " + ("kept" if grown["replaced"] else "no lower than the search's")))
    if getattr(est, "ard_stage_", None) is not None:
        click.echo(f"ard        {ard_summary(est.ard_stage_)}")
    if encoding_text:
        click.echo(f"encoding   categorical: {encoding_text}")
    if input_text:
        click.echo(f"inputs     transform {input_text}")
    if transform_text:
        click.echo(f"target     transform {transform_text}")
    click.echo("")
    click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    click.echo("")
    click.echo(f"best       {best} (CV {crit} {value:.4g})")
    verdict = None
    if baseline is not None:
        verdict = baseline.verdict(value)
        click.echo(f"baseline   {baseline.what}: CV {crit} {baseline.value:.4g}")
    if test_values is not None:
        click.echo(f"test       {format_metrics(test_values)} on {len(test_frame)} rows (CV {crit} {value:.4g})")
        click.echo(f"baseline   on the test rows: {format_metrics(base_test)}")
    if verdict:
        click.echo(f"note       {verdict}")
    unseen, imputed = getattr(encoding, "unseen", None), getattr(encoding, "imputed", None)
    if test_values is not None and unseen:
        click.echo("unseen     test levels absent from training: "
                   + ", ".join(f"{c} ({n} rows)" for c, n in unseen.items()))
    if test_values is not None and imputed:
        click.echo("imputed    test rows' missing values filled in as in training: "
                   + ", ".join(f"{c} ({n} rows)" for c, n in imputed.items()))
    echo_warnings(caught, verbose)
    shown = features if encoding is None else encoding.input_columns
    inputs = f"{len(shown)} inputs" + ("" if encoding is None else f" (encoded as {len(features)} columns)")
    summary = [("data", f"{data_text}: {n_rows} rows, {inputs}: {', '.join(shown)}"),
               ("target", f"{target_name} ({task})"), ("model", cls.__name__), ("search", search),
               ("cross-validation", str(cv_text or cv)), ("kernel", kernel), ("inputs scaled", scale),
               ("best parameters", best),
               (f"CV {crit}", f"{value:.4g}" + ("" if baseline is None else
                                                f" (baseline, {baseline.what}: {baseline.value:.4g})")),
               *([] if not verdict else [("note", verdict)]),
               ("evaluations", f"{est.n_evaluations_} x {alpha_path.size} alphas in {elapsed:.3g} s")]
    summary[1:1] = [("encoding", note) for note in notes]
    if encoding_text:
        summary.insert(summary.index(("model", cls.__name__)), ("categorical encoding", encoding_text))
    if transform_text:
        summary.insert(summary.index(("model", cls.__name__)), ("target transform", transform_text))
    if input_text:
        summary.insert(summary.index(("model", cls.__name__)), ("input transform", input_text))
    if test_values is not None:
        summary.append(("test metrics", f"{format_metrics(test_values)} on {len(test_frame)} rows"))
    summary += [("lssvm version", __version__), ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
                ("command", command_line())]
    model.metadata = {"data": data_text, "task": task, "n_samples": int(n_rows), "scale": scale,
                      "best_params": {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                      for k, v in est.best_params_.items()},
                      "cv_score": value, "criterion": crit,
                      **({"target_transform": transform_text} if transform_text else {}),
                      **({"categorical_encoding": encoding_text} if encoding_text else {}),
                      **({"input_transform": input_text} if input_text else {}),
                      # a metric undefined on the test rows (AUC of one class) is stored as null
                      **({} if test_values is None else {"test_metrics": {k: float(v) if np.isfinite(v) else None
                                                                          for k, v in test_values}})}
    relevance = getattr(est, "feature_relevance_", None)
    if relevance is not None:
        top_inputs = np.argsort(relevance)[::-1][:10]
        click.echo("relevance  " + ", ".join(f"{features[j]} {relevance[j]:.3f}" for j in top_inputs))
    curve = None
    if not streaming and len(features) == 1 and encoding is None and y.ndim == 1 and (
            task == "regression" or len(est.classes_) == 2):
        raw = model.x_center[0] + model.x_scale[0] * np.asarray(Xs)[:, 0]
        if task == "regression":
            curve = (raw, y, lambda g: model.predictor().predict(model.transform(g)), features[0], str(target_name))
        else:  # decision value against the input, the rows at +1 / -1
            curve = (raw, LabelCoder(est.classes_).encode(y)[:, 0],
                     lambda g: est.decision_function(model.transform(g)), features[0],
                     f"decision value ({est.classes_[1]} > 0)")
    _write_outputs(output, model, report_dir, est, summary, table, test_values, curve, features, base_test)
    click.echo(clock.final_line(estimate))


def _baseline(est, y, groups, cv, streaming, task):
    """The trivial baseline's CV error on the search's partition; streamed
    rows: the target (m numbers) is read in one more pass and the folds
    rebuilt by the one fold rule (:func:`lssvm.cv.resolve_folds`)."""
    folds = est.cv_folds_
    if streaming:
        y = np.asarray(y.compute() if hasattr(y, "compute") else y)
        if groups is not None and hasattr(groups, "compute"):
            groups = np.asarray(groups.compute())
        folds = None if isinstance(cv, str) and cv == "loo" else resolve_folds(
            cv, y.shape[0], y=y, groups=groups, classifier=task == "classification")
    return cv_baseline(y, folds, est.scoring_, getattr(est, "classes_", None))


def _fmt(v):
    """A parameter for the terminal: a number, or a width vector (ARD)."""
    if np.ndim(v) == 0:
        return f"{v:.4g}"
    return "[" + ", ".join(f"{x:.3g}" for x in np.asarray(v)) + "]"


def _load_frames(data):
    """One table, or several files of the same columns stacked; (frame, name)."""
    data = expand_data(data)  # quoted glob patterns, as with --chunk-rows
    frames = [load_frame(d) for d in data]
    if len(frames) == 1:
        return frames[0]
    cols = list(frames[0][0].columns)
    for (f, _), d in zip(frames[1:], data[1:], strict=True):
        if list(f.columns) != cols:
            raise click.BadParameter(f"{d} has other columns than {data[0]}", param_hint="DATA")
    return pd.concat([f for f, _ in frames], ignore_index=True), frames[0][1]


def _check_streaming(data, chunk_rows, model_kind, basis):
    """Validate the --chunk-rows options; returns (paths, name, basis)."""
    if chunk_rows < 2:
        raise click.BadParameter("must be at least 2", param_hint="--chunk-rows")
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError:
        raise click.ClickException("--chunk-rows needs Dask: pip install 'lssvm[dask]'") from None
    allowed = MODELS[model_kind][0].search_family().dask_bases
    if basis not in (None, *allowed):
        raise click.BadParameter(f"--basis {basis} needs all rows in memory; --chunk-rows takes "
                                 + " or ".join(allowed) + " (pchol: pivoted Cholesky among a row sample)",
                                 param_hint="--basis")
    paths = expand_paths(data)
    if basis is None:  # the family's default on Dask input ("pchol": pivoted Cholesky on a row sample)
        basis = allowed[0]
    return paths, Path(paths[0]).name.split(".")[0], basis


def _stream_inputs(paths, target, drop, task, scale, group_col, chunk_rows, categorical="auto", impute=True,
                   min_frequency=0.01):
    drop = tuple(drop) + (() if group_col is None else (group_col,))
    st = stream_xy(paths, target, drop, task, scale, group_col, chunk_rows, categorical, impute, min_frequency)
    if group_col is not None:
        import dask.array as da

        with pass_progress("counting groups"):
            st["n_groups"] = int(np.unique(da.unique(st["groups"]).compute()).size)
    return st


def _group_cv(n_groups, group_col):
    if n_groups < 2:
        raise ValueError(f"group column {group_col!r} has a single group: nothing to hold out")
    return LeaveOneGroupOut() if n_groups <= MAX_LEAVE_ONE_GROUP_OUT else GroupKFold(10)


def _echo_edge_warnings(caught):
    """Print search-edge warnings as lines naming the options to widen (the
    search's result depends on them); returns the other warnings, for the
    one-line summary."""
    rest, shown = [], set()
    for w in caught:
        if issubclass(w.category, SearchEdgeWarning):
            msg = str(w.message).replace("param_space={'gamma': ...}", "--gammas").replace("alphas=...", "--alphas")
            if msg not in shown:  # the same edge met by each --input-transform candidate's search: said once
                click.echo(f"warning    {msg}", err=True)
            shown.add(msg)
        else:
            rest.append(w)
    return rest


def _echo_evaluation(params, path):
    scores = path.mse if path.error_rate is None else path.error_rate
    i = int(np.argmin(scores))
    what = "MSE" if path.error_rate is None else "error rate"
    shown = ", ".join(f"{k}={v:.4g}" for k, v in params.items())
    click.echo(f"evaluated  {shown or 'the kernel'}: best alpha {path.alphas[i]:.3g}, CV {what} {scores[i]:.4g}",
               err=True)


def _gradient_budget(est, X, kernel, rows, rates, classification):
    """What the L-BFGS-B stage of ``--search gradient`` may cost: (line, estimated seconds)."""
    from ..estimators.gradient_search import ALPHA_REFINEMENTS, gradient_evaluations

    p = int(np.count_nonzero(np.ptp(np.asarray(X), axis=0) > 0)) if kernel == "ard" else 1
    cap = gradient_evaluations(est.max_evaluations, p)
    seconds = gradient_stage_seconds("sparse", rows, np.shape(X)[1], p, est.n_restarts + 1, cap, rates,
                                     classification)
    return (f"gradient   then L-BFGS-B: at most {cap} evaluations per start ({p} widths + alpha), "
            f"{est.n_restarts + 1} start(s), each restarted up to {ALPHA_REFINEMENTS} times at a better alpha, "
            f"and an evidence search of at most {cap}; one evaluation costs about 2-3 fits: about "
            f"{_duration(seconds)}"), seconds
