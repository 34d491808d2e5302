"""A training step's ops outside every layer that were folded at compile time are one ``folded``
box of its overview before optimization, not a box each.

An unseen PINN step (its loss written inline, ``tf.reduce_mean`` of squares, under nested
tapes) drew ten dashed boxes in a chain down its column — the gradient's seed TensorFlow builds
op by op (a reshape of 1.0, tiles to the batch, a divide by its size), all folded — and the
room they took kept its model closed. A ResNet step drew six folded broadcast zeros in a row.

Fixture: that step before and after optimization (``tests/data/orders/pinn_step_pre.hlo``,
``pinn_step_post.hlo``, made by ``pinn.py`` beside them). Oracles outside the renderer, from the
HLO text with regular expressions: which entry instructions are outside every layer (an op name
of one segment after the tape's ``gradient_tape/``) and computed from constants alone (what
constant folding can compute); the layers (``pinn/<layer>/…`` op names); the picture read from
the SVG's boxes (their tooltips start with the instruction's name, their titles with the
layer's).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels
from .test_render_overview import _column

HERE = Path(__file__).resolve().parent / "data" / "orders"
PRE, POST = HERE / "pinn_step_pre.hlo", HERE / "pinn_step_post.hlo"

pytestmark = pytest.mark.requires_dot

_INST = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = \S+ ([\w\-]+)\(([^)]*)\)[^\n]*?op_name="([^"]*)"', re.MULTILINE)
_TOOLTIP = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"=\s]+) =', re.DOTALL)


def _loose_from_constants(text: str) -> set[str]:
    """Entry instructions outside every layer computed from constants alone (not constants)."""
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    constant = set(re.findall(r'^\s*%?([\w.\-]+) = \S+ constant\(', entry, re.MULTILINE))
    out = set()
    for name, opcode, operands, op_name in _INST.findall(entry):  # text order: operands first
        args = re.findall(r"%([\w.\-]+)", operands)
        if opcode != "constant" and args and all(a in constant for a in args):
            constant.add(name)
            if "/" not in op_name.removeprefix("gradient_tape/"):
                out.add(name)
    return out


def _render(tmp_path: Path, *extra: str) -> str:
    out = tmp_path / "x.svg"
    try:
        code = main(["render", "--pre", str(PRE), "--post", str(POST), "--stage", "both", *extra, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return out.read_text(encoding="utf-8")  # (the folded ops are the module's before optimization)


def test_the_folded_seed_is_one_box_and_the_model_opens(tmp_path):
    text = PRE.read_text(encoding="utf-8")
    seed = _loose_from_constants(text)
    assert len(seed) >= 8, sorted(seed)  # the situation
    layers = set(re.findall(r'op_name="pinn_\d+/(\w+?)_\d+/', text))
    assert layers == {"hidden_1", "hidden_2", "u"}
    svg = _render(tmp_path)
    drawn = set(_TOOLTIP.findall(svg))
    assert not drawn & seed, sorted(drawn & seed)
    titles = [label for _, label in box_labels(_column(svg, "before"))]
    assert "folded" in titles
    assert layers <= set(titles), titles  # the room they took opens the model


def test_a_detailed_picture_draws_them_one_by_one(tmp_path):
    seed = _loose_from_constants(PRE.read_text(encoding="utf-8"))
    svg = _render(tmp_path, "--budget", "100")
    assert len(set(_TOOLTIP.findall(svg)) & seed) >= 8


def test_an_inference_functions_folds_stay_boxes_of_their_own(tmp_path):
    """Where no gradient is taken the folds are what the picture shows: ``samples/
    constant_folding.py:constant_arithmetic_xla`` (its two fills' product and sine, summed,
    computed by XLA at compile time), captured as ``constant_arithmetic_xla_{pre,post}.hlo``."""
    pre, post = HERE / "constant_arithmetic_xla_pre.hlo", HERE / "constant_arithmetic_xla_post.hlo"
    folded = _loose_from_constants(pre.read_text(encoding="utf-8"))
    assert {"mul.1", "Sin.1", "add.1"} <= folded  # the situation
    # … with its result handed out under a scope of its own, so that the picture has scopes
    named = pre.read_text(encoding="utf-8").replace('op_name="XLA_Retvals"', 'op_name="result/XLA_Retvals"')
    assert named.count('op_name="result/') == 3
    pre = tmp_path / "pre.hlo"
    pre.write_text(named, encoding="utf-8")
    out = tmp_path / "x.svg"
    try:
        code = main(["render", "--pre", str(pre), "--post", str(post), "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    assert {"mul.1", "Sin.1", "add.1"} <= set(_TOOLTIP.findall(out.read_text(encoding="utf-8")))
