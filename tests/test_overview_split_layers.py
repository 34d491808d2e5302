"""In a training step's overview, a layer whose work runs in both passes is one box, and so is
the step's loss; closing them opens nothing else in their place.

Opened, such a layer's forward boxes stood where the forward pass runs and its gradient's where
the backward pass does, and its frame spanned everything between: the next layer's frame nested
in that span, so Graphviz stood the frames side by side — the Keras CNN step's ``conv1``,
``conv2``, ``pool``, ``flatten`` a staircase 2,400 pt wide, an unseen Conv3D step's ``pool_1``
frame one kernel at the top of its column and two at the bottom. An unseen LSTM tagger's
``sparse_categorical_crossentropy`` opened into six ``forward · block of 12`` boxes whose arrows
crossed (0.12 crossings an arrow).

Fixtures: the ``keras_cnn_train`` sample capture (before optimization), and a small Keras
tagger's optimized step, ``tests/data/orders/tagger_step_post.hlo`` (made by ``tagger.py``
beside it). Oracles outside the renderer: the layers and the loss from the op names (a regular
expression over the HLO text: ``cnn_1/<layer>_1/…`` is a layer's forward work,
``gradient_tape/cnn_1/<layer>_1/…`` its gradient's), their order from where the entry
computation first runs each one's forward work; the picture read from the SVG's boxes and
frames.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.parser import parse
from hloviz.render.cut import cut as cut_module
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

from . import box_labels

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "samples" / "captures" / "keras_cnn_train"
TAGGER = Path(__file__).resolve().parent / "data" / "orders" / "tagger_step_post.hlo"

pytestmark = pytest.mark.requires_dot

_OP = re.compile(r'^\s*(?:ROOT\s+)?%?[\w.\-]+ = [^\n]*?op_name="([^"]*)"', re.MULTILINE)
_CLUSTER = re.compile(r'<g id="clust\d+" class="cluster">.*?<text[^>]*font-weight="bold"[^>]*>([^<]*)</text>',
                      re.DOTALL)


def _layers_in_both_passes(text: str, model: str) -> list[str]:
    """The model's layers with forward and backward work, in the order the entry computation
    first runs each one's forward work."""
    entry = text.split("\nENTRY ", 1)[1]
    forward: list[str] = []
    backward: set[str] = set()
    for op in _OP.findall(entry):
        if m := re.match(rf"{model}_1/(\w+?)_1/", op):
            if m.group(1) not in forward:
                forward.append(m.group(1))
        elif m := re.match(rf"gradient_tape/{model}_1/(\w+?)_1/", op):
            backward.add(m.group(1))
    return [layer for layer in forward if layer in backward]


def _render(args: list[str], out: Path) -> str:
    try:
        code = main(["render", *args, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return out.read_text(encoding="utf-8")


def test_each_layer_run_in_both_passes_is_one_box_in_program_order(tmp_path):
    layers = _layers_in_both_passes((CNN / "pre.hlo").read_text(encoding="utf-8"), "cnn")
    assert layers == ["conv1", "conv2", "pool", "flatten", "dense1", "logits"]  # the situation
    svg = _render([str(CNN), "--stage", "pre"], tmp_path / "pre.svg")
    boxes = box_labels(svg)
    tops = {label: y for y, label in boxes}
    assert all(sum(label == layer for _, label in boxes) == 1 for layer in layers), boxes
    assert not set(_CLUSTER.findall(svg)) & set(layers), "a layer drawn as a frame"
    assert sorted(layers, key=tops.__getitem__) == layers


def test_a_detailed_picture_still_opens_them(tmp_path):
    layers = _layers_in_both_passes((CNN / "pre.hlo").read_text(encoding="utf-8"), "cnn")
    svg = _render([str(CNN), "--stage", "pre", "--budget", "100"], tmp_path / "b100.svg")
    assert {"conv1", "conv2"} <= set(_CLUSTER.findall(svg)) & set(layers)


def test_the_loss_and_a_split_layer_are_one_box_each_and_nothing_opens_in_their_place(monkeypatch):
    text = TAGGER.read_text(encoding="utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    ops = _OP.findall(entry)
    # the situation: the loss's kernels and the tags layer's in both passes (XLA keeps op names)
    assert any(op.startswith("sparse_categorical_crossentropy/") for op in ops)
    assert any(op.startswith("tagger_1/tags_1/") for op in ops)
    assert any(op.startswith("gradient_tape/tagger_1/tags_1/") for op in ops)
    module = parse(text)
    view = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET))
    assert view.cut is not None
    closed = {n.name: n for n in view.cut.nodes if n.kind == "scope"}
    assert {"sparse_categorical_crossentropy", "tags_1"} <= set(closed), sorted(closed)
    assert not {n.name for n in view.cut.open()} & {"sparse_categorical_crossentropy", "tags_1"}
    # drawn with nothing closed after fitting, the picture is this one with the loss opened (its
    # level opened whole); ``tags_1``, among a level that did not, was left closed by fitting itself
    # (its room held from the layers beside it, given to none)
    monkeypatch.setattr(cut_module, "_shut", lambda cut: cut)
    opened = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET))
    assert opened.cut is not None
    assert "sparse_categorical_crossentropy" in {n.name for n in opened.cut.open()}
    assert "tags_1" in {n.name for n in opened.cut.nodes}
    again = opened.cut
    for node in view.cut.nodes:
        if node.key in again.tree.nodes and node.key not in again.keys:
            again = again.collapse(node.key)
    assert again.keys == view.cut.keys


def test_the_model_itself_stays_open(tmp_path):
    """A scope holding most of the step is the model, not a layer, though its work too runs in
    both passes and few parts are named below it: a Flax step's ``Net`` (its layers inside the
    jitted calls it makes) is a frame, not one closed box."""
    flax = ROOT / "samples" / "captures" / "flax_train_step"
    ops = _OP.findall((flax / "pre.hlo").read_text(encoding="utf-8"))
    model = [op for op in ops if "/jvp(Net)/" in op or "/transpose(jvp(Net))/" in op]
    assert len(model) * 2 > len([op for op in ops if op.startswith("jit(train_step)/")])  # the situation
    assert any("/transpose(jvp(Net))/" in op for op in ops)  # … in both passes
    svg = _render([str(flax), "--stage", "pre"], tmp_path / "pre.svg")
    assert "Net" in _CLUSTER.findall(svg)


def test_a_jitted_block_holding_most_of_the_step_stays_open(tmp_path):
    """The same after optimization: ``samples/jax_resmlp_train``'s ``block`` (a ``jax.jit``-ed
    residual block called from the step, ``jvp(jit(block))`` forward and
    ``transpose(jvp(jit(block)))`` backward) holds most of its optimized step's boxes, its
    kernels in both passes: it is the model, a frame. (Since the loose ops beside a model are
    blocked, the Flax step above no longer tells the model from a layer by its size alone.)"""
    capture = ROOT / "samples" / "captures" / "jax_resmlp_train"
    ops = _OP.findall((capture / "post.hlo").read_text(encoding="utf-8"))
    block = [op for op in ops if "/jvp(jit(block))" in op or "/transpose(jvp(jit(block)))" in op]
    assert len(block) * 2 > len(ops)  # the situation: most of the step …
    assert any("/transpose(jvp(jit(block)))" in op for op in block)  # … in both passes
    svg = _render([str(capture), "--stage", "post"], tmp_path / "post.svg")
    assert "block" in _CLUSTER.findall(svg)
