"""A TensorFlow op outside every layer that XLA lowers into many instructions (``tf.nn.softmax``
after a Keras model: ``Softmax``, 21 instructions) is one box in an overview, named after the op;
a detailed picture (``--budget 300``) still draws its instructions. Opened op by op beside an
unseen WaveNet (held-out round 13), its thirteen boxes took the room the model's blocks needed.

The oracle is the op names, read with a regular expression from the capture's module: the
instructions named ``Softmax`` and the model's layers (``small_cnn_1/<layer>_1/…``). Which box
holds each instruction is the picture's own record
(:attr:`~hloviz.render.views.View.node_of`).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_small_classify"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', re.MULTILINE)


def test_a_softmax_after_the_model_is_one_box_in_the_overview():
    text = (CAPTURE / "pre.hlo").read_text()
    named = _OP_NAME.findall(text)
    softmax = [name for name, op in named if op == "Softmax"]
    layers = {m.group(1) for _, op in named if (m := re.match(r"small_cnn_1/(\w+?)_1/", op))}
    assert len(softmax) >= 10 and {"stem", "features", "classifier"} <= layers  # the capture it says
    overview = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    boxes = {overview.node_of[n] for n in softmax if n in overview.node_of}
    assert len(boxes) == 1, boxes
    [box] = boxes
    assert overview.scene.nodes[box].rows[0].text == "Softmax"
    # the model's layers each a box of their own beside it
    for layer in layers:
        held = {overview.node_of[n] for n, op in named if op.startswith(f"small_cnn_1/{layer}_1/") and n in overview.node_of}
        assert box not in held, layer
    detailed = draw_module(parse(text), options=ViewOptions(budget=300))
    assert len({detailed.node_of[n] for n in softmax if n in detailed.node_of}) > 5
