"""Models of held-out round 29 (``benchmarks/heldout/round29*.py``), drawn wrong before this
round's fixes, each read back from the SVG of ``hloviz render`` against an oracle taken from the
HLO text by regular expression.

* ``gru_step_pre.hlo.gz`` / ``_post``: a Flax ``nn.RNN(nn.GRUCell)`` classifier trained with
  RMSprop. JAX reshapes the cell's biases once, outside the loop that reads them, and names the
  reshapes after the loop body's scope (``jit(gru_step)/GRUCell_0.scan_fn/GRUCell_0/iz/reshape``):
  a box of four reshapes stood beside the model, above ``embed``. After optimization the
  backward loop, with the zero accumulators XLA copies into its tuple, was titled
  ``forward · block of 12``.
* ``ensemble_step_post.hlo.gz``: a Flax ``nn.vmap`` ensemble with clipped Adam. XLA's transposed
  copy of the stacked ``hidden_1`` kernel is named after the weight
  (``params['members']['hidden_1']['kernel']``) and stood as a box of its own above the column.
* ``mixed_precision_step_post.hlo.gz``: a ``mixed_float16`` Keras CNN with ``LossScaleOptimizer``.
  XLA's unnamed copy of ``logits/bias``, read by the loss's kernel (the bias add fused there)
  and by Adam, is drawn where the scope tree files it (``logits``). Drawn right before this
  round; a first reading of a weight's preparation that took any layout change whose scope
  holds none of its readers drew it and its parameter as two boxes above the column.

And the limits of those changes, on earlier rounds' steps drawn right: a graph network's
``receivers`` in another shape, read by every round (``gnn_step_post.hlo.gz``), and a Flax NNX
model's kernel copies, read in the traced function's own scope (``nnx_step_post.hlo.gz``), stay
where they were; a Keras CNN's L2 penalties, in a block with as many of the optimizer's ops
(``l2_step_*``, a capture: its ``capture.json`` names what the block holds), keep the title
``forward``: once thought a tie with two of the optimizer's kernels, their own work since a zero
the backward pass names is no gradient; the tie itself goes to the pass that runs first.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.render.cut.titles import main_pass
from hloviz.render.tree.nodes import TreeNode
from hloviz.render.tree.prefix_groups import block_families

from .test_overview_heldout_rounds26_27 import _boxes, _entry_lines
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot

_LINE = re.compile(r"\s*(?:ROOT )?%?([\w.\-]+) = .*? ([\w\-]+)\((.*?)\)(?:, |$)")


def _instructions(text: str) -> dict[str, tuple[str, list[str], str]]:
    """The entry's instructions: name → (opcode, operand names, op_name)."""
    out = {}
    for line in _entry_lines(text):
        found = _LINE.match(line)
        if found is None:
            continue
        name, opcode, operands = found.groups()
        op_name = re.search(r'op_name="([^"]*)"', line)
        out[name] = (opcode, re.findall(r"%?([\w.\-]+)(?:, |$)", re.sub(r"/\*index=\d+\*/", "", operands)),
                     op_name.group(1).replace("\\'", "'") if op_name else "")
    return out


def _readers(insts: dict[str, tuple[str, list[str], str]], name: str) -> list[str]:
    """What reads ``name``, through the tuples that hand it to a loop."""
    out = []
    for n, (opcode, operands, _on) in insts.items():
        if name in operands:
            out.extend(_readers(insts, n) if opcode == "tuple" else [n])
    return out


def _unescaped(svg: str) -> list[tuple[float, list[str], set[str]]]:
    """:func:`_boxes`, the op names in its tooltips as the HLO writes them (``params['out']``)."""
    return [(y, texts, {html.unescape(n) for n in names}) for y, texts, names in _boxes(svg)]


def _titles(svg: str) -> list[str]:
    return [texts[0] for _y, texts, _names in _boxes(svg)]


