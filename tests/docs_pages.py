"""The documentation's text, for the tests that check what it shows against what hloviz prints.

The README keeps the first screen (install, the first three commands, one picture); everything
else is a page of the Sphinx site under docs/ (``docs/NAME.md``), and the measurement narratives
are in ``benchmarks/results/*.md``. A test reads the page that holds the text it checks.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def page(name: str) -> str:
    """The text of ``docs/NAME.md``."""
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """From ``heading`` (a whole heading line's start, e.g. ``"## Real models"``) to the next heading
    of the same or a higher level, or the end."""
    start = text.index(heading)
    level = heading.split(" ", 1)[0]
    ends = [i for i in (text.find("\n" + "#" * n + " ", start + 1) for n in range(1, len(level) + 1)) if i > 0]
    return text[start:min(ends) if ends else None]


def site_pages() -> dict[str, str]:
    """Every page of the site (``docs/**/*.md`` outside the example sites and the build), by path."""
    pages = {}
    for path in sorted(DOCS.rglob("*.md")):
        parts = path.relative_to(DOCS).parts
        if parts[0] in ("example", "example-mkdocs", "_build"):
            continue
        pages[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return pages


def measurement_pages() -> dict[str, str]:
    """The measurement narratives, ``benchmarks/results/*.md``, by path."""
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
            for p in sorted((ROOT / "benchmarks" / "results").glob("*.md"))}


def everything() -> dict[str, str]:
    """The README, every page of the site and every measurement narrative, by path."""
    return {"README.md": readme(), **site_pages(), **measurement_pages()}
