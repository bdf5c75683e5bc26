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
import functools
import io
import pathlib
import tokenize
import warnings

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


#: A module past this many lines is listed (as a warning in the test report): a hint to look for a second
#: concern in it, never a reason to cut it at a line number.
MODULE_LINES_GUIDE = 500

#: A module past this many lines fails: at this size it almost surely holds more than one concern.
MAX_MODULE_LINES = 900


def module_lengths(modules):
    """``{module: lines}`` of ``(module, source, is_package)`` triples."""
    return {module: source.count("\n") for module, source, _ in modules}


def modules_over(lengths, limit):
    """``{module: lines}`` of the modules in ``lengths`` longer than ``limit`` lines, by name."""
    return {module: n for module, n in sorted(lengths.items()) if n > limit}


def test_module_length_guard():
    """Modules are split by concern, not by size (developers' guide): 500 lines is a guide,
    never a limit.

    A hard limit at 500 lines invites cutting a module at a line number: one concern spread over
    micro-modules that import each other (import cycles, names passed back and forth).  So this
    test fails only far past the guide (:data:`MAX_MODULE_LINES`), where a module almost surely
    holds two concerns, and lists the modules past :data:`MODULE_LINES_GUIDE` as a warning in the
    test report, for a reader to judge whether each is still one concern.
    """
    lengths = module_lengths(_all_modules())
    over_guide = modules_over(lengths, MODULE_LINES_GUIDE)
    if over_guide:
        warnings.warn(f"modules past the {MODULE_LINES_GUIDE}-line guide (one concern each?): {over_guide}",
                      UserWarning, stacklevel=1)
    too_long = modules_over(lengths, MAX_MODULE_LINES)
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines: split each along a concern: {too_long}"


def test_module_length_guard_fails_on_a_planted_module():
    long_source = "x = 1\n" * (MAX_MODULE_LINES + 1)
    lengths = module_lengths([("lssvm.cv.planted", long_source, False), ("lssvm.cv.short", "x = 1\n", False)])
    assert modules_over(lengths, MAX_MODULE_LINES) == {"lssvm.cv.planted": MAX_MODULE_LINES + 1}


def _resolve(target: str, names, modules) -> list[str]:
    """The modules of ``modules`` that ``from target import names`` (or ``import target``) runs."""
    found = []
    for name in names or [None]:
        if name is not None and f"{target}.{name}" in modules:
            found.append(f"{target}.{name}")  # ``from pkg import module``: the module itself
            continue
        module = target
        while module and module not in modules:  # a name defined in a module, or a missing module
            module = module.rpartition(".")[0]
        if module:
            found.append(module)
    return found


def import_graph(modules):
    """``{module: set of imported modules}`` for ``(module, source, is_package)`` triples,
    imports inside functions included."""
    modules = list(modules)
    names = {module for module, _, _ in modules}
    graph = {module: set() for module in names}
    for module, source, is_package in modules:
        for _, target, imported in imports_of(source, module, is_package):
            graph[module].update(m for m in _resolve(target, imported, names) if m != module)
    return graph


def import_cycles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


@functools.lru_cache(maxsize=1)
def _package_cycles():
    """The import cycles of ``src/lssvm`` (parsed once for the tests below)."""
    return import_cycles(import_graph(_all_modules()))


#: Cycles still to remove, each with its reason: the modules of the cycle -> reason.
KNOWN_CYCLES: dict[frozenset, str] = {}  # cycles tolerated while their fix is under way: module set -> why


def test_no_import_cycles():
    """No two modules of ``src/lssvm`` import each other, directly or through others, counting
    imports inside functions: a lazy import that breaks a cycle at run time still ties the two
    modules into one concern that was cut in two.

    How imports are counted: ``from pkg import name`` is an edge to the module ``pkg.name`` when
    that is a module, else to ``pkg`` (its ``__init__``, where the name is defined or re-exported).
    So ``from . import child`` in a package ``__init__`` is an edge from the package to its child,
    and a child's ``from . import sibling`` an edge to the sibling, never to the package.  Python
    also runs a package's ``__init__`` before any of its submodules; that implicit import is not
    an edge: the package root re-exports the public API, so counting it would put every module on
    one false cycle with it.  A child that imports a name from its own package's ``__init__`` (which
    imports the child) is a real cycle, one that only import order keeps working, and is counted.
    """
    cycles = [cycle for cycle in _package_cycles() if frozenset(cycle) not in KNOWN_CYCLES]
    assert not cycles, "import cycles (merge the modules, or move the shared piece below both):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles)


def test_known_cycles_still_exist():
    cycles = {frozenset(cycle) for cycle in _package_cycles()}
    stale = [sorted(cycle) for cycle in KNOWN_CYCLES if cycle not in cycles]
    assert not stale, f"cycles no longer present, remove them from KNOWN_CYCLES: {stale}"


