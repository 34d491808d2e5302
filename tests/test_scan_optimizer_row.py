"""The optax update of nn.scan's stacked parameters is its scanned layer's optimizer work
(issue 31, item 4).

In a Flax ViT training step with ``nn.scan`` blocks, each update reads the stacked weight (its
layer: ``ViT/blocks/mlp/fc1``) and its gradient, which leaves the scan's ``while`` in ``ViT``:
the common scope of the two is ``ViT``, so ``blocks`` had no optimizer phase at all. The oracle,
by regex over the optimized HLO: the kernels writing the new stacked ``fc1`` kernel and bias are
the ``jit(vit_train_step)/add`` fusions (optax's ``p + u``) that read the stacked parameter and
have its shape — the stack's leading 3 (``DEPTH`` in samples/loops.py) written by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from hloviz.cli import app

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def test_the_stacked_weights_updates_are_the_scanned_layers_optimizer_work():
    text = (CAPTURES / "loops_vit_train" / "post.hlo").read_text()
    expected = set()
    for part in ("kernel", "bias"):
        param = f"params__blocks____mlp____fc1____{part}__.1"
        shape = re.search(rf"^\s*%{re.escape(param)} = (f32\[3,[\d,]+\])", text, re.MULTILINE).group(1)
        expected |= set(re.findall(rf"^\s*%([\w.\-]+) = {re.escape(shape)}\S* fusion\(%{re.escape(param)},.*"
                                   r'op_name="jit\(vit_train_step\)/add"', text, re.MULTILINE))
    assert len(expected) == 2, expected
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "loops_vit_train"), "--by", "scope", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["scope"]: r for r in json.loads(result.stdout)["scopes"]}
    fc1 = rows["ViT/blocks/mlp/fc1"]["phases"]
    assert expected <= set(fc1.get("optimizer", {}).get("kernels", ())), fc1.get("optimizer")
    blocks = rows["ViT/blocks"]
    assert "optimizer" in blocks["phase"] and expected <= set(blocks["phases"]["optimizer"]["kernels"])
