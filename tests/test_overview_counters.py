"""A Keras training step's step counter is drawn in its optimizer's box, never as rows of its own.

Keras's optimizer reads its ``iteration`` variable, adds one (an op TensorFlow names ``Add``,
with no scope) and hands it back (``XLA_Retvals``: a reshape and a copy). The overview of every
Keras training step drew ``add``, ``reshape``, ``copy`` (and, for SGD, the parameter) as boxes
of their own above the model (issue 33, goal 2: bookkeeping never takes rows of its own).

Oracle, outside the renderer: the counter's instructions are found by regex in ``pre.hlo`` —
the entry parameter ``capture.json`` names ``<optimizer>/iteration``, the instructions whose
operands are it (or them) and constants, followed to the root — and the optimizer's are the
instructions whose ``op_name`` starts with ``<optimizer>/``.
"""

from __future__ import annotations

import json
import re

import pytest

from hloviz import parse
from hloviz.capture import load_target
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

from .test_explorer import read_hlo
from .test_overview_layer_runs import CAPTURES

#: every sample training step whose capture names its optimizer's step counter
STEPS = ["cnn_sgd", "cnn_adam", "keras_small_train_step", "mobilenet_v3_adam", "mobilenet_train_sgd"]

_LINE = re.compile(r"^\s*(?:ROOT )?%(\S+) = [^=]*?\b([a-z][\w-]*)\((.*?)\)(?:, |$)(.*)$")


def _entry_lines(text: str) -> list[tuple[str, str, str, list[str], str]]:
    """(name, opcode, what its parentheses hold, operand names, rest) of each instruction of the
    ENTRY computation (a tuple-shaped one, whose shape holds ``/*index=5*/``, is skipped)."""
    entry = text[text.index("\nENTRY "):]
    out = []
    for line in entry.splitlines()[1:]:
        m = _LINE.match(line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3), re.findall(r"%([\w.\-]+)", m.group(3)), m.group(4)))
    return out


def _counter(name: str, stage: str) -> tuple[str, set[str], set[str]]:
    """The optimizer's scope, the counter's instructions (the parameter first among them) and
    the optimizer's own instructions, from the capture's files alone."""
    info = json.loads((CAPTURES / name / "capture.json").read_text(encoding="utf-8"))
    number, known = next((k, v) for k, v in info["parameter_names"].items() if v.endswith("/iteration"))
    optimizer = known.rsplit("/", 1)[0]
    lines = _entry_lines(read_hlo(CAPTURES / name / f"{stage}.hlo"))
    param = next(n for n, op, args, _o, _r in lines if op == "parameter" and args == number)
    constants = {n for n, op, _a, _o, _r in lines if op == "constant"}
    counter = {param}
    for n, op, _args, operands, rest in lines:  # text order: an operand is defined before its user
        if op == "tuple" or f'op_name="{optimizer}/' in rest or not operands:
            continue
        if any(o in counter for o in operands) and all(o in counter or o in constants for o in operands):
            counter.add(n)
    own = {n for n, _op, _a, _o, rest in lines if f'op_name="{optimizer}/' in rest}
    return optimizer, counter, own


@pytest.mark.parametrize("stage", ["pre", "post"])
@pytest.mark.parametrize("name", STEPS)
def test_the_step_counter_is_drawn_in_its_optimizers_box(name, stage):
    optimizer, counter, own = _counter(name, stage)
    assert len(counter) >= 2, counter  # the parameter, the add (a fusion, after optimization), …
    cap = load_target(str(CAPTURES / name))
    module = parse(cap.pre_text if stage == "pre" else cap.post_text)
    view = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET), info=cap.info)
    boxes = view.node_of
    drawn = {boxes[n] for n in counter if n in boxes}
    assert drawn, "none of the counter's instructions is drawn"
    # one box or cluster: every counter instruction shares its box with the optimizer's work
    # (the optimizer closed, or the counter inside it opened: then none is a top-level row)
    optimizer_boxes = {boxes[n] for n in own if n in boxes}
    alone = sorted(n for n in counter if n in boxes and boxes[n] not in optimizer_boxes
                   and not _inside(view, boxes[n], optimizer))
    assert not alone, (f"{name}: drawn outside {optimizer}'s box: {alone}")


