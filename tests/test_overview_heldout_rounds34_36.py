"""Models of held-out rounds 34 to 36 (``benchmarks/heldout/round34*.py`` … ``round36*.py``), drawn
wrong before this round's fixes, read back from the SVG of ``hloviz render`` against an oracle
taken from the HLO text by regular expression.

* ``mobilenet_v1_step_pre.hlo.gz``: ``keras.applications.MobileNet`` (``alpha=0.5``) trained by SGD
with momentum. Keras' ``Dropout`` draws its mask from its seed generator's state with a
``rng-bit-generator`` and reads the bits out of its tuple; that element is drawn apart from the
tuple, and the random bits computed from it were taken for the dropout's work on the model's
values, which TensorFlow writes near the top of the program: the ``dropout`` box stood first,
above the stem, its input an arrow from the pooling at the bottom turned into a ``←`` row.
* ``plain_resnet_step_post.hlo.gz``: a residual network in plain JAX (``jax.named_scope`` blocks)
  trained by hand-written SGD with momentum, optimized. Two of its blocks are one repeat; each
  feeds the other (activations forward, gradients back), and the optimized text holds the second
  one's kernels first: the repeat was titled ``block1 ×2 (block1 … block0)``, its copies drawn
  ``block0`` first.
* ``loop_rnn_step_*`` (a capture, its ``memory.json`` left out): a recurrent network written by
  hand in TensorFlow — a Keras ``Dense`` cell in a ``tf.while_loop`` — trained by RMSprop.
  TensorFlow hands the forward loop the buffers its gradient fills (constants named
  ``gradient_tape/while/…/accumulator``), and reading them was taken for reading gradients: the
  forward loop was the optimizer's work, drawn after the readout it feeds (before optimization)
  and in a frame titled ``optimizer`` (after).

And one of round 21 drawn wrong once the last was fixed: ``two_input_step_*`` (a capture, its
``memory.json`` left out), a two-branch Keras model with L2-regularized kernels trained by Adam.
Its loss's penalties read the copies XLA makes of the kernels; counted as the optimizer's work
before, they had folded each copy into its layer, and counted as the loss's, they left the four
parameters and their four copies as eight boxes above the optimized column: a box whose first
instruction is a parameter (``adam``'s step count) was taken for no optimizer's.
"""


from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_overview_heldout_rounds26_27 import _boxes, _entry_lines
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot

_LINE = re.compile(r"\s*(?:ROOT )?%?([\w.\-]+) = .*? ([\w\-]+)\((.*?)\)(?:, |$)")


def test_a_dropout_drawn_from_its_seed_stands_after_what_it_masks(tmp_path):
    path = HERE / "mobilenet_v1_step_pre.hlo.gz"
    lines = _entry_lines(_text(path))
    # the oracle, from the entry's text: each instruction's position, op name and operands
    at: dict[str, int] = {}
    scope: dict[str, str] = {}
    reads: dict[str, list[str]] = {}
    for k, line in enumerate(lines):
        found = _LINE.match(line)
        if found is None:
            continue
        name, _opcode, operands = found.groups()
        op_name = re.search(r'op_name="([^"]*)"', line)
        at[name], scope[name] = k, op_name.group(1) if op_name else ""
        reads[name] = re.findall(r"%([\w.\-]+)", operands)
    layer = re.compile(r"^mobilenet_0\.50_64_1/(\w+?)_1/")

    def layer_of(name: str) -> str | None:
        found = layer.match(scope.get(name, ""))
        return found.group(1) if found else None

    # the situation: the dropout's bits come out of a rng-bit-generator's tuple, written before
    # the stem's convolution; its mask is applied to the pooling's output, written after it
    assert any(layer_of(n) == "dropout" and re.search(r"rng-bit-generator\(", lines[at[n]]) for n in at)
    applied = [n for n in at if layer_of(n) == "dropout" and any(layer_of(r) == "global_average_pooling2d" for r in reads[n])]
    stem = min(at[n] for n in at if layer_of(n) == "conv1" and " convolution(" in lines[at[n]])
    first_bits = min(at[n] for n in at if layer_of(n) == "dropout")
    assert applied and first_bits < stem < min(at[n] for n in applied)

    boxes = _boxes(_render(path, tmp_path / "p.svg"))
    top = {texts[0]: y for y, texts, _names in boxes}
    assert "dropout" in top and "global_average_pooling2d" in top, sorted(top)
    # drawn where its work on the model's values is: below the pooling it masks, and not first
    assert top["dropout"] > top["global_average_pooling2d"], (top["dropout"], top["global_average_pooling2d"])
    model = sorted((y, texts[0]) for y, texts, _names in boxes if not texts[0].startswith(("parameter", "ROOT")))
    assert model[0][1] != "dropout", model[:3]


