"""One version, written in ``pyproject.toml`` and read back by ``lssvm.__version__``."""

import importlib.metadata
import pathlib
import tomllib

import lssvm

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_version_is_the_installed_distributions():
    assert lssvm.__version__ == importlib.metadata.version("lssvm")


def test_version_is_the_one_in_pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert lssvm.__version__ == tomllib.load(f)["project"]["version"]


def test_version_is_written_once():
    # no second literal copy of the version anywhere in the package
    hits = [p for p in (ROOT / "src" / "lssvm").rglob("*.py")
            if f'"{lssvm.__version__}"' in p.read_text(encoding="utf-8")]
    assert hits == []


def test_source_tree_without_install_reads_pyproject(monkeypatch):
    # a checkout run with PYTHONPATH=src and no installed distribution
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    # the checkout's package file, wherever the imported lssvm is installed from
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert lssvm._version(ROOT / "src" / "lssvm" / "__init__.py") == tomllib.load(f)["project"]["version"]


def test_no_distribution_and_no_pyproject_says_unknown(monkeypatch, tmp_path):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert lssvm._version(tmp_path / "site" / "lssvm" / "__init__.py") == "0+unknown"
