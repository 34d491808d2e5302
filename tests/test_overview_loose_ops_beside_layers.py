"""A Keras model whose own scope holds, beside its named layers, loose ops no layer names (a
wide-and-deep model's ``ids[:, i]`` slices, ``wide_and_deep_1/strided_slice_2``, and their
gradients) is drawn open in the overview, its layers each a box (issue 33: "the model's own
structure … one box per block"). With its 13 loose ops beside 15 layers it had 28 children, more
than the overview's 24 boxes: it was drawn as one closed box, and the budget went to the loss's
``div_no_nan`` opened op by op.

The oracle is the op names, read here with a regular expression: the layer an instruction
belongs to is the name after ``wide_and_deep_1/``. Which box holds each instruction is the
picture's own record (:attr:`~hloviz.render.views.View.node_of`). The fixture is the
pre-optimization module of ``benchmarks/heldout/round12.py:wide_deep_step`` (``hloviz dump
benchmarks/heldout/round12.py:wide_deep_step --arg "f32[32,13]" --arg "s32[32,4]" --arg
"f32[32,1]" -o DIR``; ``DIR/pre.hlo``), captured with TensorFlow 2.21.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "wide_deep_step.hlo"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', re.MULTILINE)
#: a layer's forward work: ``wide_and_deep_1/<layer>_1/…`` (its gradient is ``gradient_tape/…``)
_LAYER = re.compile(r"^wide_and_deep_1/(\w+?)_1/")


def _layers() -> dict[str, str]:
    """Instruction name → the layer whose forward work it is, from its op name."""
    return {name: m.group(1) for name, op in _OP_NAME.findall(FIXTURE.read_text()) if (m := _LAYER.match(op))}


def test_a_models_loose_ops_beside_its_layers_leave_it_open():
    layers = _layers()
    loose = {op for _, op in _OP_NAME.findall(FIXTURE.read_text()) if re.fullmatch(r"wide_and_deep_1/strided_slice(_\d+)?", op)}
    named = set(layers.values())
    # the fixture is the model it says: four embeddings, a deep tower, a wide part, and the
    # ``ids[:, i]`` slices no layer names
    assert {"embed_0", "embed_3", "deep_0", "deep_2", "wide", "deep_out"} <= named and len(loose) == 4
    view = draw_module(parse(FIXTURE.read_text()), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    assert view.nodes <= OVERVIEW_BUDGET
    boxes_of = {layer: Counter(box[n] for n, lay in layers.items() if lay == layer and n in box) for layer in named}
    # each embedding and each of the wide part and the deep tower's output a box of its own
    own = ["embed_0", "embed_1", "embed_2", "embed_3", "wide", "deep_out"]
    main = {layer: boxes_of[layer].most_common(1)[0][0] for layer in own}
    assert len(set(main.values())) == len(own), main
    # … and no box holds the forward work of more than the deep tower's three copies
    holders = Counter(b for layer in named for b in boxes_of[layer])
    assert max(holders.values()) <= 3, holders.most_common(3)
