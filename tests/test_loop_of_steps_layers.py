"""The model inside a loop of training steps, drawn layer by layer in program order, the loop
above its body (held-out rounds 69 and 70: ``benchmarks/heldout/round69.py``, ``round70.py``,
``round70_jax.py``, and rounds 65, 68, 71 and 72, whose docstrings have the capture commands; TF 2.21,
JAX 0.10).

* ``conv_steps``: a Sequential CNN's three SGD-with-momentum steps in a ``for`` over ``tf.range``.
  Its optimized loop's inputs — five momentum slots, the step count, the tuple they make —
  were a row of boxes above the loop, and the model in the body one closed box.
* ``while_loop_steps``: a functional model's four Adam steps in a ``tf.while_loop``. Before
  optimization the box of the loop's plumbing (the ``while`` among its reshapes) stood below
  its own body, and the body's layers stood closed in one ``tabular`` box.
* ``flax_fori_steps``: a Flax encoder's four AdamW steps by ``lax.fori_loop``, the parameters
  initialised in the jit. After optimization the loop stayed one closed box (it is under the
  ``jit(f)`` scope), the initialisation's ``Encoder`` drawn open beside it.

Oracles: TensorFlow's order of the forward pass (each layer's first forward op in the
pre-optimization text), the Flax module's own definition (``embed``, ``norm``, ``dropout``,
``classify``), the ``while`` ops of the HLO text by regular expression; positions from the SVG
Graphviz drew; frames from the JSON picture.
"""

from __future__ import annotations

import json
import re

from hloviz.cli import main

from . import box_labels
from .test_accumulated_and_recomputed_steps import HERE, _frames
from .test_overview_heldout_steps import _text

_WHILE = re.compile(r'^\s*%?([\w.]+) = \(.*\) while\(.*?op_name="([^"]*)"', re.MULTILINE)


def _top_loop(text: str, op_name: str = "while") -> str:
    """The name of the ENTRY computation's ``while`` of that op name (the function's own loop,
    not one of the random number generator's)."""
    entry = text[text.index("\nENTRY"):].split("\n}\n", 1)[0]
    (loop,), = [[name for name, op in _WHILE.findall(entry) if op == op_name]]
    return loop


def _render(tmp_path, name: str, stage: str) -> tuple[dict[str, float], dict]:
    """(first line of each box → its top y in the SVG, the JSON picture) of one column."""
    pre, post = HERE / f"{name}_pre.hlo.gz", HERE / f"{name}_post.hlo.gz"
    out = {}
    for fmt in ("svg", "json"):
        path = tmp_path / f"{name}_{stage}.{fmt}"
        try:
            code = main(["render", "--pre", str(pre), "--post", str(post), "--stage", stage, "-o", str(path)])
        except SystemExit as stop:
            code = stop.code
        assert code in (0, None)
        out[fmt] = path.read_text(encoding="utf-8")
    tops: dict[str, float] = {}
    for y, label in box_labels(out["svg"]):
        tops.setdefault(label, y)
    return tops, json.loads(out["json"])  # (one column: the picture itself)


def _forward_order(text: str, scope: str, ops: str) -> list[str]:
    """Each layer of ``scope`` by its first forward op (one of ``ops``) in the text."""
    first: dict[str, int] = {}
    for at, layer in enumerate(re.findall(rf'op_name="{scope}/(\w+?)_1/(?:{ops})"', text)):
        first.setdefault(layer, at)
    return sorted(first, key=first.__getitem__)


def _in_body(picture: dict, title: str, loop: str) -> bool:
    return any(f"body of {loop}" in _frames(picture, n) for n in picture["nodes"] if n["rows"][0] == title)


def test_an_optimized_loop_of_cnn_steps_is_the_models_layers_in_order(tmp_path):
    order = _forward_order(_text(HERE / "conv_steps_pre.hlo.gz"), "while/convnet_1", "Conv2D|MatMul|Reshape")
    assert order == ["conv_a", "conv_b", "flat", "logits"]  # the situation
    loop = _top_loop(_text(HERE / "conv_steps_post.hlo.gz"))
    tops, picture = _render(tmp_path, "conv_steps", "post")
    drawn = [layer for layer in order if layer in tops]  # (XLA fused ``flat``'s reshape into its reader)
    assert drawn == ["conv_a", "conv_b", "logits"], sorted(tops)
    assert sorted(drawn, key=tops.__getitem__) == drawn
    assert all(_in_body(picture, layer, loop) for layer in drawn)
    # the momentum slots and the step count going into the loop are no row of boxes of their own
    slots = [t for t in tops if t.startswith("parameter ")]
    assert len(slots) <= 1, slots
    # nor are the dropout's random bits TensorFlow drew before the loop (named inside it: ``while/…``)
    text = _text(HERE / "conv_steps_post.hlo.gz")
    entry = text[text.index("\nENTRY"):].split("\n}\n", 1)[0]
    hoisted = re.findall(r'^\s*%?([\w.-]+) = [^\n]*op_name="while/', entry, re.MULTILINE)
    assert len(hoisted) >= 3  # the situation
    holders = [n["rows"][0] for n in picture["nodes"] if set(n["instructions"]) & set(hoisted)]
    assert len(holders) == 1, holders


