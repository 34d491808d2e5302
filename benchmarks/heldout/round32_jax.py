"""Held out (thirty-second round, JAX): written after this session's change to fitting
(``cut._deepen`` going past a training step's loss), and not looked at while it was made.

* ``resnet_step``: a Flax ``linen`` ResNet of two stages of two residual blocks each (``nn.Conv``,
  ``nn.BatchNorm``, a projection shortcut where the width changes), trained with ``optax.sgd``
  with momentum.

Capture with ``hloviz dump benchmarks/heldout/round32_jax.py:resnet_step -o DIR`` (its arguments
are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x, train: bool):
        y = nn.Conv(self.width, (3, 3), use_bias=False)(x)
        y = nn.relu(nn.BatchNorm(use_running_average=not train)(y))
        y = nn.Conv(self.width, (3, 3), use_bias=False)(y)
        y = nn.BatchNorm(use_running_average=not train)(y)
        if x.shape[-1] != self.width:
            x = nn.Conv(self.width, (1, 1), use_bias=False, name="shortcut")(x)
        return nn.relu(x + y)


class _ResNet(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(8, (3, 3), name="stem")(x)
        for stage, width in enumerate((8, 16)):
            for block in range(2):
                x = _Block(width, name=f"stage{stage + 1}_block{block + 1}")(x, train)
        return nn.Dense(10, name="head")(x.mean(axis=(1, 2)))


_net = _ResNet()
_vars = _net.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)), train=False)
_opt = optax.sgd(0.1, momentum=0.9)
_opt_state = _opt.init(_vars["params"])


def resnet_step(params, batch_stats, opt_state, images, labels):
    def loss_fn(p):
        logits, new = _net.apply({"params": p, "batch_stats": batch_stats}, images, train=True,
                                 mutable=["batch_stats"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), new["batch_stats"]

    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


HLOVIZ_ARGS = {
    "resnet_step": [_vars["params"], _vars["batch_stats"], _opt_state, jnp.zeros((4, 16, 16, 3)),
                    jnp.zeros((4,), jnp.int32)],
}
