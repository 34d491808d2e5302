"""Two kinds of value the overview no longer draws as boxes of their own.

* A weight a JAX function closes over is a constant of its module (``jax.jit`` bakes it in), read
  by its layer and by the update: drawn as a box above them with arrows to both, it is now
  folded, as a row naming it, into its first reader (and named on the others), as a weight
  passed as an argument is. Fixture: ``tests/data/orders/closed_over_step.hlo``, made by
  ``tests/data/orders/closed_over.py`` (JAX, CPU). A Flax CNN closing over its weights draws its
  layers (``conv1`` … ``head``) as boxes of their own, each with its weight; they were cut into
  waist blocks of two (``conv1 · block of 2``) while its inline ops' gradients stood as single
  boxes beside them (now blocked: ``test_overview_loose_blocks``). Fixture:
  ``tests/data/orders/bn_step_pre.hlo``, the pre-optimization module of
  ``benchmarks/heldout/round21_jax.py:bn_step`` (JAX, CPU; ``hloviz dump … -o DIR``).
* Weights that structure closed into a block of their own (the twelve stacked weights a ViT's
  ``lax.scan`` carries, ``blocks · parameter · block of 12``; a Flax ``nn.scan`` layer's kernel
  and bias, seven such blocks in a row 3,466 pt wide) are folded into their reader as one
  parameter is. Fixture: the ``loops_vit`` sample capture.
* After optimization, such weights (XLA keeps them constants of the optimized module) are filed
  with the layer that first reads them, as a parameter is: left beside the model, structure
  closed twelve of an unseen Flax MLP-Mixer's into a block of their own above it (``forward ·
  block of 12``, ``constant ×12``, a row of weights). Fixture:
  ``tests/data/orders/mixer_step_post.hlo.gz``, the optimized module of
  ``benchmarks/heldout/round22_jax.py:mixer_step`` less its source locations.
* Constants nothing reads inside a scope (TensorFlow's ``tf.scan`` leaves its ``TensorArray``
  sizes and loop bounds in ``rnn/scan``; a seq2seq step's RMSprop left six constants of a
  sparse gradient's shape in its frame) are one closed ``unused`` box of that scope, as values
  outside every scope were already; what a fold made stays a box of its own (the picture is
  for it). Fixture: the ``tf_scan`` sample capture.

Oracles: the HLO text, read with regular expressions — which instructions read each value
(``%name`` as an operand), each one's ``op_name`` and shape.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.api import render
from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

ROOT = Path(__file__).resolve().parent
CLOSED = ROOT / "data" / "orders" / "closed_over_step.hlo"
CNN = ROOT / "data" / "orders" / "bn_step_pre.hlo"
SCAN = ROOT.parent / "samples" / "captures" / "tf_scan"
VIT = ROOT.parent / "samples" / "captures" / "loops_vit"
_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = (\S+) (\S+?)\((.*)$", re.MULTILINE)


def _instructions(text: str) -> dict[str, tuple[str, str, str]]:
    """name → (shape, opcode, rest of the line) for every instruction of every computation."""
    return {name: (shape, op, rest) for name, shape, op, rest in _LINE.findall(text)}


def _readers(text: str, name: str) -> set[str]:
    pattern = re.compile(rf"[(,]\s*%?{re.escape(name)}[,)\s]")
    return {n for n, (_s, _op, rest) in _instructions(text).items() if n != name and pattern.search("(" + rest)}


def _held(node_of: dict[str, str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for inst, box in node_of.items():
        out.setdefault(box, set()).add(inst)
    return out


def test_a_closed_over_weight_is_folded_into_the_layer_that_reads_it():
    text = CLOSED.read_text(encoding="utf-8")
    insts = _instructions(text)
    weights = [n for n, (shape, op, _r) in insts.items() if op == "constant" and re.search(r"\[\d+,\d+\]", shape)]
    assert len(weights) == 2  # the two layers' kernels
    # each layer opened in place, as a double-click in the explorer opens it (the overview draws
    # a layer that runs in both passes closed, its weight inside)
    module = parse(text)
    shut = [n.key for n in draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET)).cut.nodes if n.shut]
    assert len(shut) == 2, shut
    node_of = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET, open=tuple(shut))).node_of
    held = _held(node_of)
    for w in weights:
        readers = _readers(text, w)
        assert len(readers) >= 2  # its layer and the update
        box = node_of[w]
        assert held[box] != {w}, f"{w} is a box of its own"
        assert held[box] & readers, f"{w} is folded into a box that does not read it"


def test_a_closed_over_cnns_layers_are_boxes_of_their_own_with_their_weights():
    text = CNN.read_text(encoding="utf-8")
    entry = text[text.index("\nENTRY "):]
    insts = _instructions(entry)
    layer_of = {n: m.group(1) for n, (_s, _op, rest) in insts.items()
                if (m := re.search(r'op_name="[^"]*/jvp\(_Net\)/(\w+)/', rest))}
    layers = list(dict.fromkeys(layer_of.values()))  # in the entry's instruction order
    assert layers == ["conv1", "bn1", "conv2", "bn2", "drop", "head"], layers
    weights = {n: next(layer_of[r] for r in insts if r in _readers(entry, n) and r in layer_of)
               for n, (shape, op, _r) in insts.items()
               if op == "constant" and re.search(r"\[\d+(,\d+)*\]", shape) and _readers(entry, n) & set(layer_of)}
    assert {"conv1", "conv2", "head"} <= set(weights.values())  # the situation: kernels closed over
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    cut_key = {scene: key for key, scene in view.drawn_as.items()}
    box_of = {n: cut_key.get(k, k) for n, k in view.node_of.items()}
    forward = [(i, layer) for i, layer in layer_of.items() if "transpose(" not in insts[i][2] and i in box_of]
    assert {layer for _i, layer in forward} == set(layers)
    for inst, layer in forward:  # each layer's forward ops are a box (or a frame) of that layer
        assert f"s:{layer}" in box_of[inst].split("/"), (inst, layer, box_of[inst])
    for w, layer in weights.items():  # and its weight is with it
        assert f"s:{layer}" in box_of[w].split("/"), (w, layer, box_of[w])


def test_no_optimized_box_holds_weight_constants_alone():
    import gzip

    text = gzip.decompress((ROOT / "data" / "orders" / "mixer_step_post.hlo.gz").read_bytes()).decode("utf-8")
    entry = text[text.index("\nENTRY "):]
    insts = _instructions(entry)
    layer = {n: m.group(1) for n, (_s, _op, rest) in insts.items()
             if (m := re.search(r'op_name="[^"]*/jvp\(_Mixer\)/(\w+)/', rest))}
    weights = {n for n, (shape, op, _r) in insts.items() if op == "constant" and re.search(r"\[\d+(,\d+)+\]", shape)}
    read_by = {w: {layer[r] for r in _readers(entry, w) if r in layer} for w in weights}
    assert len({frozenset(v) for v in read_by.values() if v}) >= 2  # the situation: weights of several layers
    node_of = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    held = _held(node_of)
    for box, members in held.items():
        assert not (len(members) >= 2 and members <= weights), f"{box} holds weights alone: {sorted(members)}"


@pytest.mark.parametrize(("capture", "column"), [("loops_vit", 0), ("loops_vit_train", 1)])
def test_no_box_holds_weights_alone(capture, column):
    """``column`` 0 is the pre-optimization one, 1 the optimized one (the ViT training step's
    stacked weights, there a repeat of blocks of parameters read by a block of AdamW's updates:
    a box of its own until a weight was known as one by the optimizer's instructions that read
    it, not by the first member of the box they are drawn in, one of Adam's moments)."""
    import gzip

    path = VIT.parent / capture / ("pre.hlo" if column == 0 else "post.hlo")
    text = path.read_text(encoding="utf-8") if path.exists() else gzip.decompress(
        path.with_name(path.name + ".gz").read_bytes()).decode("utf-8")
    entry = text[text.index("\nENTRY "):]
    params = {n for n, (_s, op, _r) in _instructions(entry).items() if op == "parameter"}
    # the situation: the stacked weights of the ViT's scanned ``blocks`` (``params['blocks']…``,
    # one array per weight, a leading dimension per block), which only the loop reads
    carried = [p for p in params if p.startswith("params__blocks__")]
    assert len(carried) >= 2, carried
    picture = render(str(VIT.parent / capture), stage="both", fmt="dot")
    node_of = picture.views[column][1].node_of
    for box, held in _held(node_of).items():
        assert not (len(held) >= 2 and held <= params), f"{box} holds parameters alone: {sorted(held)}"
    drawn = [p for p in carried if p in node_of]
    assert drawn and all(_held(node_of)[node_of[p]] - params for p in drawn)  # each is with what reads it


def test_values_nothing_reads_in_a_scope_are_one_unused_box():
    text = (SCAN / "pre.hlo").read_text(encoding="utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    unread = [name for name, op_name in re.findall(r'^\s*%?([\w.\-]+) = \S+ constant\(.*?op_name="(rnn/scan/[^"]*)"',
                                                    entry, re.MULTILINE)
              if not _readers(entry, name)]
    assert len(unread) >= 6  # the situation: the TensorArray sizes and the loop bounds nobody reads
    picture = render(str(SCAN), stage="both", fmt="dot")
    node_of = picture.views[0][1].node_of  # the pre-optimization column
    drawn = [n for n in unread if n in node_of]
    held = _held(node_of)
    shared = {node_of[n] for n in drawn if len(held[node_of[n]] & set(unread)) >= 2}
    assert len(shared) == 1, {n: node_of[n] for n in drawn}
    [box] = shared
    assert held[box] <= set(unread), held[box] - set(unread)  # the unused box holds nothing read
    # the rest stand alone: what TensorFlow folded (four ``TensorArrayV2`` sizes), the picture's point
    alone = [n for n in drawn if node_of[n] != box]
    assert all(held[node_of[n]] == {n} for n in alone)
    assert 1 <= len(alone) < len(held[box]), alone
