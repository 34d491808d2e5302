"""Held out (sixteenth round, JAX): a stack of residual MLP blocks run with ``jax.lax.scan`` over
stacked parameters (how scan-over-layers models are written without Flax), ``jax.named_scope``
around the embedding, the stack and the head, trained with optax ``adafactor`` (factored second
moments: row and column statistics, not one per weight).

Capture with ``hloviz dump benchmarks/heldout/round16_jax.py:scan_step --arg "f32[16,24]" --arg
"s32[16]" -o DIR``.
"""
import jax
import jax.numpy as jnp
import optax

_DEPTH, _WIDTH = 6, 48
_key = jax.random.PRNGKey(0)
_k = jax.random.split(_key, 4)
_params = {
    "embed": jax.random.normal(_k[0], (24, _WIDTH)) * 0.1,
    "blocks": {
        "w1": jax.random.normal(_k[1], (_DEPTH, _WIDTH, 2 * _WIDTH)) * 0.1,
        "w2": jax.random.normal(_k[2], (_DEPTH, 2 * _WIDTH, _WIDTH)) * 0.1,
        "scale": jnp.ones((_DEPTH, _WIDTH)),
    },
    "head": jax.random.normal(_k[3], (_WIDTH, 7)) * 0.1,
}
_opt = optax.adafactor(1e-2)
_state = _opt.init(_params)


def _block(h, p):
    with jax.named_scope("block"):
        z = h * p["scale"] / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)
        return h + jax.nn.gelu(z @ p["w1"]) @ p["w2"], None


def _loss(params, x, y):
    with jax.named_scope("embed"):
        h = x @ params["embed"]
    with jax.named_scope("stack"):
        h, _ = jax.lax.scan(_block, h, params["blocks"])
    with jax.named_scope("head"):
        logits = h @ params["head"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def scan_step(x, y):
    loss, grads = jax.value_and_grad(_loss)(_params, x, y)
    updates, _new_state = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), loss
