"""Writing the results of ``lssvm select``: the model file and the report
folder, checked before the search (:mod:`lssvm.io.paths`) and written so
that on any failure nothing new is left behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from ..io import save_model
from ..io.paths import check_output_file, check_output_folder, replace_folder
from ._logging import collect_warnings, echo_warnings

__all__ = ["check_outputs", "write_outputs"]


def check_outputs(output, report_dir):
    """The model file and report folder, checked before any work: a new path
    or a regular file, and a new, empty or earlier report folder that does
    not hold the model file (:mod:`lssvm.io.paths`)."""
    try:
        output = check_output_file(output, "model")
    except (ValueError, FileNotFoundError) as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None
    if report_dir is None:
        return output, None
    try:
        report_dir = check_output_folder(report_dir, "report folder")
    except (ValueError, FileNotFoundError) as exc:
        raise click.BadParameter(str(exc), param_hint="--report") from None
    if report_dir.resolve() in output.resolve().parents:
        raise click.BadParameter(f"the model file {output} would lie inside the report folder {report_dir}, which "
                                 "is replaced as a whole: give them apart", param_hint="--output/--report")
    return output, report_dir


def write_outputs(output, model, report_dir, est, summary, table, test_values=None, curve=None, features=None,
                   test_baseline=None):
    """Report into a temporary folder, model file atomically, then the
    folder into place: on any failure nothing new is left behind."""
    tmp = None
    try:
        if report_dir is not None:
            from .report import write_report

            tmp = Path(tempfile.mkdtemp(prefix=".tmp-report-", dir=report_dir.parent))
            os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 -> the user's umask
            write_report(tmp, est, summary, table, test_values=test_values, curve=curve, feature_names=features,
                         test_baseline=test_baseline)
        try:
            with collect_warnings() as saving:  # the stored interval data (warned already by the search)
                save_model(output, model)
        except ValueError as exc:
            raise click.ClickException(f"{exc}; nothing was saved") from None
        if tmp is not None:
            try:
                replace_folder(tmp, report_dir)
            except ValueError as exc:  # it became something else while the search ran
                raise click.ClickException(f"{exc}; the model was saved to {output}, the report not") from None
            tmp = None
    except OSError as exc:
        raise click.ClickException(f"cannot write the results: {exc}") from None
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    echo_warnings(saving)
    click.echo(f"model saved to {output}")
    if report_dir is not None:
        click.echo(f"report written to {report_dir / 'index.html'}")


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
