"""A model whose skip connection spans most of it, drawn by its layers in the overview (held-out
round 74: ``benchmarks/heldout/round74_jax.py``, ``diffusion_step``; JAX 0.10, CPU).

A diffusion U-Net's ``h1`` runs from ``down1`` to ``up1``'s ``concatenate``, so by data flow
everything between them is one block. Before optimization that block — ``stem`` … ``up1``, seven
of the U-Net's eleven layers — stayed one closed box ``up1 · block of 7``: the overview's room
went to the time embedding's four anonymous blocks in a row (``forward · block of 2``, ``of 7``,
``of 5``, ``of 3``) and to opening the step's random-number block, which is drawn closed anyway.

Oracles: the Flax modules the op names name (``jvp(UNet)/<module>/…``, by regular expression over
the HLO text), and the time embedding's ``iota``, ``exp``, ``sin``, ``cos`` and ``concatenate``
by their op names; boxes from the JSON picture.
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
