"""The overview on programs the rules were not built on: a loop's unnamed init tuple, a scanned
stack's weights passed beside the images, and forward arrows that must run down.

Found on held-out models (``benchmarks/heldout/apps_round4.py``, ``flax_remat_cnn.py``): a Flax
CNN's dropout loops put six unnamed ``tuple`` boxes above its optimized column; an LSTM text
classifier's ``dense`` stood above its ``lstm``, which feeds it; the samples' inference models
said "a gradient flowing back" of arrows in programs with no gradient. The checks run on the
samples' real captures. Oracles: the HLO text (which instruction reads which, by regex; which
op names say backward work) — never the renderer's own order or grouping.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _entry(text: str) -> list[str]:
    """The ENTRY computation's instruction lines."""
    body = text[text.index("\nENTRY "):]
    return [line for line in body[:body.index("\n}")].splitlines()[1:] if " = " in line]


def _overview(text: str):
    return draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))


#: (capture, stage) whose entry starts a loop or a call with an unnamed tuple.
LOOPS = [("loops_vit", "post"), ("loops_vit_relu", "post"), ("tf_scan", "post")]


@pytest.mark.parametrize(("capture", "stage"), LOOPS)
def test_a_loops_unnamed_init_tuple_is_drawn_with_its_loop(capture, stage):
    text = (CAPTURES / capture / f"{stage}.hlo").read_text()
    lines = _entry(text)
    tuples = [re.match(r"\s*%([\w.-]+) = ", line).group(1) for line in lines
              if re.search(r" tuple\(", line) and "op_name=" not in line and not line.lstrip().startswith("ROOT")]
    users = {t: [re.match(r"\s*(?:ROOT )?%([\w.-]+) = ", line).group(1) for line in lines
                 if re.search(rf"(?:while|call)\(%{re.escape(t)}\)", line)] for t in tuples}
    started = {t: u for t, u in users.items() if u}
    assert started, f"{capture}: the test needs a loop started from an unnamed tuple"
    view = _overview(text)
    box = view.node_of
    inside = {n: c.key for c in view.scene.all_clusters() for n in c.nodes}
    for t, loop in started.items():
        # in the loop's box, or beside it in the frame of the loop's scope (a small model drawn
        # op by op) — not a box of its own outside every scope
        frame = inside.get(box[t])
        assert box[t] == box[loop[0]] or (frame is not None and frame == inside.get(box[loop[0]])), (t, loop[0])


def test_a_scanned_stacks_weights_are_folded_into_the_box_of_its_loop():
    """JAX's ViT forward takes its weights as arguments beside the images; the scanned blocks'
    stacked weights are read by the loop alone. Drawn as boxes they made a row of 12 above the
    loop, and the loop's box, with 13 arrows in, lost them all to rows: the patch embedding then
    stood at the bottom of the optimized column."""
    text = (CAPTURES / "loops_vit" / "post.hlo").read_text()
    lines = _entry(text)
    stacked = [re.match(r"\s*%([\w.-]+) = ", line).group(1) for line in lines
               if "parameter(" in line and "params__blocks__" in line]
    loop = next(re.match(r"\s*%([\w.-]+) = ", line).group(1) for line in lines if " while(" in line)
    images = next(re.match(r"\s*%([\w.-]+) = ", line).group(1) for line in lines
                  if "parameter(" in line and 'op_name="images"' in line)
    assert len(stacked) == 16
    box = _overview(text).node_of
    assert {box[p] for p in stacked} == {box[loop]}
    assert box[images] != box[loop]  # the data is no weight: it enters where the program starts


#: Inference models (no backward op names) whose overviews had an arrow "against program order".
INFERENCE = ["jax_mlp", "matmul_chain-tf2.21", "keras_small_classify", "flax_forward", "folded_by_both", "widen_64"]
_BACKWARD = re.compile(r'op_name="[^"]*(?:gradient|transpose\(jvp|Grad)')


