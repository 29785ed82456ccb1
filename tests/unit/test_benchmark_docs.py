"""docs/benchmarks.md is a results page: at most 400 lines, every link and image in it resolves,
and every link into it or into docs/benchmarks-history.md (where the dated runs moved) names a
heading that exists (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = ("benchmarks.md", "benchmarks-history.md")
SOURCES = sorted(DOCS.glob("*.md")) + [REPO / "README.md", REPO / "CONTRIBUTING.md"]
LINK = re.compile(r"\]\(([^)\s]*)\)")


def anchors(page: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def links() -> list[tuple[str, str, str]]:
    """(source doc, target file, anchor) of each link into the two benchmark pages."""
    found = []
    for source in SOURCES:
        for target in LINK.findall(source.read_text(encoding="utf-8")):
            path, _, anchor = target.partition("#")
            name = Path(path).name if path else (source.name if source.parent == DOCS else "")
            if name in PAGES and anchor:
                found.append((source.name, name, anchor))
    return found


LINKS = links()


def test_the_results_page_is_short() -> None:
    assert len((DOCS / "benchmarks.md").read_text(encoding="utf-8").splitlines()) <= 400


def test_links_into_the_benchmark_pages_are_found() -> None:
    assert any(page == "benchmarks-history.md" for _, page, _ in LINKS)


@pytest.mark.parametrize(("source", "page", "anchor"), LINKS, ids=[f"{s}->{p}#{a}" for s, p, a in LINKS])
def test_every_anchor_into_the_benchmark_pages_resolves(source: str, page: str, anchor: str) -> None:
    assert anchor in anchors(DOCS / page), f"{source} links to {page}#{anchor}, which has no such heading"


@pytest.mark.parametrize("page", PAGES)
def test_every_file_and_image_the_pages_name_exists(page: str) -> None:
    for target in LINK.findall((DOCS / page).read_text(encoding="utf-8")):
        path = target.partition("#")[0]
        if path and not re.match(r"[a-z]+://", path):
            assert (DOCS / path).exists(), f"{page} names {path}, which does not exist"
