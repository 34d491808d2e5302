"""The explorer's script is written in parts by concern (``render/page/explorer/script/``) and
joined into the one inline script a page carries: no part is left out of the page or of the
installed package, and the parts still make one function.

The page's own behaviour (search, clicks, pan and zoom) is the browser tests' job
(``tests/test_explorer*.py``); these read the files only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.render.page.explorer import page
from hloviz.render.page.explorer.page import SCRIPT_PARTS, script_source

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(page.__file__).resolve().parent / "script"


def test_every_part_on_disk_is_joined_and_every_joined_part_is_on_disk():
    on_disk = sorted(p.name for p in FOLDER.glob("*.js"))
    assert on_disk == sorted(SCRIPT_PARTS)
    assert len(set(SCRIPT_PARTS)) == len(SCRIPT_PARTS)


def test_the_joined_parts_are_one_function_that_the_first_opens_and_the_last_closes():
    parts = [(FOLDER / name).read_text(encoding="utf-8") for name in SCRIPT_PARTS]
    assert script_source() == "".join(parts)
    # the first part opens the closure every part shares, the last one closes and calls it
    assert re.search(r"^\(function \(\) \{$", parts[0], re.MULTILINE)
    assert parts[-1].rstrip().endswith("})();")
    assert sum(p.count("(function () {\n  \"use strict\";") for p in parts) == 1
    for name, text in zip(SCRIPT_PARTS[1:], parts[1:]):
        # each later part opens with the comment line that names its concern
        assert re.match(r"  // ---- \S", text), name
        assert text.endswith("\n"), name


def _ships(path: str, pattern: str) -> bool:
    """Whether a package-data glob takes ``path``: as setuptools' globs, ``*`` stays within one folder."""
    return re.fullmatch(re.escape(pattern).replace(r"\*", "[^/]*"), path) is not None


def test_the_package_ships_every_part():
    """pyproject's package-data patterns for the explorer's package match each part, so an
    installed hloviz has the whole script (the tests run from the source tree, which has it anyway)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["hloviz.render.page.explorer"]
    for name in SCRIPT_PARTS:
        assert any(_ships(f"script/{name}", pat) for pat in patterns), name
    assert any(_ships("explorer.css", pat) for pat in patterns)
