"""Held out (twenty-fourth round, JAX): written after this round's changes to check them on
models nobody here had captured, none looked at while they were built.

* ``dropout_cnn_step``: a Flax ``linen`` CNN — two ``nn.Conv`` with ``nn.avg_pool``, an
  ``nn.Dropout`` drawing from an ``rngs={"dropout": key}``, a ``Dense`` head — trained with
  ``optax.lamb``; parameters, optimizer state and key passed in.
* ``attention_jax_step``: a Flax encoder with a learned position table (``self.param``), an
  ``nn.MultiHeadDotProductAttention`` block and ``nn.LayerNorm``, mean-pooled into a head,
  trained with ``optax.adafactor``; parameters closed over.

Capture with ``hloviz dump benchmarks/heldout/round24_jax.py:dropout_cnn_step -o DIR`` and
``…:attention_jax_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Cnn(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.avg_pool(nn.relu(nn.Conv(8, (3, 3), name="conv_1")(x)), (2, 2), (2, 2))
        x = nn.avg_pool(nn.relu(nn.Conv(16, (3, 3), name="conv_2")(x)), (2, 2), (2, 2))
        x = nn.Dropout(0.3, deterministic=not train, name="dropout")(x.reshape(x.shape[0], -1))
        return nn.Dense(10, name="head")(x)


_cnn = _Cnn()
_cnn_params = _cnn.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 1)), False)["params"]
_lamb = optax.lamb(1e-3)


def dropout_cnn_step(params, opt_state, images, labels, key):
    def loss_fn(p):
        logits = _cnn.apply({"params": p}, images, True, rngs={"dropout": key})
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _lamb.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class _Encoder(nn.Module):
    @nn.compact
    def __call__(self, x):
        pos = self.param("position", nn.initializers.normal(0.02), (x.shape[1], x.shape[2]))
        x = x + pos
        x = nn.LayerNorm(name="norm_1")(x + nn.MultiHeadDotProductAttention(4, name="attention")(x, x))
        x = nn.LayerNorm(name="norm_2")(x + nn.Dense(x.shape[-1], name="mlp")(x))
        return nn.Dense(2, name="head")(x.mean(axis=1))


_encoder = _Encoder()
_encoder_params = _encoder.init(jax.random.PRNGKey(1), jnp.zeros((1, 10, 16)))["params"]
_adafactor = optax.adafactor(1e-2)
_adafactor_state = _adafactor.init(_encoder_params)


def attention_jax_step(x, labels):
    def loss_fn(p):
        logits = _encoder.apply({"params": p}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_encoder_params)
    updates, state = _adafactor.update(grads, _adafactor_state, _encoder_params)
    return optax.apply_updates(_encoder_params, updates), state, loss


HLOVIZ_ARGS = {
    "dropout_cnn_step": [_cnn_params, _lamb.init(_cnn_params), jnp.zeros((8, 16, 16, 1)),
                         jnp.zeros((8,), jnp.int32), jax.random.PRNGKey(2)],
    "attention_jax_step": [jnp.zeros((4, 10, 16)), jnp.zeros((4,), jnp.int32)],
}
