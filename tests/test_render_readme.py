"""The README's picture is what the current code makes, by the command the README shows."""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.render.graphviz_run import graphviz_version

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "fused_additions.svg"
#: The Graphviz that made the committed picture. Text widths come from Graphviz and the
#: installed fonts, so byte equality is only promised for the same Graphviz.
MADE_WITH = "2.43.0"


def pictures_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Pictures")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def render_command() -> list[str]:
    for block in re.findall(r"```sh\n(.*?)```", pictures_section(), re.DOTALL):
        for line in block.splitlines():
            if line.startswith("hloviz render "):
                return shlex.split(line)
    raise AssertionError("the Pictures section shows no `hloviz render` command")


def test_readme_shows_the_committed_picture():
    argv = render_command()
    assert argv[argv.index("-o") + 1] == "docs/fused_additions.svg"
    assert "](docs/fused_additions.svg)" in pictures_section()
    root = ET.fromstring(PICTURE.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


@pytest.mark.requires_dot
def test_committed_picture_is_what_the_code_makes(tmp_path, monkeypatch):
    argv = render_command()
    out = tmp_path / "fused_additions.svg"
    argv[argv.index("-o") + 1] = str(out)
    monkeypatch.chdir(ROOT)
    main(argv[1:])
    made = out.read_bytes()
    if made != PICTURE.read_bytes():
        version = graphviz_version()
        if version != MADE_WITH:
            pytest.skip(f"docs/fused_additions.svg was made with Graphviz {MADE_WITH}; this machine has {version}")
        pytest.fail(f"docs/fused_additions.svg is out of date; regenerate it with: {' '.join(render_command())}")
