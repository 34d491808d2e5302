"""Two TensorFlow training steps written as users write them when memory is short (round 64,
``benchmarks/heldout/round64.py``), whose pictures told the optimizer's work wrong.

* ``accumulated_step``: four micro-batches' gradients summed by ``for i in tf.range(4)`` — a
  ``while`` at the top of the step whose body holds the forward *and* backward passes — then
  applied once by Adam. Its loop (and the reshapes feeding it) were called the optimizer's work,
  since Adam alone reads what it returns; and Adam's update of each layer was drawn inside a frame
  ``while › while/mlp_1 › hidden``, a loop that never runs it.
* ``recompute_step``: a residual block wrapped in ``tf.recompute_grad``, run again in the backward
  pass from ``x + 0 · gradient`` (TF's data dependency on the upstream gradient: XLA keeps no
  control dependency). The recomputed layers read a gradient, so they were titled
  ``res_in_5 · optimizer``.

Oracles from the HLO text by regular expression (the loop's name, what its body is named, Adam's
``adam/…`` and the script's layer names), never from hloviz. Fixtures:
``data/orders/{accumulated_step,recompute_step}_{pre,post}.hlo.gz`` (``hloviz dump
benchmarks/heldout/round64.py:NAME --arg … -o DIR``, TF 2.21; the arguments in that file).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.analysis.scopes import build_scope_tree
from hloviz.cli import main
from hloviz.parser import parse

from .test_overview_heldout_rounds34_36 import _capture
from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"
_OP_NAME = re.compile(r'^\s*(?:ROOT )?%?([\w.-]+) = .*?op_name="([^"]*)"', re.MULTILINE)


def _op_names(text: str) -> dict[str, str]:
    """Instruction name → op name, from the HLO text."""
    return dict(_OP_NAME.findall(text))


def _columns(tmp_path: Path, name: str) -> list[dict]:
    """The two columns of ``render --stage both -o x.json`` of the fixture pair ``name``."""
    out = tmp_path / f"{name}.json"
    try:
        code = main(["render", "--pre", str(HERE / f"{name}_pre.hlo.gz"), "--post", str(HERE / f"{name}_post.hlo.gz"),
                     "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return [c["picture"] for c in json.loads(out.read_text(encoding="utf-8"))["columns"]]


def _frames(picture: dict, node: dict) -> list[str]:
    """The titles of the frames around ``node``, innermost first."""
    by_id = {c["id"]: c for c in picture["clusters"]}
    out, at = [], node.get("cluster")
    while at is not None:
        out.append(by_id[at]["rows"][0])
        at = by_id[at]["parent"]
    return out


def _not_the_optimizers(picture: dict, instructions: set[str]) -> int:
    """Check that no box holding one of ``instructions`` is titled or framed as the optimizer's;
    return how many boxes hold them."""
    holders = [n for n in picture["nodes"] if instructions & set(n["instructions"])]
    for node in holders:
        assert "optimizer" not in node["rows"][0], node["rows"]
        assert not [f for f in _frames(picture, node) if "optimizer" in f], (node["rows"], _frames(picture, node))
    return len(holders)


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_a_loop_of_micro_batches_is_not_the_optimizers_work(stage):
    text = _text(HERE / f"accumulated_step_{stage}.hlo.gz")
    loops = re.findall(r"^\s*%?([\w.]+) = \(.*\) while\(", text, re.MULTILINE)
    assert len(loops) == 1 and re.search(r'op_name="gradient_tape/while/mlp_1/', text)  # the situation
    module = parse(text)
    tree = build_scope_tree(module, stage=stage)
    [loop] = [i for i in module.instructions() if i.name == loops[0]]
    assert tree.phase_of(loop) != "optimizer"
    inside, todo = [], list(loop.called_computations)
    while todo:
        comp = todo.pop()
        inside += comp.instructions
        todo += [c for i in comp.instructions for c in i.called_computations]
    named = [i for i in inside if i.metadata.op_name.startswith(("while/", "gradient_tape/while/"))]
    assert len(named) >= 10
    assert [i.name for i in named if tree.phase_of(i) == "optimizer"] == []
    update = [i for i in module.instructions() if i.metadata.op_name.startswith("adam/")
              and i.opcode not in ("parameter", "constant")]
    assert update and {tree.phase_of(i) for i in update} == {"optimizer"}


def test_adam_is_drawn_after_the_loop_not_inside_it(tmp_path):
    columns = _columns(tmp_path, "accumulated_step")
    for stage, picture in zip(("pre", "post"), columns, strict=True):
        text = _text(HERE / f"accumulated_step_{stage}.hlo.gz")
        names = _op_names(text)
        [loop] = re.findall(r"^\s*%?([\w.]+) = \(.*\) while\(", text, re.MULTILINE)
        [holder] = [n for n in picture["nodes"] if loop in n["instructions"]]
        assert "optimizer" not in holder["rows"][0], (stage, holder["rows"])
        assert not [f for f in _frames(picture, holder) if "optimizer" in f], (stage, _frames(picture, holder))
        adam = [n for n in picture["nodes"] if any(names.get(i, "").startswith("adam/") for i in n["instructions"])]
        assert adam, stage
        for node in adam:  # no frame of the loop's scopes holds the update that runs after it
            assert not [f for f in _frames(picture, node) if f.startswith(("while", "hidden", "logits"))], \
                (stage, node["rows"][0], _frames(picture, node))


def test_a_block_recomputed_for_its_gradient_is_not_the_optimizers_work(tmp_path):
    pre = _text(HERE / "recompute_step_pre.hlo.gz")
    names = _op_names(pre)
    # the recomputation: the layers whose dot reads ``x + 0 · gradient`` (TF's ``add_N`` of the
    # dependency), and the layer of the same block after it
    dependency = {n for n, op in names.items() if re.fullmatch(r"add_[0-9]+", op)}
    again = {re.match(r"res_in_(\d+)/", names[n]).group(1)
             for n, lhs in re.findall(r"^\s*%?([\w.]+) = f32\[4,16\]\S* dot\(f32\[4,16\]\S* %([\w.]+),", pre, re.MULTILINE)
             if lhs in dependency and names.get(n, "").startswith("res_in_")}
    assert len(again) == 2  # both blocks run again in the backward pass
    scopes = {f"res_{kind}_{k}" for kind in ("in", "out") for k in again}
    recomputed = {n for n, op in names.items() if op.split("/")[0] in scopes}
    picture = _columns(tmp_path, "recompute_step")[0]
    assert _not_the_optimizers(picture, recomputed) >= 2
    update = [n for n in picture["nodes"] if any(names.get(i, "").startswith("sgd/") for i in n["instructions"])]
    assert update and all("optimizer" in n["rows"][0] or any("optimizer" in f for f in _frames(picture, n))
                          or n["rows"][0].startswith("sgd") for n in update)


def test_a_loops_plumbing_read_by_the_gradient_loop_is_no_box_of_its_own(tmp_path):
    # a hand-written RNN (round 34): its forward loop's results go to its gradient loop in a tuple
    # (no work: read by the backward pass, it goes with what reads it, as every tuple does)
    capture = _capture(tmp_path, "loop_rnn_step")
    post = _text(capture / "post.hlo")
    assert re.search(r'op_name="gradient_tape/while/while_grad"', post)  # the situation: a loop and its gradient loop
    out = tmp_path / "l.json"
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    for picture in (c["picture"] for c in json.loads(out.read_text(encoding="utf-8"))["columns"]):
        empty = [n["rows"] for n in picture["nodes"] if not n["instructions"] or "0 instructions" in n["rows"]]
        assert empty == [], empty


def test_a_losss_element_count_is_the_losss_work(tmp_path):
    # ``tf.reduce_mean(tf.square(out - target))``: the mean's count (``4 * 16``, made of literals,
    # read by the loss alone) was drawn in an ``optimizer`` frame above the loss
    pre = _text(HERE / "recompute_step_pre.hlo.gz")
    names = _op_names(pre)
    loss = {n for n, op in names.items() if op in ("Mean", "Square", "sub")}
    count = re.findall(r"^\s*%?([\w.]+) = s32\[\] multiply\(s32\[\] %[\w.]+, s32\[\] %[\w.]+\)[^\n]*op_name=\"Mean\"",
                       pre, re.MULTILINE)
    assert count and set(count) <= loss  # the situation
    picture = _columns(tmp_path, "recompute_step")[0]
    assert _not_the_optimizers(picture, loss)


def test_a_loss_a_step_returns_computed_again_is_not_the_optimizers_work(tmp_path):
    # round 56 (``benchmarks/heldout/round56_jax.py:newton_step``): one Newton step returns
    # ``f(flat)``, the loss at the old parameters, computed from them alone, beside the update; its
    # two products (``jit(newton_step)/dot_general``, no ``jvp``) stood in an ``optimizer`` frame
    pre = _text(HERE / "newton_step_pre.hlo.gz")
    names = _op_names(pre)
    dots = set(re.findall(r'^\s*%?([\w.]+) = f32\[[\d,]*\]\S* dot\([^\n]*op_name="jit\(newton_step\)/dot_general"',
                          pre, re.MULTILINE))
    assert len(dots) == 2 and all(names[d] == "jit(newton_step)/dot_general" for d in dots)
    picture = _columns(tmp_path, "newton_step")[0]
    assert _not_the_optimizers(picture, dots)


@pytest.mark.parametrize("capture", ["transformer_train-tf2.21", "transformer_train-tf2.17"])
def test_no_box_in_a_passs_frame_is_titled_with_another_pass(tmp_path, capture):
    # the sample's hand-written Adam (``tf.Variable``s updated by the step's own ops, named like
    # forward ops): its per-weight update, 28 blocks alike, stands in the ``optimizer`` frame data
    # flow finds; titled by the names' pass it read ``forward · block of 24 ×28`` there
    out = tmp_path / "t.json"
    try:
        main(["render", str(Path(__file__).resolve().parent.parent / "samples" / "captures" / capture),
              "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    passes = ("forward", "loss", "backward", "optimizer")
    checked = 0
    for picture in (c["picture"] for c in json.loads(out.read_text(encoding="utf-8"))["columns"]):
        for node in picture["nodes"]:
            frame = next((f for f in _frames(picture, node) if f in passes), None)
            said = [p for p in passes if node["rows"][0].startswith(f"{p} · ") or f" · {p} · " in node["rows"][0]]
            if frame is not None and said:
                checked += 1
                assert said == [frame], (node["rows"][0], frame)
    assert checked >= 2


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_the_model_evaluated_at_the_new_weights_is_not_the_update(stage):
    # round 67 (``benchmarks/heldout/round67_jax.py:step_then_eval``): one SGD step of a plain JAX
    # MLP that returns ``_loss(new, x, y)`` beside ``new``; the evaluation's ops, named like the
    # update's at the top of ``jit(step_then_eval)``, read gradients through the new weights
    text = _text(HERE / f"step_then_eval_{stage}.hlo.gz")
    module = parse(text)
    tree = build_scope_tree(module, stage=stage)
    top = "jit(step_then_eval)/"
    entry = module.entry
    assert entry is not None
    # the oracle: the update is ``w - 0.1 * g``, a subtract of a weight (an entry parameter JAX names
    # ``params['w1']`` …); the evaluation multiplies the data by the new weights, ``x @ new['w1']``
    names = _op_names(text)
    weights = {n for n, op in names.items() if op.startswith("params[")}
    update = [i for i in module.instructions() if i.opcode == "subtract" and names.get(i.name) == top + "sub"
              and any(o.opcode == "parameter" and o.name in weights for o in i.operands)]
    assert {tree.phase_of(i) for i in update} <= {"optimizer"}
    if stage == "pre":  # (after optimization XLA fuses the update into the evaluation's products)
        assert len(update) == 4
        products = [i for i in entry.instructions if i.opcode == "dot" and names.get(i.name) == top + "dot_general"]
        assert len(products) == 2
        assert [i.name for i in products if tree.phase_of(i) == "optimizer"] == []


def test_the_model_evaluated_at_the_new_weights_is_drawn_as_the_loss_not_the_update(tmp_path):
    pre = _text(HERE / "step_then_eval_pre.hlo.gz")
    names = _op_names(pre)
    evaluation = {n for n, op in names.items() if op in ("jit(step_then_eval)/dot_general", "jit(step_then_eval)/tanh")}
    assert len(evaluation) == 3
    picture = _columns(tmp_path, "step_then_eval")[0]
    assert _not_the_optimizers(picture, evaluation)


def test_an_embeddings_gradient_densified_for_the_tapes_sum_is_not_the_update(tmp_path):
    # the sample TF transformer step: TensorFlow densifies the embedding's sparse gradient with a
    # ``scatter`` into zeros, which the tape's ``AddN`` then sums with the tied output layer's; read
    # by that backward sum (nothing differentiates the update), it is no optimizer's work, though
    # it reads a gradient and feeds Adam (it was drawn ``AddN · optimizer``)
    capture = Path(__file__).resolve().parent.parent / "samples" / "captures" / "transformer_train-tf2.21"
    pre = (capture / "pre.hlo").read_text(encoding="utf-8")
    names = _op_names(pre)
    scatters = re.findall(r"^\s*%?([\w.]+) = f32\[[\d,]+\]\S* scatter\(", pre, re.MULTILINE)
    summed = [s for s in scatters
              if re.search(rf"^\s*%?[\w.]+ = \S+ add\([^\n]*%{re.escape(s)}[,)][^\n]*op_name=\"AddN", pre, re.MULTILINE)]
    assert summed and all(names[s].startswith("AddN") for s in summed)  # the situation
    out = tmp_path / "t.json"
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    assert _not_the_optimizers(json.loads(out.read_text(encoding="utf-8"))["columns"][0]["picture"], set(summed))
