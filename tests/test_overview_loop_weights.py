"""Weights a loop carries are drawn in the loop's box, not as boxes of their own. A Keras
regressor trained with its loss computed per example by ``tf.map_fn`` (held-out round 15)
optimizes into two loops — the examples' forward pass and its gradient, which holds the
update — and a tuple starting the first; the six weights, read by those alone, stood as boxes
in a row above the loops.

The oracle is the module's text, read with regular expressions: the entry's parameters and the
instructions reading each (the ``tuple`` starting a ``while`` loop, RMSprop's update by its op
name). Which box holds
each instruction is the picture's own record. The fixture is the optimized module of
``benchmarks/heldout/round15.py:per_example_step`` (TensorFlow 2.21, CPU).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "per_example_step_post.hlo"
_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = (.*)$", re.MULTILINE)
_OPCODE = re.compile(r"\s([a-z][a-z\-]*)\(")


def test_the_weights_loops_carry_are_drawn_in_the_loops():
    text = FIXTURE.read_text()
    entry = text[text.index("\nENTRY "):]
    lines = []
    for name, rest in _LINE.findall(entry):
        found = _OPCODE.search(" " + rest)
        if found is not None:  # the opcode: the first word before "(" (a type has none); then its operands
            lines.append((name, found.group(1), re.findall(r"%([\w.\-]+)", rest[found.end() - 1:])))
    opcode = {name: op for name, op, _ in lines}
    op_name = dict(re.findall(r'%([\w.\-]+) = [^\n]*op_name="([^"]*)"', entry))
    readers: dict[str, list[str]] = {}
    for name, _, args in lines:
        for a in args:
            readers.setdefault(a, []).append(name)

    def starts_a_loop(name: str) -> bool:
        return opcode.get(name) == "tuple" and bool(readers.get(name)) and all(opcode.get(r) == "while" for r in readers[name])

    # the weights: parameters the examples' loop carries in (its init tuple), which otherwise
    # only RMSprop's update reads
    carried = [n for n, op, _ in lines if op == "parameter" and any(starts_a_loop(r) for r in readers.get(n, ()))
               and all(starts_a_loop(r) or op_name.get(r, "").startswith("rm_sprop/") for r in readers[n])]
    assert len(carried) >= 6, carried  # the six weights of the three Dense layers
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    alone = [n for n in carried if view.scene.nodes[box[n]].rows[0].text.startswith("parameter")]
    assert not alone, alone
    assert all(box[n] in {box[r] for r in readers[n]} for n in carried)  # in the box of one reader
