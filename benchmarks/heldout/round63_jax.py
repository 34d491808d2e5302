"""Held out (sixty-third round, JAX): an Equinox transformer, written after the Equinox layers were
told apart (round 57) and not looked at while that was built.

* ``eqx_encoder_step``: two pre-norm encoder blocks — ``eqx.nn.LayerNorm`` ×2,
  ``eqx.nn.MultiheadAttention`` (its query, key, value and output ``eqx.nn.Linear``s), an MLP of
  two ``eqx.nn.Linear``s — over an ``eqx.nn.Embedding``, a mean-pooled ``eqx.nn.Linear`` head,
  trained one step by ``optax.adam`` inside ``eqx.filter_jit`` (``eqx.filter_value_and_grad``).

Capture with ``hloviz dump benchmarks/heldout/round63_jax.py:eqx_encoder_step -o DIR`` (the
arguments are the objects themselves, ``HLOVIZ_ARGS``; ``pip install equinox``).
"""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class Block(eqx.Module):
    norm1: eqx.nn.LayerNorm
    attn: eqx.nn.MultiheadAttention
    norm2: eqx.nn.LayerNorm
    up: eqx.nn.Linear
    down: eqx.nn.Linear

    def __init__(self, dim, key):
        k1, k2, k3 = jax.random.split(key, 3)
        self.norm1 = eqx.nn.LayerNorm(dim)
        self.attn = eqx.nn.MultiheadAttention(2, dim, key=k1)
        self.norm2 = eqx.nn.LayerNorm(dim)
        self.up = eqx.nn.Linear(dim, 2 * dim, key=k2)
        self.down = eqx.nn.Linear(2 * dim, dim, key=k3)

    def __call__(self, x):
        h = jax.vmap(self.norm1)(x)
        x = x + self.attn(h, h, h)
        h = jax.vmap(self.norm2)(x)
        return x + jax.vmap(self.down)(jax.nn.gelu(jax.vmap(self.up)(h)))


class Encoder(eqx.Module):
    embed: eqx.nn.Embedding
    blocks: list
    head: eqx.nn.Linear

    def __init__(self, key):
        keys = jax.random.split(key, 4)
        self.embed = eqx.nn.Embedding(40, 16, key=keys[0])
        self.blocks = [Block(16, keys[1]), Block(16, keys[2])]
        self.head = eqx.nn.Linear(16, 3, key=keys[3])

    def __call__(self, tokens):
        x = jax.vmap(self.embed)(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(axis=0))


_model = Encoder(jax.random.PRNGKey(63))
_opt = optax.adam(1e-3)
_state = _opt.init(eqx.filter(_model, eqx.is_array))


@eqx.filter_jit
def eqx_encoder_step(model, state, tokens, labels):
    def loss_fn(m):
        logits = jax.vmap(m)(tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, state = _opt.update(grads, state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), state, loss


HLOVIZ_ARGS = {"eqx_encoder_step": (_model, _state, jnp.ones((4, 10), jnp.int32), jnp.array([0, 1, 2, 0]))}
