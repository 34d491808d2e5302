"""TensorFlow hands a function's results out through ``XLA_Retvals`` reshapes and copies. Where a
``tf.cond`` applying Adam returns the six weights and their moments (an unseen step that
accumulates gradients over micro-batches, held-out round 14), the unscoped ``cond`` left those
results at the top, blocked at waists into four boxes titled ``forward · block of 12``: boxes
of no work, under a pass they do not run in. A closed block of results read from one box is
drawn in that box (its row says ``XLA_Retvals: handing it out``), and no block is titled by
the pass of the function's argument and result handling.

The oracle is the module's text, read with regular expressions: which results read which
``cond`` output (``%XLA_Retvals.N = … reshape(… %cond.M)``, ``%cond.M = … get-tuple-element(…
%cond.29)``). Which box holds each instruction is the picture's own record. The fixture is the
pre-optimization module of ``benchmarks/heldout/round14.py:accumulate_step`` (TensorFlow 2.21).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "accumulate_step.hlo"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', re.MULTILINE)


def test_the_results_a_cond_hands_out_are_drawn_in_its_box():
    text = FIXTURE.read_text()
    [cond] = re.findall(r"^\s*%(cond\.\d+) = \(.*\bconditional\(", text, re.MULTILINE)
    outputs = set(re.findall(rf"^\s*%(cond\.\d+) = \S+ get-tuple-element\(.* %{re.escape(cond)}\)", text, re.MULTILINE))
    handed = {r for r, src in re.findall(r"^\s*%(XLA_Retvals\.\d+) = \S+ reshape\(\S+ %(cond\.\d+)\)", text,
                                         re.MULTILINE) if src in outputs}
    assert len(handed) >= 12  # the fixture is the step it says: six weights and their moments
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    assert sum(box[r] == box[cond] for r in handed) >= len(handed) * 3 // 4, [box[r] for r in sorted(handed)]
    # … and the box keeps its own title (Adam's update in the cond: the optimizer), not the
    # title of a block of results folded into it
    assert view.scene.nodes[box[cond]].rows[0].text == "optimizer"


def test_no_block_of_argument_and_result_handling_is_titled_by_a_pass():
    text = FIXTURE.read_text()
    op_of = dict(_OP_NAME.findall(text))
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    held: dict[str, list[str]] = {}
    for name, key in view.node_of.items():
        held.setdefault(key, []).append(name)
    plumbing = [key for key, names in held.items()
                if all(op_of.get(n, "XLA_Args") in ("XLA_Args", "XLA_Retvals") for n in names)]
    assert plumbing  # the fixture has such boxes
    titles = {view.scene.nodes[key].rows[0].text for key in plumbing if key in view.scene.nodes}
    assert not [t for t in titles if t.startswith(("forward ·", "backward ·", "optimizer ·"))], titles