def _inside(view, unit: str, optimizer: str) -> bool:
    """Whether the drawn unit lies in a cluster of ``optimizer``'s scope (the scope drawn open)."""
    cut = view.cut
    if cut is None:
        return False
    for key in view.drawn_as:
        if view.drawn_as[key] == unit:
            node = cut.tree.nodes[key]
            while node is not None:
                if node.kind == "scope" and node.name == optimizer:
                    return True
                node = node.parent
    return False


#: the SGD steps: the learning rate is a parameter every layer's update reads
SGD_STEPS = ["cnn_sgd", "keras_small_train_step", "mobilenet_train_sgd"]


@pytest.mark.parametrize("name", SGD_STEPS)
def test_the_learning_rate_is_folded_into_the_optimizers_work(name):
    # SGD's learning rate is read by every layer's update: in an opened optimizer the overview
    # drew it as a box of its own with an arrow to each update block (goal 2: an optimizer's
    # setting, like a weight, goes into the box that uses it). Oracle: the parameter capture.json
    # names ``<optimizer>/learning_rate`` and its readers, by regex over pre.hlo.
    info = json.loads((CAPTURES / name / "capture.json").read_text(encoding="utf-8"))
    number = next(k for k, v in info["parameter_names"].items() if v.endswith("/learning_rate"))
    lines = _entry_lines(read_hlo(CAPTURES / name / "pre.hlo"))
    param = next(n for n, op, args, _o, _r in lines if op == "parameter" and args == number)
    readers = {n for n, _op, _a, operands, _r in lines if param in operands}
    assert len(readers) >= 2, readers
    cap = load_target(str(CAPTURES / name))
    view = draw_module(parse(cap.pre_text), options=ViewOptions(budget=OVERVIEW_BUDGET), info=cap.info)
    boxes = view.node_of
    assert param in boxes
    shared = {n for n, box in boxes.items() if box == boxes[param]} - {param}
    assert shared, f"{name}: the learning rate {param} is a box of its own"


@pytest.mark.parametrize("name", SGD_STEPS)
def test_each_learning_rate_broadcast_is_drawn_with_the_layer_it_updates(name):
    # SGD broadcasts the learning rate to each weight's shape (``sgd/Mul``: broadcast(lr)) before
    # that weight's update reads it. Reading no layer, the broadcasts stayed in the optimizer's
    # box — opened, a row of ``broadcast`` boxes. Oracle, by regex over pre.hlo and capture.json:
    # each broadcast's users, followed to the instruction that reads the weight it updates (an
    # entry parameter named ``[model/]<layer>/kernel``); the broadcast shares a box with an op of
    # that layer (``op_name="…/<layer>/…"``).
    info = json.loads((CAPTURES / name / "capture.json").read_text(encoding="utf-8"))
    names = dict(info["parameter_names"])
    lr_number = next(k for k, v in names.items() if v.endswith("/learning_rate"))
    lines = _entry_lines(read_hlo(CAPTURES / name / "pre.hlo"))
    params = {n: names.get(args) for n, op, args, _o, _r in lines if op == "parameter"}
    lr = next(n for n, op, args, _o, _r in lines if op == "parameter" and args == lr_number)
    users: dict[str, list[str]] = {}
    for n, _op, _a, operands, _r in lines:
        for o in operands:
            users.setdefault(o, []).append(n)
    operands_of = {n: operands for n, _op, _a, operands, _r in lines}
    optimizer = names[lr_number].rsplit("/", 1)[0]
    weights = {p: v for p, v in params.items() if v and "/" in v and not v.startswith(f"{optimizer}/")}
    for n, op, _a, operands, _r in lines:  # the weight read through a copy or a reshape of it
        if op in ("copy", "reshape", "bitcast", "convert") and len(operands) == 1 and operands[0] in weights:
            weights[n] = weights[operands[0]]
    cap = load_target(str(CAPTURES / name))
    view = draw_module(parse(cap.pre_text), options=ViewOptions(budget=OVERVIEW_BUDGET), info=cap.info)
    boxes = view.node_of
    op_names = {n: re.search(r'op_name="([^"]*)"', rest).group(1) for n, _op, _a, _o, rest in lines
                if 'op_name="' in rest}
    checked = 0
    for b, op, _args, operands, _r in lines:
        if op != "broadcast" or operands != [lr]:
            continue
        todo, seen, layer = [b], {b}, None
        while todo and layer is None:  # breadth-first to the update reading a weight
            for u in users.get(todo.pop(0), ()):
                hit = [weights[o] for o in operands_of.get(u, ()) if o in weights]
                if hit:
                    layer = hit[0].split("/")[-2]
                    break
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
        assert layer is not None, b
        mates = {n for n, box in boxes.items() if box == boxes[b]}
        # (Keras 3 names a layer's call ``conv1_1``: the layer ``conv1``)
        assert any(re.search(rf"/{layer}(_\d+)?/", op_names.get(m, "")) for m in mates), (b, layer, sorted(mates)[:6])
        checked += 1
    assert checked >= 4, checked


