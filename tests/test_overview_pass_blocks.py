"""A block of the overview that is mostly one pass's work is titled by that pass, not by the layer
beside it.

Held-out round 82's Perceiver step (``benchmarks/heldout/round82.py:perceiver_triplet_step``:
Nesterov SGD with ``clipnorm`` updating a point-cloud Perceiver; fixture
``tests/data/steps/perceiver_triplet_step``, TensorFlow 2.21, XLA:CPU): before optimization, the
overview closed SGD's update of every weight (385 ``sgd/…`` instructions) and the ``embed``
layer (94) into one box titled ``embed · block of 2`` — the optimizer drawn as the model's last
Dense layer.

Oracle outside the renderer: each instruction's pass read from its op name in the HLO text
(``sgd/…``: the optimizer's), the layers' names from the model's op names
(``point_perceiver_1/<layer>_1/…``); the picture read from its boxes (``node_of``, titles).
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

PRE = Path(__file__).resolve().parent / "data" / "steps" / "perceiver_triplet_step" / "pre.hlo.gz"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', re.MULTILINE)
_LAYER = re.compile(r"^point_perceiver_1/([a-z0-9_]+?)(?:_\d+)?/")


def test_a_box_titled_by_a_layer_holds_mostly_that_layers_work_not_the_optimizers():
    text = gzip.decompress(PRE.read_bytes()).decode("utf-8")
    op_names = dict(_OP_NAME.findall(text))
    layers = {m.group(1) for op in op_names.values() if (m := _LAYER.match(op))}
    assert {"embed", "l2norm", "cross_attn", "latent_block"} <= layers, layers
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    held: dict[str, Counter[str]] = {}
    for name, key in view.node_of.items():
        if name in op_names:
            held.setdefault(key, Counter())["sgd" if op_names[name].startswith("sgd/") else "model"] += 1
    optimizer_boxes = 0
    for key, counts in held.items():
        title = view.scene.nodes[key].rows[0].text
        head = title.split(" · ")[0].rstrip("*").rstrip("_")
        if any(layer.startswith(head) for layer in layers):  # titled by a layer (``cross_*``: a group)
            assert counts["sgd"] <= counts["model"], (title, counts)
        if counts["sgd"] > counts["model"]:
            optimizer_boxes += 1
            assert head in ("optimizer", "sgd"), (title, counts)
    assert optimizer_boxes >= 2  # SGD's update and its learning-rate schedule with the clipping
