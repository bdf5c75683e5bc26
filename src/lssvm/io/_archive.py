"""Reading a model archive safely: every size is known and bounded before
any member is read.

A hostile ``.npz`` can be a decompression bomb (a few MiB that inflate to
gigabytes), declare arrays larger than its data, or hold JSON nested deeply
enough to exhaust the interpreter's stack.  NumPy's ``np.load`` guards
against none of these, so the archive is read here with :mod:`zipfile` and
:mod:`numpy.lib.format` under these rules, all checked from the ZIP central
directory and the ``.npy`` headers before a member's data is read:

* the file is a regular file, opened without blocking (a FIFO named like a
  model file is refused at once, never waited on);
* members are stored uncompressed (``np.savez``, which lssvm uses, never
  compresses), so a member's size in the directory is its size on disk and
  nothing is ever inflated; compressed or encrypted members are refused;
* member names are the ``.npy`` names of the format, without duplicates;
* ``metadata`` is at most :data:`MAX_METADATA_BYTES`, its JSON at most
  :data:`MAX_JSON_DEPTH` deep (checked by a vectorised bracket count before
  parsing);
* the metadata declares every other member's dtype and shape; each
  member's ``.npy`` header must declare the same, and its size in the
  directory must equal the header plus ``prod(shape) * itemsize``.

Memory used while loading is therefore at most the file's size plus the
arrays the metadata declares, which the file itself must contain.  This is
hand-written because neither NumPy nor the standard library bounds what an
archive may inflate to.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import zipfile

import numpy as np

__all__ = ["ModelFileError", "MAX_METADATA_BYTES", "MAX_JSON_DEPTH", "read_archive"]

#: Largest ``metadata`` member (bytes of its ``.npy``; 4 bytes per character).
MAX_METADATA_BYTES = 64 << 20
#: Deepest nesting of JSON arrays/objects accepted in the metadata.
MAX_JSON_DEPTH = 64
#: Largest ``.npy`` header read (NumPy writes 128 bytes for these arrays).
_MAX_HEADER_BYTES = 4096
#: Largest ``checksum`` member.
_MAX_CHECKSUM_BYTES = 1024


class ModelFileError(ValueError):
    """A model file that cannot be loaded: unreadable, of another format
    version, damaged, edited, inconsistent, or beyond the loader's bounds."""


def _json_depth(text):
    """Maximum nesting depth of ``[``/``{`` in JSON ``text`` (strings
    skipped); O(len(text)), vectorised."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = (np.isin(codes, (91, 123)).astype(np.int64) - np.isin(codes, (93, 125)))
    return int(np.cumsum(step).max()) if step.size else 0


def parse_metadata_json(text, path):
    """The metadata JSON object, or ModelFileError if it is too deep or not JSON."""
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise ModelFileError(
            f"{path}: not an lssvm model file (its metadata JSON is nested more than "
            f"{MAX_JSON_DEPTH} levels deep)"
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _read_npy(zf, info, path, max_bytes, expected=None):
    """One member's array, its sizes checked before its data is read.

    ``expected``: ``(dtype_str, shape)`` the metadata declares, or None
    (``metadata`` and ``checksum``: then only unicode 0-d arrays up to
    ``max_bytes`` are accepted).
    """
    name = info.filename[:-4]
    if info.file_size > max_bytes:
        raise ModelFileError(
            f"{path}: member {name!r} is {info.file_size} bytes, more than the {max_bytes} allowed"
        )
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=_MAX_HEADER_BYTES)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=_MAX_HEADER_BYTES)
        else:
            raise ValueError(f"unsupported .npy version {version}")
        header_bytes = fh.tell()
        if dtype.hasobject:
            raise ModelFileError(f"{path}: member {name!r} holds Python objects; lssvm files never do")
        if expected is None:
            if dtype.kind != "U" or shape != ():
                raise ModelFileError(f"{path}: member {name!r} must be a unicode string")
        elif [dtype.str, list(shape)] != [expected[0], list(expected[1])]:
            raise ModelFileError(
                f"{path}: member {name!r} is {dtype.str} {shape}, but the metadata declares "
                f"{expected[0]} {tuple(expected[1])}"
            )
        data_bytes = math.prod(shape) * dtype.itemsize
        if header_bytes + data_bytes != info.file_size:
            raise ModelFileError(
                f"{path}: member {name!r} declares {data_bytes} bytes of data but holds "
                f"{info.file_size - header_bytes}; the file is damaged"
            )
        return _read_data(fh, shape, fortran, dtype, data_bytes)


def _read_data(fh, shape, fortran, dtype, data_bytes):
    """The array's data from a stream positioned after its header."""
    buf = fh.read(data_bytes)
    if len(buf) != data_bytes:
        raise EOFError("the member ends early")
    a = np.frombuffer(buf, dtype=dtype)
    if fortran:
        return a.reshape(shape[::-1]).transpose().copy()
    return a.reshape(shape).copy()