def _members(path: Path, out: Path) -> list[tuple[str, set[str]]]:
    """(title, the instructions it holds) of every box of the picture ``hloviz render`` draws of
    ``path``, read from its JSON (the same scene the SVG draws; a tooltip lists a few op names)."""
    try:
        code = main(["render", str(path), "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    scene = json.loads(out.read_text(encoding="utf-8"))
    return [(node["rows"][0], set(node["instructions"])) for node in scene["nodes"]]


def _tooltip_names(svg: str) -> list[str]:
    """The instruction each single-instruction box's tooltip starts with (``copy.36 = …``)."""
    return re.findall(r'xlink:title="([\w.\-]+) = ', svg)


def test_weights_reshaped_outside_their_loop_are_drawn_in_its_layer(tmp_path):
    path = HERE / "gru_step_pre.hlo.gz"
    insts = _instructions(_text(path))
    hoisted = {n: on for n, (opcode, operands, on) in insts.items()
               if opcode == "reshape" and "/GRUCell_0.scan_fn/" in on and insts[operands[0]][0] == "parameter"}
    assert len(hoisted) == 4  # the situation: the cell's biases, reshaped at the top of the step
    loops = {insts[r][2] for n in hoisted for r in _readers(insts, n)}
    assert loops == {"jit(gru_step)/jvp(_Classifier)/gru/while"}  # read by the gru's loop alone
    svg = _render(path, tmp_path / "g.svg")
    assert not [label for label in _titles(svg) if "scan_fn" in label], _titles(svg)
    boxes = _members(path, tmp_path / "g.json")  # the same picture's boxes and what each holds
    [holder] = [title for title, members in boxes if set(hoisted) <= members]
    assert holder == "gru"
    [gru] = [members for title, members in boxes if title == "gru"]
    assert {r for n in hoisted for r in _readers(insts, n)} <= gru


def test_a_backward_loop_is_titled_by_its_pass_not_by_the_copies_beside_it(tmp_path):
    path = HERE / "gru_step_post.hlo.gz"
    insts = _instructions(_text(path))
    [backward] = [n for n, (opcode, _o, on) in insts.items()
                  if opcode == "while" and on == "jit(gru_step)/transpose(jvp(_Classifier))/gru/while"]
    tuple_in = insts[backward][1][0]
    copies = [o for o in insts[tuple_in][1] if insts.get(o, ("",))[0] == "copy" and not insts[o][2]]
    assert len(copies) >= 5  # the situation: unnamed copies (forward by default) beside the loop
    svg = _render(path, tmp_path / "g.svg")
    holding = [texts for _y, texts, names in _unescaped(svg) if insts[backward][2] in names]
    assert holding, [b[1][0] for b in _unescaped(svg)]
    for texts in holding:
        assert not texts[0].startswith("forward"), texts


def test_a_weights_copy_named_after_it_is_drawn_in_the_layer_reading_it(tmp_path):
    path = HERE / "ensemble_step_post.hlo.gz"
    insts = _instructions(_text(path))
    named_after = {n: operands[0] for n, (opcode, operands, on) in insts.items()
                   if opcode == "fusion" and len(operands) == 1 and insts[operands[0]][0] == "parameter"
                   and on and on == insts[operands[0]][2]}
    layers = {}
    for n in named_after:
        [reader] = _readers(insts, n)
        found = re.search(r"/vmap\(members\)/(\w+)/dot_general$", insts[reader][2])
        if found:
            layers[n] = (found.group(1), reader)
    assert layers  # the situation: a layout copy of a stacked kernel, named as the weight is
    svg = _render(path, tmp_path / "e.svg")
    alone = _tooltip_names(svg)
    boxes = _members(path, tmp_path / "e.json")
    for copy, (layer, dot) in layers.items():
        assert copy not in alone and named_after[copy] not in alone
        [members] = [members for title, members in boxes if title == layer]
        assert {copy, dot} <= members, members


def test_a_weight_copied_for_the_loss_and_the_optimizer_is_no_box(tmp_path):
    path = HERE / "mixed_precision_step_post.hlo.gz"
    insts = _instructions(_text(path))
    copied = {}
    for n, (opcode, operands, on) in insts.items():
        if opcode == "copy" and not on and insts[operands[0]][0] == "parameter":
            readers = {insts[r][2].split("/", 1)[0] for r in _readers(insts, n)}
            if "sparse_categorical_crossentropy" in readers and len(readers) > 1:
                copied[n] = operands[0]
    assert len(copied) == 1  # the situation: logits/bias, its add fused into the loss's kernel
    svg = _render(path, tmp_path / "m.svg")
    alone = _tooltip_names(svg)
    for copy, param in copied.items():
        assert copy not in alone and param not in alone, alone
    # nor any other parameter's copy XLA made (no op name), the step count's (``s64[]``) included,
    # which the optimizer's ``cond`` alone reads: it belongs to the optimizer's settings
    copies = {n for n, (opcode, operands, on) in insts.items()
              if opcode == "copy" and not on and insts[operands[0]][0] == "parameter"}
    assert len(copies) >= 10 and not copies & set(alone), sorted(copies & set(alone))


# The limits of a weight's preparation, on earlier rounds' steps whose pictures were right:
# what is read in several places, or read in the traced function's own scope, stays where it was.

def test_an_input_in_another_shape_read_by_each_round_is_no_box(tmp_path):
    path = HERE / "gnn_step_post.hlo.gz"  # held-out round 13: a graph network, three rounds
    insts = _instructions(_text(path))
    [(param, bitcast)] = [(operands[0], n) for n, (opcode, operands, on) in insts.items()
                          if opcode == "bitcast" and insts[operands[0]][0] == "parameter" and on == "receivers"]
    rounds = {re.search(r"/(round_\d)/", insts[r][2]).group(1) for r in _readers(insts, param)
              if re.search(r"/(round_\d)/", insts[r][2])}
    assert len(_readers(insts, bitcast)) > 1 and len(rounds) == 3  # the situation: read in every round
    svg = _render(path, tmp_path / "g.svg")
    alone = _tooltip_names(svg)
    assert param not in alone and bitcast not in alone, alone


def test_weights_copied_in_a_model_without_layers_leave_its_forward_pass_open(tmp_path):
    path = HERE / "nnx_step_post.hlo.gz"  # held-out round 11: a Flax NNX model, no op-name scopes
    text = _text(path)
    insts = _instructions(text)
    copies = [n for n, (opcode, operands, on) in insts.items()
              if operands and insts.get(operands[0], ("",))[0] == "parameter" and on.startswith("model.states")
              and on == insts[operands[0]][2] and opcode != "parameter"]
    assert len(copies) >= 8  # the situation: the kernels' copies, named as their weights are
    assert not re.search(r'op_name="jit\(train_step\)/jvp\(\w+\)/\w+/', text)  # and no layer's scope
    svg = _render(path, tmp_path / "n.svg")
    assert "forward" not in _titles(svg)  # the forward pass drawn open, not one closed box


def test_a_block_with_as_much_of_two_passes_is_titled_by_the_first(tmp_path):
    capture = tmp_path / "l2_step"  # held-out round 17: a Keras CNN with L2 penalties, SGD
    capture.mkdir()
    for part, name in (("pre.hlo", "l2_step_pre.hlo.gz"), ("post.hlo", "l2_step_post.hlo.gz"),
                       ("capture.json", "l2_step_capture.json.gz")):
        (capture / part).write_text(_text(HERE / name), encoding="utf-8")
    insts = _instructions((capture / "post.hlo").read_text(encoding="utf-8"))
    squares = {on for _opcode, _o, on in insts.values() if re.fullmatch(r"Square_\d+", on)}
    assert len(squares) >= 2  # the situation: the penalties' squares of the kernels, forward work
    svg = _render(capture, tmp_path / "l.svg")
    [texts] = [texts for _y, texts, names in _unescaped(svg) if names & squares]
    # the penalties are the loss's work, not the optimizer's: their squares read the kernels'
    # copies alone, no gradient (two of their kernels were once counted as the optimizer's,
    # through a zero the backward pass names: ``forward 4 · optimizer 2``)
    for on in squares:
        readers = [ops for _name, (_opcode, ops, op_name) in insts.items() if op_name == on]
        assert readers and all(insts[o][0] == "copy" and insts[insts[o][1][0]][0] == "parameter"
                               for ops in readers for o in ops), on
    assert texts[0].startswith("forward"), texts
    assert not any(re.search(r"\boptimizer \d+", t) for t in texts), texts
    # and a block of as many ops of two passes is titled by the one that runs first, whatever
    # order they were counted in
    assert main_pass({"optimizer": 2, "forward": 2}) == main_pass({"forward": 2, "optimizer": 2}) == "forward"
    assert main_pass({"optimizer": 3, "backward": 3}) == "backward" and main_pass({"optimizer": 3, "forward": 2}) == "optimizer"


def test_an_efficientnets_optimized_step_is_drawn_by_its_blocks_in_order(tmp_path):
    path = HERE / "effnet_v2_step_post.hlo.gz"
    text = _text(path)
    # the oracle: the blocks the op names say (``efficientnetv2-b0_1/block4b_…``), in the order
    # their names give (Keras numbers the stages, then letters the blocks of each)
    entry = "\n".join(_entry_lines(text))
    blocks = sorted(set(re.findall(r'op_name="efficientnetv2-b0_1/(block\d[a-z])_', entry)))
    assert len(blocks) >= 16
    # the situation: XLA fused the forward work of two blocks into one kernel (the end of one
    # block and the start of the next), so the blocks' layers feed each other both ways
    fused = [body for body in text.split("\nENTRY ", 1)[0].split("\n\n") if body.startswith("%fused")]
    mixed = [body for body in fused
             if len(set(re.findall(r'op_name="efficientnetv2-b0_1/(block\d[a-z])_', body))) > 1]
    assert len(mixed) >= 5
    svg = _render(path, tmp_path / "e.svg")
    tops: dict[str, float] = {}
    for y, texts, _names in _boxes(svg):
        found = re.match(r"(block\d[a-z])_\* ", texts[0])
        if found:
            assert found.group(1) not in tops, texts[0]  # one box a block (or a run of blocks)
            tops[found.group(1)] = y
    assert len(tops) >= 8, [b[1][0] for b in _boxes(svg)]
    drawn = sorted(tops, key=tops.__getitem__)
    assert drawn == [b for b in blocks if b in tops]  # top to bottom as the program runs them
    assert not [b[1][0] for b in _boxes(svg) if re.match(r"top_dropout · block of", b[1][0])]


def _scopes(*names: str) -> list[TreeNode]:
    return [TreeNode(f"s:{n}", "scope", n) for n in names]


def test_a_block_family_is_a_block_not_a_kind_of_layer():
    # the oracle: Keras's own names — ``block4b_*`` layers are one block, each of a kind of its
    # own; ``attn_1``, ``attn_2`` are one kind numbered; ``mlp_up_1`` … ``mlp_down_2`` the
    # kinds of a flat encoder's repeated layers (Keras 3 adds ``_1`` to each layer it calls)
    scoped = _scopes("attn_1_1", "attn_2_1", "mlp_up_1_1", "mlp_down_1_1", "mlp_up_2_1", "mlp_down_2_1",
                     "block4b_expand_conv_1", "block4b_expand_bn_1", "block4b_add_1",
                     "ln_1_1", "ln_2_1", "head_1", "embed_1", "pool_1", "final_ln_1", "out_1", "drop_1")
    assert block_families(scoped) == {"block4b"}


def test_a_word_every_block_shares_names_no_block():
    # MobileNetV3's ``expanded_conv_<n>_<layer>``: ``expanded`` is every block's
    scoped = _scopes(*(f"expanded_conv_{n}_{part}" for n in range(1, 5) for part in ("expand", "depthwise", "project")),
                     "conv_1", "activation_1", "block_head_a", "block_head_b")
    assert block_families(scoped) == {"block"}
