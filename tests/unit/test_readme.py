"""The README is the front door a newcomer reads in five minutes: what it is and a picture of the app at the top, the
two commands, a tour with a picture per step; everything else is one link away, in docs/ (listed by docs/index.md).
Every picture and link it shows exists, and so does every page the docs link to."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def targets(page: Path) -> list[tuple[str, Path]]:
    """Every relative link and picture of a Markdown page: (as written, the file it names)."""
    out = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        out.append((target, (page.parent / target.split("#", 1)[0]).resolve()))
    return out


def test_the_readme_is_short_and_shows_the_app_first() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    first_picture = next(n for n, line in enumerate(lines, 1) if line.startswith("!["))
    first_section = next(n for n, line in enumerate(lines, 1) if line.startswith("## "))
    assert first_picture < first_section  # the app, before anything else is explained
    assert lines[first_section - 1] == "## Two commands"
    body = "\n".join(lines)
    assert "make run" in body and "make test" in body
    tour = body.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\*\*\d\. (\w[\w ]*)\.\*\*", tour, re.M)
    assert steps == ["Ask", "Teach", "Mark gold", "Evaluate", "Compare"]
    assert len(re.findall(r"^!\[", tour, re.M)) == len(steps)  # one picture each


def test_every_picture_and_link_of_the_readme_and_the_docs_exists() -> None:
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    missing = [f"{page.name}: {target}" for page in pages for target, path in targets(page) if not path.exists()]
    assert missing == []
    pictures = [path for target, path in targets(README) if path.suffix == ".png"]
    assert pictures and all(path.parent == ROOT / "docs" / "img" for path in pictures)
    assert all(path.stat().st_size < 120_000 for path in pictures)  # small PNGs, made by scripts/screenshots.py


def test_the_docs_index_lists_every_page() -> None:
    listed = {path for _, path in targets(ROOT / "docs" / "index.md")}
    pages = {path.resolve() for path in (ROOT / "docs").glob("*.md")} - {(ROOT / "docs" / "index.md").resolve()}
    assert sorted(str(p) for p in pages - listed) == []
    assert (ROOT / "docs" / "index.md").resolve() in {path for _, path in targets(README)}


def test_the_readmes_headline_numbers_are_those_of_the_results_page() -> None:
    table = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    triples = {t for line in table for t in re.findall(r"\d+\.\d / \d+\.\d / \d+\.\d", line)}
    results = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert len(triples) >= 30
    assert sorted(t for t in triples if t not in results) == []
