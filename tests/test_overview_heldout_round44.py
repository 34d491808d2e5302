"""What held-out round 44 (``benchmarks/heldout/round44*.py``, written before any change) showed
drawn wrong, each checked against an oracle read from the HLO text by regular expression.

* ``unet_dice_step_pre.hlo.gz``: a Keras U-Net trained one step on a soft Dice loss written op by
  op in the step (``Sum``, ``truediv``, ``Mean``: no scope), before optimization. The model's
  backward pass reads the loss's gradient, and an unscoped op read only by the model joins it
  (a gradient summed where a layer's output forks): the whole loss, and its gradient, were drawn
  inside the ``unet`` frame — and beside it in the optimized column.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hloviz.cli import main

from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"


def _export(path: Path, out: Path) -> dict:
    try:
        code = main(["render", str(path), "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_loss_written_in_the_step_is_drawn_beside_the_model_not_in_it(tmp_path):
    path = HERE / "unet_dice_step_pre.hlo.gz"
    text = _text(path)
    # the oracle: each instruction's op name; the model's are ``unet_1/…`` (its gradients
    # ``gradient_tape/unet_1/…``), the loss's name no scope (``Sum``, ``Mean``, ``truediv``; their
    # gradients ``gradient_tape/Sum``…)
    op_of = dict(re.findall(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', text, re.MULTILINE))
    loss = {name for name, op in op_of.items()
            if re.fullmatch(r"(?:gradient_tape/)?(?:Sum|Sum_1|Mean|mul|mul_1|add|add_1|add_2|sub|truediv)(?:/\w+)?", op)}
    model = {name for name, op in op_of.items() if re.match(r"(?:gradient_tape/)?unet_1/", op)}
    # the situation: a loss of some twenty instructions, the model's hundreds
    assert len(loss) > 20 and len(model) > 300
    scene = _export(path, tmp_path / "u.json")
    parent = {c["id"]: c["parent"] for c in scene["clusters"]}
    [frame] = [c["id"] for c in scene["clusters"] if c["rows"][:1] == ["unet"]]

    def in_frame(cluster: str | None) -> bool:
        while cluster is not None:
            if cluster == frame:
                return True
            cluster = parent[cluster]
        return False

    inside = {i for node in scene["nodes"] if in_frame(node["cluster"]) for i in node["instructions"]}
    drawn = {i for node in scene["nodes"] for i in node["instructions"]}
    assert len(model & inside) > 200  # the model is drawn in its frame
    assert loss & drawn  # and the loss is drawn …
    assert not loss & inside, sorted(loss & inside)[:8]  # … beside it