@pytest.mark.parametrize("name", STEPS)
def test_no_box_of_the_overview_is_a_result_on_its_way_out(name):
    # TensorFlow hands each result out through a reshape and a copy (op_name ``XLA_Retvals``);
    # in an opened scope (the optimizer's, holding only the step counter) they were drawn as two
    # boxes under the value they hand out. Oracle: those instructions by regex over pre.hlo;
    # each shares its box with an instruction that is not one of them.
    lines = _entry_lines(read_hlo(CAPTURES / name / "pre.hlo"))
    results = {n for n, op, _a, _o, rest in lines if op in ("reshape", "copy") and 'op_name="XLA_Retvals"' in rest}
    assert len(results) >= 4, results
    cap = load_target(str(CAPTURES / name))
    view = draw_module(parse(cap.pre_text), options=ViewOptions(budget=OVERVIEW_BUDGET), info=cap.info)
    boxes = view.node_of
    held: dict[str, set[str]] = {}
    for n, box in boxes.items():
        held.setdefault(box, set()).add(n)
    alone = sorted(n for n in results if n in boxes and held[boxes[n]] <= results)
    assert not alone, alone


_WEIGHT_AND_COUNTER = """HloModule step, entry_computation_layout={(f32[2,2]{1,0}, s64[], f32[2,2]{1,0})->(f32[2,2]{1,0}, s64[])}

ENTRY %step (w: f32[2,2], n: s64[], x: f32[2,2]) -> (f32[2,2], s64[]) {
  %w = f32[2,2]{1,0} parameter(0), metadata={op_name="params['d']['w']"}
  %n = s64[] parameter(1), metadata={op_name="XLA_Args"}
  %x = f32[2,2]{1,0} parameter(2), metadata={op_name="XLA_Args"}
  %bitcast.1 = f32[2,2]{1,0} bitcast(f32[2,2]{1,0} %w), metadata={op_name="params['d']['w']"}
  %dot.1 = f32[2,2]{1,0} dot(f32[2,2]{1,0} %x, f32[2,2]{1,0} %bitcast.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="Net/d/dot"}
  %one = s64[] constant(1)
  %Add.1 = s64[] add(s64[] %n, s64[] %one), metadata={op_name="Add"}
  %XLA_Retvals.1 = s64[] reshape(s64[] %Add.1), metadata={op_name="XLA_Retvals"}
  ROOT %t = (f32[2,2]{1,0}, s64[]) tuple(f32[2,2]{1,0} %dot.1, s64[] %XLA_Retvals.1)
}
"""


