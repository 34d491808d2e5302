"""Held out: a Flax CNN with BatchNorm and Dropout, trained with an optax chain (a global-norm
clip, AdamW on a warmup-cosine schedule); its arguments are the arrays themselves
(``HLOVIZ_ARGS``). ``hloviz dump benchmarks/heldout/flax_bn.py:train_step -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Block(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x, train: bool):
        y = nn.Conv(self.features, (3, 3))(x)
        y = nn.BatchNorm(use_running_average=not train)(y)
        y = nn.relu(y)
        return y + nn.Conv(self.features, (1, 1))(x)


class Net(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = True):
        for i, f in enumerate((8, 16, 16)):
            x = Block(f, name=f"block{i}")(x, train)
        x = jnp.mean(x, axis=(1, 2))
        x = nn.Dropout(0.1, deterministic=not train)(x)
        return nn.Dense(10, name="head")(x)


_net = Net()
_x = jnp.zeros((4, 16, 16, 3))
_vars = _net.init({"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)}, _x)
_tx = optax.chain(optax.clip_by_global_norm(1.0),
                  optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, 100)))
_opt = _tx.init(_vars["params"])


def train_step(params, batch_stats, opt_state, x, y, rng):
    def loss_fn(p):
        logits, upd = _net.apply({"params": p, "batch_stats": batch_stats}, x, True,
                                 rngs={"dropout": rng}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        return loss, upd["batch_stats"]
    (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), stats, opt_state, loss


HLOVIZ_ARGS = {"train_step": (_vars["params"], _vars["batch_stats"], _opt, _x, jnp.zeros((4,), jnp.int32),
                              jax.random.PRNGKey(2))}
