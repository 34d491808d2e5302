"""A hand-written momentum update (``v = 0.9 * v + g``; ``p = p - lr * v``, with
``jax.tree_util.tree_map`` in a plain-JAX transformer's step, held-out round 14) decays each
velocity with a multiply that reads nothing but the velocity. No layer reads a velocity, so the
decay was placed in no layer: the decays were blocks of their own (``optimizer · block of 12``),
each drawn inside the next transformer block's repeat copy, a staircase across the page. The
decay updates the layer its sum updates (the sum reads that layer's gradient): it is drawn in
that layer's box. Keras's bias correction of each variable (reading only the step count) is
drawn with that variable's layer the same way.

The oracle is the module's text, read with regular expressions: the parameters JAX names after
their pytree paths (``params__block_0____qkv__.1``, ``velocity__block_0____qkv__.1``), the
multiply reading each velocity, and the forward ``dot`` reading the matching weight (op name
``…/jvp(block_0)/attention/dot_general``). Which box holds each instruction is the picture's own
record. The fixture is the pre-optimization module of ``benchmarks/heldout/round14_jax.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "momentum_jax_step.hlo"


def test_each_velocitys_decay_is_drawn_with_the_layer_it_updates():
    text = FIXTURE.read_text()
    weights = re.findall(r"^\s*params__(block_\d+)____(qkv|up|out|down)__\.1 = ", text, re.MULTILINE)
    assert len(weights) == 16  # four blocks of four matrices: the step it says
    pairs = []
    for block, name in weights:
        decay = re.search(rf"^\s*(mul\.\d+) = \S+ multiply\(velocity__{block}____{name}__\.1, ", text, re.MULTILINE)
        reader = re.search(rf"^\s*([\w.]+) = \S+ dot\([^\n]*\bparams__{block}____{name}__\.1\)[^\n]*jvp\({block}\)",
                           text, re.MULTILINE)
        assert decay is not None and reader is not None, (block, name)
        pairs.append((decay.group(1), reader.group(1)))
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    apart = [(d, r) for d, r in pairs if box[d] != box[r]]
    assert not apart, [(d, r, box[d], box[r]) for d, r in apart]
