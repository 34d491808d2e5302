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
        found = re.search(rf"^\s*%{re.escape(param)} = (f32\[3,[\d,]+\])", text, re.MULTILINE)
        assert found, param
        shape = found.group(1)
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


def test_the_scanned_attention_weights_updates_are_credited_by_what_they_update():
    """nn.scan's attention weights are named ``params['blocks']['attn']['key']['kernel']``
    while the ops reading them say ``blocks/attn/attn/key/…`` (Flax's MultiHeadDotProductAttention
    inside the ``attn`` module): the name designates no scope, and the updates were left at
    ``ViT``. The parameter is followed into the scan to the layer that reads it. The oracle, by
    regex: the mismatch in pre.hlo, and in post.hlo the ``jit(vit_train_step)/add`` fusions that
    read each stacked attention parameter and have its shape (optax's ``p + u``)."""
    pre = (CAPTURES / "loops_vit_train" / "pre.hlo").read_text()
    assert re.search(r"op_name=\"params\[\\?'blocks\\?'\]\[\\?'attn\\?'\]\[\\?'key\\?'\]\[\\?'kernel\\?'\]\"", pre)
    assert 'op_name="blocks/attn/attn/key/dot_general"' in pre  # the ops' path: attn twice
    text = (CAPTURES / "loops_vit_train" / "post.hlo").read_text()
    expected: dict[str, set[str]] = {}
    params = re.findall(r"^\s*%(params__blocks____attn____(\w+?)____(?:kernel|bias)__\.1) = (f32\[3,[\d,]+\])",
                        text, re.MULTILINE)
    assert len(params) == 8  # query, key, value, out: kernel and bias each
    for param, sub, shape in params:
        expected.setdefault(sub, set()).update(re.findall(
            rf"^\s*%([\w.\-]+) = {re.escape(shape)}\S* fusion\(%{re.escape(param)},.*"
            r'op_name="jit\(vit_train_step\)/add"', text, re.MULTILINE))
    assert sorted(expected) == ["key", "out", "query", "value"] and all(len(v) == 2 for v in expected.values())
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "loops_vit_train"), "--by", "scope", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["scope"]: r for r in json.loads(result.stdout)["scopes"]}
    everything = set().union(*expected.values())
    attn = rows["ViT/blocks/attn"]
    assert "optimizer" in attn["phase"] and attn["phases"]["optimizer"].get("updates_variables")
    assert everything <= set(attn["phases"]["optimizer"]["kernels"]), attn["phases"].get("optimizer")
    for sub, kernels in expected.items():  # each to its own projection, not to a sibling
        here = set(rows[f"ViT/blocks/attn/attn/{sub}"]["phases"].get("optimizer", {}).get("kernels", ()))
        assert here & everything == kernels, (sub, here)
    for other in ("ViT/blocks/mlp", "ViT/blocks/ln1", "ViT/blocks/ln2", "ViT/patch_embed", "ViT/head"):
        assert not everything & set(rows[other]["phases"].get("optimizer", {}).get("kernels", ())), other


#: Where each stacked parameter's layer is, written by hand from samples/loops.py: Flax's
#: MultiHeadDotProductAttention sits inside the ``attn`` module, so its ops say ``attn/attn``.
_LAYER_OF = {
    "attn____key": "ViT/blocks/attn/attn/key", "attn____query": "ViT/blocks/attn/attn/query",
    "attn____value": "ViT/blocks/attn/attn/value", "attn____out": "ViT/blocks/attn/attn/out",
    "ln1": "ViT/blocks/ln1", "ln2": "ViT/blocks/ln2",
    "mlp____fc1": "ViT/blocks/mlp/fc1", "mlp____fc2": "ViT/blocks/mlp/fc2",
}


def test_the_scanned_weights_moment_updates_are_credited_to_the_layer_they_update():
    """AdamW's ``mu``/``nu`` updates of a stacked weight read the moment (no layer reads it) and
    the gradient leaving the scan's ``while`` in ``ViT``: by what they read they were ``ViT``'s
    (35 kernels at ``ViT`` alone). Their values go to the weight's ``p + u``, which updates the
    layer. The oracle, a data-flow script by regex over post.hlo: the fusions that read each
    stacked moment ``adamw_state__{mu,nu}____blocks____…`` and whose result the fusion reading
    the matching ``params__blocks____…`` takes as an operand."""
    text = (CAPTURES / "loops_vit_train" / "post.hlo").read_text()
    operands = {m.group(1): re.findall(r"%([\w.\-]+)", m.group(2)) for m in re.finditer(
        r"^\s*%([\w.\-]+) = \S+ fusion\(([^)]*)\)", text, re.MULTILINE)}
    expected: dict[str, set[str]] = {}
    for key, layer in _LAYER_OF.items():
        for part in ("kernel", "bias", "scale"):
            name = f"blocks____{key}____{part}__.1"
            if f"%params__{name} = " not in text:
                continue
            moments = {f for f, ops in operands.items() for m in ("mu", "nu") if f"adamw_state__{m}____{name}" in ops}
            writers = [f for f, ops in operands.items() if f"params__{name}" in ops and moments <= set(ops)]
            assert len(moments) == 2 and len(writers) == 1, (name, moments, writers)
            expected.setdefault(layer, set()).update(moments)
    assert sum(len(v) for v in expected.values()) == 32  # 16 stacked weights, mu and nu each
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "loops_vit_train"), "--by", "scope", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["scope"]: r for r in json.loads(result.stdout)["scopes"]}
    everything = set().union(*expected.values())
    for layer, kernels in expected.items():
        here = set(rows[layer]["phases"].get("optimizer", {}).get("kernels", ()))
        assert here & everything == kernels, (layer, sorted(here & everything), sorted(kernels))
    for other in ("ViT/patch_embed", "ViT/head", "ViT/norm"):
        assert not everything & set(rows[other]["phases"].get("optimizer", {}).get("kernels", ())), other
