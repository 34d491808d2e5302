"""A function that runs whole training steps in a loop (round 66's ``several_steps``,
``benchmarks/heldout/round66.py``: ``for i in tf.range(3)`` around a Keras CNN's forward pass,
its gradient and RMSprop's update, as ``steps_per_execution`` runs them).

Its overview was one closed box: before optimization a ``forward · block`` of the loop's
plumbing holding the while, 25 kernels and every layer; after it the ``while`` alone, its body
(341 instructions) folded into it. The top level is a few parameters and the loop, so the
picture is the loop's body, its layers grouped as a step's are.

Oracles from the HLO text by regular expression (the ``while`` ops and their ``body=``, the
instructions whose op names put them in the loop's layers) and the script's own names (the
model ``cnn``, Keras' loss ``sparse_categorical_crossentropy``), never from hloviz. Fixtures:
``data/orders/several_steps_{pre,post}.hlo.gz`` (``hloviz dump
benchmarks/heldout/round66.py:several_steps --arg "f32[3,4,8,8,1]" --arg "s32[3,4]" -o DIR``, TF 2.21);
``data/orders/fori_steps_plain_{pre,post}.hlo.gz`` (JAX 0.8: three SGD steps of a plain-JAX CNN
by ``lax.fori_loop``, ``benchmarks/heldout/round68_jax.py``, whose docstring has the command);
``data/orders/while_loop_steps_{pre,post}.hlo.gz`` (``hloviz dump
benchmarks/heldout/round69.py:while_loop_steps --arg "f32[4,8,12]" --arg "s32[4,8]" -o DIR``, TF 2.21).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.analysis.loops import runs_steps
from hloviz.cli import main
from hloviz.ir import Instruction
from hloviz.parser import parse

from .test_accumulated_and_recomputed_steps import HERE, _columns, _frames, _op_names
from .test_loop_of_steps_layers import _render
from .test_overview_heldout_steps import _text

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_WHILE = re.compile(r"^\s*%?([\w.]+) = \(.*\) while\(.*?body=%?([\w.]+)", re.MULTILINE)
_CONV = re.compile(r"^\s*(?:ROOT )?%?([\w.]+) = \S+ convolution\(", re.MULTILINE)


def _entry(text: str) -> str:
    """The ENTRY computation's text."""
    return text[text.index("\nENTRY"):].split("\n}\n", 1)[0]


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_the_overview_of_a_loop_of_steps_is_the_loops_body_by_layer(tmp_path, stage):
    text = _text(HERE / f"several_steps_{stage}.hlo.gz")
    names = _op_names(text)
    loops = _WHILE.findall(_entry(text))
    convolutions = _CONV.findall(text)
    # the situation: one loop at the top; the model's convolutions (forward and gradient) run in it
    assert len(loops) == 1, loops
    assert convolutions and all(re.match(r"(gradient_tape/)?while/cnn", names.get(c, "")) for c in convolutions)
    picture = _columns(tmp_path, "several_steps")[0 if stage == "pre" else 1]
    loop, _body = loops[0]
    bodies = [c for c in picture["clusters"] if c["rows"][0] == f"body of {loop}"]
    assert len(bodies) == 1, [c["rows"][0] for c in picture["clusters"]]
    title = bodies[0]["rows"][0]
    by_title = {n["rows"][0]: n for n in picture["nodes"]}
    # the script's model's layers (``cnn``: ``conv``, ``pool``, ``head``) and Keras' loss
    for part in ("conv", "pool", "head", "sparse_categorical_crossentropy"):
        assert part in by_title, sorted(by_title)
        assert title in _frames(picture, by_title[part]), (part, _frames(picture, by_title[part]))
    # every convolution (fused ones too) is drawn in the loop's body, the ``conv`` layer's box holding them all
    holders = [n for n in picture["nodes"] if set(n["instructions"]) & set(convolutions)]
    assert [n["rows"][0] for n in holders] == ["conv"]
    assert set(convolutions) <= set(holders[0]["instructions"])


