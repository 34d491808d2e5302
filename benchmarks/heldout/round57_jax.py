"""Held out (fifty-seventh round, JAX): models written with Equinox, as many JAX users write them —
not installed by the project (``pip install equinox`` to run it), written before any change it led
to and run through every command.

* ``eqx_cnn_step``: an ``eqx.Module`` CNN (``eqx.nn.Conv2d`` ×2, ``eqx.nn.MaxPool2d``,
  ``eqx.nn.Linear``) trained one step by ``optax.adamw`` inside ``eqx.filter_jit``, the gradient
  by ``eqx.filter_value_and_grad`` over the model's arrays only (``eqx.partition``), a
  ``jax.vmap`` over the batch.
* ``eqx_gru_decoder``: an ``eqx.nn.GRUCell`` unrolled by ``lax.scan`` over 12 steps with an
  ``eqx.nn.Embedding`` and an ``eqx.nn.LayerNorm``, sampling greedily (``argmax``) — inference.

Capture with ``hloviz dump benchmarks/heldout/round57_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax import lax

_keys = jax.random.split(jax.random.PRNGKey(57), 8)


class CNN(eqx.Module):
    conv1: eqx.nn.Conv2d
    conv2: eqx.nn.Conv2d
    pool: eqx.nn.MaxPool2d
    head: eqx.nn.Linear

    def __init__(self, key):
        k1, k2, k3 = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(1, 8, 3, padding=1, key=k1)
        self.conv2 = eqx.nn.Conv2d(8, 16, 3, padding=1, key=k2)
        self.pool = eqx.nn.MaxPool2d(2, 2)
        self.head = eqx.nn.Linear(16 * 7 * 7, 10, key=k3)

    def __call__(self, x):
        x = self.pool(jax.nn.relu(self.conv1(x)))
        x = self.pool(jax.nn.relu(self.conv2(x)))
        return self.head(x.reshape(-1))


_model = CNN(_keys[0])
_opt = optax.adamw(1e-3)
_state = _opt.init(eqx.filter(_model, eqx.is_array))


@eqx.filter_jit
def eqx_cnn_step(model, state, x, y):
    def loss_fn(m):
        logits = jax.vmap(m)(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, state = _opt.update(grads, state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), state, loss


class Decoder(eqx.Module):
    embed: eqx.nn.Embedding
    cell: eqx.nn.GRUCell
    norm: eqx.nn.LayerNorm
    out: eqx.nn.Linear

    def __init__(self, key):
        k1, k2, k3 = jax.random.split(key, 3)
        self.embed = eqx.nn.Embedding(50, 16, key=k1)
        self.cell = eqx.nn.GRUCell(16, 32, key=k2)
        self.norm = eqx.nn.LayerNorm(32)
        self.out = eqx.nn.Linear(32, 50, key=k3)


_decoder = Decoder(_keys[1])


@eqx.filter_jit
def eqx_gru_decoder(decoder, h0, token):
    def step(carry, _):
        h, tok = carry
        h = decoder.cell(decoder.embed(tok), h)
        nxt = jnp.argmax(decoder.out(decoder.norm(h))).astype(jnp.int32)
        return (h, nxt), nxt

    _, tokens = lax.scan(step, (h0, token), None, length=12)
    return tokens


HLOVIZ_ARGS = {
    "eqx_cnn_step": (_model, _state, jax.random.normal(_keys[2], (4, 1, 28, 28)), jnp.array([1, 2, 3, 4])),
    "eqx_gru_decoder": (_decoder, jnp.zeros(32), jnp.int32(3)),
}