def test_a_counter_is_bookkeeping_a_weights_bitcast_is_not():
    # The counter (``n + 1`` handed back) goes to the scope its parameter is drawn in; a weight's
    # bitcast read by its layer's ``dot`` is that layer's input, not bookkeeping: filed with the
    # weight's scope (the training step's top, where the optimizer reads it too) it widened an
    # unseen Flax step's overview from 2,546 to 3,298 pt. Oracle: the module above, by construction.
    from hloviz.render.tree.bookkeeping import place_counters

    module = parse(_WEIGHT_AND_COUNTER)
    comp = module.entry
    by = {i.name: i for i in comp.instructions}
    users: dict = {}
    for inst in comp.instructions:
        for op in inst.operands:
            users.setdefault(op, []).append(inst)
    from types import SimpleNamespace

    top, layer = SimpleNamespace(phases={"forward": 9}), SimpleNamespace(phases={"forward": 2})
    optimizer = SimpleNamespace(phases={"optimizer": 40, "forward": 1})
    own = {id(i): None for i in comp.instructions}
    own.update({id(by["w"]): top, id(by["dot.1"]): layer, id(by["n"]): optimizer})
    phases = place_counters(comp, own, users, {}, lambda _path: None)  # type: ignore[arg-type]
    assert own[id(by["bitcast.1"])] is None  # left for its reader's layer
    assert own[id(by["Add.1"])] is optimizer and own[id(by["XLA_Retvals.1"])] is optimizer
    assert own[id(by["one"])] is optimizer  # the counter's own constant
    assert phases[id(by["Add.1"])] == "optimizer" and id(by["bitcast.1"]) not in phases


def test_adamws_step_count_is_folded_into_the_optimizers_work():
    # A Keras AdamW step (benchmarks/heldout/opt_steps.py, its unoptimized module kept in
    # tests/data/steps/keras_adamw): the step count ``adam_w/iteration`` is read by several of the
    # opened optimizer's blocks (its bias corrections), and was a box of its own with an arrow to
    # each — an optimizer's setting, folded like a weight into the first block reading it. Oracle:
    # the parameter capture.json names and its readers, by regex over the text.
    import gzip
    from pathlib import Path

    folder = Path(__file__).resolve().parent / "data" / "steps" / "keras_adamw"
    info = json.loads((folder / "capture.json").read_text(encoding="utf-8"))
    text = gzip.decompress((folder / "pre.hlo.gz").read_bytes()).decode("utf-8")
    number = next(k for k, v in info["parameter_names"].items() if v == "adam_w/iteration")
    lines = _entry_lines(text)
    count = next(n for n, op, args, _o, _r in lines if op == "parameter" and args == number)
    readers = {n for n, _op, _a, operands, _r in lines if count in operands}
    assert len(readers) >= 2, readers
    boxes = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET), info=info).node_of
    assert count in boxes, "the step count is in no box"
    mates = {n for n, box in boxes.items() if box == boxes[count]}
    assert mates - {count}, "the step count is a box of its own"


def test_a_folded_result_is_not_called_unnamed():
    # the step counter's XLA_Retvals reshape and copy, folded into its add, were named on that box as
    # "+ copy ×1, reshape ×1 (no op_name)", which they have. Oracle: the add of the parameter
    # capture.json names ``sgd/iteration`` and the op names of what reads it, by regex over pre.hlo.
    info = json.loads((CAPTURES / "cnn_sgd" / "capture.json").read_text(encoding="utf-8"))
    number = next(k for k, v in info["parameter_names"].items() if v == "sgd/iteration")
    lines = _entry_lines(read_hlo(CAPTURES / "cnn_sgd" / "pre.hlo"))
    count = next(n for n, op, args, _o, _r in lines if op == "parameter" and args == number)
    add = next(n for n, op, _a, operands, _r in lines if op == "add" and count in operands)
    out_of_it = [rest for _n, _op, _a, operands, rest in lines if operands == [add]]
    assert out_of_it and all('op_name="XLA_Retvals"' in rest for rest in out_of_it)
    # the overview draws SGD's own scope, which holds the counter alone, closed: opened in place
    # (as the explorer opens it), the add is a box of its own
    module = parse(read_hlo(CAPTURES / "cnn_sgd" / "pre.hlo"))
    first = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET), info=info)
    [sgd] = [n.key for n in first.cut.nodes if n.kind == "scope" and n.name.startswith("sgd")]
    view = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET, open=(sgd,)), info=info)
    box = view.scene.nodes[view.node_of[add]]
    text = " ".join(r.text for r in box.rows)
    assert add in text
    assert "XLA_Retvals: handing it out" in text and "no op_name" not in text