def test_a_loops_box_stands_above_its_body_before_optimization(tmp_path):
    text = _text(HERE / "while_loop_steps_pre.hlo.gz")
    order = _forward_order(text, "while/tabular_1", "MatMul|moments/mean|stateless_dropout/SelectV2|Relu")
    assert order == ["enc", "norm", "drop", "act", "cls"]  # the situation: the model's forward pass
    loop = _top_loop(text)
    tops, picture = _render(tmp_path, "while_loop_steps", "pre")
    assert sorted(order, key=lambda layer: tops[layer]) == order
    assert all(_in_body(picture, layer, loop) for layer in order)
    (holder,), = [[t for t in tops if t == loop or t.startswith(f"{loop} ·")]]
    assert tops[holder] < min(tops[layer] for layer in order)
    # an overview opens nothing more of the body than its model: no box of one instruction
    # but the body's parameter and its tuple (its slicing of the batch opened into the reshapes
    # TensorFlow folds away, one box each)
    ones = [n["rows"][:2] for n in picture["nodes"] if _in_body(picture, n["rows"][0], loop)
            and len(n["instructions"]) == 1 and n["rows"][0] not in ("parameter 0", "tuple")]
    assert not ones, ones


def test_a_flax_loop_of_steps_is_drawn_open_by_layer_after_optimization(tmp_path):
    loop = _top_loop(_text(HERE / "flax_fori_steps_post.hlo.gz"), "jit(flax_fori_steps)/while")
    tops, picture = _render(tmp_path, "flax_fori_steps", "post")
    order = ["embed", "norm", "dropout", "classify"]  # the module's own definition
    assert set(order) <= set(tops), sorted(tops)
    assert sorted(order, key=tops.__getitem__) == order
    assert all(_in_body(picture, layer, loop) for layer in order)
    # the parameters' initialisation beside the loop stays one box: no second ``embed``
    assert sum(n["rows"][0] == "embed" for n in picture["nodes"]) == 1


def test_a_scan_of_steps_beside_its_parameters_initialisation_is_drawn_open(tmp_path):
    # round 68's ``scan_steps`` (``benchmarks/heldout/round68_jax.py``): a ``lax.scan`` of Adam
    # steps of an MLP, its parameters initialised in the jit, the loop under the ``jit(f)``
    # scope beside the random initialisation; the loop was one closed box there
    text = _text(HERE / "scan_steps_post.hlo.gz")
    loop = _top_loop(text, "jit(scan_steps)/while")
    dots = re.findall(r'^\s*%?([\w.]+) = \S+ dot\(.*?op_name="([^"]*)"', text, re.MULTILINE)
    steps = [name for name, op in dots if op.startswith("jit(scan_steps)/while/body/")]
    assert len(steps) >= 2  # the situation: the step's dots, in the loop's body
    _tops, picture = _render(tmp_path, "scan_steps", "post")
    holders = [n for n in picture["nodes"] if set(n["instructions"]) & set(steps)]
    assert holders and all(f"body of {loop}" in _frames(picture, n) for n in holders), [n["rows"][0] for n in holders]


def test_what_a_loop_of_steps_reads_stands_above_it(tmp_path):
    # round 65's ``accumulated_flax_step`` (``benchmarks/heldout/round65_jax.py``): a Flax MLP
    # (norm → up → out) whose gradients four micro-batches sum by ``lax.fori_loop``, applied by
    # SGD after it. The batch and the zeroed sums going into the loop, named as the backward
    # pass, stood below the loop's body, their arrows running back up to the loop
    text = _text(HERE / "accumulated_flax_step_post.hlo.gz")
    loop = _top_loop(text, "jit(accumulated_flax_step)/while")
    data = re.findall(r'^\s*%?([\w.]+) = \S+ parameter\(\d+\), metadata=\{op_name="[xy]"', text, re.MULTILINE)
    assert len(data) == 2  # the situation: the batch, x and y
    tops, picture = _render(tmp_path, "accumulated_flax_step", "post")
    (holder,), = [[n["rows"][0] for n in picture["nodes"] if loop in n["instructions"]]]
    readers = [n["rows"][0] for n in picture["nodes"] if set(n["instructions"]) & set(data)]
    assert readers and all(tops[r] < tops[holder] for r in readers), (readers, holder)
    order = ["norm", "up", "out"]  # the module's own definition
    assert sorted(order, key=tops.__getitem__) == order
    assert all(_in_body(picture, layer, loop) and tops[layer] > tops[holder] for layer in order)