def test_a_repeat_of_a_steps_blocks_is_titled_in_the_forward_passs_order(tmp_path):
    path = HERE / "plain_resnet_step_post.hlo.gz"
    lines = _entry_lines(_text(path))
    # the oracle: where each block's forward convolution runs (the schedule keeps data order:
    # a block's forward convolution reads the block before it)
    first_conv: dict[str, int] = {}
    for k, line in enumerate(lines):
        found = re.search(r'op_name="jit\(plain_resnet_step\)/jvp\((block\d)\)/conv_general_dilated"', line)
        if found is not None:
            first_conv.setdefault(found.group(1), k)
    assert sorted(first_conv) == ["block0", "block1", "block2"]
    svg = _render(path, tmp_path / "p.svg")
    titles = re.findall(r">(block\d) ×(\d+) \((block\d) … (block\d)\)<", svg)
    assert titles, "no repeat of blocks drawn"
    for label, count, first, last in titles:
        assert label == first and int(count) >= 2
        # the situation: the copies feed one another both ways, and the title's first copy runs first
        assert first_conv[first] < first_conv[last], (first, last, first_conv)


def test_a_loop_given_its_gradients_empty_buffers_is_forward_work(tmp_path):
    capture = tmp_path / "loop_rnn_step"
    capture.mkdir()
    for part, name in (("pre.hlo", "loop_rnn_step_pre.hlo.gz"), ("post.hlo", "loop_rnn_step_post.hlo.gz"),
                       ("capture.json", "loop_rnn_step_capture.json.gz")):
        (capture / part).write_text(_text(HERE / name), encoding="utf-8")
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(tmp_path / "l.svg")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    whole = (tmp_path / "l.svg").read_text(encoding="utf-8")
    # each column is a part of its own (its coordinates its own): the post-optimization one
    # starts with the part titled ``after optimization``
    split = whole.rfind('<g class="part"', 0, whole.index(">after optimization<"))
    for stage, svg in (("pre", whole[:split]), ("post", whole[split:])):
        lines = _entry_lines((capture / f"{stage}.hlo").read_text(encoding="utf-8"))
        # the oracle: the forward loop (named ``while``, not ``gradient_tape/…``), the readout's
        # forward product that reads its state, and the buffers named for the gradient the loop
        # is handed, made of constants alone
        loops = [(k, line) for k, line in enumerate(lines) if re.search(r" while\(", line)]
        [(at_loop, loop)] = [(k, line) for k, line in loops if 'op_name="while"' in line]
        loop_name = re.match(r"\s*%?([\w.\-]+) = ", loop).group(1)
        readout = [k for k, line in enumerate(lines) if re.search(r'op_name="readout_1/MatMul"', line)
                   and re.search(r" (dot|fusion)\(", line)]
        assert readout and at_loop < min(readout)
        assert any("gradient_tape/while" in line and "accumulator" in line for line in lines)
        # drawn above the readout, and in no optimizer's frame or box
        boxes = _boxes(svg)
        [loop_y] = [y for y, texts, _names in boxes if loop_name in texts and "while" in texts]
        readout_y = min(y for y, texts, _names in boxes if texts[0] in ("readout", "readout · forward", "dot")
                        and any(n in texts for n in ("readout", "MatMul.8")))
        assert loop_y < readout_y, (stage, loop_y, readout_y)
        frames = re.findall(r'<g id="clust\d+" class="cluster">.*?font-weight="bold"[^>]*>([^<]*)</text>', svg, re.DOTALL)
        assert "optimizer" not in frames, (stage, frames)


