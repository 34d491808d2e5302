"""Training steps of held-out rounds 26 and 27 (``benchmarks/heldout/round26*.py``,
``round27*.py``), drawn wrong before this round's fixes, each read back from the SVG of
``hloviz render`` against an oracle taken from the HLO text by regular expression.

* ``resnet_v2_step_pre.hlo.gz``: ``keras.applications.ResNet50V2`` trained one step with Lion.
  Each stage's first pre-activation runs before the stage's shortcut forks, and its last
  bottleneck pools the shortcut with a ``max_pooling2d_*`` layer: drawn by its data flow's
  waists the column was 14 blocks titled like ``conv4_block1_preact_bn · block of 2``, not the
  ``conv2_*`` … ``conv5_*`` stages its names say (ResNet50's own picture).
* ``multisteps_step_pre.hlo.gz`` / ``_post``: a Flax MLP whose updates ``optax.MultiSteps``
  accumulates. Its micro-step counter reads no gradient and feeds no update: titled
  ``forward · block of 18`` before optimization; after it, the ``out`` layer, whose ``dot``
  XLA left without an op name, was placed by its update and stood below the loss.
* ``fori_steps_pre.hlo.gz``: plain JAX training five steps in a ``lax.fori_loop``. The loop,
  whose body computes gradients, was called the optimizer's and filed as the first layer's
  update: a frame ``hidden/optimizer`` around the whole program.
* ``gated_step_post.hlo.gz`` (round 25): a Keras step whose ``pool`` is one fusion after
  optimization (and a parameter it reads), drawn as a frame around that one box between boxes.
* ``remat_step_pre.hlo.gz`` / ``_post``: a Flax MLP of ``nn.remat``'d blocks with a masked
  AdamW. Their gradients are named ``transpose(jvp(_Net))/jvp(_Net)/checkpoint/block_0/…``,
  read as a scope ``_Net/_Net/block_0``: a dozen ``backward · block of N`` boxes beside blocks
  holding forward work alone; after optimization the forward ``dense`` kernel (merged with its
  recomputation, ``…/rematted_computation/…``) was backward work.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels
from .test_overview_heldout_steps import _CLUSTER, _NODE, _TEXT, _TITLE, _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot

_SHAPE = re.compile(r'\s(?:points|d)="([^"]+)"')


def _boxes(svg: str) -> list[tuple[float, list[str], set[str]]]:
    """(top y, text lines, op names its tooltip lists) of every box in ``svg``."""
    out = []
    for body in _NODE.findall(svg):
        texts, title, shape = [html.unescape(t) for t in _TEXT.findall(body)], _TITLE.search(body), _SHAPE.search(body)
        if not texts or title is None or shape is None:
            continue
        tip = title.group(1)
        names = tip.split(" · op_name: ", 1)[1].split("\\n", 1)[0].split(" · source: ", 1)[0] if " · op_name: " in tip else ""
        ys = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", shape.group(1))][1::2]
        out.append((min(ys), texts, {n.strip() for n in names.split(",") if n.strip()}))
    return out


def test_resnet50v2s_stages_are_the_boxes_its_names_say(tmp_path):
    path = HERE / "resnet_v2_step_pre.hlo.gz"
    text = _text(path)
    blocks: dict[str, set[int]] = {}
    for stage, block in re.findall(r'op_name="[^"]*resnet50v2_1/(conv\d)_block(\d+)_', text):
        blocks.setdefault(stage, set()).add(int(block))
    stages = sorted(blocks)
    assert stages == ["conv2", "conv3", "conv4", "conv5"]
    assert [len(blocks[s]) for s in stages] == [3, 4, 6, 3]  # ResNet50's bottlenecks a stage
    # the situation: a max pool of its own kind in a stage's last block (its shortcut)
    assert len(set(re.findall(r'op_name="[^"]*resnet50v2_1/(max_pooling2d[\w]*)/', text))) == 3
    svg = _render(path, tmp_path / "r.svg")
    labels = box_labels(svg)
    frames = _frames(svg)
    tops: dict[str, float] = {}
    for stage in stages:
        closed = [y for y, label in labels if label.startswith(f"{stage}_* ")]
        framed = [(top, bottom) for title, top, bottom in frames if title.startswith(f"{stage}_* ")]
        assert len(closed) + len(framed) == 1, (stage, labels, frames)  # one box, or one frame
        if closed:
            tops[stage] = closed[0]
            continue
        # drawn open: its blocks, each once, top to bottom, every one of them, nothing else inside
        top, bottom = framed[0]
        inside = [(y, label) for y, label in labels if top < y < bottom]
        drawn = [_block_numbers(label, stage) for _y, label in inside]
        assert all(drawn), inside
        assert sorted(n for ns in drawn for n in ns) == sorted(blocks[stage]), inside
        assert [min(ns) for ns in drawn] == sorted(min(ns) for ns in drawn), inside  # in program order
        tops[stage] = top
    assert sorted(tops, key=lambda s: tops[s]) == stages  # and in program order
    # what a training step's loss beside the model left room for: stages open into their blocks
    # (``conv4_block2_* ×4``), as a ResNet's own picture reads, not four closed boxes
    assert any(title.startswith(tuple(f"{s}_* " for s in stages)) for title, _top, _bottom in frames), frames
    assert not [label for _, label in labels if " · block of " in label and label.startswith(tuple(stages))], labels


def _frames(svg: str) -> list[tuple[str, float, float]]:
    """(title, top y, bottom y) of every frame (Graphviz cluster) in ``svg``."""
    out = []
    for body in re.findall(r'<g id="clust\d+" class="cluster">(.*?)</g>', svg, re.DOTALL):
        title, shape = re.search(r"<text[^>]*>([^<]*)</text>", body), _SHAPE.search(body)
        if title and shape:
            ys = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", shape.group(1))][1::2]
            out.append((html.unescape(title.group(1)), min(ys), max(ys)))
    return out


def _block_numbers(label: str, stage: str) -> list[int]:
    """The blocks of ``stage`` a box's title names: ``conv4_block1_* (6 scopes)`` → 1;
    ``conv4_block2_* ×4 (conv4_block2_* … conv4_block5_*)`` → 2 … 5."""
    one = re.match(rf"{stage}_block(\d+)_\* (?!×)", label)
    if one:
        return [int(one.group(1))]
    run = re.match(rf"{stage}_block(\d+)_\* ×(\d+) \({stage}_block\1_\* … {stage}_block(\d+)_\*\)", label)
    if run is None:
        return []
    first, count, last = (int(g) for g in run.groups())
    return list(range(first, last + 1)) if last - first + 1 == count else []


def _entry_lines(text: str) -> list[str]:
    return text.split("\nENTRY ", 1)[1].split("\n}", 1)[0].splitlines()[1:]


def _entry_op_names(text: str) -> list[set[str]]:
    """The op names of each line of the entry (:func:`_entry_lines`): its own, and those of the
    computation it calls (a fused computation's op names say whose work a fusion does)."""
    bodies = {header: set(re.findall(r'op_name="([^"]*)"', body))
              for header, body in re.findall(r"\n%?([\w.\-]+) \([^\n]*\{\n(.*?)\n\}", text, re.DOTALL)}
    out = []
    for line in _entry_lines(text):
        called = re.search(r"calls=%?([\w.\-]+)", line)
        out.append(set(re.findall(r'op_name="([^"]*)"', line)) | (bodies.get(called.group(1), set()) if called else set()))
    return out


def test_an_accumulating_optimizers_step_counter_is_no_forward_work(tmp_path):
    path = HERE / "multisteps_step_pre.hlo.gz"
    text = _text(path)
    # the oracle: what the entry computes from the counters and constants alone (operands read
    # off each line), and the parameters holding the counters
    made: dict[str, set[str]] = {}
    counters = {"state.mini_step", "state.gradient_step"}
    from_counters: set[str] = set()
    params: set[str] = set()
    for line in _entry_lines(text):
        found = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\((.*?)\)(?:,|$)", line)
        if found is None:
            continue
        name, opcode, operands = found.groups()
        op_name = re.search(r'op_name="([^"]*)"', line)
        if opcode == "parameter":
            if op_name and op_name.group(1) in counters:
                from_counters.add(name)
                params.add(name)
            continue
        reads = set(re.findall(r"%?([\w.\-]+)(?:,|$)", operands.replace(" ", "")))
        if opcode == "constant" or (reads and reads <= from_counters | {n for n in made if made[n] == {"constant"}}):
            from_counters.add(name)
        made[name] = {opcode}
    counted = from_counters - params
    assert len(params) == 2 and len(counted) >= 6  # the situation: the counters' own arithmetic
    svg = _render(path, tmp_path / "m.svg")
    seen = 0
    for _y, texts, _names in _boxes(svg):
        listed = " ".join(t for t in texts if "parameter" in t or t.startswith("+ "))  # its own, or read
        if any(c in listed for c in counters) and texts[0] not in ("hidden", "out"):
            seen += 1
            assert not texts[0].startswith("forward"), texts
            assert not any(re.fullmatch(r"forward \d+(?: · .*)?", t) for t in texts), texts
    assert seen  # the counters are drawn in a box of their own (not only in the layers' updates)


def test_a_layer_whose_dot_lost_its_name_stands_before_the_loss(tmp_path):
    path = HERE / "multisteps_step_post.hlo.gz"
    text = _text(path)
    entry = "\n".join(_entry_lines(text))
    # the situation: the entry's dots carry no op name (XLA made them), and the loss is named
    # at the top (``jvp()``, no model scope)
    unnamed_dots = re.findall(r"^\s*%?(dot[\w.]*) = [^\n]* dot\((?![^\n]*op_name)[^\n]*$", entry, re.MULTILINE)
    assert len(unnamed_dots) >= 2
    loss = set(re.findall(r'op_name="(jit\(multisteps_step\)/jvp\(\)/[\w/]+)"', entry))
    assert loss
    svg = _render(path, tmp_path / "m.svg")
    boxes = _boxes(svg)
    tops = {texts[0]: y for y, texts, _ in boxes}
    loss_tops = [y for y, _texts, names in boxes if names & loss]
    assert "hidden" in tops and "out" in tops and loss_tops, [b[1][0] for b in boxes]
    assert tops["hidden"] < tops["out"] < min(loss_tops)


def test_a_loop_of_training_steps_is_no_update(tmp_path):
    path = HERE / "fori_steps_pre.hlo.gz"
    text = _text(path)
    # the situation: the entry's one while loop, whose body calls the computation that holds the
    # backward pass (its op names say transpose)
    assert len(re.findall(r"^\s*%?while[\w.]* = [^\n]* while\(", "\n".join(_entry_lines(text)), re.MULTILINE)) == 1
    called = re.search(r"call\([^\n]*to_apply=%?(closed_call[\w.]*)", text)  # the step the loop runs
    assert called is not None
    body = text.split(f"\n{called.group(1)} ", 1)[1].split("\n}", 1)[0]
    assert "transpose(jvp(" in body
    svg = _render(path, tmp_path / "f.svg")
    frames = _CLUSTER.findall(svg)
    assert not [f for f in frames if "optimizer" in f], frames
    assert not [texts for _y, texts, _ in _boxes(svg) if any(re.fullmatch(r"optimizer(?: \d+)?", t) for t in texts)]


def test_rematerialised_blocks_hold_their_own_gradients(tmp_path):
    path = HERE / "remat_step_pre.hlo.gz"
    text = _text(path)
    blocks = sorted(set(re.findall(r'op_name="jit\(masked_adamw_step\)/jvp\(_Net\)/(block_\d)/', text)))
    regrad = sorted(set(re.findall(r'op_name="[^"]*/transpose\(jvp\(_Net\)\)/jvp\(_Net\)/checkpoint/(block_\d)/', text)))
    assert blocks == regrad == ["block_0", "block_1"]  # the situation: each block's gradient under remat
    svg = _render(path, tmp_path / "r.svg")
    boxes = _boxes(svg)
    for block in blocks:
        [texts] = [texts for _y, texts, _ in boxes if texts[0] == block]
        assert any(re.search(r"\bbackward \d+", t) for t in texts), texts
    assert not [texts[0] for _y, texts, _ in boxes if texts[0].startswith("backward ·")]


def test_a_rematerialised_kernel_is_forward_work(tmp_path):
    path = HERE / "remat_step_post.hlo.gz"
    entry = "\n".join(_entry_lines(_text(path)))
    # the situation: XLA merged each block's forward dense with its recomputation, whose name it kept
    merged = set(re.findall(r'op_name="([^"]*/rematted_computation/block_\d/dense/dot_general)"', entry))
    assert len(merged) == 2
    assert not re.search(r'op_name="jit\(masked_adamw_step\)/jvp\(_Net\)/block_\d/dense/dot_general"', entry)
    # both blocks' layers drawn open (the overview, at 24 boxes, may close one block: then a
    # block's box holds the kernel, with all of the block's passes)
    out = tmp_path / "r.svg"
    assert main(["render", str(path), "--budget", "40", "-o", str(out)]) in (0, None)
    carrying = [texts for _y, texts, names in _boxes(out.read_text(encoding="utf-8")) if names & merged]
    assert len(carrying) == 2, carrying
    for texts in carrying:
        phases = next(t for t in texts if re.match(r"(?:forward|backward|optimizer) \d+", t))
        assert phases.startswith("forward"), texts


def test_an_embedding_updated_in_place_is_one_box(tmp_path):
    path = HERE / "tagger_step_post.hlo.gz"
    text = _text(path)
    # the situation: the embedding's forward gather, and its sparse update (a scatter) by AdamW
    assert re.search(r'op_name="functional_1/embed_1/GatherV2"', text)
    assert re.search(r'scatter\([^\n]*op_name="adam_w/', text)
    svg = _render(path, tmp_path / "t.svg")
    assert not [f for f in _CLUSTER.findall(svg) if f.startswith("embed")]  # no frame spanning the step
    [texts] = [texts for _y, texts, _ in _boxes(svg) if texts[0] == "embed"]
    assert any(re.search(r"\bforward \d+.*\boptimizer \d+", t) for t in texts), texts


def test_a_loop_conditions_unread_elements_are_one_box(tmp_path):
    path = HERE / "fori_steps_pre.hlo.gz"
    text = _text(path)
    condition = re.search(r"condition=%?([\w.]+)", text)
    assert condition is not None
    body = text.split(f"\n{condition.group(1)} ", 1)[1].split("\n}", 1)[0]
    taken = re.findall(r"^\s*%?([\w.\-]+) = \S+ get-tuple-element\(", body, re.MULTILINE)
    unread = [n for n in taken if not re.search(rf"[(,\s]%?{re.escape(n)}[,)]", body)]
    assert len(taken) == 7 and len(unread) == 6  # the situation: all taken, the counter alone read
    svg = _render(path, tmp_path / "f.svg")
    boxes = [texts for _y, texts, _ in _boxes(svg)]
    assert ["unused", f"{len(unread)} get-tuple-elements"] in [texts[:2] for texts in boxes], boxes
    assert not [texts for texts in boxes if texts[0] == "get-tuple-element" and texts[1] in unread]


def test_a_layer_of_one_kernel_is_a_box(tmp_path):
    path = HERE / "gated_step_post.hlo.gz"
    entry = "\n".join(_entry_lines(_text(path)))
    # the situation: one instruction of the entry named in ``pool``, a fusion
    assert re.findall(r'^\s*%?([\w.]+) = \S+ fusion\([^\n]*op_name="gated_1/pool_1/', entry, re.MULTILINE) \
        == ["broadcast_multiply_fusion.1"]
    assert len(re.findall(r'op_name="gated_1/pool_1/', entry)) == 1
    svg = _render(path, tmp_path / "g.svg")
    assert not [f for f in _CLUSTER.findall(svg) if f.strip() == "pool"]
    [texts] = [texts for _y, texts, _ in _boxes(svg) if texts[0] == "pool"]
    assert "1 fusion of" in texts[1], texts  # its one kernel, closed


def test_an_accumulating_optimizers_counter_stands_above_the_updates_it_feeds(tmp_path):
    path = HERE / "multisteps_step_pre.hlo.gz"
    text = _text(path)
    # the situation: optax's updates of the parameters (``p + u``, named at the step's top) and
    # MultiSteps' counter, made of the optimizer's state and returned, which the updates read
    assert len(re.findall(r'op_name="jit\(multisteps_step\)/add"', text)) >= 4
    svg = _render(path, tmp_path / "m.svg")
    boxes = _boxes(svg)
    counters = [y for y, texts, _ in boxes if any("state.mini_step" in t and "state.gradient_step" in t for t in texts)]
    updates = [y for y, _texts, names in boxes if "jit(multisteps_step)/add" in names]
    assert len(counters) == 1 and updates, [b[1][0] for b in boxes]
    assert counters[0] < min(updates)  # in program order: the count first (returned only, it was placed last)

