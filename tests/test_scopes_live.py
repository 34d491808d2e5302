"""One live Keras capture end to end: the model's layers, as Keras names them, in the scope table."""

from __future__ import annotations

from pathlib import Path

import pytest

from hloviz import api

from . import present

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "keras_small.py"


@pytest.mark.requires_tf
@pytest.mark.slow
def test_live_keras_training_step_by_layer():
    result = api.stats(f"{SAMPLE}:train_step", by="scope", depth=2)
    rows = {r.label: r for r in present(result.scopes)}
    for layer in ("stem", "features", "features_bn", "classifier"):  # layers with trainable weights
        r = rows[layer]
        assert r.phase == "forward+backward+optimizer", (layer, r.phase)
        assert r.kernels and r.flops > 0 and r.ops
        assert r.phases["optimizer"]["kernels"]
    assert rows["pool"].phase == "forward+backward" and rows["gap"].kernels
    assert rows["sgd"].phase == "optimizer"
    # the capture names each parameter after its argument or Keras variable
    params = {p["name"] for p in result.parameters()}
    assert {"images", "labels", "stem/kernel", "classifier/bias"} <= params
    # the rows add up to the module
    top = [r for r in present(result.scopes) if r.depth == 1]
    assert sum(r.flops for r in top) == present(result.analysis.kernels).flops
    assert sum(present(r.ops) for r in top) == sum(present(result.analysis.mapping).counts.values())
    # and the lines are the user's, never TensorFlow's or Keras'
    smap = result.info["source_map"]
    assert smap and all(v["file"].endswith("keras_small.py") for v in smap.values())


JAX_MODEL = '''
import jax
import jax.numpy as jnp

HLOVIZ_ARGS = {"grad_of_stack": ["f32[3,8,8]", "f32[4,8]"]}


def layer(w, x):
    with jax.named_scope("Dense"):
        return jnp.tanh(x @ w)


def stack(ws, x):
    def body(x, w):
        return jax.checkpoint(layer)(w, x), None
    with jax.named_scope("Stack"):
        x, _ = jax.lax.scan(body, x, ws)
    return x.sum()


grad_of_stack = jax.grad(stack)
'''


@pytest.mark.requires_jax
def test_live_jax_scan_over_a_rematerialised_layer(tmp_path):
    model = tmp_path / "stack.py"
    model.write_text(JAX_MODEL)
    result = api.stats(f"{model}:grad_of_stack", by="scope")
    rows = {r.scope: r for r in present(result.scopes)}
    # lax.scan is a while loop; the checkpointed layer's forward and backward both land in Dense,
    # the loop's body being the scan's own scope (no ``while/body`` level: issue 31)
    assert not any("while" in path.split("/") for path in rows)
    dense = rows["jit(stack)/Stack/Dense"]
    assert dense.phase == "forward+backward" and dense.kernels
    assert rows["jit(stack)/Stack"].phase == "forward+backward"
    names = {p["name"] for p in result.parameters()}
    assert names >= {"ws", "x"}
