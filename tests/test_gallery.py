"""The README's gallery (issue 33, goal 5) is what ``python -m hloviz.docs.gallery`` (``make
gallery``) draws today, and the README shows every picture of it.

Compared by meaning (:mod:`tests.svg_meaning`: boxes, their text and colours, frames, arrows), not
by bytes: Graphviz measures text with the machine's fonts. The model names and the block each
second picture opens are checked against the HLO (op_names by regex), not against the renderer.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.docs.gallery import GALLERY, draw

from .test_render_readme import assert_same_picture

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "gallery"
README = ROOT / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Gallery")
    end = min(i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1), len(text)) if i > 0)
    return text[start:end]


def _pre_hlo(capture: str) -> str:
    folder = ROOT / "samples" / "captures" / capture
    plain = folder / "pre.hlo"
    return plain.read_text(encoding="utf-8") if plain.exists() else \
        gzip.decompress((folder / "pre.hlo.gz").read_bytes()).decode("utf-8")


def test_the_readme_gallery_shows_every_picture_and_the_command():
    section = _section()
    assert len(section.strip().splitlines()) <= 15, "the Gallery section is at most 15 lines"
    assert "python -m hloviz.docs.gallery" in section or "make gallery" in section
    for e in GALLERY:
        for name in (f"{e.name}.svg", f"{e.name}-block.svg"):
            assert f"](docs/gallery/{name})" in section, name
            assert (FOLDER / name).is_file(), name


def test_each_block_picture_draws_the_block_its_model_names():
    """A ``--scope`` entry names a layer the model's op_names have (regex over the HLO text), and
    its picture shows that layer's ops by their op_names."""
    for e in GALLERY:
        if e.scope is None:
            continue
        # the layers the scope picks out: named SCOPE (Keras adds _1) or SCOPE_* (conv3_block1_0_bn)
        ops = set(re.findall(rf'op_name="([^"]*/{re.escape(e.scope)}(?:_\d+|_[^/"]*)?/[^"]*)"', _pre_hlo(e.capture)))
        ops = {op for op in ops if not re.search(rf"/{re.escape(e.scope)}\d", op)}  # not conv3_block10
        assert ops, (e.capture, e.scope)
        svg = (FOLDER / f"{e.name}-block.svg").read_text(encoding="utf-8")
        assert sum(op.replace("&", "&amp;") in svg for op in ops) >= len(ops) // 2, (e.name, sorted(ops)[:5])


@pytest.mark.requires_dot
@pytest.mark.slow
def test_the_committed_gallery_is_what_the_command_draws(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    made = draw(tmp_path)
    assert [p.name for p in made] == [f"{e.name}{s}.svg" for e in GALLERY for s in ("", "-block")]
    for path in made:
        assert_same_picture(FOLDER / path.name, path, ["make", "gallery"])
