"""Models the overview's budget squeezed, drawn by their layers (held-out round 74:
``benchmarks/heldout/round74_jax.py``; JAX 0.10, CPU), before optimization.

* ``diffusion_step``: a diffusion U-Net's ``h1`` runs from ``down1`` to ``up1``'s
  ``concatenate``, so by data flow everything between them is one block. That block — ``stem`` …
  ``up1``, seven of the U-Net's eleven layers — stayed one closed box ``up1 · block of 7``: the
  room went to the time embedding's four anonymous blocks in a row (``forward · block of 2``,
  ``of 7``, ``of 5``, ``of 3``) and to opening the step's random-number block, drawn closed anyway.
* ``simclr_step``: a contrastive step whose loss is two dozen ops of the function's own; its
  ``Encoder`` (two convolutions, two batch norms, two projections, and their ``relu`` between
  them) was one closed box beside ten blocks of the loss and six ``iota`` boxes: opened, its
  fifteen children were one box over the budget.

Oracles: the Flax modules the op names name (``jvp(UNet)/<module>/…``, by regular expression over
the HLO text) and their order in the model's definition; the time embedding's ``iota``,
``exp``, ``sin``, ``cos`` and ``concatenate`` by their op names; boxes from the JSON picture,
positions from the SVG.
"""

from __future__ import annotations

import re

from .test_accumulated_and_recomputed_steps import HERE
from .test_loop_of_steps_layers import _render
from .test_overview_heldout_steps import _text

_MODULE = re.compile(r'op_name="jit\(diffusion_step\)/jvp\(UNet\)/(\w+)/')
#: (of one or two dimensions: the other ``concatenate``, of four, joins the skip in ``up1``)
_EMBEDDING = re.compile(r'^\s*%?([\w.-]+) = \w+\[\d+(?:,\d+)?\][^\n]*op_name="jit\(diffusion_step\)/jvp\(UNet\)/'
                        r'(?:iota|exp|sin|cos|concatenate)"', re.MULTILINE)


def _boxes(picture: dict) -> list[str]:
    return [n["rows"][0] for n in picture["nodes"]]


def test_a_unets_layers_inside_its_skip_connection_are_boxes_before_optimization(tmp_path):
    layers = set(_MODULE.findall(_text(HERE / "diffusion_unet_step_pre.hlo.gz")))
    assert layers == {"stem", "down1", "downsample", "down2", "mid", "upsample", "up1", "temb_1", "temb_2",
                      "out_norm", "out"}  # the situation: the module's own definition
    _tops, picture = _render(tmp_path, "diffusion_unet_step", "pre")
    boxes = _boxes(picture)

    def drawn(layer: str) -> bool:  # a box of its own, a block it names, or a copy in a repeat's span
        return any(b == layer or b.startswith(f"{layer} ·") or re.search(rf"[(\s]{layer}\b.*\)$", b) for b in boxes)

    assert all(drawn(layer) for layer in layers), (sorted(layers), boxes)
    assert not any(b.startswith("up1 · block") for b in boxes), boxes
    assert len(boxes) <= 24


def test_a_unets_time_embedding_is_one_box(tmp_path):
    ops = _EMBEDDING.findall(_text(HERE / "diffusion_unet_step_pre.hlo.gz"))
    assert len(ops) >= 5  # the situation: iota, exp, sin, cos, concatenate
    _tops, picture = _render(tmp_path, "diffusion_unet_step", "pre")
    holders = {n["rows"][0] for n in picture["nodes"] if set(n["instructions"]) & set(ops)}
    assert len(holders) == 1, holders


_ENCODER = re.compile(r'op_name="jit\(simclr_step\)/jvp\(Encoder\)/(\w+)/')


def test_a_contrastive_steps_encoder_is_drawn_by_layer_in_order_beside_its_loss(tmp_path):
    order = ["conv0", "bn0", "conv1", "bn1", "proj1", "proj2"]  # the module's own definition
    assert set(_ENCODER.findall(_text(HERE / "simclr_step_pre.hlo.gz"))) == set(order)  # the situation
    tops, picture = _render(tmp_path, "simclr_step", "pre")
    assert set(order) <= set(tops), sorted(tops)
    assert sorted(order, key=tops.__getitem__) == order
    assert not any(b == "Encoder" or b.startswith("Encoder ·") for b in _boxes(picture))
    assert len(picture["nodes"]) <= 24
