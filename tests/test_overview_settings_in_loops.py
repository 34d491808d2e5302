"""An optimizer's setting made ready for one layer's update is drawn with that update, also where
the update runs after a loop that carries the model.

A Keras regressor whose loss is computed per example with ``tf.map_fn`` (RMSprop): the layers'
updates are drawn in the box of the map's loop, which carries the weights, and RMSprop broadcasts
the learning rate to each weight's shape before the update reads it (``rm_sprop/Mul_2``:
``broadcast(learning_rate)``). The broadcasts read no layer, so by what they read they update
none; what they feed says which. Left in the optimizer's box, they were three ``broadcast`` rows
and the learning rate a parameter of their own there, apart from the updates reading them.

The oracle is the HLO text, read with regular expressions: the broadcasts named ``rm_sprop/…``
whose operand is an entry parameter, and the instructions that read them. The fixture is the
pre-optimization module of ``benchmarks/heldout/round15.py:per_example_step`` (TensorFlow 2.21;
``hloviz dump … -o DIR``, ``DIR/pre.hlo``) with the ``source_file``/``source_line`` metadata
removed to keep it small. (``tests/test_overview_counters.py`` checks SGD steps without a loop.)
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "per_example_step_pre.hlo"
_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = \S+ ([a-z][\w\-]*)\(([^)]*)\)(.*)$", re.MULTILINE)


def test_each_learning_rate_broadcast_is_drawn_with_the_update_reading_it():
    text = FIXTURE.read_text()
    entry = text[text.index("\nENTRY "):]
    lines = [(n, op, re.findall(r"%([\w.\-]+)", args), rest) for n, op, args, rest in _LINE.findall(entry)]
    params = {n for n, op, _a, _r in lines if op == "parameter"}
    readers: dict[str, list[str]] = {}
    for n, _op, args, _r in lines:
        for a in args:
            readers.setdefault(a, []).append(n)
    settings = [n for n, op, args, rest in lines
                if op == "broadcast" and len(args) == 1 and args[0] in params and 'op_name="rm_sprop/' in rest]
    assert len(settings) >= 3, settings  # one per weight's shape
    boxes = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    for b in settings:
        assert readers.get(b) and all(boxes[r] == boxes[b] for r in readers[b]), (b, boxes[b], {r: boxes[r] for r in readers[b]})
