"""Work XLA writes without an op name between two gradient ops is drawn as backward work
(``samples/captures/transformer_train-*``: a hand-written transformer's training step, TF 2.17
and 2.21, XLA:CPU).

XLA:CPU splits a large reduction in two: an unnamed ``reduce-window`` fusion, then the named
reduction (``gradient_tape/mul_10/Sum``). Between a gradient's multiply and its ``Sum``, outside
every layer, that fusion was filed in the module's unnamed scope as forward work: the optimized
column's ``forward`` box held ten of the step's gradient reductions (62 kernels; 52 are forward).
A weight's layout ``copy``, read by its forward ``MatMul`` and by that MatMul's gradient, is
forward work, as before (it runs before both).

Oracles: the HLO text by regular expression (the entry's unnamed instructions, what they read,
who reads them, and those readers' op names); boxes from the JSON picture.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.analysis.scopes import build_scope_tree
from hloviz.cli import main
from hloviz.parser import parse

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_LINE = re.compile(r"^\s*(?:ROOT )?%([\w.-]+) = [^\n]*$", re.MULTILINE)
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALL = re.compile(r"= [^(]*?\b[\w-]+\((.*?)\)(?:, |$)")
_OPERAND = re.compile(r"%([\w.-]+)")


def _entry(text: str) -> dict[str, tuple[list[str], str]]:
    """The entry computation's instructions: name → (operand names, op name or "")."""
    body = text[text.index("\nENTRY"):].split("\n}\n", 1)[0]
    out: dict[str, tuple[list[str], str]] = {}
    for m in _LINE.finditer(body):
        line = m.group(0)
        call = _CALL.search(line.split(", metadata=")[0])
        name = _OP_NAME.search(line)
        out[m.group(1)] = (_OPERAND.findall(call.group(1)) if call else [], name.group(1) if name else "")
    return out


def _between_gradients(entry: dict[str, tuple[list[str], str]], opcode: str) -> tuple[list[str], list[str]]:
    """(unnamed ``opcode`` instructions every reader of which is a gradient op and some operand
    of which is one; unnamed ones some reader of which is forward work)."""
    readers: dict[str, list[str]] = {n: [] for n in entry}
    for n, (ops, _name) in entry.items():
        for op in ops:
            readers.setdefault(op, []).append(n)
    gradient = [n for n, (ops, name) in entry.items() if not name and readers[n]
                and all(entry[r][1].startswith("gradient_tape/") for r in readers[n])
                and any(entry.get(o, ([], ""))[1].startswith("gradient_tape/") for o in ops)]
    forward_read = [n for n, (_ops, name) in entry.items() if not name and n.startswith(opcode)
                    and any(entry[r][1] and not entry[r][1].startswith(("gradient_tape/", "Assign"))
                            for r in readers[n])]
    return gradient, forward_read


@pytest.mark.parametrize("capture", ["transformer_train-tf2.17", "transformer_train-tf2.21"])
def test_unnamed_work_between_gradient_ops_is_backward_and_a_weights_copy_forward(capture):
    text = (CAPTURES / capture / "post.hlo").read_text(encoding="utf-8")
    gradient, copies = _between_gradients(_entry(text), "copy")
    assert len(gradient) >= 8 and len(copies) >= 8  # the situation
    tree = build_scope_tree(parse(text), stage="post", ordered=False)
    by_name = {i.name: i for i in tree.module.instructions()}
    assert {n: tree.phase_of(by_name[n]) for n in gradient} == dict.fromkeys(gradient, "backward")
    assert {n: tree.phase_of(by_name[n]) for n in copies} == dict.fromkeys(copies, "forward")


def test_the_optimized_forward_box_holds_no_gradient_reduction(tmp_path):
    capture = CAPTURES / "transformer_train-tf2.21"
    gradient, _copies = _between_gradients(_entry((capture / "post.hlo").read_text(encoding="utf-8")), "copy")
    out = tmp_path / "post.json"
    try:
        code = main(["render", str(capture), "--stage", "post", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    boxes = {n["rows"][0]: set(n["instructions"]) for n in json.loads(out.read_text())["nodes"] if n["instructions"]}
    assert "forward" in boxes and "backward" in boxes, sorted(boxes)
    assert not set(gradient) & boxes["forward"]
    assert set(gradient) <= boxes["backward"]
