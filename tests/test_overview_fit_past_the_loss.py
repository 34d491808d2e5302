"""The overview of a training step fitted past its loss (``cut._deepen``): where a round of
fitting opens some nodes and cannot open the rest, and the rest are all drawn closed anyway
(the loss beside the model, ``shut``), the next levels go on — but open only what shows named
parts of the model, never a repeat's copies, loose ops or a pass alone. Before, fitting
stopped at the loss: a ResNet50V2 step's four stages stayed four closed boxes (the stage test
in ``test_overview_heldout_rounds26_27``). Each read back from the SVG of ``hloviz render``,
the oracle the HLO text by regular expression:

* ``bn_step_pre.hlo`` (held-out round 21, a Flax CNN with ``optax`` gradient clipping): the
  clipping's loose ops at the step's top level (``jit(bn_step)/sqrt``) stay in their block.
* ``scan_lm_step_pre.hlo.gz`` (held-out ``flax_scan_lm.py``): the ``nn.scan`` layer's scope, which
  holds only its stacked weights' updates before optimization, stays one box.
* ``residual_tabular_step_pre.hlo.gz`` (held-out ``apps_round4.py``, ``subclassed_adagrad_step``):
  five identical residual blocks stay one repeat ``×5``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from . import box_labels
from .test_overview_heldout_rounds26_27 import _boxes, _frames
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot


def test_a_steps_clipping_ops_stay_in_their_block(tmp_path):
    text = _text(HERE / "bn_step_pre.hlo")
    # the oracle: the ops JAX names at the step's top level, in no model scope
    top_level = set(re.findall(r"\b([\w.\-]+) = [^\n]*op_name=\"jit\(bn_step\)/[a-z_]+\"", text))
    assert {"sqrt.1", "lt.9"} <= top_level  # the situation: the global norm's square root and test
    svg = _render(HERE / "bn_step_pre.hlo", tmp_path / "b.svg")
    lone = {html.unescape(m) for m in re.findall(r'xlink:title="([\w.\-]+) = ', svg)}
    assert lone and not lone & top_level, sorted(lone)


def test_a_scanned_layers_updates_stay_one_box(tmp_path):
    path = HERE / "scan_lm_step_pre.hlo.gz"
    text = _text(path)
    # the situation: the scanned layer's sublayers, named under ``ScanLayer_0`` inside its loop
    inner = set(re.findall(r'op_name="ScanLayer_0/(\w+)/', text))
    assert {"Dense_0", "Dense_1", "LayerNorm_0", "LayerNorm_1", "SelfAttention_0"} <= inner
    svg = _render(path, tmp_path / "s.svg")
    # no frame opened onto boxes that are the optimizer's work alone (their pass line says so)
    for title, top, bottom in _frames(svg):
        inside = [texts for y, texts, _names in _boxes(svg) if top < y < bottom]
        passes = [next((t for t in texts if re.fullmatch(r"(?:forward|backward|optimizer) \d+(?: · .*)?", t)), "")
                  for texts in inside]
        assert not (inside and all(re.fullmatch(r"optimizer \d+", p) for p in passes)), (title, inside)
    assert [label for _y, label in box_labels(svg)].count("ScanLayer_0") == 1


def test_identical_residual_blocks_stay_one_repeat(tmp_path):
    path = HERE / "residual_tabular_step_pre.hlo.gz"
    text = _text(path)
    found: dict[str, list[str]] = {}
    for block, rest in re.findall(r'op_name="[^"]*tabular_1/(residual_\d)_1/([^"]*)"', text):
        found.setdefault(block, []).append(re.sub(r"_?\d+", "", rest))  # (its layers' numbers differ)
    blocks = sorted(found)
    assert blocks == [f"residual_{k}" for k in range(6)]
    # the oracle for "identical": blocks 0-4 hold the same ops; 5, the last, more (its
    # layer norm's gradient is read by the head's)
    kinds = [sorted(found[b]) for b in blocks]
    assert all(k == kinds[0] for k in kinds[1:5]) and kinds[5] != kinds[0]
    svg = _render(path, tmp_path / "t.svg")
    labels = [label for _y, label in box_labels(svg)]
    assert not [label for label in labels if re.fullmatch(r"residual_[0-4]", label)], labels
    assert [label for label in labels if label.startswith("residual_0 ×5 ")], labels
