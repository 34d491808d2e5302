"""``hloviz render CAPTURE --stage both -o x.svg`` draws the overview (issue 33): the model's
blocks in program order on one page, repeats folded ``×N``; ``--budget 300`` still draws the
detailed picture.

Oracles outside the renderer: block names and how many copies a repeat has from regexes over the
``op_name`` metadata of the HLO text, program order from the entry computation's instruction
order in that text, sizes from the SVG's ``viewBox`` and its boxes' outlines (regexes here)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_VIEWBOX = re.compile(r'viewBox="0\.00 0\.00 ([\d.]+) ([\d.]+)"')
_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')
_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>', re.DOTALL)
_OUTLINE = re.compile(r'<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"')
_BOLD = re.compile(r'<text [^>]*?y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>')

pytestmark = pytest.mark.requires_dot


def _hlo(capture: str, stage: str = "pre") -> str:
    return gzip.decompress((CAPTURES / capture / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")


def _entry(text: str) -> str:
    """The entry computation's body (from ``ENTRY`` to its closing brace)."""
    start = text.index("\nENTRY ")
    return text[start:text.index("\n}", start)]


def _render(capture: str, out: Path, *args: str) -> str:
    assert main(["render", str(CAPTURES / capture), "--stage", "both", *args, "-o", str(out)]) in (0, None)
    return out.read_text(encoding="utf-8")


def _boxes_per_part(svg: str) -> list[int]:
    """How many outlined boxes each laid-out part (column, or part of a wrapped column) holds."""
    starts = [0] + [m.start() for m in _PART.finditer(svg)]
    counts = [0] * len(starts)
    for node in _NODE.finditer(svg):
        if _OUTLINE.search(node.group(1)) is None:
            continue  # a "part k of n" title: text only
        counts[max(i for i, s in enumerate(starts) if s <= node.start())] += 1
    return [c for c in counts if c]


@pytest.fixture(scope="module")
def inception(tmp_path_factory) -> str:
    return _render("inception_v3", tmp_path_factory.mktemp("overview") / "x.svg")


def test_the_overview_of_inception_v3_is_one_page_of_at_most_40_boxes_a_column(inception):
    """Longer side ≤ 2,500 pt, ≤ 40 boxes in each laid-out column (the SVG's own geometry)."""
    box = _VIEWBOX.search(inception)
    assert box is not None
    width, height = float(box.group(1)), float(box.group(2))
    assert max(width, height) <= 2_500, (width, height)  # the default was 19,080 × 19,091 pt
    per_part = _boxes_per_part(inception)
    assert per_part and max(per_part) <= 40, per_part


def test_every_label_of_the_overview_is_at_least_10_pt(inception):
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', inception)]
    assert sizes and min(sizes) >= 10, sorted(set(sizes))  # the detailed picture writes kinds rows at 9 pt


def test_every_inception_block_is_in_the_overview_in_program_order(inception):
    """``mixed0`` … ``mixed10`` (the concatenations that end InceptionV3's blocks, named in the
    op_names) each appear in the before column, alone or inside a repeat's range
    (``mixed0 ×3 (mixed0 … mixed2)``), top to bottom in the order the entry computation runs
    them."""
    entry = _entry(_hlo("inception_v3"))
    first: dict[int, int] = {}
    for m in re.finditer(r'op_name="[^"/]*/mixed(\d+)(?:_\d+)?/', entry):
        first.setdefault(int(m.group(1)), m.start())
    assert sorted(first) == list(range(11)), "InceptionV3 has blocks mixed0 … mixed10"
    program_order = sorted(first, key=first.__getitem__)
    before = inception[:inception.index(">after optimization<")]
    seen: dict[int, float] = {}
    for m in _BOLD.finditer(before):
        y, title = float(m.group(1)), m.group(2)
        span = re.search(r"\(mixed(\d+) … mixed(\d+)\)", title)
        one = re.match(r"mixed(\d+)\b", title)
        blocks = range(int(span.group(1)), int(span.group(2)) + 1) if span else [int(one.group(1))] if one else []
        for b in blocks:
            seen.setdefault(b, y)
    assert sorted(seen) == list(range(11)), f"blocks in the before column: {sorted(seen)}"
    drawn_order = sorted(seen, key=lambda b: (seen[b], b))
    assert drawn_order == program_order


def test_densenet_dense_blocks_fold_into_repeats_of_as_many_layers_as_op_names_say(tmp_path):
    """DenseNet121's dense blocks: ``conv2_block1`` … ``conv2_block6`` and so on (counted here by
    a regex over the op_names) are drawn as one box each, ``×6``, ``×12``, ``×24``, ``×16``."""
    text = _hlo("densenet121")
    blocks: dict[str, set[int]] = {}
    for stage, block in re.findall(r'op_name="[^"/]*/conv(\d)_block(\d+)_', text):
        blocks.setdefault(stage, set()).add(int(block))
    assert {s: len(b) for s, b in blocks.items()} == {"2": 6, "3": 12, "4": 24, "5": 16}
    svg = _render("densenet121", tmp_path / "x.svg")
    for stage, found in blocks.items():
        assert re.search(rf"conv{stage}_block1_[^<]*×{len(found)} \(conv{stage}_block1_[^<]* … "
                         rf"conv{stage}_block{len(found)}_", svg), f"conv{stage}: ×{len(found)}"


def test_budget_300_still_draws_the_detailed_picture_and_a_part_stays_detailed(tmp_path):
    """``--budget 300`` is today's detailed picture; a picture of part of the module
    (``--computation``, here the entry computation named in the HLO text) keeps 300 nodes."""
    detailed = _render("inception_v3", tmp_path / "d.svg", "--budget", "300")
    assert max(_boxes_per_part(detailed)) > 200
    entry = re.search(r"^ENTRY %?([^\s(]+)", _hlo("inception_v3"), re.MULTILINE)
    assert entry is not None
    out = tmp_path / "c.svg"
    assert main(["render", str(CAPTURES / "inception_v3"), "--stage", "pre", "--computation", entry.group(1),
                 "-o", str(out)]) in (0, None)
    assert sum(_boxes_per_part(out.read_text(encoding="utf-8"))) > 200