def _declared(meta, path):
    """``{name: (dtype_str, shape)}`` from the metadata's ``arrays`` field."""
    arrays = meta.get("arrays")
    ok = isinstance(arrays, dict) and all(
        isinstance(k, str) and isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
        and isinstance(v[1], list) and len(v[1]) <= 2
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 62 for s in v[1])
        for k, v in arrays.items()
    )
    if not ok:
        raise ModelFileError(f"{path}: invalid lssvm model file: metadata field 'arrays' is missing or malformed")
    return arrays


def read_archive(path, check_version):
    """``(meta, arrays)`` of the model archive at ``path``, read under the
    bounds of the module docstring.

    ``check_version(meta)`` is called on the parsed metadata (it raises
    ModelFileError for a foreign format or version) before any array is
    read.  ``arrays`` holds every member (``metadata`` as its raw array).  Raises
    ModelFileError for anything else wrong.
    """
    if not os.path.exists(path):
        raise ModelFileError(f"{path}: no such model file")
    if os.path.isdir(path):
        raise ModelFileError(f"{path}: is a folder, not a model file")
    try:  # never blocks: a FIFO opens at once (and is refused below), where a plain open waits for a writer
        fh = open(path, "rb", opener=_open_nonblocking)
    except PermissionError:
        raise ModelFileError(f"{path}: permission denied; cannot read the model file") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc})") from None
    with fh:
        return _read_open_archive(fh, path, check_version)


def _open_nonblocking(path, flags):
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))


def _read_open_archive(fh, path, check_version):
    """:func:`read_archive` on the open file ``fh``, which must be a regular file."""
    try:
        st = os.fstat(fh.fileno())
        regular = stat.S_ISREG(st.st_mode)
        magic = fh.read(6) if regular else b""
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc})") from None
    if not regular:
        raise ModelFileError(f"{path}: not a model file: it is {_kind(st.st_mode)}, not a regular file")
    if magic.startswith(b"\x93NUMPY"):
        raise ModelFileError(f"{path}: not an lssvm model file (a single array, not an .npz archive)")
    if not magic.startswith(b"PK"):
        raise ModelFileError(f"{path}: not an lssvm model file (not an .npz archive)")
    try:
        fh.seek(0)
        with zipfile.ZipFile(fh) as zf:
            infos = _check_directory(zf, path, st.st_size)
            if "metadata" not in infos:
                raise ModelFileError(f"{path}: not an lssvm model file (no lssvm metadata)")
            raw = _read_npy(zf, infos.pop("metadata"), path, MAX_METADATA_BYTES)
            meta = parse_metadata_json(str(raw), path)
            check_version(meta)
            declared = _declared(meta, path)
            arrays = {"metadata": raw}
            if "checksum" in infos:
                arrays["checksum"] = _read_npy(zf, infos.pop("checksum"), path, _MAX_CHECKSUM_BYTES)
            if set(infos) != set(declared):
                raise ModelFileError(
                    f"{path}: invalid lssvm model file: members {sorted(infos)} differ from the "
                    f"arrays the metadata declares {sorted(declared)}"
                )
            for name, info in infos.items():
                arrays[name] = _read_npy(zf, info, path, info.file_size, declared[name])
            return meta, arrays
    except ModelFileError:
        raise
    except Exception as exc:  # zipfile.BadZipFile, CRC errors, .npy header errors, EOFError, ...
        raise ModelFileError(
            f"{path}: not a readable lssvm model file; it is truncated or damaged ({exc})"
        ) from None


def _kind(mode):
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _check_directory(zf, path, file_size):
    """``{name: ZipInfo}`` after checking names and storage, from the ZIP
    central directory alone (nothing is decompressed)."""
    infos = {}
    if sum(info.compress_size for info in zf.infolist()) > file_size:
        raise ModelFileError(f"{path}: not a readable lssvm model file; its ZIP directory declares more data than it holds")
    for info in zf.infolist():
        name = info.filename
        if not name.endswith(".npy") or name[:-4] in infos or "/" in name:
            raise ModelFileError(f"{path}: not an lssvm model file (unexpected member {name!r})")
        if info.flag_bits & 0x1:
            raise ModelFileError(f"{path}: not an lssvm model file (encrypted member {name!r})")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise ModelFileError(
                f"{path}: member {name[:-4]!r} is compressed; lssvm model files are stored uncompressed, "
                "and compressed members are refused (they could inflate without bound)"
            )
        infos[name[:-4]] = info
    return infos
