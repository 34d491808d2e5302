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


def test_a_jax_primitive_used_many_times_is_no_op_scope():
    """JAX names an instruction after its primitive (``mul``), the same name for every use:
    twelve multiplies at the top of a traced function are twelve ops, not one. The module is
    written here, its metadata as JAX writes it (an op name, no ``op_type``); TensorFlow's
    ``op_type`` is what marks one op's instructions."""
    lines = ["HloModule jit_f", "", "ENTRY main {", "  x = f32[8]{0} parameter(0)"]
    prev = "x"
    for k in range(4):  # a model's scope first, as Flax names it
        lines.append(f'  d{k} = f32[8]{{0}} add({prev}, x), metadata={{op_name="jit(f)/Model/Dense_{k}/add"}}')
        prev = f"d{k}"
    lines.append(f'  p0 = f32[8]{{0}} negate({prev}), metadata={{op_name="neg"}}')
    prev = "p0"
    for k in range(12):
        lines.append(f'  m{k} = f32[8]{{0}} multiply({prev}, p0), metadata={{op_name="mul"}}')
        lines.append(f'  e{k} = f32[8]{{0}} exponential(m{k}), metadata={{op_name="exp"}}')
        prev = f"e{k}"
    lines += ["  ROOT out = f32[8]{0} negate(" + prev + ")", "}"]
    view = draw_module(parse("\n".join(lines)), options=ViewOptions(budget=OVERVIEW_BUDGET))
    titles = {node.rows[0].text for node in view.scene.nodes.values()}
    assert "mul" not in titles, titles  # no closed box titled by the primitive holds them all