@pytest.mark.parametrize("name", ["several_steps", "accumulated_step"])
def test_the_tuple_a_loop_of_steps_carries_is_a_box_of_its_own(tmp_path, name):
    # ``accumulated_step`` (round 64): four micro-batches' gradients summed by ``for i in
    # tf.range(4)``; its optimized loop's carried tuple was drawn in the loss's box, as its input
    text = _text(HERE / f"{name}_post.hlo.gz")
    (loop, body), = _WHILE.findall(_entry(text))
    block = re.search(rf"^%?{re.escape(body)} .*?\n}}", text, re.MULTILINE | re.DOTALL).group(0)
    carried = re.findall(r"^\s*%?([\w.]+) = \S.* parameter\(0\)", block, re.MULTILINE)
    assert len(carried) == 1  # the situation: the body's one parameter, the loop's tuple
    picture = _columns(tmp_path, name)[1]
    holders = [n for n in picture["nodes"] if carried[0] in n["instructions"]]
    assert len(holders) == 1 and holders[0]["rows"][0] == "parameter 0", [n["rows"][0] for n in holders]
    assert f"body of {loop}" in _frames(picture, holders[0])


def _loops(path: Path) -> list[Instruction]:
    module = parse(_text(path))
    return [i for i in module.instructions() if i.opcode == "while"]


def test_loops_of_steps_are_told_from_the_loops_inside_a_step():
    # by construction of the programs (benchmarks/heldout/round66.py, round68_jax.py and the
    # samples' scripts): three TF steps in a loop, four TF micro-batches, three JAX steps by
    # ``fori_loop`` (optimized: its step inlined); a ViT's scan over layers and its gradient's
    # scan, an RNN's scan, a Keras LSTM's loops and the loop TF's gradient of one runs (a text
    # model's training step), a tf.scan, a residual block in a loop: loops inside one pass
    steps = [HERE / "several_steps_pre.hlo.gz", HERE / "several_steps_post.hlo.gz",
             HERE / "accumulated_step_pre.hlo.gz", HERE / "accumulated_step_post.hlo.gz",
             HERE / "fori_steps_plain_post.hlo.gz"]
    for path in steps:
        loops = _loops(path)
        assert len(loops) == 1 and runs_steps(loops[0]), path.name
    # JAX's step before optimization is a ``closed_call`` its loop's body only calls: one box
    (loop,) = _loops(HERE / "fori_steps_plain_pre.hlo.gz")
    assert not runs_steps(loop)
    inner = ("loops_vit_train", "loops_rnn_scan", "keras_lstm", "keras_text_train", "tf_scan", "resblock_loop")
    inside = [SAMPLES / n / f"{stage}.hlo" for n in inner for stage in ("pre", "post")]
    for path in inside:
        loops = _loops(path)
        assert loops and not any(runs_steps(w) for w in loops), path


def test_a_jax_loop_of_steps_is_drawn_open_by_pass(tmp_path):
    text = _text(HERE / "fori_steps_plain_post.hlo.gz")
    (loop, _body), = _WHILE.findall(_entry(text))
    convolutions = _CONV.findall(text)
    names = _op_names(text)
    # the situation: the forward and the gradient convolutions, both in the loop's step
    assert {("transpose(" in names[c]) for c in convolutions} == {True, False}
    picture = _columns(tmp_path, "fori_steps_plain")[1]
    holders = [n for n in picture["nodes"] if set(n["instructions"]) & set(convolutions)]
    assert len(holders) == 2 and all(f"body of {loop}" in _frames(picture, n) for n in holders)


