"""A model's own TensorFlow op beside its layers is one box of the overview, its gradient with it.

A Keras language model whose output projection is its input embedding, transposed
(``tf.matmul(h, self.embed.embeddings, transpose_b=True)`` in its ``call``), runs that op in the
model's own scope, beside its layers, and TensorFlow names the op's gradient after it
(``gradient_tape/tied_lm_1/MatMul/…``). The overview drew its twelve instructions as eleven boxes
(``dot``, ``transpose``, ``convert``, ``reduce``…) beside the four layers. A hand-written attention
(``keras_mha``) ran its ``Softmax`` beside its ``query``/``key``/``value`` layers: thirteen
instructions, and the block was drawn as one closed box of 45 ops.

The oracle is the op names, read with a regular expression: an instruction is the op's when its
``op_name`` is ``<model>/<op>`` or ``gradient_tape/<model>/<op>/…``. The fixture is the
pre-optimization module of ``benchmarks/heldout/round16.py:tied_lm_step`` (TensorFlow 2.21, CPU;
``hloviz dump … -o DIR``, ``DIR/pre.hlo``) with the ``source_file``/``source_line`` metadata removed
to keep it small; ``keras_mha`` is a sample capture.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

HERE = Path(__file__).resolve().parent
TIED = HERE / "data" / "orders" / "tied_lm_step.hlo"
MHA = HERE.parent / "samples" / "captures" / "keras_mha" / "pre.hlo"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*?op_name="([^"]*)"', re.MULTILINE)


def _by_op_name(text: str) -> dict[str, str]:
    return dict(_OP_NAME.findall(text))


def _boxes(text: str) -> dict[str, str]:
    return draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of


def test_a_models_own_op_and_its_gradient_are_one_box():
    text = TIED.read_text()
    names = _by_op_name(text)
    op = {n for n, o in names.items() if re.fullmatch(r"(gradient_tape/)?tied_lm_1/MatMul(/.*)?", o)}
    forward = {n for n in op if not names[n].startswith("gradient_tape/")}
    assert forward and len(op - forward) >= 5  # the situation: the op and its gradient's ops
    boxes = _boxes(text)
    held = Counter(boxes[n] for n in op if n in boxes)
    assert len(held) == 1, held
    # the box is the op's alone: no layer's instruction shares it
    [box] = held
    layers = {n for n, o in names.items() if re.match(r"(gradient_tape/)?tied_lm_1/(embed|rnn|norm)_1/", o)}
    assert not [n for n in layers if boxes.get(n) == box]


def test_an_attention_written_by_hand_is_drawn_open_with_its_softmax_one_box():
    text = MHA.read_text()
    names = _by_op_name(text)
    boxes = _boxes(text)
    softmax = {boxes[n] for n, o in names.items() if o == "mha_1/Softmax" and n in boxes}
    assert len(softmax) == 1, softmax
    # … and the block it sits in is open: its query, key and value layers are boxes of their own
    layers = {}
    for n, o in names.items():
        m = re.match(r"mha_1/(query|key|value)_1/", o)
        if m and n in boxes:
            layers.setdefault(m.group(1), set()).add(boxes[n])
    assert len(layers) == 3 and all(len(b) == 1 for b in layers.values()), layers
    assert len(set().union(*layers.values()) | softmax) == 4
