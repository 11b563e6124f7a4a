"""The documentation stands alone: every link in README.md and docs/ leads to a file that ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_points_into_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue                     # web addresses and anchors in the same page
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists() or ROOT not in path.parents:
            broken.append(target)
    assert not broken, f"{page.name}: links to nothing in the repository: {broken}"
    assert "../shared" not in text and "SPEC.md" not in text and "DESIGN.md" not in text


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.name)
def test_notebooks_point_to_nothing_outside(notebook: Path) -> None:
    text = notebook.read_text(encoding="utf-8")
    assert "../shared" not in text and "SPEC" not in text and "DESIGN.md" not in text


INTERNAL = re.compile(r"\.\./shared|SPEC\.md|SPEC section|\bSPEC \d|DESIGN\.md|SCENARIOS\.md"
                      r"|\b00\d (?:section|Fig|Table)")


@pytest.mark.slow  # over 2 s
def test_nothing_shipped_names_an_internal_document() -> None:
    """Docstrings, scenario files and examples cite what a user can read, not the
    project's working documents (which do not ship)."""
    skip = {".git", ".venv", "out", "build", "dist", ".pytest_cache", "__pycache__"}
    found = []
    for path in ROOT.rglob("*"):
        if (skip & set(path.relative_to(ROOT).parts) or not path.is_file()
                or path.suffix not in {".py", ".md", ".yaml", ".ipynb", ".xml", ".toml", ".sh"}
                or path == Path(__file__).resolve()):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if INTERNAL.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not found, "\n".join(found)