@pytest.mark.parametrize("capture", INFERENCE)
@pytest.mark.parametrize("stage", ["pre", "post"])
def test_every_arrow_of_an_inference_overview_runs_down(capture, stage):
    """In a program with no backward pass, every value is made above its reader in the text, so
    the overview draws every arrow down: none turned into rows "against program order"."""
    text = (CAPTURES / capture / f"{stage}.hlo").read_text()
    assert not _BACKWARD.search(text)
    notes = _overview(text).notes
    assert not [n for n in notes if "against program order" in n], notes


def test_a_forward_value_is_drawn_as_an_arrow_down_to_its_reader():
    """matmul_chain's optimized ``sine`` (inside the fusion that reads ``MatMul.2``) was drawn
    above the matmul, its input an ``← dot`` row; the arrow now runs down and ranks them."""
    text = (CAPTURES / "matmul_chain-tf2.21" / "post.hlo").read_text()
    comps = dict(re.findall(r"\n(?:ENTRY )?%([\w.-]+) .*?\{\n(.*?)\n\}", text, re.DOTALL))
    fusion = re.search(r"= \S+ fusion\(%MatMul\.2\), kind=\w+, calls=%([\w.-]+)", text)
    assert fusion and "sine(" in comps[fusion.group(1)]
    sine = re.search(r"%([\w.-]+) = \S+ sine\(", comps[fusion.group(1)]).group(1)
    view = _overview(text)
    ranked = {(e.src, e.dst) for e in view.scene.edges if e.constraint and not e.invisible}
    assert (view.node_of["MatMul.2"], view.node_of[sine]) in ranked


def test_only_a_training_step_calls_an_arrow_against_the_order_a_gradient():
    """Where an arrow still runs against program order (a block found by structure that holds
    work on both sides of another box), an inference model's note says so without naming a
    gradient; a training step's says "a gradient flowing back"."""
    vit = (CAPTURES / "loops_vit" / "post.hlo").read_text()
    assert not _BACKWARD.search(vit)
    against = [n for n in _overview(vit).notes if "against program order" in n]
    assert against and not any("gradient" in n for n in against), against
    step = (CAPTURES / "loops_vit_train" / "pre.hlo").read_text()
    assert _BACKWARD.search(step)
    assert any("against program order: a gradient flowing back" in n for n in _overview(step).notes)



def _model_and_loose_loss(layers: int = 12, loose: int = 14) -> str:
    """A step written by the test: a model scope ``net`` of ``layers`` layers, then a loss
    written op by op in the function itself (op names of no scope: ``sub_3``, ``Relu_3``…), as
    a siamese model's contrastive loss is."""
    meta = 'metadata={op_name="%s"}'
    lines = ["HloModule loose", "", "ENTRY %main () -> f32[1,8] {", f'  %x = f32[1,8]{{1,0}} parameter(0), {meta % "x"}']
    prev = "x"
    for k in range(layers):  # no two layers alike (the activations spell k in binary): no repeat
        lines += [f'  %w{k} = f32[8,8]{{1,0}} parameter({k + 1}), {meta % f"net/layer{k}/kernel"}',
                  (f"  %mm{k} = f32[1,8]{{1,0}} dot(f32[1,8]{{1,0}} %{prev}, f32[8,8]{{1,0}} %w{k}), "
                   f"lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {meta % f'net/layer{k}/MatMul'}")]
        prev = f"mm{k}"
        for bit in range(4):
            act = "tanh" if k >> bit & 1 else "logistic"
            lines.append(f'  %a{k}_{bit} = f32[1,8]{{1,0}} {act}(f32[1,8]{{1,0}} %{prev}), {meta % f"net/layer{k}/{act}"}')
            prev = f"a{k}_{bit}"
    for k in range(loose):
        op = ("negate", "exponential", "sine", "cosine")[k % 4]
        lines.append(f'  %l{k} = f32[1,8]{{1,0}} {op}(f32[1,8]{{1,0}} %{prev}), {meta % f"{op}_{k}"}')
        prev = f"l{k}"
    lines += [f"  ROOT %out = f32[1,8]{{1,0}} copy(f32[1,8]{{1,0}} %{prev}), {meta % 'Identity'}", "}", ""]
    return "\n".join(lines)


