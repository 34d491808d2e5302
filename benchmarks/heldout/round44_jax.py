"""Held out (forty-fourth round, JAX): written at the start of the session, before any change, and
not looked at while changes were made.

* ``attention_lookahead_step``: a Flax encoder block calling ``jax.nn.dot_product_attention``,
  its MLP wrapped in ``nn.remat`` with the ``dots_saveable`` checkpoint policy, trained one step
  by ``optax.lookahead(optax.adam)`` (fast and slow weights) on a masked mean-squared error.
* ``quantized_pool``: a hand-written max pool (``lax.reduce_window``), a straight-through
  quantizer with a ``jax.custom_vjp``, ``jnp.argsort`` and ``jnp.cumsum`` — the gradient of a
  top-k style score, taken by ``jax.value_and_grad``.

Capture with ``hloviz dump benchmarks/heldout/round44_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _MLP(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        h = nn.gelu(nn.Dense(self.width * 2, name="up")(x))
        return nn.Dense(self.width, name="down")(h)


class _Block(nn.Module):
    width: int = 32
    heads: int = 4

    @nn.compact
    def __call__(self, x):
        b, t, _ = x.shape
        h = nn.LayerNorm(name="ln_attn")(x)
        qkv = nn.Dense(3 * self.width, name="qkv")(h).reshape(b, t, 3, self.heads, self.width // self.heads)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        att = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(b, t, self.width)
        x = x + nn.Dense(self.width, name="attn_out")(att)
        mlp = nn.remat(_MLP, policy=jax.checkpoint_policies.dots_saveable)(self.width, name="mlp")
        return x + mlp(nn.LayerNorm(name="ln_mlp")(x))


class _Encoder(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(32, name="embed")(x)
        for i in range(2):
            x = _Block(name=f"block_{i}")(x)
        return nn.Dense(8, name="head")(x)


_model = _Encoder()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((2, 10, 8)))
_opt = optax.lookahead(optax.adam(1e-3), sync_period=4, slow_step_size=0.5)
_state = _opt.init(optax.LookaheadParams.init_synced(_params))


@jax.jit
def attention_lookahead_step(params, opt_state, x, y, mask):
    def loss_fn(fast):
        err = (_model.apply(fast, x) - y) ** 2
        return jnp.sum(err * mask[..., None]) / jnp.maximum(mask.sum(), 1.0)

    loss, grads = jax.value_and_grad(loss_fn)(params.fast)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.custom_vjp
def _quantize(x):
    return jnp.round(x * 8.0) / 8.0


def _quantize_fwd(x):
    return _quantize(x), None


def _quantize_bwd(_, g):
    return (g,)  # straight through


_quantize.defvjp(_quantize_fwd, _quantize_bwd)


def _score(w, images):
    h = jnp.tanh(jnp.einsum("nhwc,cd->nhwd", images, w))
    pooled = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    q = _quantize(pooled).reshape(images.shape[0], -1)
    ranked = jnp.take_along_axis(q, jnp.argsort(-q, axis=-1), axis=-1)
    return jnp.mean(jnp.cumsum(ranked, axis=-1)[:, :5])


@jax.jit
def quantized_pool(w, images):
    return jax.value_and_grad(_score)(w, images)


HLOVIZ_ARGS = {
    "attention_lookahead_step": [optax.LookaheadParams.init_synced(_params), _state, jnp.ones((2, 10, 8)) * 0.1,
                                 jnp.zeros((2, 10, 8)), jnp.ones((2, 10))],
    "quantized_pool": [jnp.ones((3, 6)) * 0.1, jnp.ones((2, 8, 8, 3)) * 0.5],
}
