"""A small JAX transformer with flax-style nested scopes, written in plain JAX.

``jax.named_scope`` gives every op a path the way flax's modules do (``Transformer/Block_0/
Attention/…``); ``jax.grad`` adds ``jvp(…)`` for the forward pass and ``transpose(jvp(…))`` for
the backward pass, and the update runs under ``sgd``. The parameters are a pytree (a dict of
dicts), so each HLO parameter is named after its path, e.g. ``params['Block_0']['Attention']['qkv']``::

    hloviz stats samples/jax_scopes.py:train_step --by scope --depth 3
"""

import jax
import jax.numpy as jnp

VOCAB, LENGTH, WIDTH, HEADS, BATCH, LAYERS = 128, 16, 32, 4, 2, 2


def _block_specs():
    return {
        "Attention": {"qkv": f"f32[{WIDTH},{3 * WIDTH}]", "out": f"f32[{WIDTH},{WIDTH}]"},
        "MLP": {"up": f"f32[{WIDTH},{4 * WIDTH}]", "down": f"f32[{4 * WIDTH},{WIDTH}]"},
        "LayerNorm_0": {"scale": f"f32[{WIDTH}]"},
        "LayerNorm_1": {"scale": f"f32[{WIDTH}]"},
    }


PARAMS = {
    "Embed": {"embedding": f"f32[{VOCAB},{WIDTH}]"},
    **{f"Block_{i}": _block_specs() for i in range(LAYERS)},
    "Head": {"kernel": f"f32[{WIDTH},{VOCAB}]"},
}

HLOVIZ_ARGS = {
    "forward": [PARAMS, f"s32[{BATCH},{LENGTH}]"],
    "train_step": [PARAMS, f"s32[{BATCH},{LENGTH}]", f"s32[{BATCH},{LENGTH}]"],
}


def layer_norm(x, scale, name):
    with jax.named_scope(name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-6) * scale


def attention(p, x):
    with jax.named_scope("Attention"):
        q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(*t.shape[:-1], HEADS, WIDTH // HEADS)  # noqa: E731
        scores = jnp.einsum("bqhd,bkhd->bhqk", split(q), split(k)) / jnp.sqrt(WIDTH // HEADS)
        mask = jnp.tril(jnp.ones((LENGTH, LENGTH), bool))
        weights = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1)
        mixed = jnp.einsum("bhqk,bkhd->bqhd", weights, split(v)).reshape(x.shape)
        return mixed @ p["out"]


def mlp(p, x):
    with jax.named_scope("MLP"):
        return jax.nn.gelu(x @ p["up"]) @ p["down"]


def block(p, x, name):
    with jax.named_scope(name):
        x = x + attention(p["Attention"], layer_norm(x, p["LayerNorm_0"]["scale"], "LayerNorm_0"))
        return x + mlp(p["MLP"], layer_norm(x, p["LayerNorm_1"]["scale"], "LayerNorm_1"))


def forward(params, tokens):
    """The logits of the next token at every position."""
    with jax.named_scope("Transformer"):
        with jax.named_scope("Embed"):
            x = params["Embed"]["embedding"][tokens]
        for i in range(LAYERS):
            x = block(params[f"Block_{i}"], x, f"Block_{i}")
        with jax.named_scope("Head"):
            return x @ params["Head"]["kernel"]


def loss(params, tokens, targets):
    logits = forward(params, tokens)
    with jax.named_scope("loss"):
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()


def train_step(params, tokens, targets):
    """One step of gradient descent: the loss, its gradient, the update."""
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    with jax.named_scope("sgd"):
        params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return params, value
