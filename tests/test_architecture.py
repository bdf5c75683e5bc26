"""The layer rule of ``src/lssvm``, checked on the source (``ast``, no import).

Layers, lowest first (a module may import its own subpackage and any lower
layer, never a higher one)::

    shared      lssvm/_*.py helpers, lssvm/exceptions.py
    datasets    bundled data loaders (numpy/pandas only)
    kernels  ->  basis  ->  solvers  ->  cv  ->  selection  ->  backends
             ->  estimators  ->  io
    lssvm       the package root ``__init__`` (the public API it re-exports)
    cli         the command line (top)

``shared`` and ``datasets`` sit below every subpackage: they import nothing of
``lssvm`` but the shared helpers.  Across subpackages only public modules and
names may be imported: no ``lssvm.kernels._distances`` from ``estimators``, no
``_Calibrator`` from ``io``.  The package root's ``_*.py`` helpers are shared
by every layer, but their own ``_names`` are not.  Imports inside functions
(lazy imports) count like module-level ones.

Each check breaks once on purpose in ``test_checks_fail_on_a_planted_import``.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "lssvm"

RANK = {
    "shared": 0,
    "datasets": 1,
    "kernels": 2,
    "basis": 3,
    "solvers": 4,
    "cv": 5,
    "selection": 6,
    "backends": 7,
    "estimators": 8,
    "io": 9,
    "lssvm": 10,  # the package root __init__
    "cli": 11,
}

# Justified exceptions, each with its reason: (importing module, imported module) -> reason.
# Empty: every crossing is through a public name.
ALLOWED: dict[tuple[str, str], str] = {}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The layer of a dotted ``lssvm`` module name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "lssvm"
    head = parts[1]
    if head.startswith("_") or head == "exceptions":
        return "shared"
    if head not in RANK:
        raise AssertionError(f"{module}: subpackage {head!r} has no layer; add it to RANK in this test")
    return head


def _is_package(module: str) -> bool:
    return (SRC / pathlib.Path(*module.split(".")) / "__init__.py").exists()


def imports_of(source: str, module: str, is_package: bool):
    """``(line, imported module, imported names)`` for every ``lssvm`` import in
    ``source``, at any depth (lazy imports included)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = node.module.split(".")
            if target[0] == "lssvm":
                yield node.lineno, ".".join(target), [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "lssvm":
                    yield node.lineno, alias.name, []


def violations(module: str, source: str, is_package: bool = False):
    """Messages for the layer and privacy breaches of one module's imports."""
    here = layer_of(module)
    found = []
    for line, target, names in imports_of(source, module, is_package):
        for name in names or [None]:
            full = target if name is None else f"{target}.{name}"
            # ``from lssvm.backends import dask`` imports a module: judge it as one
            dest = full if name is not None and _is_package(target) and _is_package_or_module(full) else target
            there = layer_of(dest)
            if (module, dest) in ALLOWED:
                continue
            where = f"{module}:{line} imports {full}"
            if RANK[there] > RANK[here]:
                found.append(f"{where}: upward import ({here} may not import {there})")
            if there == here and here != "shared":
                continue
            private = [p for p in dest.split(".")[1:] if p.startswith("_")]
            if there == "shared":
                private = private[1:]  # lssvm._labels itself is shared
            if private:
                found.append(f"{where}: private module {private[0]!r} of {there}")
            if name is not None and name.startswith("_") and not name.startswith("__"):
                found.append(f"{where}: private name {name!r} of {there}")
    return found


def _is_package_or_module(module: str) -> bool:
    path = SRC / pathlib.Path(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _all_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path.read_text(encoding="utf-8"), path.name == "__init__.py"


def test_no_upward_or_private_imports():
    found = [msg for module, source, pkg in _all_modules() for msg in violations(module, source, pkg)]
    assert not found, "layer rule broken (see tests/test_architecture.py):\n" + "\n".join(found)


def test_every_subpackage_has_a_layer():
    for path in PACKAGE.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            assert path.name in RANK, f"lssvm.{path.name} has no layer in tests/test_architecture.py"


def test_allow_list_entries_are_still_needed():
    used = set()
    for module, source, pkg in _all_modules():
        for _, target, names in imports_of(source, module, pkg):
            used.add((module, target))
            used.update((module, f"{target}.{n}") for n in names)
    stale = [pair for pair in ALLOWED if pair not in used]
    assert not stale, f"allow-list entries no longer used, remove them: {stale}"


#: Layers that use the estimators only through their public API: no ``obj._name`` reads or writes.
PUBLIC_API_ONLY = ("io", "cli")


def private_attribute_uses(source: str, module: str):
    """``obj._name`` (not ``self._name`` / ``cls._name``, not dunders) in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            found.append(f"{module}:{node.lineno} uses the private attribute {node.attr!r} of {ast.unparse(node.value)}")
    return found


def test_io_and_cli_use_no_private_attributes():
    found = [msg for module, source, _ in _all_modules() if layer_of(module) in PUBLIC_API_ONLY
             for msg in private_attribute_uses(source, module)]
    assert not found, "io and cli use the estimators' public API only:\n" + "\n".join(found)


def test_private_attribute_check_fails_on_a_planted_read():
    source = "def f(best):\n    return best._cv_3d(10, None, None, 'remove'), self._ok, est.__class__\n"
    found = private_attribute_uses(source, "lssvm.cli.report")
    assert len(found) == 1 and "'_cv_3d' of best" in found[0], found


@pytest.mark.parametrize(
    ("module", "source", "message"),
    [
        ("lssvm.cv.holdout", "from ..estimators import SparseLSSVR", "upward import (cv may not import estimators)"),
        ("lssvm.kernels.ard", "def f():\n    from lssvm.basis import select_basis\n", "upward import"),
        ("lssvm.estimators.nystrom", "from ..kernels._distances import iter_row_blocks", "private module '_distances'"),
        ("lssvm.cv.holdout", "from ..solvers._nogil import syr2k_lower_", "private module '_nogil'"),
        ("lssvm.io.uncertainty", "from ..estimators import _calibration", "private module '_calibration'"),
        ("lssvm.io.model_io", "from ..estimators.fixed_size import _BaseFixedSizeLSSVM", "private name"),
        ("lssvm._labels", "from .kernels import RBF", "upward import (shared may not import kernels)"),
        ("lssvm.selection.criteria", "from .._labels import _check_label_types", "private name"),
        ("lssvm.datasets.ida", "import lssvm.io", "upward import"),
    ],
)
def test_checks_fail_on_a_planted_import(module, source, message):
    found = violations(module, source)
    assert any(message in msg for msg in found), found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("lssvm.estimators.nystrom", "from ..kernels import iter_row_blocks"),
        ("lssvm.estimators.nystrom", "from ._labels import LabelCoder"),
        ("lssvm.selection.criteria", "from .._labels import LabelCoder"),
        ("lssvm.cli.select", "from lssvm import __version__"),
        ("lssvm.estimators._base", "from ..backends import dask"),
    ],
)
def test_checks_pass_public_downward_imports(module, source):
    assert violations(module, source) == []


MAX_MODULE_LINES = 500


def test_no_module_over_500_lines():
    """Split a module by concern before it outgrows one reading (developers' guide)."""
    long = {module: n for module, source, _ in _all_modules() if (n := source.count("\n")) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
