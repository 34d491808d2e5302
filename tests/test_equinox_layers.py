"""Equinox layers of one class are told apart by the weights they read.

Round 57 (``benchmarks/heldout/round57_jax.py``) and an ``eqx.nn.MLP`` of depth 4: JAX names an
Equinox layer's ops after its class (``…/eqx.nn.MLP/eqx.nn.Linear/dot_general`` for all five
layers; ``…/eqx.nn.Conv/…`` for ``conv1`` and ``conv2``), so the scope tree, ``stats --by scope``
and the pictures had one ``eqx.nn.Linear`` holding five layers' work. Each layer's scope is now
named after the holder of its weights (``layers[2]``, ``conv1``), as JAX names the weights.

Oracles, from the HLO text by regular expression: the entry parameters' names (``model.layers[2].weight``,
JAX's own paths of the model's arrays) and shapes, and the batch from ``x``'s shape — each layer's
three matrix products (forward, input gradient, weight gradient; the first layer has no input
gradient) are ``2·B·in·out`` FLOPs each. Fixtures: ``data/orders/eqx_mlp_step_{pre,post}.hlo.gz``
(``tests/test_equinox_capture.py``'s step with ``depth=4``, ``hloviz dump …:step -o DIR``) and
``eqx_cnn_step_{pre,post}.hlo.gz`` (``hloviz dump benchmarks/heldout/round57_jax.py:eqx_cnn_step``).
"""

from __future__ import annotations

import re
from pathlib import Path

from .test_hand_written_tf_updates import stats_json
from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"


def _weights(text: str) -> dict[str, tuple[int, ...]]:
    """Entry parameter name → shape, for the weights (``model.….weight``)."""
    entry = text[text.index("\nENTRY"):]
    out = {}
    for dims, name in re.findall(r"= f32\[([\d,]*)\]\{[\d,]*\} parameter\(\d+\), metadata=\{op_name=\"(model\.[^\"]+\.weight)\"", entry):
        out[name] = tuple(int(d) for d in dims.split(","))
    return out


def test_each_linear_layer_of_an_mlp_is_a_scope_of_its_own(tmp_path, capsys):
    post = _text(HERE / "eqx_mlp_step_post.hlo.gz")
    weights = _weights(post)
    assert sorted(weights) == [f"model.layers[{k}].weight" for k in range(5)]  # the situation: five Linears
    dots = re.findall(r'dot\([^\n]*op_name="([^"]*/eqx\.nn\.Linear/[^"]*)"', post)
    assert len(dots) >= 9 and len(set(dots)) <= 2  # nine products of five layers, under one or two names
    batch = int(re.search(r"f32\[(\d+),\d+\]\{[\d,]*\} parameter\(\d+\), metadata=\{op_name=\"x\"", post).group(1))
    rows = {r["scope"]: r for r in stats_json(tmp_path, capsys, "eqx_mlp_step", "--by", "scope", "--all")["scopes"]}
    assert not [s for s in rows if s.endswith("eqx.nn.Linear")]
    layers = [s for s in rows if s.startswith("eqx.nn.MLP/")]
    assert layers == [f"eqx.nn.MLP/layers[{k}]" for k in range(5)]  # in program order
    for k in range(5):
        out_dim, in_dim = weights[f"model.layers[{k}].weight"]
        products = 2 if k == 0 else 3  # the first layer's input is the data: no gradient
        least = products * 2 * batch * in_dim * out_dim
        flops = rows[f"eqx.nn.MLP/layers[{k}]"]["flops"]
        assert least <= flops <= least + 16 * batch * out_dim, (k, flops, least)  # + bias adds, their gradient, update
    assert sum(rows[s]["flops"] for s in layers) <= rows["eqx.nn.MLP"]["flops"]


def test_two_convolutions_of_one_class_are_two_scopes(tmp_path, capsys):
    post = _text(HERE / "eqx_cnn_step_post.hlo.gz")
    assert set(_weights(post)) >= {"model.conv1.weight", "model.conv2.weight"}
    assert re.search(r'convolution\([^\n]*op_name="[^"]*\(eqx\.nn\.Conv\)\)/conv_general_dilated"', post)
    rows = {r["scope"]: r for r in stats_json(tmp_path, capsys, "eqx_cnn_step", "--by", "scope", "--all")["scopes"]}
    assert "conv1" in rows and "conv2" in rows and "eqx.nn.Conv" not in rows
    # conv2 has eight times conv1's multiply-adds a product (8 → 16 channels on a quarter of the
    # pixels, against 1 → 8): its two products (forward, weight gradient) outweigh conv1's
    assert rows["conv2"]["flops"] > 3 * rows["conv1"]["flops"] > 0
    # a layer of no weights called twice (the max pool) keeps its class's name, and the work XLA
    # named after it — conv2's input gradient, fused with the pool's — stays there, though it reads conv2's weights
    pooled = re.findall(r'%(convolution[.\d]*) = [^\n]*op_name="[^"]*eqx\.nn\.Pool/[^"]*"', post)
    assert pooled and "eqx.nn.MaxPool2d/eqx.nn.Pool" in rows
    kernels = {k["name"]: k for k in stats_json(tmp_path, capsys, "eqx_cnn_step")["kernels"]}
    for name in pooled:
        assert kernels[name]["layer"].startswith("eqx.nn.MaxPool2d/eqx.nn.Pool"), kernels[name]["layer"]


def test_an_encoders_layers_are_named_by_their_blocks(tmp_path, capsys):
    """Round 63 (``benchmarks/heldout/round63_jax.py``, written after the rule, unseen while it was
    built): two blocks of ``LayerNorm``, ``MultiheadAttention``, two ``Linear``s. Each block's
    layers come out under the block's own path (``blocks[0]/up``), not the class; the
    attention's query, key and value projections, which read one input, stay together in the
    class (no holder of their own can be told), and so do the residual gradients JAX sums under
    ``eqx.nn.LayerNorm``."""
    post = _text(HERE / "eqx_encoder_step_post.hlo.gz")
    weights = _weights(post)
    assert {f"model.blocks[{b}].{layer}.weight" for b in (0, 1) for layer in ("up", "down", "norm1", "norm2")} <= set(weights)
    batch, tokens = (int(n) for n in re.search(r"s32\[(\d+),(\d+)\]\{[\d,]*\} parameter\(\d+\), metadata=\{op_name=\"tokens\"", post).groups())
    rows = {r["scope"]: r for r in stats_json(tmp_path, capsys, "eqx_encoder_step", "--by", "scope", "--all")["scopes"]}
    for b in (0, 1):
        for layer in ("norm1", "norm2", "up", "down"):
            assert f"blocks[{b}]/{layer}" in rows, sorted(rows)
        for layer in ("up", "down"):
            out_dim, in_dim = weights[f"model.blocks[{b}].{layer}.weight"]
            one_product = 2 * batch * tokens * in_dim * out_dim
            assert rows[f"blocks[{b}]/{layer}"]["flops"] >= one_product  # its forward product at least
    assert rows["blocks[0]"]["flops"] < rows["eqx_encoder_step"]["flops"]
