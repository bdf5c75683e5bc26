"""Where lssvm may write: one check for every output file and folder.

Every writer of the package (``save_model``, ``lssvm fit|select -o``,
``lssvm predict -o``, the ``lssvm select`` report folder) writes to a
temporary file (or folder) beside the target and renames it into place,
so that a reader or a killed process sees the old file or the complete new
one.  A rename replaces whatever the target was: run as root, ``-o
/dev/null`` would replace the device by a regular file, ``-o FIFO`` the
pipe another process reads.  So the target must be a new path or a
regular file; a device, FIFO, socket or folder is refused with
:class:`OutputPathError` (a ``ValueError``) before anything is computed,
and checked again just before the rename.

A report folder is replaced as a whole, so it must be a new path, an empty
folder, or a folder holding an earlier lssvm report (only files, with an
``index.html`` lssvm wrote): ``--report .`` or ``--report ~`` never
deletes a folder of other files.

A symbolic link to a regular file is followed: the file it points to is
replaced and the link kept.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["OutputPathError", "REPORT_MARK", "atomic_write", "check_output_file", "check_output_folder",
           "replace_folder"]

#: Text every lssvm report's ``index.html`` holds (its title), how an earlier report is recognised.
REPORT_MARK = "<title>lssvm model selection</title>"
#: Bytes of ``index.html`` read to find :data:`REPORT_MARK`.
_MARK_BYTES = 4096


class OutputPathError(ValueError):
    """An output path lssvm will not write to (a device, FIFO, socket,
    folder, or a folder that is not an earlier report)."""


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_output_file(path, what="output file"):
    """The path to write ``what`` to, after checking that it is new or a
    regular file (a link to one is followed) in an existing folder.

    Parameters
    ----------
    path : str or Path
    what : str
        Named in the error, e.g. "model file".

    Returns
    -------
    Path
        ``path``, or the regular file a symbolic link ``path`` points to.

    Raises
    ------
    OutputPathError
        ``path`` is a folder, device, FIFO or socket; writing there would
        replace it (renaming over it) or block.
    FileNotFoundError
        The folder to write in does not exist.

    Notes
    -----
    One ``stat``; O(1).
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write the {what} there ({exc.strerror or exc})") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputPathError(f"{path} is {_kind(mode)}, not a regular file: lssvm writes the {what} only to a "
                              "new path or over a regular file; give another path")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"the folder to save the {what} in does not exist", str(folder))
    return path


def atomic_write(path, write, what="output file", binary=True):
    """Write a file through a temporary file in the same folder, flushed to
    disk and renamed over ``path``: readers, and a process killed mid-write,
    see the old file or the complete new one, never a partial one.

    Parameters
    ----------
    path : str or Path
        Checked by :func:`check_output_file` before and again just before
        the rename.
    write : callable
        ``write(fh)`` writes the content to the open file ``fh``.
    what : str
        Named in errors.
    binary : bool
        Open ``fh`` in binary mode (else text, UTF-8).

    Returns
    -------
    Path
        The path written (a symbolic link's target).

    Raises
    ------
    OutputPathError, FileNotFoundError, OSError
        Nothing is left behind: the temporary file is removed.
    """
    path = check_output_file(path, what)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 -> the user's umask, as open() gives
        check_output_file(path, what)  # it may have become a FIFO or device while we wrote
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_folder(folder)
    return path


def check_output_folder(path, what="report folder"):
    """The report folder ``path`` after checking that writing it may replace
    it: a new path, an empty folder, or an earlier lssvm report.

    Raises
    ------
    OutputPathError
        ``path`` is a file, device, FIFO, socket or link, or a folder that
        holds anything but an earlier lssvm report.
    FileNotFoundError
        The folder to create it in does not exist.

    Notes
    -----
    Lists the folder and reads 4 KiB of its ``index.html``.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"the folder to save the {what} in does not exist", str(parent))
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(mode):
        raise OutputPathError(f"{path} is a symbolic link: lssvm replaces the {what} as a whole, so give a new "
                              "path or an earlier report folder")
    if not stat.S_ISDIR(mode):
        raise OutputPathError(f"{path} is {'a regular file' if stat.S_ISREG(mode) else _kind(mode)}, not a folder: "
                              f"give a new path or an earlier report folder for the {what}")
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if not entries:
        return path
    if path.resolve() == Path.cwd().resolve():
        raise OutputPathError(f"{path} is the current folder: the {what} replaces its folder as a whole, so give "
                              "a new folder")
    if not (all(e.is_file(follow_symlinks=False) for e in entries) and _is_report(path / "index.html")):
        raise OutputPathError(f"{path} is a folder that holds other files than an lssvm report: the {what} "
                              "replaces the folder as a whole, so give a new or empty folder")
    return path


def _is_report(index):
    try:
        with open(index, "rb") as fh:  # a regular file: the folder held only regular files
            return REPORT_MARK.encode() in fh.read(_MARK_BYTES)
    except OSError:
        return False


def replace_folder(tmp, path, what="report folder"):
    """Move the complete folder ``tmp`` to ``path``, replacing an earlier
    report there (checked again by :func:`check_output_folder`)."""
    path = check_output_folder(path, what)
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_folder(folder):
    """Make the rename durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
