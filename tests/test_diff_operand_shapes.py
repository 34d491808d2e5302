"""``diff`` on a matmul whose output kept its shape while its operands grew (issue 31 item 8).

``samples/widen.py`` is one CNN at two widths (``captures/widen_64``, ``captures/widen_96``):
the logits ``dot`` stays ``f32[4,10]`` but contracts over 96 channels instead of 64. The
expected operand shapes are read here from ``post.hlo`` with regular expressions, the FLOPs
are hand counts (2 · 4 · 10 · channels).
"""

from __future__ import annotations

import re
from pathlib import Path

import hloviz
from hloviz.analysis.diff import ChangeKind, Status, diff_modules

from . import run_cli

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _text(name: str) -> str:
    return (CAPTURES / name / "post.hlo").read_text()


def _dot_operand_shapes(text: str) -> list[str]:
    """The operand shapes of the one ``dot`` of the module, without layouts: the dot sits in a
    fused computation whose parameters declare them in its header."""
    header = re.search(r"^%(\S+) \(([^)]*)\) -> \S+ \{\n(?:(?!^\}).*\n)*?.* = \S+ dot\((%\S+), (%\S+)\)",
                       text, re.MULTILINE)
    assert header is not None, "a fused computation holding a dot"
    params = dict(re.findall(r"([\w.]+): (\w+\[[\d,]*\])", header.group(2)))
    return [params[header.group(3).strip("%,")], params[header.group(4).strip("%,)")]]


def test_a_dot_that_now_contracts_over_more_channels_is_changed_with_its_operand_shapes_and_work():
    before, after = _text("widen_64"), _text("widen_96")
    shapes_before, shapes_after = _dot_operand_shapes(before), _dot_operand_shapes(after)
    assert shapes_before == ["f32[4,64]", "f32[64,10]"] and shapes_after == ["f32[4,96]", "f32[96,10]"]
    # the dot's own output shape is the same on both sides: the case the issue is about
    dots = [re.findall(r"= (\S+?)\{[\d,]*\} dot\(", t) for t in (before, after)]
    assert dots == [["f32[4,10]"], ["f32[4,10]"]]

    d = diff_modules(hloviz.parse(before), hloviz.parse(after))
    dot = next(x for x in d.instructions if x.opcode == "dot")
    assert dot.status is Status.CHANGED
    changes = {c.kind: c for c in dot.changes}
    shapes = changes[ChangeKind.OPERAND_SHAPES]
    assert shapes.before == f"#0 {shapes_before[0]}, #1 {shapes_before[1]}"
    assert shapes.after == f"#0 {shapes_after[0]}, #1 {shapes_after[1]}"
    work = changes[ChangeKind.WORK]
    assert (work.before, work.after) == (f"{2 * 4 * 10 * 64:,} flops", f"{2 * 4 * 10 * 96:,} flops")


def test_the_cli_lists_the_dot_among_the_changed_instructions(capsys):
    code, out, _err = run_cli(["diff", str(CAPTURES / "widen_64"), str(CAPTURES / "widen_96")], capsys)
    assert code == 0
    changed = out.split("Changed instructions", 1)[1].split("Added instructions", 1)[0]
    line = next(x for x in changed.splitlines() if " dot " in x)
    assert "operand shapes: #0 f32[4,64], #1 f32[64,10] → #0 f32[4,96], #1 f32[96,10]" in line
    assert "work: 5,120 flops → 7,680 flops" in line


def test_a_layout_change_of_an_operand_alone_is_no_operand_shape_change():
    # hand-written: the same add, its operand's layout flipped ({1,0} → {0,1}); XLA computes the
    # same values, so the add itself is not changed by its operand shapes
    a = ("HloModule m\nENTRY e {\n  p = f32[3,2]{1,0} parameter(0)\n  c = f32[3,2]{1,0} copy(p)\n"
         "  ROOT n = f32[3,2]{1,0} negate(c)\n}\n")
    b = a.replace("c = f32[3,2]{1,0} copy", "c = f32[3,2]{0,1} copy")
    d = diff_modules(hloviz.parse(a), hloviz.parse(b))
    neg = next(x for x in d.instructions if x.opcode == "negate")
    assert ChangeKind.OPERAND_SHAPES not in neg.kinds and ChangeKind.WORK not in neg.kinds
