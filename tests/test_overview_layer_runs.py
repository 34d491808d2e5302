"""A training step's model is cut into blocks that are runs of consecutive layers (issue 33).

Keras writes a MobileNetV3 training step's layers in one scope (``MobileNetV3Small_1/…``), each
holding its forward, backward and (credited by use) optimizer work; the overview closes them
into blocks found by structure. Cut along the whole step's arrows (the backward pass runs from
each layer back to the one before it) and ordered by each layer's first instruction (TensorFlow
writes a hard-swish's constants at the top of the module), those blocks mixed the stem with
the head's activations. Now each block must hold a run of layers in the order the forward pass
runs through them, and the blocks stand in that order.

Oracle from the HLO text, by regex: a layer's place in the forward pass is the line of its
first instruction that reads another layer's (its input arriving), else of its first one that
computes something, in the unoptimized entry computation, which lists operands before their
users (a dropout's random key is computed at the top, from no layer's data).
"""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
MODEL = "MobileNetV3Small_1"
_LINE = re.compile(r"^\s*(?:ROOT )?%(\S+) = .*?\b([a-z][a-z0-9-]*)\((.*?)\).*op_name=\"" + MODEL + r"/([^/\"]+)/")


def _pre(name: str) -> str:
    return gzip.decompress((CAPTURES / name / "pre.hlo.gz").read_bytes()).decode("utf-8")


def _forward_places(text: str) -> dict[str, int]:
    entry = text[text.index("\nENTRY "):]
    layer_of: dict[str, str] = {}
    reads: dict[str, int] = {}
    computes: dict[str, int] = {}
    for n, line in enumerate(entry.splitlines()):
        m = _LINE.match(line)
        if m is None:
            continue
        name, opcode, operands, layer = m.groups()
        layer_of[name] = layer
        if opcode in ("constant", "parameter"):
            continue
        computes.setdefault(layer, n)
        if any(layer_of.get(o, layer) != layer for o in re.findall(r"%([\w.\-]+)", operands)):
            reads.setdefault(layer, n)
    return {layer: reads.get(layer, n) for layer, n in computes.items()}


def _layers(node) -> list[str]:
    """The layer scopes a block holds (through nested blocks and repeats)."""
    out = []
    for c in node.children:
        if c.kind == "scope":
            out.append(c.name)
        elif c.kind in ("block", "repeat"):
            out.extend(_layers(c))
    return out


@pytest.mark.parametrize("name", ["mobilenet_v3_adam", "mobilenet_train_adam"])
def test_the_models_blocks_are_runs_of_layers_in_forward_order(name):
    text = _pre(name)
    places = _forward_places(text)
    assert len(places) > 100  # MobileNetV3Small's layers, from the text
    view = draw_module(hloviz.parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    model = next(n for n in view.cut.tree.nodes.values() if n.kind == "scope" and n.name == MODEL)
    blocks = [b for b in model.children if b.kind == "block"]
    assert len(blocks) >= 4, [c.key for c in model.children]
    runs = [sorted(places[s] for s in _layers(b) if s in places) for b in blocks]
    assert all(runs), runs
    # the blocks stand in forward order and never overlap: each run ends before the next starts
    for before, after in itertools.pairwise(runs):
        assert before[-1] < after[0], (before, after)
    # and each holds every layer between its first and its last: a run, nothing skipped
    held = {p for run in runs for p in run}
    for run in runs:
        between = [p for p in places.values() if run[0] <= p <= run[-1] and p in held]
        assert sorted(between) == run


_BOX = re.compile(r'<g id="node\d+" class="node">.*?<text [^>]*y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>',
                  re.DOTALL)


@pytest.mark.requires_dot
def test_a_coarse_cut_draws_the_optimizer_after_the_model_and_the_loss(tmp_path):
    # the explorer's first view of the MobileNetV3 step is cut to 8 boxes a column: the model,
    # the loss and Adam's bias corrections each one box. The bias corrections read only the step
    # count and the learning rate, and were placed before their first user (a layer's update,
    # credited to the model), above the model. Oracle: the scopes of the unoptimized entry's
    # op names, by regex: the model's forward ops come first, the optimizer's last.
    text = _pre("mobilenet_v3_adam")
    entry = text[text.index("\nENTRY "):]
    firsts: dict[str, int] = {}
    for n, m in enumerate(re.finditer(r'op_name="([^/"]+)/', entry)):
        firsts.setdefault(m.group(1), n)
    assert firsts["adam"] > firsts[MODEL] and firsts["adam"] > firsts["sparse_categorical_crossentropy"]
    from hloviz.cli import main

    out = tmp_path / "x.svg"
    # (8 boxes a column while the step counter took three rows of its own; drawn in adam's box
    # since, hloviz/render/tree/bookkeeping.py, the same cut, Adam one box, is at 5)
    assert main(["render", str(CAPTURES / "mobilenet_v3_adam"), "--stage", "both", "--budget", "5", "-o", str(out)]) in (0, None)
    before = next(p for p in out.read_text(encoding="utf-8").split('<g class="part"') if ">before optimization<" in p)
    rows = {title: float(y) for y, title in _BOX.findall(before)}
    assert {"sparse_categorical_crossentropy", "adam"} <= set(rows), sorted(rows)
    # the model: one box, or its blocks where the budget has room for them
    model = [y for title, y in rows.items() if title not in ("sparse_categorical_crossentropy", "adam", "ROOT tuple")]
    assert model, sorted(rows)
    assert max(model) < rows["sparse_categorical_crossentropy"] < rows["adam"]
    assert min(rows.values()) == min(model)


@pytest.mark.requires_dot
def test_a_model_left_one_box_by_a_coarse_cut_is_drawn_under_its_own_name(tmp_path):
    # at 8 boxes a column (4 since the step counter is drawn in sgd's box, not as three rows of
    # its own), the SGD step's budget left one node for the model's scope: it was cut into one
    # block of all its blocks, drawn as "predictions · block of 6", the model's name nowhere.
    # Oracle: the top scope of the forward ops' op names in the text, by regex
    text = _pre("mobilenet_train_sgd")
    entry = text[text.index("\nENTRY "):]
    assert f'op_name="{MODEL}/' in entry
    from hloviz.cli import main

    out = tmp_path / "x.svg"
    assert main(["render", str(CAPTURES / "mobilenet_train_sgd"), "--stage", "both", "--budget", "4", "-o",
                 str(out)]) in (0, None)
    before = next(p for p in out.read_text(encoding="utf-8").split('<g class="part"') if ">before optimization<" in p)
    titles = [title for _y, title in _BOX.findall(before)]
    assert MODEL.removesuffix("_1") in titles, titles
    assert not any(" · block of " in t and t.startswith("predictions") for t in titles), titles
