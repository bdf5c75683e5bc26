"""Every writer writes only to a new path or over a regular file.

``save_model``, ``lssvm fit|select -o``, ``lssvm predict -o`` and the
report folder rename a complete temporary file (folder) over the target; a
rename replaces whatever was there, so a FIFO, device, socket or folder
must be refused with a clear error, before any work, and nothing may be
left behind.
"""

import os
import socket
import stat
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import SavedModel, load_model, save_model
from lssvm.io.paths import REPORT_MARK, OutputPathError, atomic_write, check_output_file, check_output_folder

posix = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and devices")


def _model():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis=np.arange(8)).fit(X, X[:, 0])
    return SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "y")


def _leftovers(folder, keep=()):
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@posix
def test_save_model_refuses_a_fifo_and_leaves_it_a_fifo(tmp_path):
    fifo = tmp_path / "m.npz"
    os.mkfifo(fifo)
    with pytest.raises(OutputPathError, match="FIFO"):
        save_model(fifo, _model())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == ["m.npz"]  # no temporary file left


def test_save_model_refuses_a_folder(tmp_path):
    (tmp_path / "m.npz").mkdir()
    with pytest.raises(OutputPathError, match="a folder, not a regular file"):
        save_model(tmp_path / "m.npz", _model())
    assert (tmp_path / "m.npz").is_dir() and _leftovers(tmp_path) == ["m.npz"]


@posix
def test_save_model_refuses_a_socket(tmp_path):
    path = tmp_path / "s.npz"
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(path))
        except OSError:  # path too long for AF_UNIX on some systems
            pytest.skip("cannot bind a UNIX socket here")
        with pytest.raises(OutputPathError, match="socket"):
            save_model(path, _model())


@pytest.fixture
def device(tmp_path):
    """A character device safe to lose: as root (who may rename over any
    file) a private null device made in ``tmp_path``, so that running these
    tests without the check never replaces the system's /dev/null; else
    /dev/null itself (renaming over it is denied to other users)."""
    if sys.platform == "win32":
        pytest.skip("devices")
    if os.geteuid() != 0:
        if not os.path.exists("/dev/null"):
            pytest.skip("no /dev/null")
        return "/dev/null"
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (OSError, AttributeError):
        pytest.skip("cannot make a device node here")
    return str(path)


def test_save_model_refuses_a_device(device):
    before = os.stat(device)
    with pytest.raises(OutputPathError, match="character device"):
        save_model(device, _model())
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_save_model_still_replaces_a_regular_file_and_follows_a_link(tmp_path):
    target = tmp_path / "real.npz"
    target.write_bytes(b"old")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    written = save_model(link, _model())
    assert written == target.resolve() and link.is_symlink()
    assert load_model(link).feature_names == ["a", "b"]


@posix
def test_a_link_to_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "m.npz").symlink_to(tmp_path / "pipe")
    with pytest.raises(OutputPathError, match="FIFO"):
        save_model(tmp_path / "m.npz", _model())


@posix
def test_a_fifo_made_while_writing_is_not_replaced(tmp_path):
    """Checked again just before the rename: the temporary file is removed."""
    path = tmp_path / "p.csv"

    def write(fh):
        fh.write(b"data")
        os.mkfifo(path)

    with pytest.raises(OutputPathError, match="FIFO"):
        atomic_write(path, write)
    assert stat.S_ISFIFO(os.lstat(path).st_mode) and _leftovers(tmp_path) == ["p.csv"]


def test_check_output_file_accepts_new_and_regular(tmp_path):
    assert check_output_file(tmp_path / "new.npz") == tmp_path / "new.npz"
    (tmp_path / "old.npz").write_bytes(b"")
    assert check_output_file(tmp_path / "old.npz") == tmp_path / "old.npz"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_output_file(tmp_path / "nope" / "m.npz")


def test_report_folder_rules(tmp_path):
    assert check_output_folder(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_output_folder(tmp_path / "empty") == tmp_path / "empty"
    report = tmp_path / "report"
    report.mkdir()
    (report / "index.html").write_text(f"<html><head>{REPORT_MARK}</head></html>")
    (report / "cv_alpha.png").write_bytes(b"")
    assert check_output_folder(report) == report
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputPathError, match="holds other files than an lssvm report"):
        check_output_folder(other)
    (other / "index.html").write_text(REPORT_MARK)
    (other / "sub").mkdir()  # a report holds no folders
    with pytest.raises(OutputPathError, match="holds other files"):
        check_output_folder(other)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="a regular file, not a folder"):
        check_output_folder(tmp_path / "file")
    (tmp_path / "link").symlink_to(report)
    with pytest.raises(OutputPathError, match="symbolic link"):
        check_output_folder(tmp_path / "link")


@posix
def test_cli_fit_refuses_a_fifo_output_before_fitting(tmp_path):
    fifo = tmp_path / "m.npz"
    os.mkfifo(fifo)
    res = CliRunner().invoke(cli, ["fit", "motorcycle", "--target", "accel", "-o", str(fifo)])
    assert res.exit_code == 2, res.output
    assert "FIFO" in res.output and "Traceback" not in res.output and "best alpha" not in res.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _leftovers(tmp_path) == ["m.npz"]


def test_cli_fit_and_select_refuse_a_device(device):
    for args in (["fit", "motorcycle", "--target", "accel"], ["select", "motorcycle", "--target", "accel",
                                                               "--no-report"]):
        res = CliRunner().invoke(cli, [*args, "-o", device])
        assert res.exit_code == 2 and "character device" in res.output, res.output
        assert stat.S_ISCHR(os.stat(device).st_mode)


def test_cli_select_refuses_a_folder_of_other_files_as_report(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    res = CliRunner().invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "1", "--alphas", "1",
                                   "-o", str(tmp_path / "m.npz"), "--report", str(mine)])
    assert res.exit_code == 2 and "holds other files than an lssvm report" in res.output, res.output
    assert (mine / "notes.txt").read_text() == "keep me" and not (tmp_path / "m.npz").exists()


@pytest.mark.slow  # two whole reports; test_cli.py's end-to-end select also replaces its report
def test_cli_select_replaces_an_earlier_report(tmp_path):
    args = ["select", "motorcycle", "--target", "accel", "--gammas", "1", "--alphas", "1",
            "-o", str(tmp_path / "m.npz"), "--report", str(tmp_path / "rep")]
    for _ in range(2):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "index.html").exists()


def test_cli_select_refuses_the_model_inside_the_report(tmp_path):
    (tmp_path / "rep").mkdir()  # an earlier report
    (tmp_path / "rep" / "index.html").write_text(REPORT_MARK)
    res = CliRunner().invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "1", "--alphas", "1",
                                   "-o", str(tmp_path / "rep" / "m.npz"), "--report", str(tmp_path / "rep")])
    assert res.exit_code == 2 and "inside the report folder" in res.output, res.output


@posix
def test_cli_predict_refuses_a_fifo_output_and_writes_atomically(tmp_path):
    model = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["fit", "motorcycle", "--target", "accel", "-o", str(model)])
    assert res.exit_code == 0, res.output
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    res = CliRunner().invoke(cli, ["predict", str(model), "motorcycle", "-o", str(fifo)])
    assert res.exit_code == 2 and "FIFO" in res.output, res.output
    out = tmp_path / "pred.csv"
    res = CliRunner().invoke(cli, ["predict", str(model), "motorcycle", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().count("\n") == 134 and _leftovers(tmp_path, {"m.npz", "p.csv"}) == ["pred.csv"]
