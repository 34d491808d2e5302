"""Held out (thirty-third round, JAX): written after this session's changes to small models'
overviews, and not looked at while they were made.

* ``convnet``: a Flax ``linen`` convnet for inference — two ``nn.Conv`` + ``nn.BatchNorm``
  (running averages) + ``nn.gelu`` stages, a mean over the pixels, an ``nn.Dense`` head.
* ``plain_attention``: softmax attention written with ``jax.numpy`` alone, no module: nothing
  named but the function.

Capture with ``hloviz dump benchmarks/heldout/round33_jax.py:convnet -o DIR`` and
``…:plain_attention -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp


class _ConvNet(nn.Module):
    @nn.compact
    def __call__(self, x):
        for k, width in enumerate((8, 16)):
            x = nn.Conv(width, (3, 3), name=f"conv{k + 1}")(x)
            x = nn.gelu(nn.BatchNorm(use_running_average=True, name=f"bn{k + 1}")(x))
        return nn.Dense(5, name="head")(x.mean(axis=(1, 2)))


_net = _ConvNet()
_vars = _net.init(jax.random.PRNGKey(0), jnp.zeros((1, 12, 12, 3)))


def convnet(variables, images):
    return _net.apply(variables, images)


def plain_attention(q, k, v):
    scores = q @ k.T / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(scores, axis=-1) @ v


HLOVIZ_ARGS = {
    "convnet": [_vars, jnp.zeros((2, 12, 12, 3))],
    "plain_attention": [jnp.ones((6, 8)), jnp.ones((10, 8)), jnp.ones((10, 8))],
}
