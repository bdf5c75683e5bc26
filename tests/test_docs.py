"""The documentation runs as written: README code blocks, the site's code
blocks, the gallery examples, and the Sphinx build with warnings as errors.

A README block preceded by an HTML comment ``<!-- skip: REASON -->`` (for
instance ``<!-- skip: needs data -->``: data beyond the bundled sets) is not
run; every other ```` ```python ```` block must run on its own, in a fresh
namespace.
"""

import os
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SITE = ROOT / "docs" / "site"
EXAMPLES = sorted((ROOT / "examples").rglob("plot_*.py"))

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
_SKIP = re.compile(r"<!--\s*skip:[^>]*-->\s*$")


def readme_blocks(text):
    """``(line, code, skipped)`` for each ```python block of a Markdown text."""
    blocks = []
    for m in _FENCE.finditer(text):
        indent = len(m.group("indent"))
        code = "\n".join(line[indent:] for line in m.group("body").splitlines())
        before = text[: m.start()].rstrip("\n").splitlines()
        skipped = bool(before) and bool(_SKIP.search(before[-1]))
        blocks.append((text.count("\n", 0, m.start()) + 1, code, skipped))
    return blocks


def rst_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives of a reST text."""
    blocks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)\.\. code-block:: python\s*$", line)
        if not m:
            continue
        body, j = [], i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith(m.group(1) + "   ")):
            body.append(lines[j])
            j += 1
        indent = min(len(b) - len(b.lstrip()) for b in body if b.strip())
        blocks.append("\n".join(b[indent:] for b in body))
    return blocks


@pytest.fixture
def agg_backend(monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _run(code, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # third-party deprecations are not the docs' concern
        exec(compile(code, name, "exec"), {"__name__": "__main__"})


def test_readme_block_extraction_sees_indented_blocks_and_skip_marks():
    text = (
        "intro\n```python\nx = 1\n```\n- item:\n\n  ```python\n  y = 2\n  ```\n"
        "<!-- skip: needs data -->\n```python\nz = open('big.parquet')\n```\n```bash\nls\n```\n"
    )
    blocks = readme_blocks(text)
    assert [(code, skipped) for _, code, skipped in blocks] == [
        ("x = 1", False), ("y = 2", False), ("z = open('big.parquet')", True)]


README_BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_python_blocks():
    assert sum(not skipped for _, _, skipped in README_BLOCKS) >= 5


@pytest.mark.parametrize("line, code, skipped", README_BLOCKS, ids=[f"line{b[0]}" for b in README_BLOCKS])
def test_readme_block_runs_on_its_own(line, code, skipped, agg_backend):
    if skipped:
        pytest.skip("marked in README.md as needing data beyond the package")
    if "dask" in code:
        pytest.importorskip("dask.dataframe")
    _run(code, f"README.md:{line}")


SITE_PAGES = sorted(p for p in SITE.rglob("*.rst") if "_build" not in p.parts and "api" not in p.parts
                    and "auto_examples" not in p.parts and "_templates" not in p.parts)


@pytest.mark.parametrize("page", SITE_PAGES, ids=[str(p.relative_to(SITE)) for p in SITE_PAGES])
def test_site_code_blocks_run(page, agg_backend):
    """Each page's Python blocks, run in order in one namespace (a page's
    blocks may build on each other)."""
    blocks = rst_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no Python code blocks")
    if any("dask" in b for b in blocks):
        pytest.importorskip("dask.dataframe")
    _run("\n\n".join(blocks), str(page.relative_to(ROOT)))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_gallery_example_runs(script, agg_backend, capsys):
    if "dask" in script.read_text(encoding="utf-8"):
        pytest.importorskip("dask.dataframe")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip(), "an example should print what it shows"


def test_gallery_has_an_example_per_estimator():
    import lssvm

    estimators = [n for n in lssvm.__all__ if n.startswith(("Sparse", "FixedSize", "Nystrom"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in EXAMPLES)
    missing = [n for n in estimators if f"import {n}" not in text and f", {n}" not in text]
    assert not missing, f"no gallery example uses {missing}"
    assert any("dask" in p.read_text(encoding="utf-8") for p in EXAMPLES)


def test_site_builds_without_warnings(tmp_path):
    """``sphinx-build -W --keep-going`` with the gallery pages written but not
    executed (the examples run in ``test_gallery_example_runs``)."""
    for mod in ("sphinx", "numpydoc", "pydata_sphinx_theme", "sphinx_gallery", "myst_parser"):
        pytest.importorskip(mod)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), LSSVM_DOCS_OFFLINE="1")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
           "-D", "plot_gallery=0", "-d", str(tmp_path / "doctrees"), str(SITE), str(tmp_path / "html")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    html = tmp_path / "html"
    for page in ("index.html", "api/index.html", "api/generated/lssvm.SparseLSSVR.html",
                 "auto_examples/index.html", "auto_examples/sparse/plot_sparse_lssvr.html", "comparison.html", "references.html", "mathematics.html"):
        assert (html / page).is_file(), page
    # the estimators' constructor parameters, not a generic (*args, **kwargs)
    head = (html / "api/generated/lssvm.SparseLSSVR.html").read_text().split("Parameters")[0]
    assert "n_basis" in head and "kwargs" not in head
    # numpydoc drops sections it does not know: the search parameters must be there
    assert "max_evaluations" in (html / "api/generated/lssvm.SparseLSSVRCV.html").read_text(encoding="utf-8")


def _public_docstrings():
    import importlib
    import inspect

    for modname in ("lssvm", "lssvm.selection", "lssvm.cv", "lssvm.basis", "lssvm.kernels",
                    "lssvm.solvers", "lssvm.datasets", "lssvm.io", "lssvm.backends"):
        mod = importlib.import_module(modname)
        yield modname, mod.__doc__ or ""
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{modname}.{name}", obj.__doc__ or ""
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and callable(member):
                        yield f"{modname}.{name}.{attr}", member.__doc__ or ""


def test_public_docstrings_cite_papers_by_author_and_year():
    """Users see "Cawley & Talbot (2004)", not the project's "paper 000", and
    no reference to an engineering file that is not shipped."""
    bad = re.compile(r"\bpapers? 00\d|\bmath\.md\b")
    offenders = [name for name, doc in _public_docstrings() if bad.search(doc)]
    assert not offenders, f"docstrings citing 'paper 00N' or math.md: {offenders}"


@pytest.mark.slow
def test_site_builds_with_gallery_executed(tmp_path):
    """The full build, as for publishing: every example runs inside Sphinx
    and its figures land in the gallery."""
    for mod in ("sphinx", "numpydoc", "pydata_sphinx_theme", "sphinx_gallery", "myst_parser"):
        pytest.importorskip(mod)
    pytest.importorskip("dask.dataframe")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), LSSVM_DOCS_OFFLINE="1", MPLBACKEND="Agg")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
           "-d", str(tmp_path / "doctrees"), str(SITE), str(tmp_path / "html")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert (tmp_path / "html/_images/sphx_glr_plot_sparse_lssvr_001.png").is_file()
