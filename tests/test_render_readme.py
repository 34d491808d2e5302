"""The README's picture is what the current code makes, by the command the README shows; the
docs' layer picture is drawn by the ``hloviz`` directive while the site builds
(tests/test_docs_site.py), so only its command is checked here.

"What it makes" is compared by meaning (:mod:`tests.svg_meaning`: boxes, their text and colours,
frames and what they hold, arrows), not by bytes: Graphviz measures text with the machine's fonts,
so the same code and Graphviz draw a point wider elsewhere, or cut a long column in other places.
"""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.render.layout.runs.graphviz_run import graphviz_version

from .docs_pages import page, section
from .svg_meaning import meaning, same_size

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "fused_additions.svg"


def assert_same_picture(committed: Path, made: Path, command: list[str]) -> None:
    """``made`` says what ``committed`` says (and is about as large), or the test fails with the
    differences and the command that regenerates the committed picture."""
    want, got = meaning(committed.read_bytes()), meaning(made.read_bytes())
    differences = want.differences(got)
    if not same_size(want, got):
        differences.append(f"size: {want.size} → {got.size}")
    assert not differences, (f"{committed.relative_to(ROOT)} is out of date (Graphviz {graphviz_version()}); "
                             f"regenerate it with: {' '.join(command)}\n" + "\n".join(differences[:40]))


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
    assert_same_picture(PICTURE, out, render_command())


def layer_section() -> str:
    return section(page("pictures"), "## The layer picture")


def layer_command() -> list[str]:
    for block in re.findall(r"```sh\n(.*?)```", layer_section(), re.DOTALL):
        for line in block.splitlines():
            if line.startswith("hloviz render "):
                return shlex.split(line)
    raise AssertionError("the layer picture section shows no `hloviz render` command")


#: The layer picture as the docs' command draws it, committed as the wrapped picture that
#: tests/test_svg_meaning.py checks the picture comparison on (cut arrows, frames, many layers).
LAYERS_PICTURE = ROOT / "tests" / "data" / "pictures" / "mobilenet_v2_block_5.svg"


def test_the_layer_picture_is_drawn_by_the_directive_with_the_commands_options():
    argv = layer_command()
    assert "--scope" in argv and "--stage" in argv
    directive = re.search(r"```\{hloviz\} \.\./(\S+)\n(.*?)```", layer_section(), re.DOTALL)
    assert directive is not None, "the layer picture section draws its picture with the hloviz directive"
    options = dict(re.findall(r"^:([\w-]+): (.*)$", directive.group(2), re.MULTILINE))
    assert directive.group(1) == argv[2]
    assert options["stage"] == argv[argv.index("--stage") + 1]
    assert options["scope"] == argv[argv.index("--scope") + 1]


@pytest.mark.requires_dot
def test_the_committed_layer_picture_is_what_the_docs_command_makes(tmp_path, monkeypatch):
    argv = layer_command()
    out = tmp_path / "layers.svg"
    argv[argv.index("-o") + 1] = str(out)
    monkeypatch.chdir(ROOT)
    main(argv[1:])
    command = [*argv[:argv.index("-o") + 1], str(LAYERS_PICTURE.relative_to(ROOT)), *argv[argv.index("-o") + 2:]]
    assert_same_picture(LAYERS_PICTURE, out, command)
