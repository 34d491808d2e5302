"""Held out (fourth round): a Flax CNN whose blocks are wrapped in ``nn.remat`` (recomputed in
the backward pass), with BatchNorm statistics and dropout, trained with ``optax.sgd`` and
momentum; not looked at while the overview's rules were built. The arguments are the arrays
themselves (``HLOVIZ_ARGS``): ``hloviz dump benchmarks/heldout/flax_remat_cnn.py:train_step -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Block(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x, train: bool):
        h = nn.Conv(self.features, (3, 3))(x)
        h = nn.BatchNorm(use_running_average=not train)(h)
        h = nn.relu(h)
        h = nn.Dropout(0.1, deterministic=not train)(h)
        return nn.max_pool(h, (2, 2), strides=(2, 2))


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = True):
        RematBlock = nn.remat(Block, static_argnums=(2,))
        for width in (16, 32, 64):
            x = RematBlock(width)(x, train)
        x = x.mean(axis=(1, 2))
        return nn.Dense(10)(x)


model = CNN()
tx = optax.sgd(0.05, momentum=0.9)
images = jnp.zeros((4, 32, 32, 3), jnp.float32)
labels = jnp.zeros((4,), jnp.int32)
variables = model.init({"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)}, images, False)
params, batch_stats = variables["params"], variables["batch_stats"]
opt_state = tx.init(params)


@jax.jit
def train_step(params, batch_stats, opt_state, images, labels, key):
    def loss_fn(p):
        logits, updates = model.apply({"params": p, "batch_stats": batch_stats}, images, True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, new_opt = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), stats, new_opt, loss


HLOVIZ_ARGS = {"train_step": [params, batch_stats, opt_state, images, labels, jax.random.PRNGKey(2)]}
