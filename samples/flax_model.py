"""A small Flax (linen) model as a new user writes it: what hloviz shows of a Flax model's modules.

``Net`` holds a ``Conv``, a ``Block`` of two ``Dense`` layers with a residual add, and a
``Dense`` head. Flax names every op after its module path (``jit(forward)/Net/Block_0/
Dense_0/dot_general``), so ``stats --by scope`` reads per module::

    hloviz stats samples/flax_model.py:forward --by scope
    hloviz stats samples/flax_model.py:train_step --by scope

The parameters are a pytree: their shapes are written out below (``PARAMS``), as
``net.init`` would make them, so no array is allocated to capture the function.
Needs ``pip install 'hloviz[flax]'``.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp

BATCH, SIDE, CHANNELS, WIDTH, CLASSES = 4, 16, 8, 32, 10


class Block(nn.Module):
    """Two dense layers with a residual add."""

    width: int

    @nn.compact
    def __call__(self, x):
        y = nn.relu(nn.Dense(self.width)(x))
        return x + nn.Dense(self.width)(y)


class Net(nn.Module):
    """Conv → mean over space → Dense → Block → Dense."""

    @nn.compact
    def __call__(self, images):
        x = nn.relu(nn.Conv(CHANNELS, (3, 3))(images))
        x = x.mean(axis=(1, 2))
        x = nn.Dense(WIDTH)(x)
        x = Block(WIDTH)(x)
        return nn.Dense(CLASSES)(x)


net = Net()

PARAMS = {
    "params": {
        "Conv_0": {"kernel": f"f32[3,3,3,{CHANNELS}]", "bias": f"f32[{CHANNELS}]"},
        "Dense_0": {"kernel": f"f32[{CHANNELS},{WIDTH}]", "bias": f"f32[{WIDTH}]"},
        "Block_0": {
            "Dense_0": {"kernel": f"f32[{WIDTH},{WIDTH}]", "bias": f"f32[{WIDTH}]"},
            "Dense_1": {"kernel": f"f32[{WIDTH},{WIDTH}]", "bias": f"f32[{WIDTH}]"},
        },
        "Dense_1": {"kernel": f"f32[{WIDTH},{CLASSES}]", "bias": f"f32[{CLASSES}]"},
    }
}

HLOVIZ_ARGS = {
    "forward": [PARAMS, f"f32[{BATCH},{SIDE},{SIDE},3]"],
    "train_step": [PARAMS, f"f32[{BATCH},{SIDE},{SIDE},3]", f"s32[{BATCH}]"],
}


def forward(params, images):
    """The logits of ``images``."""
    return net.apply(params, images)


def loss(params, images, labels):
    logits = forward(params, images)
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, labels[:, None], axis=-1).mean()


def train_step(params, images, labels):
    """One step of gradient descent."""
    value, grads = jax.value_and_grad(loss)(params, images, labels)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return params, value
