"""Held out (thirty-sixth round, JAX): written after this session's fixes, and not looked at while
they were made.

* ``contrastive_step``: one Flax ``linen`` encoder (``nn.Dense`` + ``nn.LayerNorm`` + GELU, twice)
  applied to two augmented views of a batch — the same parameters used twice — and a
  temperature-scaled contrastive loss between the views, trained one step by ``optax.sgd`` with
  Nesterov momentum.

Capture with ``hloviz dump benchmarks/heldout/round36_jax.py:contrastive_step -o DIR`` (its
arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Encoder(nn.Module):
    @nn.compact
    def __call__(self, x):
        for k, width in enumerate((32, 16)):
            x = nn.gelu(nn.LayerNorm(name=f"norm{k}")(nn.Dense(width, name=f"proj{k}")(x)))
        return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


_encoder = _Encoder()
_params = _encoder.init(jax.random.PRNGKey(0), jnp.zeros((1, 12)))
_opt = optax.sgd(0.1, momentum=0.9, nesterov=True)
_state = _opt.init(_params)


def contrastive_step(params, opt_state, view_a, view_b):
    def loss_fn(p):
        za, zb = _encoder.apply(p, view_a), _encoder.apply(p, view_b)
        logits = za @ zb.T / 0.1
        labels = jnp.arange(za.shape[0])
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "contrastive_step": [_params, _state, jax.random.normal(jax.random.PRNGKey(1), (8, 12)),
                         jax.random.normal(jax.random.PRNGKey(2), (8, 12))],
}
