"""What held-out round 41 (``benchmarks/heldout/round41*.py``, written before any change) showed
drawn wrong, each checked against an oracle read from the HLO text by regular expression.

* A TensorFlow step that clips its gradients by their global norm (round 41's two-input Keras
  model trained by AdamW; here round 13's multitask step, ``data/orders/clipped_multitask_step.hlo``,
  trained by SGD with momentum). Every update reads the clip's factor, one number computed from
  every layer's gradient, so every update read as the whole model's: Adam's moments of all ten
  weights stood in one ``optimizer`` box of the model while the layers held their weight decays.
  An update is its weight's layer's: the layer whose gradient has the update's shape. After
  optimization (``clipped_adam_step_post.hlo.gz``, made by ``data/orders/clipped_adam.py``: a Flax
  MLP, ``optax.chain(clip_by_global_norm, adam)``), XLA computes the factor again inside each
  update's kernel: those kernels, the work of the model and of one layer, were taken as shared —
  a block of twelve kernels beside the model.
* ``linear_rnn_step_post.hlo.gz``: a Flax linear recurrent network's step (round 41's
  ``linear_rnn_step``), optimized. Its first layer reads the input sequence as rows — a
  ``bitcast`` of the parameter folding batch and time — so its ``dot``s read the data through that
  bitcast, not the parameter, and were taken for its weights' preparation: ``layer_0`` stood
  below ``layer_1`` in the optimized column.

And one of round 42's (``benchmarks/heldout/round42.py``): ``preprocess_classify_post.hlo.gz``, a
Keras model whose preprocessing layers come first, optimized. Its input's resize and its
``Normalization``'s square root of a variance both feed the normalizing kernel and read nothing
drawn; placed right before it, they tied, and the one made first stood first — the ``sqrt``,
above the input: the column did not start with the input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.analysis.scopes import build_scope_tree
from hloviz.analysis.updates import update_targets
from hloviz.cli import main
from hloviz.parser import parse

from .test_overview_heldout_rounds26_27 import _boxes, _entry_lines, _entry_op_names
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"


def test_updates_after_a_global_norm_clip_are_their_weights_layers():
    text = (HERE / "clipped_multitask_step.hlo").read_text(encoding="utf-8")
    # the oracle: each layer's gradients by shape (``gradient_tape/multitask_1/<layer>_1/…``); a
    # weight's update has its weight's shape, so its layer is one of those with a gradient of it
    layers_of: dict[str, set[str]] = {}
    for shape, layer in re.findall(r'^\s*(?:ROOT\s+)?%?[\w.\-]+ = (\w+\[[\d,]*\])\S* .*?'
                                   r'op_name="gradient_tape/multitask_1/(\w+?)_1/', text, re.MULTILINE):
        layers_of.setdefault(shape, set()).add(layer)
    updates = dict(re.findall(
        r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = (\w+\[[\d,]+\])\S* (?!parameter)[\w\-]+\(.*?op_name="sgd/', text, re.MULTILINE))
    # the situation: the clip's factor is one number every clipped gradient is multiplied by
    assert re.search(r'= f32\[\]\S* \w+\(.*op_name="clip_by_global_norm/truediv', text)
    assert len(updates) > 150 and all(shape in layers_of for shape in updates.values())
    module = parse(text)
    targets = update_targets(build_scope_tree(module, stage="pre"))
    placed = {inst.name: scope for inst, scope in targets.items() if inst.name in updates}
    assert len(placed) == len(updates)
    wrong = {}
    for name, scope in placed.items():
        m = re.match(r"multitask_1/(\w+?)_1(?:/|$)", scope.path if scope is not None else "")
        if m is None or m.group(1) not in layers_of[updates[name]]:
            wrong[name] = scope.path if scope is not None else None
    assert not wrong, f"{len(wrong)} of {len(placed)} updates: {sorted(wrong.items())[:5]}"


@pytest.mark.requires_dot
def test_an_update_kernel_computing_the_clips_factor_again_is_its_layers(tmp_path):
    path = HERE / "clipped_adam_step_post.hlo.gz"
    text = _text(path)
    lines = _entry_lines(text)
    # the oracle: the step returns its new state in the order it was handed it (parameter k in,
    # ROOT element k out); a parameter's op name names its layer (``params['fc_b']['kernel']``,
    # ``opt_state[1][0].mu['fc_b']['kernel']``)
    layer_of: dict[int, str] = {}
    for line in lines:
        number, layer = re.search(r"parameter\((\d+)\)", line), re.search(r"op_name=\"[^\"]*\[\\'(fc_\w)\\'\]", line)
        if number and layer:
            layer_of[int(number.group(1))] = layer.group(1)
    [root] = [line for line in lines if line.lstrip().startswith("ROOT ")]
    outputs = [o.strip().lstrip("%") for o in re.sub(r"/\*index=\d+\*/", "", root.split(" tuple(", 1)[1].rsplit(")", 1)[0]).split(",")]
    assert sorted(set(layer_of.values())) == ["fc_a", "fc_b", "fc_c"] and len(layer_of) == 18
    producing = {outputs[k]: layer for k, layer in layer_of.items()}
    # the situation: the kernels writing the new weights and moments compute the clip's factor
    # again (a square root of the sum of every gradient's squares) inside
    bodies = dict(re.findall(r"\n%?([\w.\-]+) \([^\n]*\{\n(.*?)\n\}", text, re.DOTALL))
    calls = {m.group(1): m.group(2) for line in lines if (m := re.match(r"\s*%?([\w.\-]+) = .*calls=%?([\w.\-]+)", line))}
    assert sum(1 for name in producing if " sqrt(" in bodies.get(calls.get(name, ""), "")) >= 6
    try:
        main(["render", str(path), "-o", str(tmp_path / "c.json")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    boxes = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["nodes"]
    box_of = {name: box["rows"][0] for box in boxes for name in box.get("instructions", ())}
    wrong = {name: box_of.get(name) for name, layer in producing.items() if box_of.get(name) != layer}
    assert not wrong, wrong


@pytest.mark.requires_dot
def test_a_layer_reading_its_input_through_a_bitcast_stands_first(tmp_path):
    path = HERE / "linear_rnn_step_post.hlo.gz"
    text = _text(path)
    lines = _entry_lines(text)
    # the oracle: where the entry runs each layer's first forward work (a fused computation's op
    # names say whose work it is), and what layer_0's dots read
    first: dict[str, int] = {}
    for k, names in enumerate(_entry_op_names(text)):
        for layer in ("layer_0", "layer_1"):
            if any(f"jvp(_Recurrent)/{layer}/in_proj/dot_general" in n for n in names):
                first.setdefault(layer, k)
    assert first["layer_0"] < first["layer_1"], first
    # the situation: layer_0's projection reads the input ``x`` through a bitcast, not itself
    [x] = [m.group(1) for line in lines if (m := re.match(r'\s*%?([\w.\-]+) = \S+ parameter\(\d+\).*op_name="x"', line))]
    dot_line = lines[first["layer_0"]]
    [bitcast] = [m.group(1) for line in lines if (m := re.match(rf"\s*%?([\w.\-]+) = \S+ bitcast\(%?{re.escape(x)}\)", line))]
    assert re.search(rf"[(, ]%?{re.escape(bitcast)}[,)]", dot_line) and not re.search(rf"[(, ]%?{re.escape(x)}[,)]", dot_line)
    svg = _render(path, tmp_path / "r.svg")
    titles = [texts[0] for _y, texts, _names in sorted(_boxes(svg))]
    assert "layer_0" in titles and "layer_1" in titles, titles
    assert titles.index("layer_0") < titles.index("layer_1"), titles


@pytest.mark.requires_dot
def test_two_sources_of_one_kernel_stand_in_the_programs_order(tmp_path):
    path = HERE / "preprocess_classify_post.hlo.gz"
    text = _text(path)
    lines = _entry_lines(text)
    # the oracle: the entry's text; the input is parameter 0, the first line reading it is the
    # resize's; the normalizer's square root reads a parameter of its own, later in the text
    [input_name] = [m.group(1) for line in lines if (m := re.match(r"\s*%?([\w.\-]+) = \S+ parameter\(0\)", line))]
    reads_input = [k for k, line in enumerate(lines) if re.search(rf"[(, ]%{re.escape(input_name)}[,)]", line)]
    [sqrt_at] = [k for k, line in enumerate(lines) if 'op_name="classify_1/normalize_1/Sqrt"' in line]
    first_op = re.search(r'op_name="([^"]*)"', lines[reads_input[0]]).group(1)
    assert "resize" in first_op and reads_input[0] < sqrt_at
    # the situation: both feed one kernel, the normalizer's division
    [division] = [line for line in lines if 'op_name="classify_1/normalize_1/truediv"' in line and " fusion(" in line]
    sqrt_name = re.match(r"\s*%?([\w.\-]+) = ", lines[sqrt_at]).group(1)
    assert f"%{sqrt_name}" in division
    svg = _render(path, tmp_path / "p.svg")
    boxes = sorted(_boxes(svg))
    top_names = boxes[0][2]
    assert first_op in top_names, [(texts[0], names) for _y, texts, names in boxes[:3]]