def _capture(tmp_path: Path, name: str) -> Path:
    """The held-out capture ``name`` (its ``memory.json`` left out) written to a folder."""
    capture = tmp_path / name
    capture.mkdir()
    for part, stored in (("pre.hlo", f"{name}_pre.hlo.gz"), ("post.hlo", f"{name}_post.hlo.gz"),
                         ("capture.json", f"{name}_capture.json.gz")):
        (capture / part).write_text(_text(HERE / stored), encoding="utf-8")
    return capture


def test_a_weights_copy_read_by_the_loss_too_is_folded_into_its_layer(tmp_path):
    capture = _capture(tmp_path, "two_input_step")
    names = json.loads((capture / "capture.json").read_text(encoding="utf-8"))["parameter_names"]
    lines = _entry_lines((capture / "post.hlo").read_text(encoding="utf-8"))
    # the oracle: the kernels XLA copies (``copy(%argN.1)``, N a parameter capture.json names
    # ``<layer>/kernel``), and the instructions reading each copy
    copies = {}
    for line in lines:
        found = re.match(r"\s*%?(copy[\w.]*) = \S+ copy\(%arg(\d+)\.1\)", line)
        if found and names.get(found.group(2), "").endswith("/kernel"):
            copies[found.group(1)] = (found.group(2), names[found.group(2)])
    assert len(copies) == 4, copies
    for copy in copies:  # the situation: each copy read by its layer, by the loss's penalty and by Adam
        readers = [line for line in lines if re.search(rf"[(, ]%{re.escape(copy)}[,)]", line)]
        assert len(readers) >= 2 and any('op_name="adam/' in r for r in readers), copy
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(tmp_path / "t.json")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    post = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["columns"][1]["picture"]["nodes"]
    holding = {copy: [n["rows"][0] for n in post if copy in n["instructions"]] for copy in copies}
    # each copy, and the parameter it copies, in the box of the layer its name says, not a box
    # of its own, nor the loss's box that reads it first
    for copy, (number, weight) in copies.items():
        assert holding[copy] == [weight.split("/")[0]], (copy, weight, holding[copy])
        [box] = [n for n in post if copy in n["instructions"]]
        assert f"arg{number}.1" in box["instructions"], (weight, box["instructions"])


def test_a_layers_nameless_gradient_convolutions_do_not_place_it(tmp_path):
    # held-out round 10's mixed-precision residual CNN step (``mixed_cnn_step_*``), optimized: XLA
    # left the convolutions of some layers' gradients without op names; counted as layer work
    # (a dot XLA split off keeps its layer's work, not its name) and, unnamed, as forward work,
    # they placed ``res_1_a`` and ``res_2_a`` after the loss. Oracle: where the entry runs each
    # layer's named forward convolution (regex), and the unnamed convolutions' presence.
    capture = _capture(tmp_path, "mixed_cnn_step")
    lines = _entry_lines((capture / "post.hlo").read_text(encoding="utf-8"))
    forward: dict[str, int] = {}
    for k, line in enumerate(lines):
        found = re.search(r' convolution\(.*op_name="mixed_cnn_1/(res_\d_[ab])_1/convolution"', line)
        if found:
            forward.setdefault(found.group(1), k)
    loss = min(k for k, line in enumerate(lines) if 'op_name="sparse_categorical_crossentropy/' in line)
    assert len(forward) >= 4 and all(k < loss for k in forward.values())
    assert any(" convolution(" in line and "op_name" not in line for line in lines)  # the situation
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(tmp_path / "m.svg")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    whole = (tmp_path / "m.svg").read_text(encoding="utf-8")
    post = whole[whole.rfind('<g class="part"', 0, whole.index(">after optimization<")):]
    top = {texts[0]: y for y, texts, _names in _boxes(post)}
    drawn = [layer for layer in forward if layer in top]
    assert len(drawn) >= 3 and "sparse_categorical_crossentropy" in top, sorted(top)
    assert sorted(drawn, key=top.get) == sorted(drawn, key=forward.get), {d: top[d] for d in drawn}
    assert all(top[d] < top["sparse_categorical_crossentropy"] for d in drawn), {d: top[d] for d in drawn}