def test_a_loss_written_op_by_op_beside_the_model_leaves_room_to_open_the_model():
    """The model's layers get boxes of their own; the loose ops are blocked at their waists
    instead of taking a box each (an unseen siamese step drew its model closed beside 20 of them)."""
    text = _model_and_loose_loss()
    layers = re.findall(r'%(mm\d+) = .*op_name="net/layer\d+/MatMul"', text)
    loose = re.findall(r'%(l\d+) = .*op_name="(?:negate|exponential|sine|cosine)_\d+"', text)
    assert len(layers) == 12 and len(loose) == 14
    box = _overview(text).node_of
    assert len({box[m] for m in layers}) > 1  # the model is opened
    assert len({box[m] for m in loose}) < len(loose)  # its loss is not a box per op


def test_a_small_training_step_is_drawn_as_one_file():
    """A step whose every layer holds its own forward, backward and update has no box of the
    backward pass alone; it is a training step all the same (its text names the tape's
    gradients), read top to bottom as one file: its layers' updated weights, reaching down to
    the ROOT past the boxes between, are rows at their ends, not long arrows crossing."""
    text = (CAPTURES / "keras_grouped_train" / "pre.hlo").read_text()
    assert _BACKWARD.search(text)
    view = _overview(text)
    assert any("reaching more than" in n for n in view.notes), view.notes


def test_a_layer_stands_in_a_training_steps_file_right_below_the_layer_it_reads():
    """A Keras text classifier's LSTM layer holds its loop's setup and its outputs' gathering:
    by the middle of its instructions it stood below ``dense``, which reads its output. Moved
    below the LSTM, ``dense`` keeps its place in the step's file (the chain of invisible arrows
    that stacks the boxes in program order) right after it; so it does past the values of the
    loop nothing reads (TensorFlow's ``zeros_like`` of them, forward work read by nothing),
    which hang off the file under the LSTM."""
    text = (CAPTURES / "keras_text_train" / "pre.hlo").read_text()
    entry = text[text.index("\nENTRY "):]
    loop = re.search(r"%([\w.-]+) = [^\n]* while\(", entry).group(1)
    dense = re.search(r'%([\w.-]+) = [^\n]* dot\([^\n]*op_name="[^"]*/dense[^"/]*/MatMul"', entry).group(1)
    view = _overview(text)
    chain = {(e.src, e.dst) for e in view.scene.edges if e.invisible}
    assert (view.node_of[loop], view.node_of[dense]) in chain


def test_values_nothing_reads_are_one_closed_unused_box_in_the_overview():
    """A Keras LSTM's training step leaves constants and loop-result elements nothing reads
    (TensorFlow's ``zeros_like`` for the loop's gradient; XLA eliminates them): drawn one box
    each, they stood as a column of dashed boxes beside the model (eleven in a bidirectional
    GRU's step); one that a layer's scope names (``…/lstm/while_grad``) is drawn in its layer.
    Oracle: the entry's text — an instruction no other line names as an operand, its op name
    naming no scope."""
    text = (CAPTURES / "keras_text_train" / "pre.hlo").read_text()
    lines = _entry(text)
    body = "\n".join(lines)
    dead = []
    for line in lines:
        m = re.match(r"\s*%([\w.-]+) = .*? (constant|get-tuple-element|tuple)\(", line)
        named = re.search(r'op_name="([^"]*)"', line)
        if m and not line.lstrip().startswith("ROOT") and not re.search(rf"%{re.escape(m.group(1))}[,)]", body) \
                and (named is None or "/" not in named.group(1)):
            dead.append(m.group(1))
    assert len(dead) >= 3, dead
    view = _overview(text)
    boxes = {view.node_of[name] for name in dead}
    assert len(boxes) == 1, boxes
    assert view.scene.nodes[boxes.pop()].rows[0].text == "unused"
    detailed = draw_module(parse(text), options=ViewOptions(budget=300))
    assert len({detailed.node_of[name] for name in dead}) == len(dead)  # a detailed picture draws each
