"""A training step's overview draws what only carries a parameter's value on (the loss's
``reshape`` of the targets) beside the box before its user, as it draws the parameter, not on a
row of its own (issue 33: jax_scopes' single file was 2,533 pt tall, 33 over the goal).

Oracles outside the renderer: which instructions only carry a parameter's value, from regexes
over the capture's HLO text (an entry instruction ``reshape``/``broadcast``/``bitcast``/
``convert``/``copy``/``transpose`` whose operands are all parameters); where they are drawn, from
the SVG's own geometry (each node's outline, found by the instruction name its tooltip starts
with): another box shares its row.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = pytest.mark.requires_dot

_INST = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+([\w\-]+)\((.*?)\)")
_CARRIERS = {"reshape", "broadcast", "bitcast", "convert", "copy", "transpose"}
_NODE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"=\s]+) =.*?points="([^"]+)"', re.DOTALL)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _entry(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    return lines[start + 1:end]


def _carriers(lines: list[str]) -> set[str]:
    opcode = {m.group(1): m.group(2) for m in map(_INST.match, lines) if m}
    out = set()
    for m in map(_INST.match, lines):
        if m and m.group(2) in _CARRIERS:
            operands = [o.strip().lstrip("%").split(" ")[-1].lstrip("%") for o in m.group(3).split(",") if o.strip()]
            if operands and all(opcode.get(o) == "parameter" for o in operands):
                out.add(m.group(1))
    return out


@pytest.mark.parametrize("capture", ["jax_scopes"])
def test_a_parameters_reshape_shares_a_row(capture, tmp_path):
    text = gzip.decompress((CAPTURES / capture / "pre.hlo.gz").read_bytes()).decode("utf-8")
    carriers = _carriers(_entry(text))
    assert carriers, "the step reshapes a parameter"
    out = tmp_path / "x.svg"
    try:
        code = main(["render", str(CAPTURES / capture), "--stage", "pre", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    boxes = {}
    for name, points in _NODE.findall(out.read_text(encoding="utf-8")):
        ys = [float(v) for v in _NUM.findall(points)][1::2]
        boxes[name] = (min(ys), max(ys))
    drawn = carriers & set(boxes)
    assert drawn, "a carrier drawn as a box of its own"
    for name in drawn:
        top, bottom = boxes[name]
        assert any(other != name and t < bottom and b > top for other, (t, b) in boxes.items()), name
