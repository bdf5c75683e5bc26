"""Links in README.md, CONTRIBUTING.md and CHANGELOG.md lead somewhere: every
local file exists, and every ``file.md#anchor`` names a heading of that file
(GitHub's anchor rule), so each speed or accuracy claim reaches its table."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    out, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.add(github_anchor(line.lstrip("#")))
    return out


def local_links(page):
    for target in LINK.findall((ROOT / page).read_text(encoding="utf-8")):
        if not re.match(r"[a-z]+://|mailto:", target):
            yield target


def test_anchor_rule():
    assert github_anchor(" Pahikkala et al. 2012: training, LOO, selection and 10-fold CV") == (
        "pahikkala-et-al-2012-training-loo-selection-and-10-fold-cv")
    assert github_anchor("Fit and exact LOO against scikit-learn") == "fit-and-exact-loo-against-scikit-learn"


@pytest.mark.parametrize("page", PAGES)
def test_local_links_resolve(page):
    assert (ROOT / page).is_file(), page
    for target in local_links(page):
        file, _, anchor = target.partition("#")
        path = ROOT / page if not file else (ROOT / page).parent / file
        assert path.exists(), f"{page}: {target} -> no such file"
        if anchor:
            assert anchor in anchors(path), f"{page}: {target} -> no heading with that anchor in {file or page}"


def test_readme_points_speed_and_accuracy_claims_at_benchmark_tables():
    links = [t for t in local_links("README.md") if t.startswith("docs/benchmarks.md#")]
    assert len(links) >= 5
