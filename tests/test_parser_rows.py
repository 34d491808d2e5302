"""The body scan (:meth:`InstructionReader.rows`) reads a usual body to its end: every
instruction line and the closing ``}``, so the line reader (and the split of the text into
lines it needs) never sees a module made only of usual computations."""

from __future__ import annotations

import re

import hloviz
from hloviz.parser.instructions import InstructionReader

TEXT = """HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y), metadata={op_name="jit(f)/add"}
}

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="jit(f)/layer_1/neg" stack_frame_id=2}
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused
}
"""


def test_every_usual_body_is_read_to_its_closing_brace_by_the_scan(monkeypatch):
    closed: list[bool] = []
    rows = InstructionReader.rows

    def counting(self, computation, i, has_root):
        result = rows(self, computation, i, has_root)
        closed.append(result[3])
        return result

    monkeypatch.setattr(InstructionReader, "rows", counting)
    module = hloviz.parse(TEXT)
    bodies = len(re.findall(r"^\}$", TEXT, re.MULTILINE))  # the oracle: the text's closing lines
    assert bodies == 3
    assert closed == [True] * bodies
    assert [c.name for c in module.computations] == ["add", "fused", "main"]
    assert [len(c.instructions) for c in module.computations] == [3, 2, 2]
    assert module.entry.root.name == "f"
