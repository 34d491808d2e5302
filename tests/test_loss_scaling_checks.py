"""A mixed-precision Keras step's all-finite checks go with the layers they check (held-out round
75: ``benchmarks/heldout/round75.py``, ``mixed_vit_step``: a ViT trained under ``mixed_float16``
with ``LossScaleOptimizer(AdamW)``; TF 2.21, XLA:CPU).

The loss scaling checks every gradient: ``IsFinite_n`` → a ``reduce-window`` XLA writes without
an op name → ``All_n``, the first and last named outside every scope. With nothing named on both
sides of it inside a layer, the unnamed ``reduce-window`` was filed in the module's unnamed scope
as forward work; the update walk then stopped at it, and after optimization the twelve checks
stood as a column of one-instruction boxes while the model stayed one closed box.

Oracles: the HLO text by regular expression (the unnamed fusions reading an ``IsFinite`` fusion,
the ``All`` reductions reading them, the Keras layers the op names name); boxes from the JSON
picture.
"""

from __future__ import annotations

import re

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

from .test_accumulated_and_recomputed_steps import HERE
from .test_loop_of_steps_layers import _render
from .test_overview_heldout_steps import _text

#: ``%name = pred[…] fusion(%convert_is-finite_fusion…, …)`` with no metadata: XLA's unnamed check
_UNNAMED_CHECK = re.compile(r"^\s*%([\w.-]+) = pred\[[\d,]*\]\{?[\d,]*\}? fusion\(%convert_is-finite_fusion[\w.]*, [^)]*\), "
                            r"kind=\w+, calls=%[\w.-]+$", re.MULTILINE)
_ALL = re.compile(r'^\s*%([\w.-]+) = pred\[\] fusion\(%([\w.-]+), [^\n]*op_name="All_\d+"', re.MULTILINE)
_LAYER = re.compile(r'op_name="vit_1/(\w+?)_1/')


def test_an_unnamed_check_between_two_top_level_optimizer_ops_is_their_pass():
    text = _text(HERE / "mixed_vit_step_post.hlo.gz")
    checks = _UNNAMED_CHECK.findall(text)
    reads = dict(_ALL.findall(text))  # All_n's fusion → the check it reduces
    assert len(checks) >= 6 and set(checks) <= set(reads.values())  # the situation
    tree = build_scope_tree(parse(text), stage="post", ordered=False)
    by_name = {i.name: i for i in tree.module.instructions()}
    assert all(tree.phase_of(by_name[c]) == "optimizer" for c in checks)
    assert all(tree.phase_of(by_name[a]) == "optimizer" for a in reads)


def test_a_mixed_precision_steps_model_is_drawn_by_layer_and_no_check_is_a_box_of_its_own(tmp_path):
    text = _text(HERE / "mixed_vit_step_post.hlo.gz")
    checks = set(_UNNAMED_CHECK.findall(text)) | set(dict(_ALL.findall(text)))
    layers = set(_LAYER.findall(text))
    assert {"patches", "block_0", "block_1", "final_norm", "head"} <= layers  # the situation
    _tops, picture = _render(tmp_path, "mixed_vit_step", "post")
    boxes = [n["rows"][0] for n in picture["nodes"]]
    assert {"patches", "block_0", "final_norm", "head"} <= set(boxes), boxes
    alone = [n["rows"][:2] for n in picture["nodes"] if n["instructions"] and set(n["instructions"]) <= checks]
    assert not alone, alone
