"""Sphinx configuration of the lssvm documentation site.

Why Sphinx: the code base writes its docstrings in numpydoc style, as
NumPy, SciPy and scikit-learn do; Sphinx with ``numpydoc`` renders them
as they are, ``autosummary`` generates the API reference from the
packages' ``__all__``, and ``sphinx-gallery`` turns the scripts in
``examples/`` into a gallery (the same tool chain as scikit-learn's
site).

Build (from the repository root)::

    sphinx-build -W --keep-going -b html docs/site docs/site/_build/html

Add ``-D plot_gallery=0`` to build the gallery pages without running the
examples (the test suite runs the example scripts itself).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "src"))

import lssvm  # noqa: E402

project = "lssvm"
author = "the lssvm developers"
copyright = "2026, the lssvm developers"
release = version = lssvm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]
templates_path = ["_templates"]

# --- API reference: one page per subpackage, listing its __all__ -----------
# The pages are written here, at configuration time, from the packages'
# ``__all__``, so names that are added later appear without editing the site.
API_PACKAGES = [
    ("lssvm", "Estimators, warnings and the SCDP solver"),
    ("lssvm.selection", "Model-selection criteria and searches"),
    ("lssvm.selection.nystrom", "The Nyström family's criteria"),
    ("lssvm.selection.fixed_size", "The fixed-size family's criterion and whole-pool model"),
    ("lssvm.cv", "Cross-validation helpers and brute-force references"),
    ("lssvm.basis", "Basis and prototype selection"),
    ("lssvm.kernels", "Kernels"),
    ("lssvm.solvers", "Solvers and factorisations"),
    ("lssvm.datasets", "Bundled data sets"),
    ("lssvm.io", "Tables and model files"),
    ("lssvm.backends", "Backends"),
]


def _attribute_comments(package):
    """``#:`` comments documenting module-level names, from the package and
    its submodules (Sphinx's own source analyser)."""
    import importlib
    import pkgutil

    from sphinx.pycode import ModuleAnalyzer

    names = [package.__name__]
    if hasattr(package, "__path__"):
        names += [f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
    found = {}
    for modname in names:
        try:
            importlib.import_module(modname)
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:  # a module without source, or one needing optional extras
            continue
        for (namespace, attr), doc in docs.items():
            if namespace == "":
                found.setdefault(attr, [line for line in doc if line.strip()])
    return found


def _short_repr(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=4, threshold=8, separator=", ").replace("\n", " ")
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _write_api_pages():
    import importlib

    out = HERE / "api"
    out.mkdir(exist_ok=True)
    toc = []
    for modname, title in API_PACKAGES:
        mod = importlib.import_module(modname)
        names = [n for n in getattr(mod, "__all__", []) if not n.startswith("__")]
        classes, functions, data = [], [], []
        for n in names:
            obj = getattr(mod, n)
            if isinstance(obj, type):
                classes.append(n)
            elif callable(obj):
                functions.append(n)
            else:
                data.append(n)
        heading = f"``{modname}``: {title}"
        lines = [heading, "=" * len(heading), "", f".. automodule:: {modname}", "   :no-members:", "",
                 f".. currentmodule:: {modname}", ""]
        for label, group, template in (("Classes", classes, "class.rst"),
                                       ("Functions", functions, None)):
            if not group:
                continue
            lines += [label, "-" * len(label), "", ".. autosummary::", "   :toctree: generated/",
                      "   :nosignatures:"]
            if template:
                lines.append(f"   :template: autosummary/{template}")
            lines += [""] + [f"   {n}" for n in group] + [""]
        if data:
            lines += ["Constants", "---------", ""]
            docs = _attribute_comments(mod)
            for n in data:
                lines += [f".. py:data:: {n}", f"   :value: {_short_repr(getattr(mod, n))}", ""]
                lines += [f"   {line}" for line in docs.get(n, [])] + [""]
        page = out / f"{modname}.rst"
        text = "\n".join(lines)
        if not page.exists() or page.read_text() != text:
            page.write_text(text)
        toc.append(f"   {modname}")
    index = ["API reference", "=============", "",
             "Generated from the docstrings of the public names (each package's ``__all__``).",
             "Everything most users need is importable from :mod:`lssvm` itself.", "",
             ".. toctree::", "   :maxdepth: 1", ""] + toc + [""]
    text = "\n".join(index)
    page = out / "index.rst"
    if not page.exists() or page.read_text() != text:
        page.write_text(text)


_write_api_pages()

autosummary_generate = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# --- gallery ----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # "Examples using X" at the end of each API page
    "doc_module": ("lssvm",),
    "backreferences_dir": "api/generated/backreferences",
    "inspect_global_variables": False,
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "subsection_order": [f"../../examples/{d}" for d in ("sparse", "fixed_size", "nystrom")] + ["*"],
    "within_subsection_order": "FileNameSortKey",
    "reference_url": {"lssvm": None},
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 1,
}

# --- markdown pages from docs/ ---------------------------------------------
myst_heading_anchors = 3
# docs/*.md are engineering documents also read on their own; their relative
# links and code-fence languages are not all meaningful inside the site.
suppress_warnings = ["myst.header", "myst.xref_missing", "misc.highlighting_failure",
                     "myst.directive_unknown"]

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# Offline builds (CI without network, the test suite) skip the inventories.
if os.environ.get("LSSVM_DOCS_OFFLINE", "1") == "1":
    intersphinx_mapping = {}

# --- HTML -------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"lssvm {version}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": [], "comparison": [], "references": []}
html_show_sourcelink = False


# --- docstring clean-up before numpydoc ---------------------------------------
# Fitted attributes end in "_" ("n_basis_"), which reST reads as a link
# target reference when it appears outside backticks (shapes such as
# "(n_basis_, n_features)" in numpydoc type lines, prose), and "|E|" reads
# as a substitution.  Escape those, outside inline literals, doctests and
# literal blocks, so that
# docstrings stay readable as plain text and the site builds with -W.
import re  # noqa: E402

_LITERAL = re.compile(r"(``.+?``|`[^`]+`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z]\w*[A-Za-z0-9])_(?=[^\w]|$)")
_PARAM_HEADER = re.compile(r"^(\s*[\w*][\w*, ]* : )(.*)$")


def _escape_plain(text):
    text = _TRAILING_UNDERSCORE.sub(r"\1\\_", text)
    # "|E|" (a set's size) would be a substitution reference
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _escape_segment(text):
    body = text.strip()
    if (body.startswith("|") and body.endswith("|")) or body.startswith("+-"):  # a table row
        return text
    parts = _LITERAL.split(text)
    return "".join(p if i % 2 else _escape_plain(p) for i, p in enumerate(parts))


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                continue
        if stripped.startswith((">>>", "... ")) or stripped == "...":
            continue
        m = _PARAM_HEADER.match(line)
        lines[i] = m.group(1) + _escape_segment(m.group(2)) if m else _escape_segment(line)
        if stripped.endswith("::"):
            literal_indent = indent


def setup(app):
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, priority=100)