@pytest.mark.parametrize("name", ["several_steps", "accumulated_step"])
def test_the_box_of_a_loop_of_steps_is_named_by_the_loop_not_a_pass(tmp_path, name):
    # a block holding the loop (before optimization, the four micro-batches' loop with the
    # reshapes of the batch) was titled ``forward · block of 4``: its body runs both passes
    for stage, picture in zip(("pre", "post"), _columns(tmp_path, name), strict=True):
        (loop, _body), = _WHILE.findall(_entry(_text(HERE / f"{name}_{stage}.hlo.gz")))
        holders = [n for n in picture["nodes"] if loop in n["instructions"]]
        assert len(holders) == 1, stage
        title = holders[0]["rows"][0]
        assert title == "while" or title.startswith(f"{loop} · "), (stage, title)


_READ = re.compile(r"^\s*%?([\w.-]+) = \S+ get-tuple-element\(%?([\w.-]+)\)", re.MULTILINE)


@pytest.mark.parametrize("name", ["scan_steps", "loops_rnn_scan"])
def test_a_loops_results_read_out_of_its_tuple_are_drawn_in_the_loops_box(tmp_path, name):
    # ``scan_steps`` (round 68: a lax.scan of Adam steps over batches) handed its eleven results
    # to the ROOT as a row of eleven get-tuple-element boxes, 2,834 pt wide; an RNN's scan drew
    # its one unread element as a box at the bottom, an arrow from its loop across the column
    if name == "scan_steps":
        pre = HERE / "scan_steps_pre.hlo.gz"
        picture = _columns(tmp_path, name)[0]
    else:
        pre = SAMPLES / name / "pre.hlo"
        out = tmp_path / "x.json"
        try:
            main(["render", str(SAMPLES / name), "--stage", "both", "-o", str(out)])
        except SystemExit as stop:
            assert not stop.code
        picture = json.loads(out.read_text(encoding="utf-8"))["columns"][0]["picture"]
    entry = _entry(_text(pre))
    loops = {n for n, _ in _WHILE.findall(entry)}
    reads = [(gte, loop) for gte, loop in _READ.findall(entry) if loop in loops]
    drawn = [(gte, loop, n) for gte, loop in reads for n in picture["nodes"] if gte in n["instructions"]]
    # the situation: the entry reads the loop's results out of its tuple, some into a unit of their
    # own (the others are drawn as an arrow's [index])
    assert drawn
    for gte, loop, holder in drawn:
        assert loop in holder["instructions"], (gte, holder["rows"][0])


_LAYER_OP = re.compile(r'op_name="while/tabular_1/(enc|norm|cls)_1/(?:MatMul|moments/mean)"')


def test_an_optimized_loop_bodys_layers_stand_in_forward_order(tmp_path):
    # round 69's ``while_loop_steps`` (benchmarks/heldout/round69.py): a hand-written
    # tf.while_loop of four Adam steps of enc → norm → act → drop → cls. Its optimized body drew
    # cls, drop, enc, norm: each layer's box placed by whichever of its instructions came first
    text = _text(HERE / "while_loop_steps_post.hlo.gz")
    (_loop, body), = _WHILE.findall(_entry(text))
    block = re.search(rf"^%?{re.escape(body)} .*?\n}}", text, re.MULTILINE | re.DOTALL).group(0)
    # the oracle: each layer by its forward work's first place in the body's text (XLA's schedule)
    first: dict[str, int] = {}
    for at, layer in enumerate(_LAYER_OP.findall(block)):
        first.setdefault(layer, at)
    order = sorted(first, key=first.__getitem__)
    assert order == ["enc", "norm", "cls"]  # the situation
    tops, _picture = _render(tmp_path, "while_loop_steps", "post")
    drawn = [*order, "sparse_categorical_crossentropy"]  # Keras' loss, after the model
    assert set(drawn) <= set(tops), sorted(tops)
    assert sorted(drawn, key=tops.__getitem__) == drawn
    # the dropout, applied to the batch norm's output and read by ``cls``, stands between ``enc`` and ``cls``
    # (its random bits, drawn from the seed the loop carries, are scheduled first of all)
    assert tops["enc"] < tops["drop"] < tops["cls"]