@pytest.mark.parametrize(
    ("modules", "cycles"),
    [
        # a lazy import closing a cycle counts
        ([("lssvm._a", "from ._b import f", False), ("lssvm._b", "def g():\n    from ._a import h\n", False)],
         [["lssvm._a", "lssvm._b"]]),
        # a cycle through a third module, with a module imported by ``from pkg import module``
        ([("lssvm.cv", "from .holdout import H", True), ("lssvm.cv.holdout", "from . import paths", False),
          ("lssvm.cv.paths", "from .guard import EPS", False), ("lssvm.cv.guard", "import lssvm.cv.holdout", False)],
         [["lssvm.cv.guard", "lssvm.cv.holdout", "lssvm.cv.paths"]]),
        # a child importing a name its package re-exports from the child
        ([("lssvm.io", "from .tables import read_table", True), ("lssvm.io.tables", "from lssvm.io import x", False)],
         [["lssvm.io", "lssvm.io.tables"]]),
        # a package re-exporting its children, who import each other one way: no cycle
        ([("lssvm.cv", "from . import folds\nfrom .engine import E", True),
          ("lssvm.cv.engine", "from . import folds\nfrom ..solvers import S", False),
          ("lssvm.cv.folds", "from .._threads import plan", False), ("lssvm.solvers", "", True),
          ("lssvm._threads", "", False)], []),
    ],
)
def test_cycle_check_on_planted_imports(modules, cycles):
    assert import_cycles(import_graph(modules)) == cycles


#: The names of each family's own code, matched case-insensitively in the library's source text.
FAMILY_NAMES = {
    "nystrom": ("nystrom",),
    "fixed-size": ("fixed_size", "fixed-size", "fixedsize", "scdp"),
}

#: Family-specific code lives in at most this many library files per family: the family's basis
#: rule, truncation and solver, its estimator presets, the package exports.  Everything downstream
#: of the engine protocol (cross-validation, intervals, calibration, searches, Dask, model files,
#: the command line) is written once, for every family.
MAX_FAMILY_FILES = 6


def _docstring_lines(tree) -> set[int]:
    """The first lines of the docstrings of a module's, classes' and functions' bodies."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.add(first.lineno)
    return lines


@functools.lru_cache(maxsize=None)  # family_files asks once per family name
def code_text(source: str) -> str:
    """The code tokens of ``source`` (identifiers, attribute names, import paths, string literals that are
    not docstrings), lower-cased and joined by spaces: comments and docstrings dropped."""
    docstrings = _docstring_lines(ast.parse(source))
    kept = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type != tokenize.COMMENT and not (tok.type == tokenize.STRING and tok.start[0] in docstrings)]
    return " ".join(kept).lower()


def family_files(sources, names):
    """The paths of ``{path: text}`` whose code (:func:`code_text`: not comments, not docstrings) contains
    any of ``names`` (case-insensitive).  A docstring that mentions a family documents it; code that names
    it is a second copy of a concern."""
    return sorted(path for path, text in sources.items() if any(name in code_text(text) for name in names))


def _library_sources():
    return {str(path.relative_to(SRC)): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("family", sorted(FAMILY_NAMES))
def test_family_code_in_few_files(family):
    """Each family's own names appear in at most :data:`MAX_FAMILY_FILES` library files: code below
    or beside the engine protocol that names a family is a second copy of a shared concern."""
    files = family_files(_library_sources(), FAMILY_NAMES[family])
    assert len(files) <= MAX_FAMILY_FILES, f"{len(files)} library files name the {family} family: {files}"


def test_family_count_on_planted_sources():
    planted = {f"lssvm/m{i}.py": "from .solvers.nystrom import NystromRLS\n" for i in range(MAX_FAMILY_FILES + 1)}
    planted["lssvm/fs.py"] = "state = SCDPState()  # FixedSizeLSSVR\n"
    planted["lssvm/other.py"] = "nystroem = None  # scikit-learn's Nystroem is a different spelling\n"
    assert len(family_files(planted, FAMILY_NAMES["nystrom"])) == MAX_FAMILY_FILES + 1
    assert family_files(planted, FAMILY_NAMES["fixed-size"]) == ["lssvm/fs.py"]


@pytest.mark.parametrize(("source", "counted"), [
    ("x = 1  # the Nystrom model\n", False),  # a comment
    ('"""The Nystrom model."""\nx = 1\n', False),  # the module's docstring
    ('class A:\n    """As for NystromLSSVR."""\n', False),  # a class docstring
    ('def f():\n    """Nystrom columns."""\n    return 1\n', False),  # a function docstring
    ("from .solvers.nystrom import rank_map\n", True),  # an import path
    ("est = NystromLSSVR()\n", True),  # an identifier
    ("y = est.nystrom_rank\n", True),  # an attribute name
    ('MODELS = {"nystrom": None}\n', True),  # a string literal that is not a docstring
    ('def f():\n    x = 1\n    "nystrom"\n', True),  # a bare string after the first statement: not a docstring
])
def test_family_count_reads_code_not_prose(source, counted):
    assert (family_files({"lssvm/m.py": source}, FAMILY_NAMES["nystrom"]) == ["lssvm/m.py"]) is counted