def test_a_layer_that_is_most_of_a_loop_body_is_no_model_to_open(tmp_path):
    # round 71's ``haiku_scan_steps`` (``benchmarks/heldout/round71_jax.py``): a ``lax.scan`` of
    # SGD steps of a Haiku MLP, hidden → ln → head, no module around them. Its LayerNorm is most
    # of the optimized body, and was opened as the body's model: its variance and five loose
    # fusions in place of one ``ln`` box
    text = _text(HERE / "haiku_scan_steps_post.hlo.gz")
    loop = _top_loop(text, "jit(haiku_scan_steps)/while")
    norm = re.findall(r'^\s*%?([\w.-]+) = .*?op_name="jit\(haiku_scan_steps\)/while/body/closed_call/jvp\(ln\)/', text,
                      re.MULTILINE)
    assert len(norm) >= 5  # the situation: the layer norm's instructions in the loop's step
    tops, picture = _render(tmp_path, "haiku_scan_steps", "post")
    order = ["hidden", "ln", "head"]  # the function's own order
    assert sorted(order, key=tops.__getitem__) == order
    assert all(_in_body(picture, layer, loop) for layer in order)
    holders = {n["rows"][0] for n in picture["nodes"] if set(n["instructions"]) & set(norm)}
    assert holders <= {"ln", "backward", "optimizer"}, holders  # (its gradient's and its update's boxes)


def test_values_a_loop_of_steps_body_never_reads_are_one_box(tmp_path):
    # round 72's ``gru_steps`` (``benchmarks/heldout/round72.py``): a Keras GRU classifier's SGD
    # steps in a ``for`` over ``tf.range``. TensorFlow's gradient of the GRU's own loop leaves
    # ``zeros_like`` constants in the body that nothing reads: they were a row of dashed boxes
    # between ``embed`` and ``gru``
    text = _text(HERE / "gru_steps_pre.hlo.gz")
    entry = text[text.index("\nENTRY"):].split("\n}\n", 1)[0]
    (body,), = [re.findall(r"^\s*%?[\w.]+ = \(.*\) while\(.*?body=%?([\w.]+)", entry, re.MULTILINE)]
    block = re.search(rf"^%?{re.escape(body)} .*?\n}}", text, re.MULTILINE | re.DOTALL).group(0)
    constants = re.findall(r"^\s*%?(zeros_like[\w.]*) = \S+ constant\(", block, re.MULTILINE)
    unread = [c for c in constants if not re.search(rf"(?<![\w.]){re.escape(c)}[,)]", block)]  # (as an operand)
    assert len(unread) >= 2  # the situation
    loop = _top_loop(text)
    tops, picture = _render(tmp_path, "gru_steps", "pre")
    holders = [n for n in picture["nodes"] if set(n["instructions"]) & set(unread)]
    assert len(holders) == 1 and set(unread) <= set(holders[0]["instructions"]), [n["rows"][:2] for n in holders]
    assert f"body of {loop}" in _frames(picture, holders[0])
    order = ["embed", "gru", "out"]  # the model's own definition
    assert sorted(order, key=tops.__getitem__) == order
    # the body's own tuple, which nothing in the body reads either, stays a box of its own
    root = re.search(r"^\s*ROOT %?([\w.]+) = ", block, re.MULTILINE).group(1)
    assert [n["rows"][0] for n in picture["nodes"] if root in n["instructions"]] == ["tuple"]


def test_a_box_of_tuples_alone_says_so(tmp_path):
    # round 71's ``text_steps`` (``benchmarks/heldout/round71.py``): a Conv1D text classifier's
    # RMSprop steps in a ``for`` over ``tf.range``; RMSprop's sparse update of the embedding
    # leaves two tuples in the optimized body, drawn as a box of their own that said "0 instructions"
    text = _text(HERE / "text_steps_post.hlo.gz")
    tuples = set(re.findall(r"^\s*%?([\w.-]+) = \(.*?\) tuple\(", text, re.MULTILINE))
    _tops, picture = _render(tmp_path, "text_steps", "post")
    assert not [n["rows"][:2] for n in picture["nodes"] if re.match(r"0 (?:instructions|ops)\b", n["rows"][1])]
    alone = [n for n in picture["nodes"] if n["instructions"] and set(n["instructions"]) <= tuples
             and n["rows"][0] != "tuple" and not n["rows"][0].startswith("ROOT")]
    assert alone  # the situation: a box holding tuples and nothing else
    for node in alone:
        k = len(node["instructions"])
        assert node["rows"][1] == f"{k} tuple{'s' if k != 1 else ''}", node["rows"]
